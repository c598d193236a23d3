"""The IR stage for the JSON-RPC layer: the method table.

Every request, response and notification type of the schema carries
``x-method`` (the JSON-RPC method) and ``x-side`` (the side that handles it).
Whether a type is a request's params, a response's result or a
notification's params is said by the envelope definitions that refer to it
(``ClientRequest.params``, ``AgentResponse.result``, ...): a ``result``
property holds responses, a ``params`` property beside an ``id`` requests,
one without an ``id`` notifications. A type no envelope names is classified
by its name's suffix (``...Request``, ``...Response``, ``...Notification``).

The table pairs each request with its response and names the handler of
each message (``rules/methods.toml``). An inconsistent schema is an error
naming the definition: a response without its request, a request without
its response, two types for one method and kind, sides that disagree, two
messages handled under one name on one side.
"""

from __future__ import annotations

import keyword
from dataclasses import replace
from pathlib import Path

from ...errors import AcpgenError, pointer
from ...jsontypes import JsonPath
from .. import ir
from .attributes import INTERFACE_METHODS, runtime_attributes
from .identifiers import snake
from .options import Options
from .rules import METHODS, builtin_file, read_rules

CALL_KINDS: tuple[ir.CallKind, ...] = ("request", "notification")
KINDS = ("request", "response", "notification")
SUFFIX_KINDS: dict[str, ir.MessageKind] = {"Request": "request", "Response": "response", "Notification": "notification"}


def builtin_methods_file() -> Path:
    return builtin_file(METHODS)


def handler_overrides(path: Path | None = None) -> dict[str, str]:
    """``{params type: handler name}`` from the rules file."""
    path = path or builtin_methods_file()
    data = read_rules(path)
    table = data.get("handlers", {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and _usable(v) for k, v in table.items()
    ):
        raise AcpgenError("[handlers] must map type names to Python identifiers", file=str(path))
    return dict(table)


def handler_name(def_name: str, overrides: dict[str, str]) -> str:
    """The handler of a params type: the override, else the name without its
    ``Request``/``Notification`` suffix in snake_case."""
    if def_name in overrides:
        return overrides[def_name]
    stem = def_name
    for suffix in ("Request", "Notification"):
        if stem.endswith(suffix) and stem != suffix:
            stem = stem[: -len(suffix)]
            break
    name = snake(stem)
    return name + "_" if keyword.iskeyword(name) else name


def find_methods(package: ir.Package, overrides: dict[str, str] | None = None) -> ir.Package:
    """The named package with its method table, from the marks and
    envelopes lowering read (:attr:`ir.Package.facts`)."""
    if overrides is None:
        overrides = handler_overrides()
    facts = package.facts
    reserved = runtime_attributes() | INTERFACE_METHODS
    classes = {d.name: d.class_name for d in package.definitions}
    summaries = {d.name: d.description.strip().split("\n\n")[0].strip() for d in package.definitions}
    kinds = {name: set(found) for name, found in facts.envelope_kinds}
    # (method, kind) -> (def name, side)
    found: dict[tuple[str, str], tuple[str, ir.Side]] = {}
    order: list[str] = []
    for mark in facts.marks:
        if mark.side is None:
            raise AcpgenError(mark.error, file=package.schema_path, pointer=mark.error_at)
        name, method, side = mark.definition, mark.method, mark.side
        kind = _kind(name, kinds, package)
        other = found.get((method, kind))
        if other is not None:
            raise _error(package, ("$defs", name), f"{method!r} has two {kind} types: {other[0]!r} and {name!r}")
        found[(method, kind)] = (name, side)
        if method not in order:
            order.append(method)

    methods = []
    handled: dict[tuple[str, str], str] = {}
    for method in order:
        request = found.get((method, "request"))
        response = found.get((method, "response"))
        notification = found.get((method, "notification"))
        if response and not request:
            raise _error(
                package, ("$defs", response[0]), f"the response {response[0]!r} of {method!r} has no request type"
            )
        if request and not response:
            raise _error(
                package, ("$defs", request[0]), f"the request {request[0]!r} of {method!r} has no response type"
            )
        if request and response and request[1] != response[1]:
            raise _error(
                package,
                ("$defs", response[0], "x-side"),
                f"{method!r} is handled by the {request[1]} side but its response says {response[1]!r}",
            )
        calls = {}
        for kind in CALL_KINDS:
            entry = request if kind == "request" else notification
            if entry is None:
                continue
            def_name, side = entry
            handler = handler_name(def_name, overrides)
            where = ("$defs", def_name)
            if not _usable(handler):
                raise _error(
                    package, where, f"the handler name {handler!r} is not usable: name it in rules/methods.toml"
                )
            # A handler is a method of the generated connections and
            # interfaces: it keeps clear of the runtime connection's
            # attributes and of the interfaces' extension methods.
            while handler in reserved:
                handler += "_"
            taken = handled.get((side, handler))
            if taken is not None:
                raise _error(
                    package,
                    where,
                    f"{def_name!r} and {taken!r} would both be handled as {handler!r} on the {side} side:"
                    " name one in rules/methods.toml",
                )
            handled[(side, handler)] = def_name
            calls[kind] = ir.Call(
                method=method,
                kind=kind,
                side=side,
                params=def_name,
                params_class=classes[def_name],
                handler=handler,
                result=response[0] if kind == "request" and response else "",
                result_class=classes[response[0]] if kind == "request" and response else "",
                summary=summaries[def_name],
            )
        methods.append(ir.RpcMethod(name=method, request=calls.get("request"), notification=calls.get("notification")))
    return replace(package, methods=tuple(methods), null_request_id=facts.null_request_id)


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the method table (:func:`find_methods`), unless the options
    leave it out."""
    return find_methods(package) if options.methods else package


def _kind(name: str, kinds: dict[str, set[ir.MessageKind]], package: ir.Package) -> ir.MessageKind:
    seen = kinds.get(name, set())
    if len(seen) > 1:
        raise _error(package, ("$defs", name), f"the envelopes use {name!r} as {' and as '.join(sorted(seen))}")
    if seen:
        return next(iter(seen))
    for suffix, kind in SUFFIX_KINDS.items():
        if name.endswith(suffix):
            return kind
    raise _error(
        package,
        ("$defs", name),
        f"no JSON-RPC envelope refers to {name!r} and its name does not say whether it is a request,"
        " a response or a notification",
    )


def _usable(name: str) -> bool:
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name) and not name.startswith("_")


def _error(package: ir.Package, parts: JsonPath, message: str) -> AcpgenError:
    return AcpgenError(message, file=package.schema_path, pointer=pointer(parts))
