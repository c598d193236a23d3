"""The session fold: the ``Session`` state's attributes and what each
``session/update`` kind does to them."""

from __future__ import annotations

from typing import Literal

from ...records import dataclass
from .types import TypeExpr

Container = Literal["entities", "state", "messages", "value", "values", "items"]
"""How the ``Session`` holds an attribute (see :class:`SessionField`)."""
Action = Literal["upsert", "chunk", "message-chunk", "set", "keyed-set", "remove", "append"]
"""What a ``session/update`` kind does (see ``rules/session.toml``)."""
SessionSource = Literal["result", "params"]
"""Where a method carries the session it names."""


@dataclass(frozen=True)
class SessionField:
    """One attribute of the generated ``Session`` state."""

    name: str
    """The Python attribute (snake_case)."""
    wire_name: str
    """Its key in the snapshot's JSON (camelCase)."""
    container: Container
    """``entities`` (a dict of states by key), ``state`` (one state or None),
    ``messages`` (v1: a dict of chunked messages), ``value`` (one value or
    None, or [] when ``empty``), ``values`` (a dict of values by key) or
    ``items`` (a list of values)."""
    state_class: str = ""
    """For ``entities`` and ``state``: the patch state class."""
    restore_from: str = ""
    """For ``entities`` and ``state``: the ``$defs`` name of the update type a
    snapshot is decoded as, to be folded into a new state ..."""
    restore_function: str = ""
    """... by this patch function."""
    value_type: TypeExpr | None = None
    """For ``value``, ``values`` and ``items``: the stored value's type."""
    item_def: str = ""
    """The ``$defs`` name one stored value (or each list item) decodes as."""
    empty: bool = False
    """For ``value``: starts as [] rather than None."""
    history: bool = False
    """Its entities take a place in ``history`` when they first appear."""
    entry_class: str = ""
    """With ``history``: the class of its entries in ``history``."""


@dataclass(frozen=True)
class SessionAction:
    """What one SessionUpdate variant does to the session."""

    tag: str | None
    """The ``sessionUpdate`` value; None for the catch-all variant."""
    variant_class: str
    function: str
    """The generated fold function for this variant."""
    action: Action
    """``upsert``, ``chunk``, ``message-chunk``, ``set``, ``keyed-set``,
    ``remove`` or ``append`` (see ``rules/session.toml``)."""
    field: SessionField
    source: str = ""
    """For ``set`` and ``keyed-set``: the variant's attribute holding the
    value; empty for the variant itself."""
    key: str = ""
    """The attribute holding the entity's key: on the variant (``upsert``,
    ``chunk``, ``remove``, ``message-chunk``: the message id) or on the
    stored value (``keyed-set``)."""
    patch_function: str = ""
    """For ``upsert`` and ``chunk``: the patch function that folds it ..."""
    replaces: bool = False
    """... starting from a new state (a full snapshot, v1's ``tool_call``)."""
    chunk_attr: str = ""
    """For a ``chunk`` that appends an item: the state's list it appends to
    (the fold appends in place to a state it owns) ..."""
    chunk_source: str = ""
    """... and the variant's attribute holding the item."""
    started_by: tuple[str, ...] = ()
    """Tags that must have started the entity (checked by ``acpgen validate``)."""
    reason: str = ""


@dataclass(frozen=True)
class SessionRules:
    """The ``Session`` state and ``apply_session_update`` of one package."""

    notification_class: str
    """The class of the ``session/update`` params."""
    fields: tuple[SessionField, ...]
    actions: tuple[SessionAction, ...]
    protocol_version: int
    message_class: str = ""
    """(v1) The class of a message streamed as bare chunks."""
    sessions_from: tuple[tuple[str, SessionSource], ...] = ()
    """(method, ``result`` or ``params``) pairs that name a session."""
    prompt_field: str = ""
    """(v1) The message field ``apply_prompt`` adds the user's prompt to ..."""
    prompt_class: str = ""
    """... the class of the ``session/prompt`` params ..."""
    prompt_entry_class: str = ""
    """... and the class of that field's history entries."""

    def field(self, name: str) -> SessionField:
        """The Session field called ``name``."""
        return next(f for f in self.fields if f.name == name)
