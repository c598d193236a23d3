"""The fixed part of the generated ``senders`` module: an agent's typed
senders of one session's ``session/update`` notifications.

``conn.session(session_id)`` on the agent's connection returns the
package's ``SessionSender``, a subclass of :class:`SessionSenderBase` with
one ``async`` method per kind of update the schema defines (generated:
``message``, ``thought``, ``plan``, ``tool_call`` ...). Each builds the
update and hands it to :meth:`SessionSenderBase.send`, which wraps it in
the package's ``session/update`` notification for this session and sends
it. The method that starts a tool call returns the package's
``ToolCallHandle`` (over :class:`ToolCallHandleBase`), which sends the
updates of that one call.

What is the same for every schema is here: holding the connection and the
session, making a tool call id, and the conversions that let a caller pass
a plain ``str`` where a content block goes (:func:`as_block`,
:func:`as_blocks`) and a content block or a ``str`` where tool call content
goes (:func:`as_tool_content`). The generated subclasses name the classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ._runtime import UNSET

__all__ = [
    "Notifier",
    "SessionSenderBase",
    "ToolCallHandleBase",
    "as_block",
    "as_blocks",
    "as_tool_content",
    "as_tool_item",
    "new_tool_call_id",
]


C = TypeVar("C", bound="Notifier")
"""The type of the connection (the package's ``AgentSideConnection``)."""
S = TypeVar("S", bound=str)
"""The type of a session id (the schema's ``SessionId``)."""
U = TypeVar("U")
"""The type of a session update (the schema's ``SessionUpdate``)."""
K = TypeVar("K", bound=str)
"""The type of a tool call id (the schema's ``ToolCallId``)."""


class Notifier(Protocol):
    """What a sender sends through: the agent's connection."""

    async def notify(self, method: str, params: Any = None) -> None: ...


def new_tool_call_id() -> str:
    """A new tool call id: 32 hexadecimal digits (``uuid4().hex``)."""
    import uuid  # on first use: the package imports this module eagerly

    return uuid.uuid4().hex


class SessionSenderBase(Generic[C, S, U]):
    """Sends one session's updates over ``connection``: the agent's
    connection, whose ``notify`` sends a notification.

    A subclass sets :attr:`_METHOD` and :meth:`_wrap` (the package's
    ``session/update`` method and notification) and adds a method per kind
    of update, and one per request or notification to the client that
    names a session (``request_permission``, ``read_text_file`` ...: the
    connection's typed method, with this session's id); :meth:`send` sends
    an update built already."""

    __slots__ = ("connection", "session_id")

    _METHOD: ClassVar[str] = "session/update"
    """The JSON-RPC method of a session update."""

    def __init__(self, connection: C, session_id: S) -> None:
        self.connection: C = connection
        """The connection the updates go out on."""
        self.session_id: S = session_id
        """The session they belong to."""

    def _wrap(self, update: U) -> Any:
        """The ``session/update`` params carrying ``update`` for this session."""
        raise NotImplementedError

    async def send(self, update: U) -> None:
        """Send ``update`` (a ``SessionUpdate`` variant) for this session."""
        await self.connection.notify(self._METHOD, self._wrap(update))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(session_id={self.session_id!r})"


class ToolCallHandleBase(Generic[K]):
    """One tool call of a session: its :attr:`tool_call_id` and the sender
    its updates go through (the generated subclass adds ``update``,
    ``complete`` and ``fail``)."""

    __slots__ = ("sender", "tool_call_id")

    def __init__(
        self, sender: SessionSenderBase[Any, Any, Any], tool_call_id: K
    ) -> None:
        self.sender: SessionSenderBase[Any, Any, Any] = sender
        """The session's sender."""
        self.tool_call_id: K = tool_call_id
        """The id of the tool call."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tool_call_id={self.tool_call_id!r}, session_id={self.sender.session_id!r})"


def as_block(value: Any, text: Callable[[str], Any]) -> Any:
    """A content block: ``value`` itself, or ``text(value)`` when it is a
    ``str`` (a text block). ``None`` and UNSET pass unchanged."""
    return text(value) if isinstance(value, str) else value


def as_blocks(values: Any, text: Callable[[str], Any]) -> Any:
    """A list of content blocks from an iterable of blocks and ``str``\\ s
    (each ``str`` a text block; a ``str`` alone is a list of one); ``None``
    and UNSET pass unchanged."""
    if isinstance(values, str):
        return [text(values)]
    if not _iterable(values):
        return values
    return [as_block(v, text) for v in values]


def as_tool_content(
    values: Any,
    kinds: tuple[type, ...],
    wrap: Callable[[Any], Any],
    text: Callable[[str], Any] | None,
) -> Any:
    """A list of tool call content from an iterable whose items are tool call
    content (an instance of one of ``kinds``, kept), content blocks
    (``wrap(block)``: the ``content`` kind) or, when ``text`` is given,
    ``str`` (``wrap(text(value))``; a ``str`` alone is a list of one);
    ``None`` and UNSET pass unchanged."""
    if isinstance(values, str):
        values = [values]
    if not _iterable(values):
        return values
    return [as_tool_item(value, kinds, wrap, text) for value in values]


def as_tool_item(
    value: Any,
    kinds: tuple[type, ...],
    wrap: Callable[[Any], Any],
    text: Callable[[str], Any] | None,
) -> Any:
    """One tool call content item, as :func:`as_tool_content` makes each;
    ``None`` and UNSET pass unchanged."""
    if value is None or value is UNSET or isinstance(value, kinds):
        return value
    if isinstance(value, str) and text is not None:
        return wrap(text(value))
    return wrap(value)


def _iterable(values: Any) -> bool:
    """A list (or other iterable) of items, not None, UNSET or a ``str``."""
    return isinstance(values, Iterable) and not isinstance(values, (str, bytes))
