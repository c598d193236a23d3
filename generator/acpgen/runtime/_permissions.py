"""How a client answers ``session/request_permission``: a
:class:`PermissionPolicy`, and the :class:`PermissionDecision` a client
connection records for every permission request it answers.

A client connection whose handler has no ``request_permission`` of its own
answers with its policy (``permissions=`` of the connection), which denies
by default: an agent never gets an approval nobody gave. The policy decides
from the tool call the request is about, its ``kind`` and the ``path`` of
its ``locations``, read from the request or, where the request leaves them
out, from the tool call as the client's session fold knows it:

1. a kind in ``reject``, or a path matching a pattern of ``reject_paths``,
   is rejected;
2. a kind in ``allow``, or paths that all match ``allow_paths`` (at least
   one path), is allowed once;
3. anything else is asked of ``ask`` (an async callback given the request,
   returning the chosen ``optionId`` or None), when there is one;
4. anything else is denied.

Allowing picks the option of kind ``allow_once`` (never ``allow_always``: a
policy does not grant for the future what it was asked once); rejecting the
option of kind ``reject_once``, else ``reject_always``, else answers with
the ``cancelled`` outcome, which tells the agent not to proceed. Options are
chosen by kind, never by position. A v2 ``command`` subject is a tool call
of kind ``execute`` at its ``cwd``.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["PERMISSION", "PermissionDecision", "PermissionPolicy", "ToolFacts"]

PERMISSION = "session/request_permission"

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")

Ask = Callable[[Any], Awaitable["str | None"]]
"""A policy's ``ask``: given the request (the package's
``RequestPermissionRequest``), the ``optionId`` the user chose, or None (not
approved)."""

ToolFacts = Callable[[str, str], "tuple[str | None, tuple[str, ...]]"]
"""The kind and paths of a tool call (session id, tool call id) as the
session fold knows them (``(None, ())``: not known)."""


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """How one permission request was answered, as a client connection
    records it (``conn.permissions``, by session)."""

    session_id: str
    tool_call_id: str | None
    """The tool call the request is about, if it names one."""
    kind: str | None
    """The tool kind decided on (from the request or the fold)."""
    paths: tuple[str, ...]
    """The paths decided on."""
    outcome: str
    """``selected`` or ``cancelled``."""
    option_id: str | None
    """The option chosen (``selected``)."""
    option_kind: str | None
    """Its kind: ``allow_once``, ``reject_once`` ... (None: not offered
    with a kind, or ``cancelled``)."""
    reason: str
    """Why: ``tool kind 'delete' is rejected``, ``asked``, ``denied by
    default`` ... or ``answered by the handler``."""

    @property
    def allowed(self) -> bool:
        """The agent may proceed: an option of an ``allow_*`` kind was chosen."""
        return self.outcome == "selected" and (self.option_kind or "").startswith(
            "allow"
        )

    def result(self) -> dict[str, Any]:
        """The ``session/request_permission`` result (JSON)."""
        if self.outcome == "selected":
            return {"outcome": {"outcome": "selected", "optionId": self.option_id}}
        return {"outcome": {"outcome": "cancelled"}}


def _dict(value: object) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def subject_of(
    wire: Mapping[str, Any],
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The tool call id, kind and paths a request (its params as JSON) is
    about: v1's ``toolCall``, v2's ``subject`` (a ``tool_call`` or a
    ``command``)."""
    tool = _dict(wire.get("toolCall"))
    subject = _dict(wire.get("subject"))
    if not tool and subject.get("type") == "tool_call":
        tool = _dict(subject.get("toolCall"))
    if not tool and subject.get("type") == "command":
        cwd = _str(subject.get("cwd"))
        return _str(subject.get("toolCallId")), "execute", (cwd,) if cwd else ()
    locations = tool.get("locations")
    paths = tuple(
        p
        for p in (
            _str(_dict(place).get("path"))
            for place in (
                cast("list[object]", locations) if isinstance(locations, list) else []
            )
        )
        if p
    )
    return _str(tool.get("toolCallId")), _str(tool.get("kind")), paths


def decision_of(
    wire: Mapping[str, Any], result: Mapping[str, Any], reason: str
) -> PermissionDecision:
    """The decision an answer (``result`` as JSON) to a request (``wire``)
    records."""
    tool_call_id, kind, paths = subject_of(wire)
    outcome = _dict(result.get("outcome"))
    option_id = _str(outcome.get("optionId"))
    option_kind = next(
        (
            _str(option.get("kind"))
            for option in map(_dict, _options(wire))
            if option.get("optionId") == option_id
        ),
        None,
    )
    return PermissionDecision(
        session_id=_str(wire.get("sessionId")) or "",
        tool_call_id=tool_call_id,
        kind=kind,
        paths=paths,
        outcome="selected" if outcome.get("outcome") == "selected" else "cancelled",
        option_id=option_id,
        option_kind=option_kind,
        reason=reason,
    )


def _options(wire: Mapping[str, Any]) -> list[object]:
    options = wire.get("options")
    return cast("list[object]", options) if isinstance(options, list) else []


class PermissionPolicy:
    """Answers permission requests by tool kind and path, asking ``ask``
    what the rules do not settle, denying what nobody approves (see the
    module's documentation). ``PermissionPolicy()`` denies everything."""

    __slots__ = ("allow", "allow_paths", "ask", "reject", "reject_paths")

    def __init__(
        self,
        *,
        allow: Iterable[str] = (),
        reject: Iterable[str] = (),
        allow_paths: Iterable[str] = (),
        reject_paths: Iterable[str] = (),
        ask: Ask | None = None,
    ) -> None:
        self.allow = frozenset(str(getattr(k, "value", k)) for k in allow)
        """Tool kinds allowed once without asking (``read``, ``search`` ...)."""
        self.reject = frozenset(str(getattr(k, "value", k)) for k in reject)
        """Tool kinds rejected without asking (``delete``, ``execute`` ...)."""
        self.allow_paths = tuple(allow_paths)
        """``fnmatch`` patterns: a request whose paths all match is allowed."""
        self.reject_paths = tuple(reject_paths)
        """``fnmatch`` patterns: a request with a path matching one is rejected."""
        self.ask = ask
        """Asked what the rules do not settle (None: denied)."""

    async def decide(
        self,
        request: Any,
        wire: Mapping[str, Any],
        known: ToolFacts | None = None,
    ) -> PermissionDecision:
        """Decide ``request`` (decoded; ``wire`` its params as JSON).
        ``known`` gives the kind and paths of a tool call the request names
        without them, as the session fold knows it."""
        session_id = _str(wire.get("sessionId")) or ""
        tool_call_id, kind, paths = subject_of(wire)
        if (
            tool_call_id is not None
            and known is not None
            and (kind is None or not paths)
        ):
            known_kind, known_paths = known(session_id, tool_call_id)
            kind = kind or known_kind
            paths = paths or known_paths
        options = [_dict(o) for o in _options(wire)]

        def made(
            outcome: str, option_id: str | None, option_kind: str | None, reason: str
        ) -> PermissionDecision:
            return PermissionDecision(
                session_id,
                tool_call_id,
                kind,
                paths,
                outcome,
                option_id,
                option_kind,
                reason,
            )

        def choose(kinds: tuple[str, ...], reason: str) -> PermissionDecision:
            for wanted in kinds:
                for option in options:
                    option_id = _str(option.get("optionId"))
                    if option.get("kind") == wanted and option_id is not None:
                        return made("selected", option_id, wanted, reason)
            return made(
                "cancelled", None, None, reason + " (no such option offered: cancelled)"
            )

        reject = ("reject_once", "reject_always")
        if kind is not None and kind in self.reject:
            return choose(reject, f"tool kind {kind!r} is rejected")
        matched = next(
            (
                p
                for p in paths
                for pattern in self.reject_paths
                if fnmatch.fnmatchcase(p, pattern)
            ),
            None,
        )
        if matched is not None:
            return choose(reject, f"path {matched!r} is rejected")
        if kind is not None and kind in self.allow:
            return choose(("allow_once",), f"tool kind {kind!r} is allowed")
        if (
            paths
            and self.allow_paths
            and all(
                any(fnmatch.fnmatchcase(p, pat) for pat in self.allow_paths)
                for p in paths
            )
        ):
            return choose(("allow_once",), "every path is allowed")
        if self.ask is not None:
            chosen = await self.ask(request)
            option = next((o for o in options if o.get("optionId") == chosen), None)
            if chosen is not None and option is None:
                log.warning(
                    "the permission policy's ask chose %r, which was not offered: denied",
                    chosen,
                )
            if chosen is not None and option is not None:
                return made("selected", chosen, _str(option.get("kind")), "asked")
            return choose(reject, "asked: not approved")
        return choose(
            reject, "denied by default (no rule allows it and nobody was asked)"
        )
