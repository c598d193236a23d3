"""Everything one generated package holds."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from ...records import dataclass
from .defs import Definition
from .methods import Call, Cancellation, Gate, RpcMethod, SchemaFacts, Side
from .patch import Capability, Chunk, Upsert
from .senders import Senders
from .session import SessionRules


@dataclass(frozen=True)
class Fallback:
    """A place lowering models less than the schema says: a value kept as
    JSON (``any``: ``Any``, checked against its subschema), or a definition
    that is an alias because no recogniser took it (``alias``)."""

    pointer: str
    became: Literal["any", "alias"]
    reasons: tuple[str, ...]
    definition: str = ""
    """For ``alias``: the ``$defs`` name."""


@dataclass(frozen=True)
class Resumption:
    """How a client takes a session up again on a new connection, as the
    schema offers it (the generated ``SessionKeeper``; the places are read
    with ``rules/resumption.toml``)."""

    capabilities: str
    """The ``initialize`` result's attribute holding the agent's capabilities."""
    load: bool
    """``session/load`` (the agent replays the whole conversation), advertised
    by the ``loadSession`` flag."""
    resume: Literal["", "session_capabilities", "session"]
    """How ``session/resume`` is advertised: ``session_capabilities`` (v1: its
    ``resume`` object), ``session`` (v2: the baseline session methods), or
    ``""`` (no such method)."""
    replay_class: str = ""
    """The ``replayFrom`` variant asking ``session/resume`` to replay from the
    start (``""``: session/resume replays nothing)."""
    load_method: str = ""
    """The method that loads a session (``""``: none to use)."""
    load_flag: str = ""
    """The capabilities' attribute that advertises it."""
    resume_method: str = ""
    """The method that resumes a session (``""``: none to use)."""
    resume_place: tuple[str, ...] = ()
    """The attributes, from the capabilities, of the object that advertises
    ``session/resume``."""
    resume_class: str = ""
    """That object's class."""
    replay_field: str = ""
    """The ``session/resume`` params' attribute asking for a replay."""
    mcp_server: str = ""
    """The class of the MCP servers the keeper sends."""


@dataclass(frozen=True)
class Package:
    """Everything one generated package holds."""

    name: str
    schema_path: str
    schema_sha256: str
    schema_title: str
    definitions: tuple[Definition, ...]
    """In ``$defs`` order."""
    schema_version: str = ""
    """The version of the npm package the schema came in, from SOURCE.json."""
    upserts: tuple[Upsert, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    capabilities: tuple[Capability, ...] = ()
    session: SessionRules | None = None
    """The session fold, when the package has session rules."""
    methods: tuple[RpcMethod, ...] = ()
    """The JSON-RPC methods, from ``x-method``/``x-side`` (set by ``methods``)."""
    null_request_id: bool = False
    """The schema's ``RequestId`` allows ``null`` (v1 does, as serde's ``Null``)."""
    gates: tuple[Gate, ...] = ()
    """The methods that need a capability of the side handling them (set by
    ``gates``), in method order."""
    warnings: tuple[str, ...] = ()
    """What the generator noticed but generated anyway (rules that do not fit
    the schema)."""
    validation_defs: Any = None
    """The ``$defs`` without their annotations: what strict mode validates
    against, and what :class:`RawT` pointers point into."""
    facts: SchemaFacts = field(default_factory=SchemaFacts)
    """What the passes after lowering need of the schema document."""
    rule_set: str | None = None
    """The patch rule set the package was generated with (None: none)."""
    fallbacks: tuple[Fallback, ...] = ()
    """Every place lowering fell back, in ``$defs`` order, each once."""
    alias_order: tuple[str, ...] = ()
    """The type aliases (plain and union) by ``$defs`` name, each after the
    aliases its value names (set by ``analysis``)."""
    referenced: frozenset[str] = frozenset()
    """The definitions another type names (set by ``analysis``)."""
    uses_const: bool = False
    """Some type is a constant (set by ``analysis``)."""
    cancellation: Cancellation | None = None
    """What a session's cancel does to the requests being handled (set by
    ``cancellation``; None when the schema has no such notification)."""
    resumption: Resumption | None = None
    """How a client resumes a session on a new connection; None without a
    session fold, ``initialize`` or a method to resume with (set by
    ``resumption``)."""
    senders: Senders | None = None
    """The agent's session senders; None without a ``session/update``
    notification carrying a tagged union (set by ``senders``)."""

    @property
    def capability_classes(self) -> tuple[str, ...]:
        """The capability classes ``supports`` takes, each once, in order."""
        return tuple(dict.fromkeys(c.class_name for c in self.capabilities))

    @property
    def applies(self) -> bool:
        """The patch module has apply functions (upserts or chunks)."""
        return bool(self.upserts or self.chunks)

    @property
    def appends_base64(self) -> bool:
        """Some chunk appends base64 data (the patch module decodes and
        re-encodes it)."""
        return any(c.append == "base64" for c in self.chunks)

    def calls(self, side: Side) -> tuple[Call, ...]:
        """Every request and notification handled by ``side``, in method order."""
        return tuple(c for m in self.methods for c in m.calls if c.side == side)

    def classes_of(self, *sides: Side) -> tuple[str, ...]:
        """The classes the methods handled by ``sides`` (all, when none is
        given) name as params or results, each once, sorted."""
        names = (
            n
            for m in self.methods
            for c in m.calls
            if not sides or c.side in sides
            for n in (c.params_class, c.result_class)
        )
        return tuple(sorted(set(n for n in names if n)))
