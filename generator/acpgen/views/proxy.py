"""The view of ``proxy.py``, generated only for a schema with a proxy chain
(``proxy/initialize`` and ``proxy/successor``, the unstable schemas'): the
proxy's hooks (``Proxy``, typed over the package's ``initialize``), its end
of the conductor connection and the conductor's entry points, as source
text (the fixed part is the runtime's ``_proxy`` and ``_conductor``)."""

from __future__ import annotations

from ..records import dataclass
from .inputs import ViewInputs
from .names import reexports
from .protocol import header, literals

PROXY_DOC = '''"""What a proxy of a chain does with each message, by direction
(see the runtime's ``ProxyHooks``): every hook passes its message on
unchanged by default; override the ones you need. Serve it with
``run_proxy_stdio(MyProxy)`` or a ``ProxySideConnection``; a conductor
(``conduct``, ``acpgen conduct``) runs the chain."""'''

INITIALIZE_DOC = '''"""The successor answered the ``initialize`` this proxy forwarded
for ``proxy/initialize`` (``params``) with ``result``: return the answer,
the capabilities of the chain from this proxy on (its protocol version
is always the successor's)."""'''

CONNECTION_DOC = '''"""A proxy's end of its connection to the conductor:
``make_proxy(conn)`` returns the proxy (a :class:`Proxy`), whose hooks see
each message by direction. Messages from the client's side arrive as they
are, those to and from the successor in ``proxy/successor`` envelopes;
``request_successor``, ``notify_successor``, ``request_client`` and
``notify_client`` send new ones (see the runtime's ``_proxy``)."""'''

RUN_DOC = '''"""Serve a proxy (``make_proxy(conn)``) on stdin/stdout, the way a
conductor starts it, until the conductor closes the connection; with
``strict`` its hooks get params decoded strictly, with ``tracer`` it
continues the trace context of what it forwards in spans of its own (see
``ProxySideConnection``)."""'''


@dataclass(frozen=True)
class ProxyView:
    """Everything ``proxy.py`` prints."""

    header: str
    reexports: tuple[tuple[str, str], ...]
    """(runtime module, name) imported under its own name, to export it."""
    exports: tuple[str, ...]
    """``__all__``, as literals."""
    params: str
    """The annotation of ``initialize``'s params."""
    result: str
    """The annotation of ``initialize``'s result."""
    proxy_doc: str
    initialize_doc: str
    connection_doc: str
    run_doc: str


def build(inputs: ViewInputs) -> ProxyView:
    """The view of ``proxy.py`` (rendered only for a schema with a proxy chain)."""
    package = inputs.package
    ref = inputs.names.ref
    initialize = next(c for c in package.calls("agent") if c.method == "initialize" and c.kind == "request")
    return ProxyView(
        header=header(inputs),
        reexports=tuple(reexports(package)["proxy"]),
        exports=literals(inputs.exports["proxy"]),
        params=ref(initialize.params_class),
        result=ref(initialize.result_class),
        proxy_doc=PROXY_DOC,
        initialize_doc=INITIALIZE_DOC,
        connection_doc=CONNECTION_DOC,
        run_doc=RUN_DOC,
    )
