"""The view of ``protocol.py``: the method table, the capability gates and
the handler interfaces (``Agent``, ``Client``), as source text."""

from __future__ import annotations

import json

from ..compile import ir
from ..records import dataclass
from . import source, text
from .inputs import ViewInputs
from .names import reexports


@dataclass(frozen=True)
class RequestEntry:
    """A request's ``RequestInfo`` in ``METHODS``: each field a literal or
    a reference to a class."""

    side: str
    params: str
    result: str
    handler: str
    params_name: str
    result_name: str


@dataclass(frozen=True)
class NotificationEntry:
    """A notification's ``NotificationInfo`` in ``METHODS``."""

    side: str
    params: str
    handler: str
    params_name: str


@dataclass(frozen=True)
class MethodEntry:
    """One entry of ``METHODS``: the method name (a literal) and how it is
    used."""

    name: str
    request: RequestEntry | None
    notification: NotificationEntry | None


@dataclass(frozen=True)
class GateEntry:
    """One entry of ``REQUIRES``: the method and the capability's place, as
    literals."""

    method: str
    path: str


@dataclass(frozen=True)
class Handler:
    """A typed method for one call: on an interface, the handler; on a
    connection, the method that sends it."""

    name: str
    params: str
    """The annotation of ``params``."""
    returns: str
    """The return annotation (``None`` for a notification)."""
    doc: str
    """The docstring, as source."""
    method: str
    """The method name, as a literal."""
    request: bool
    """A request (answered with a result), else a notification."""


@dataclass(frozen=True)
class Interface:
    """A handler interface: what one side handles."""

    class_name: str
    doc: str
    handlers: tuple[Handler, ...]


@dataclass(frozen=True)
class ProtocolView:
    """Everything ``protocol.py`` prints."""

    header: str
    """The comment that opens the file."""
    reexports: tuple[tuple[str, str], ...]
    """(runtime module, name) imported under its own name, to export it."""
    exports: tuple[str, ...]
    """``__all__``, as literals."""
    methods: tuple[MethodEntry, ...]
    gates: tuple[GateEntry, ...]
    cancellation: str
    """``CANCELLATION``'s value, as source (``None`` without one)."""
    null_request_id: str
    """Whether a request id may be ``null``, as a literal."""
    interfaces: tuple[Interface, ...]


SIDES: tuple[tuple[str, ir.Side, str], ...] = (("Agent", "agent", "a client"), ("Client", "client", "an agent"))
"""Each handler interface: its class, the side it is, who sends it what it
handles."""


def header(inputs: ViewInputs) -> str:
    """The comment that opens every generated module."""
    return source.header_comment(inputs.package, inputs.generator_version)


def literals(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(text.py_literal(n) for n in names)


def tuple_literal(items: tuple[str, ...]) -> str:
    """A tuple of strings as Python source (``("a",)`` for one)."""
    return "(" + ", ".join(text.py_literal(i) for i in items) + ("," if len(items) == 1 else "") + ")"


def handler(inputs: ViewInputs, call: ir.Call, doc: str) -> Handler:
    """The typed method for ``call`` (see :class:`Handler`)."""
    ref = inputs.names.ref
    return Handler(
        name=call.handler,
        params=ref(call.params_class),
        returns=ref(call.result_class) if call.kind == "request" else "None",
        doc=text.docstring(doc),
        method=text.py_literal(call.method),
        request=call.kind == "request",
    )


def _entry(inputs: ViewInputs, method: ir.RpcMethod) -> MethodEntry:
    ref, py = inputs.names.ref, text.py_literal
    request = notification = None
    if method.request is not None:
        c = method.request
        request = RequestEntry(
            side=py(c.side),
            params=ref(c.params_class),
            result=ref(c.result_class),
            handler=py(c.handler),
            params_name=py(c.params),
            result_name=py(c.result),
        )
    if method.notification is not None:
        c = method.notification
        notification = NotificationEntry(
            side=py(c.side), params=ref(c.params_class), handler=py(c.handler), params_name=py(c.params)
        )
    return MethodEntry(name=py(method.name), request=request, notification=notification)


def cancellation_source(cancellation: ir.Cancellation | None) -> str:
    """``CANCELLATION``'s value as source: the runtime's ``Cancellation``."""
    if cancellation is None:
        return "None"
    answers = {method: json.loads(result) for method, result in cancellation.answers}
    return (
        f"_Cancellation(notification={text.py_literal(cancellation.notification)}, "
        f"session={text.py_literal(cancellation.session_attribute)}, answers={text.py_literal(answers)})"
    )


def interface_doc(side: ir.Side, who: str) -> str:
    """The docstring of a handler interface, as source (fixed text: nothing
    to escape)."""
    return (
        f'"""What {side} handles: one method per request and notification {who}\n'
        "sends. Subclass it and override what you support: the other requests\n"
        "answer ``-32601`` (Method not found), the other notifications are\n"
        'ignored. Raise :class:`RequestError` to answer with an error."""'
    )


def build(inputs: ViewInputs) -> ProtocolView:
    """The view of ``protocol.py``."""
    package = inputs.package
    return ProtocolView(
        header=header(inputs),
        reexports=tuple(reexports(package)["protocol"]),
        exports=literals(inputs.exports["protocol"]),
        methods=tuple(_entry(inputs, m) for m in package.methods),
        gates=tuple(GateEntry(method=text.py_literal(g.method), path=tuple_literal(g.path)) for g in package.gates),
        cancellation=cancellation_source(package.cancellation),
        null_request_id=text.py_literal(package.null_request_id),
        interfaces=tuple(
            Interface(
                class_name=name,
                doc=interface_doc(side, who),
                handlers=tuple(handler(inputs, c, text.handler_doc(c)) for c in package.calls(side)),
            )
            for name, side, who in SIDES
        ),
    )
