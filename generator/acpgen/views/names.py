"""The generated modules' namespaces, clash-free by construction.

A generated module binds three kinds of module-level names:

- the schema's names (a class or type alias per ``$defs`` entry, the union
  variants' classes, the patch rules' state classes), spelled as naming made
  them: only ``models.py`` defines them;
- the module's own public names (``decode``, ``Session``, ``Connection``,
  ...), listed once here (:func:`exports`), which is also where every
  ``__all__`` and the package's imports come from;
- everything else under a private name: the templates import what they use
  from ``typing`` and the runtime modules as ``_Any``, ``_UNSET``,
  ``_check_str``... and name their helpers ``_decode_X`` and such, while no
  schema name starts with an underscore (:func:`acpgen.compile.passes.naming.class_name`).

So a schema name can meet only a module's own public names and the builtins
the module's code uses. A module other than ``models.py`` refers to a schema
name that is one of its own names or a builtin as ``_types.NAME``, through
``from . import models as _types``, and imports every other schema name it
uses by name (:meth:`ModuleNames.ref`); ``models.py`` and the package's
``__init__.py``, which bind the schema's names, refer to a builtin one of
them shadows as ``_builtins.NAME``, through ``import builtins as _builtins``
(:meth:`ModuleNames.builtin`). The templates write a marker line where the
imports go (:data:`IMPORTS_MARKER`); :meth:`ModuleNames.imports` is what
replaces it once the module is rendered, so a module imports exactly what
it refers to.

At the package level the schema wins: ``acp.X`` is the schema's ``X`` and
a fixed name of the same spelling stays reachable from its module only
(``acp.connection.Connection``, ``acp.codec.decode``): :func:`exports`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..compile import ir
from ..errors import AcpgenError

__all__ = [
    "BUILTINS",
    "CODEC_HELPERS",
    "IMPORTS_MARKER",
    "SENDERS_HELPERS",
    "ModuleNames",
    "exports",
    "package_imports",
    "proxy_chain",
    "reexports",
    "schema_names",
    "senders_exports",
]


def _uses_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as a whole word (as ``\\bWORD\\b``
    finds it when the word starts and ends with a word character): not
    preceded or followed by a letter, digit or underscore, what ``\\w``
    matches (``str.isalnum`` or ``_``). A ``str.find`` per optional import
    costs a few milliseconds over a whole codec module in all, where
    collecting every underscore-first word with a look-behind pattern
    (``(?<!\\w)_\\w+``, which tries every position) cost about 15."""
    start = 0
    end_of_text = len(text)
    while True:
        at = text.find(word, start)
        if at < 0:
            return False
        end = at + len(word)
        if (at == 0 or not _word_char(text[at - 1])) and (end == end_of_text or not _word_char(text[end])):
            return True
        start = at + 1


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


BUILTINS = frozenset(dir(builtins))
"""Every name of the builtins module: a schema name of that spelling is
kept, and the generated code that needs the builtin reaches it another way."""

IMPORTS_MARKER = "#acpgen:imports#"
"""The line a template writes where the imports of the schema's names (and
of ``builtins``) go; :meth:`ModuleNames.imports` replaces it."""

TYPES_MODULE = "_types"
"""What a generated module calls ``models`` when it refers to a schema name
that its own names or the builtins would hide."""

BUILTINS_MODULE = "_builtins"

CODEC_NAMES = ("decode", "decode_class", "encode")

CODEC_HELPERS = tuple(
    ("_codec", name)
    for name in [
        "add_extra",
        "check_closed",
        "check_other_tag",
        "closed_enum",
        "extra_members",
        "open_int_enum",
        "open_str_enum",
        "recovered",
        "tagged_union",
        "untagged_union",
        "variant_encoding",
    ]
) + tuple(
    ("_runtime", name)
    for name in [
        "FLOAT_MAX",
        "MISSING",
        "UNSET",
        "Unset",
        "ValidationError",
        "any_str",
        "any_value",
        "check_bool",
        "check_const",
        "check_int",
        "check_list",
        "check_list_skipping",
        "check_map",
        "check_num",
        "check_str",
        "check_tag",
        "check_json",
        "check_unknown",
        "check_variants",
        "check_variants_skipping",
        "exactly_one",
        "first_match",
        "furthest",
        "json_object",
        "missing",
        "not_null",
        "salvage",
        "scalar_union",
        "type_error",
        "unexpected",
        "wire_json",
        "wire_map",
    ]
)
"""The runtime helpers the codec's decoders and encoders call or are built
with, each imported as ``_NAME`` when the rendered codec uses it (a package need not use them
all, and a checker reports an unused private import)."""

PATCH_NAMES = ("apply", "merge_meta", "supports", "CAPABILITIES")

PROTOCOL_NAMES = (
    "Agent",
    "CANCELLATION",
    "CANCEL_REQUEST",
    "CODEC",
    "Client",
    "ErrorResponse",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHODS",
    "METHOD_NOT_FOUND",
    "Message",
    "MethodInfo",
    "Notification",
    "NotificationInfo",
    "PARSE_ERROR",
    "ParamsError",
    "REQUEST_CANCELLED",
    "REQUIRES",
    "Request",
    "RequestError",
    "RequestInfo",
    "Response",
    "RpcError",
    "decode_message",
    "decode_result",
    "encode_message",
)
PROTOCOL_FROM_JSONRPC = tuple(
    n
    for n in PROTOCOL_NAMES
    if n
    not in (
        "Agent",
        "CANCELLATION",
        "Client",
        "CODEC",
        "METHODS",
        "REQUIRES",
        "decode_message",
        "decode_result",
        "encode_message",
    )
)
"""What ``protocol.py`` re-exports from the runtime's ``_jsonrpc``."""

CONNECTION_FROM_RUNTIME = (
    ("_versions", "UNSUPPORTED_PROTOCOL_VERSION"),
    ("_versions", "AgentEntry"),
    ("_capabilities", "CapabilityError"),
    ("_versions", "ClientEntry"),
    ("_connection", "Connection"),
    ("_connection", "ConnectionOptions"),
    ("_connection", "HandlerError"),
    ("_transport", "MessageTooLarge"),
    ("_permissions", "PermissionDecision"),
    ("_permissions", "PermissionPolicy"),
    ("_resume", "ResumeUnsupported"),
    ("_otel", "AcpIdGenerator"),
    ("_otel", "OpenTelemetryTracer"),
    ("_otel", "opentelemetry_context"),
    ("_trace", "RecordingTracer"),
    ("_trace", "TraceContext"),
    ("_trace", "TraceMessage"),
    ("_trace", "TraceSpan"),
    ("_trace", "Tracer"),
    ("_trace", "current_trace"),
    ("_trace", "trace_of"),
    ("_trace", "use_trace"),
    ("_trace", "without_trace"),
    ("_sides", "bearer_token"),
    ("_sides", "serve_versions"),
    ("_sides", "spawn_agent_versions"),
    ("_transport", "StreamTransport"),
    ("_transport", "Transport"),
    ("_versions", "UnsupportedProtocolVersion"),
    ("_versions", "VersionMismatch"),
    ("_versions", "connect_versions"),
)
"""What ``connection.py`` re-exports from the runtime modules (module, name)."""

CONNECTION_DEFINED = (
    "AgentSideConnection",
    "ClientSideConnection",
    "SessionKeeper",
    "asgi_agent_app",
    "connect_agent_http",
    "connect_agent_ws",
    "connect_in_memory",
    "run_agent_stdio",
    "serve_agent",
    "spawn_agent",
)
"""What ``connection.py`` defines itself."""

RESUMPTION_ONLY = ("ResumeUnsupported", "SessionKeeper")

MCP_MESSAGE = "mcp/message"
CONNECTION_FROM_MCP = (
    ("_mcp", "McpCallError"),
    ("_mcp", "McpContext"),
    ("_mcp", "McpProvider"),
    ("_mcp", "McpServerRegistration"),
    ("_mcp", "McpSession"),
    ("_mcp", "McpStdioServer"),
    ("_mcp", "McpTools"),
    ("_mcp", "acp_server_ids"),
)
"""What ``connection.py`` re-exports from the runtime's ``_mcp``, in the
packages with MCP over ACP (:func:`has_mcp`)."""


def has_mcp(package: ir.Package) -> bool:
    """The schema binds MCP over ACP: ``mcp/message`` is a request the
    client handles and a notification the agent handles (the package gets
    the runtime's ``_mcp``, ``conn.mcp_provider`` and ``conn.mcp``)."""
    for m in package.methods:
        if m.name == MCP_MESSAGE:
            return (
                m.request is not None
                and m.request.side == "client"
                and m.notification is not None
                and m.notification.side == "agent"
            )
    return False


PROXY_METHODS = ("proxy/initialize", "proxy/successor")
"""The methods of a proxy chain (the unstable schemas'): a package whose
schema has both (and ``initialize``) gets ``proxy.py``, the proxy's end and
the conductor."""

PROXY_FROM_RUNTIME = (
    ("_conductor", "ChainEnded"),
    ("_conductor", "Conductor"),
    ("_conductor", "conduct"),
)
"""What ``proxy.py`` re-exports from the runtime."""

PROXY_DEFINED = ("Proxy", "ProxySideConnection", "run_proxy_stdio")
"""What ``proxy.py`` defines."""

PROXY_SOURCES = ("proxy.py", "_proxy.py", "_conductor.py")
"""The modules only a package with a proxy chain holds."""

SENDERS_DEFINED = ("SessionSender", "ToolCallHandle")
"""What ``senders.py`` defines besides the content helpers."""

SENDERS_HELPERS = (
    ("_senders", "SessionSenderBase"),
    ("_senders", "ToolCallHandleBase"),
    ("_senders", "as_block"),
    ("_senders", "as_blocks"),
    ("_senders", "as_tool_content"),
    ("_senders", "as_tool_item"),
    ("_senders", "new_tool_call_id"),
    ("_runtime", "UNSET"),
    ("_runtime", "Unset"),
)
"""The runtime names ``senders.py`` imports as ``_NAME`` when it uses them."""

PACKAGE_METADATA = ("DEFINITIONS", "GENERATOR_VERSION", "SCHEMA_FILE", "SCHEMA_SHA256", "SCHEMA_VERSION")
"""What the package's ``__init__.py`` defines itself."""

PACKAGE_FROM_RUNTIME = ("UNSET", "Unset", "ValidationError")
"""What the package re-exports from the runtime's ``_runtime``."""


def senders_exports(package: ir.Package) -> tuple[str, ...]:
    """What ``senders.py`` exports: the ``SessionSender``, the
    ``ToolCallHandle`` when it has one, and the content helpers."""
    s = package.senders
    if s is None:
        return ()
    handle = SENDERS_DEFINED[1:] if s.tool_call is not None else ()
    return (SENDERS_DEFINED[0], *handle, *(h.name for h in s.helpers))


def _check_senders(modules: dict[str, tuple[str, ...]]) -> None:
    """The senders' names are the package's: one that another module (or
    the schema) exports too is an error naming both."""
    for name in modules["senders"]:
        for module, names in modules.items():
            if module != "senders" and name in names:
                what = "the schema's name" if module == "models" else f"a name of {module}.py"
                raise AcpgenError(f"the sender name {name!r} (senders.py) is also {what}")
        if name in PACKAGE_METADATA or name in PACKAGE_FROM_RUNTIME:
            raise AcpgenError(f"the sender name {name!r} (senders.py) is also a name of the package's __init__.py")


def proxy_chain(package: ir.Package) -> bool:
    """Whether the schema has the methods of a proxy chain, handled by the proxy."""
    methods = {m.name: m for m in package.methods}
    proxied = all(name in methods and any(c.side == "proxy" for c in methods[name].calls) for name in PROXY_METHODS)
    return proxied and any(c.method == "initialize" and c.kind == "request" for c in package.calls("agent"))


def schema_names(package: ir.Package) -> tuple[str, ...]:
    """The names ``models.py`` defines from the schema, in its order: the
    definitions, the union variants' classes, the rules' state classes."""
    names = [d.class_name for d in package.definitions]
    for d in package.definitions:
        if isinstance(d, ir.UnionDef):
            names.extend(v.class_name for v in d.variants if not v.reuses_ref)
    names.extend(u.state_class for u in package.upserts)
    return tuple(names)


def _import_order(pair: tuple[str, str]) -> tuple[bool, str]:
    return (not pair[1].isupper(), pair[1])


def reexports(package: ir.Package) -> dict[str, list[tuple[str, str]]]:
    """What ``protocol.py`` and ``connection.py`` import from the runtime
    modules under the runtime's own names, to export them: (module, name)."""
    connection = [
        pair for pair in CONNECTION_FROM_RUNTIME if package.resumption is not None or pair[1] not in RESUMPTION_ONLY
    ]
    if has_mcp(package):
        connection.extend(CONNECTION_FROM_MCP)
    return {
        "protocol": sorted((("_jsonrpc", n) for n in PROTOCOL_FROM_JSONRPC), key=_import_order),
        "connection": sorted(connection, key=lambda pair: (pair[0], *_import_order(pair))),
        "proxy": list(PROXY_FROM_RUNTIME) if proxy_chain(package) else [],
    }


def exports(package: ir.Package) -> dict[str, tuple[str, ...]]:
    """Each generated module's ``__all__`` (``"__init__"`` for the package),
    the one list of the names the templates define or re-export; the
    package's leaves out a fixed name the schema also defines."""
    connection = tuple(n for _, n in CONNECTION_FROM_RUNTIME) + CONNECTION_DEFINED
    if package.resumption is None:
        connection = tuple(n for n in connection if n not in RESUMPTION_ONLY)
    if has_mcp(package):
        connection += tuple(n for _, n in CONNECTION_FROM_MCP)

    proxy: tuple[str, ...] = ()
    if proxy_chain(package):
        proxy = tuple(
            sorted((*(n for _, n in PROXY_FROM_RUNTIME), *PROXY_DEFINED), key=lambda n: (not n[0].isupper(), n))
        )
    session: tuple[str, ...] = ()
    s = package.session
    if s is not None:
        session = (
            "HistoryEntry",
            "HistoryItem",
            *(f.entry_class for f in s.fields if f.entry_class),
            *((s.message_class,) if s.message_class else ()),
            "PROTOCOL_VERSION",
            "SESSION_SOURCES",
            "Session",
            "UPDATE_RULES",
            "UpdateRule",
            *(("apply_prompt",) if s.prompt_field else ()),
            "apply_session_update",
            "fold_session_update",
            "session_from_json",
            "session_to_json",
        )
    modules = {
        "models": schema_names(package),
        "codec": CODEC_NAMES,
        "patch": PATCH_NAMES + tuple(u.function for u in package.upserts) + tuple(c.function for c in package.chunks),
        "session": session,
        "protocol": PROTOCOL_NAMES,
        "connection": tuple(sorted(connection, key=lambda n: (not n.isupper(), n))),
        "senders": senders_exports(package),
        "proxy": proxy,
    }
    _check_senders(modules)
    schema = set(modules["models"])
    fixed = [*PACKAGE_METADATA, *PACKAGE_FROM_RUNTIME, *CODEC_NAMES]
    package_names = [n for n in fixed if n not in schema] + list(modules["models"])
    for module in ("patch", "session", "protocol", "senders", "connection", "proxy"):
        package_names.extend(n for n in modules[module] if n not in schema)
    modules["__init__"] = tuple(package_names)
    return modules


def _import_lines(module: str, names: tuple[str, ...], public: set[str], indent: str = "") -> list[str]:
    """``from .module import *`` when the schema defines none of ``names``,
    else an import of each of the others (``public``)."""
    kept = [n for n in names if n in public]
    if len(kept) == len(names):
        return [f"{indent}from .{module} import *  # noqa: F401,F403"]
    return [f"{indent}from .{module} import {n} as {n}" for n in kept]


LAZY_MODULES = ("patch", "session", "protocol", "senders", "connection", "proxy")
"""The modules whose exports the package loads on first use (see the
runtime's ``_exports``), in the order the package re-exports them: a name
two of them export is the later one's."""


def package_imports(package: ir.Package) -> dict[str, str]:
    """The package's imports of its modules' exports: those it loads with
    the package (``"eager"``: the runtime's, the codec's, the models') and,
    for type checkers, those of :data:`LAZY_MODULES` (``"lazy"``, loaded on
    first use): each module's names the schema does not define."""
    names = exports(package)
    schema = set(names["models"])
    public = {n for n in names["__init__"] if n not in schema}
    lines = []
    runtime = [n for n in PACKAGE_FROM_RUNTIME if n in public]
    if len(runtime) == len(PACKAGE_FROM_RUNTIME):
        lines.append("from ._runtime import " + ", ".join(runtime))
    else:
        lines.extend(f"from ._runtime import {n} as {n}" for n in runtime)
    codec = [n for n in CODEC_NAMES if n in public]
    if len(codec) == len(CODEC_NAMES):
        lines.append("from .codec import " + ", ".join(codec))
    elif codec:
        lines.extend(f"from .codec import {n} as {n}" for n in codec)
    else:
        # Importing the codec binds the models' from_wire and to_wire.
        lines.append("import importlib as _importlib")
        lines.append('_importlib.import_module(".codec", __name__)')
    lines.append("from .models import *  # noqa: F401,F403")
    # proxy.py exists only in a package with a proxy chain.
    modules = [m for m in LAZY_MODULES if m != "proxy" or proxy_chain(package)]
    lazy = [line for module in modules for line in _import_lines(module, names[module], public, "    ")]
    return {"eager": "\n".join(lines), "lazy": "\n".join(lazy or ["    pass"])}


def lazy_exports(package: ir.Package) -> dict[str, str]:
    """The package's names loaded on first use: name -> the module of
    :data:`LAZY_MODULES` it is read from (the last one exporting it, as
    star imports in that order would bind it); the schema's names are the
    models'."""
    names = exports(package)
    schema = set(names["models"])
    found: dict[str, str] = {}
    for module in LAZY_MODULES:
        for name in names[module]:
            if name not in schema:
                found.pop(name, None)
                found[name] = module
    return found


@dataclass
class ModuleNames:
    """How one generated module refers to schema names and builtins, and
    what it must import for that (recorded while it is rendered)."""

    own: frozenset[str]
    """The names the module binds besides the schema's."""
    schema: tuple[str, ...]
    """The schema's names, in ``models.py``'s order."""
    binds_schema: bool
    """Whether the module binds the schema's names itself (``models.py``,
    the package): then a builtin one of them shadows is ``_builtins.X``."""
    optional_imports: tuple[tuple[str, str], ...] = ()
    """(module, name) imported as ``_NAME`` when the rendered module uses it."""
    sorted_imports: bool = True
    """Whether the imports from ``models`` are sorted by name (else in
    ``models.py``'s order: the codec imports nearly all of them)."""
    _used: set[str] = field(default_factory=lambda: set[str]())
    _qualified: bool = False
    _builtins_used: bool = False
    _self_types: bool = False
    _schema_set: frozenset[str] = frozenset()
    _class_scope: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._schema_set = frozenset(self.schema)

    def ref(self, name: str) -> str:
        """The source text that names the schema's ``name`` in this module."""
        if self.binds_schema:
            return name
        if name in self.own or name in BUILTINS:
            self._qualified = True
            return f"{TYPES_MODULE}.{name}"
        self._used.add(name)
        return name

    def annotation_ref(self, name: str) -> str:
        """The source text that names the schema's ``name`` in an annotation
        in this module. In a module that binds the schema's names, one that
        is a builtin's is ``_types.NAME`` (``models`` imported under
        ``TYPE_CHECKING``): a type checker reads a name used before the
        module defines it as the builtin (mypy)."""
        if self.binds_schema and name in BUILTINS and name in self._schema_set:
            self._self_types = True
            return f"{TYPES_MODULE}.{name}"
        return self.ref(name)

    def enter_class(self, attributes: Iterable[str]) -> str:
        """Render what follows in the body of a class with ``attributes``
        (its fields ...): a builtin one of them shadows is ``_builtins.X``
        there (a field ``str`` makes ``str`` the field in the annotations
        after it). An empty text, for the template to print."""
        self._class_scope = frozenset(attributes)
        return ""

    def builtin(self, name: str) -> str:
        """The source text that names the builtin ``name`` in this module."""
        if self.binds_schema and (name in self._schema_set or name in self._class_scope):
            self._builtins_used = True
            return f"{BUILTINS_MODULE}.{name}"
        return name

    def imports(self, body: str) -> str:
        """The import lines that replace :data:`IMPORTS_MARKER` in the
        rendered module ``body``."""
        lines = [
            f"from .{module} import {name} as _{name}"
            for module, name in self.optional_imports
            if _uses_word(body, f"_{name}")
        ]
        if self._builtins_used:
            lines.append(f"import builtins as {BUILTINS_MODULE}")
        if self._qualified:
            lines.append(f"from . import models as {TYPES_MODULE}")
        if self._self_types:
            lines.append(f"if _typing.TYPE_CHECKING:\n    from . import models as {TYPES_MODULE}")
        used = sorted(self._used) if self.sorted_imports else [n for n in self.schema if n in self._used]
        if used:
            lines.append("from .models import (\n" + "".join(f"    {n},\n" for n in used) + ")")
        return "\n".join(lines)
