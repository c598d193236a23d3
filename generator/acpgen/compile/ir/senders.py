"""The agent's session senders: a method per kind of session update, the
tool call handle and the content helpers (the generated ``senders``
module)."""

from __future__ import annotations

from ...records import dataclass
from .defs import Field
from .types import TypeExpr


@dataclass(frozen=True)
class Sender:
    """One method of the ``SessionSender``: it builds a variant of the
    ``session/update`` union and sends it."""

    name: str
    """The method's name (:func:`acpgen.compile.passes.senders.sender_name`)."""
    tag: str
    variant_class: str
    fields: tuple[Field, ...]
    """The variant's fields, its parameters (empty when it wraps a value)."""
    description: str
    """What the update is, from the schema."""
    wraps: str = ""
    """The ``$defs`` name of the one value the variant wraps (its parameter
    ``value``), or empty."""
    starts: bool = False
    """It starts a tool call: it returns a ``ToolCallHandle`` and makes up
    the id (in :attr:`key`) when the caller gives none."""
    key: str = ""
    """With ``starts``: the attribute holding the tool call's id."""


@dataclass(frozen=True)
class ToolCall:
    """The tool call a ``ToolCallHandle`` follows (``rules/senders.toml``)."""

    key: str
    """The attribute holding the id, on the variants that start and update it ..."""
    key_type: TypeExpr
    """... and its type (a string)."""
    update_class: str
    """The variant the handle's ``update`` sends."""
    fields: tuple[Field, ...]
    """That variant's fields but the key: ``update``'s parameters."""
    status: str
    """The attribute ``complete`` and ``fail`` set ..."""
    status_enum: str
    """... the class of its enum ..."""
    completed: str
    """... and the members (names) they set it to."""
    failed: str


@dataclass(frozen=True)
class Helper:
    """A content helper: a function that builds one variant of a content union."""

    name: str
    union: str
    """The union's ``$defs`` name."""
    tag: str
    variant_class: str
    fields: tuple[Field, ...]
    description: str


@dataclass(frozen=True)
class SessionCall:
    """A method of the ``SessionSender`` for a request or notification the
    agent sends to the client whose params name the session: the
    connection's typed method, given this session's id."""

    name: str
    """The connection's method (the call's handler name)."""
    method: str
    params_class: str
    result_class: str
    """``""`` for a notification."""
    session_field: str
    """The params' attribute naming the session (the sender fills it in)."""
    fields: tuple[Field, ...]
    """The params' other fields: the method's parameters."""
    description: str


@dataclass(frozen=True)
class Senders:
    """Everything the ``senders`` module prints."""

    notification_class: str
    """The ``session/update`` params class ..."""
    method: str
    session_field: str
    """... its attribute naming the session ..."""
    update_field: str
    """... and the one holding the update."""
    senders: tuple[Sender, ...]
    tool_call: ToolCall | None = None
    helpers: tuple[Helper, ...] = ()
    calls: tuple[SessionCall, ...] = ()
    """The requests and notifications to the client that name a session."""
    block_union: str = ""
    """The content block union (``""``: none) ..."""
    text_class: str = ""
    """... where a ``str`` is accepted too, sent as this variant (``""``:
    nowhere) ..."""
    text_field: str = ""
    """... with the text in this attribute."""
    tool_content_union: str = ""
    """The tool call content union, whose lists accept content blocks too ..."""
    tool_content_class: str = ""
    """... each wrapped in this variant ..."""
    tool_content_field: str = ""
    """... in this attribute ..."""
    tool_content_kinds: tuple[str, ...] = ()
    """... unless it is one of these classes (the union's)."""
