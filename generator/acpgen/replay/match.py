"""Matching a live message with a recorded one "up to ids and volatile
fields", and the differences, each with its JSON path.

Ids are what each run picks anew: the values of :data:`ID_KEYS` anywhere
in a message (session, tool call, message, terminal ids), and its JSON-RPC
``id``, which :func:`compare` leaves to its caller (each side numbers its
own requests). Matching binds each recorded id to the live one in its place
(an :class:`IdMap`); a recorded id already bound to another live id, or a
live id already bound to another recorded one, is a difference. Volatile
fields (:func:`volatile`) are not compared: ``_meta`` anywhere, the peers'
names and the working directory of ``initialize`` and ``session/new``
(``clientInfo``, ``agentInfo``, ``info``, ``cwd``) and the text of an error
(its ``message`` and ``data``: the code is compared).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ID_KEYS = frozenset({"sessionId", "toolCallId", "messageId", "userMessageId", "terminalId", "requestId"})
"""Keys whose values are ids chosen by one run, anywhere in a message."""
TOP_VOLATILE = frozenset({"clientInfo", "agentInfo", "info", "cwd"})
"""Keys of ``params`` or ``result`` that are not compared."""
ERROR_VOLATILE = frozenset({"message", "data"})
"""Keys of ``error`` that are not compared."""

_PLAIN = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")

Id = tuple[str, Any]
"""An id with its JSON type (``"1"`` and ``1`` are different ids)."""


def _key(value: Any) -> Id | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return (type(value).__name__, value)


@dataclass(frozen=True)
class Difference:
    """Where a live message differs from the recorded one."""

    path: str
    """A JSON path: ``$.result.stopReason``, ``$.params.prompt[0].text``."""
    recorded: Any
    live: Any
    missing: str = ""
    """``"live"``: the live message lacks what the recording has there;
    ``"recorded"``: the reverse; ``""``: both have a value."""

    def __str__(self) -> str:
        if self.missing == "live":
            return f"{self.path}: recorded {_show(self.recorded)}, live has none"
        if self.missing == "recorded":
            return f"{self.path}: live {_show(self.live)}, recorded has none"
        return f"{self.path}: recorded {_show(self.recorded)}, live {_show(self.live)}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path}
        if self.missing != "live":
            data["live"] = self.live
        if self.missing != "recorded":
            data["recorded"] = self.recorded
        return data


def _show(value: Any, limit: int = 80) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def child(path: str, key: str | int) -> str:
    """The JSON path of ``key`` under ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN.match(key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


class IdMap:
    """Recorded ids and the live ids they stand for, one to one."""

    def __init__(self) -> None:
        self.live: dict[Id, Any] = {}
        """recorded id -> live value"""
        self.recorded: dict[Id, Any] = {}
        """live id -> recorded value"""

    def copy(self) -> IdMap:
        other = IdMap()
        other.live = dict(self.live)
        other.recorded = dict(self.recorded)
        return other

    def bind(self, recorded: Any, live: Any) -> bool:
        """Bind ``recorded`` to ``live``; False when either is already bound
        to another."""
        r, v = _key(recorded), _key(live)
        if r is None or v is None:
            return bool(recorded == live)
        if r in self.live:
            return _key(self.live[r]) == v
        if v in self.recorded:
            return _key(self.recorded[v]) == r
        self.live[r] = live
        self.recorded[v] = recorded
        return True

    def to_live(self, recorded: Any) -> Any:
        r = _key(recorded)
        return self.live.get(r, recorded) if r is not None else recorded

    def to_recorded(self, live: Any) -> Any:
        v = _key(live)
        return self.recorded.get(v, live) if v is not None else live

    def pairs(self) -> list[tuple[Any, Any]]:
        return [(key[1], value) for key, value in self.live.items()]


def volatile(path: str, key: str) -> bool:
    """Whether ``key`` under ``path`` is left out of the comparison."""
    if key == "_meta":
        return True
    if path in ("$.params", "$.result") and key in TOP_VOLATILE:
        return True
    return path == "$.error" and key in ERROR_VOLATILE


def compare(recorded: Any, live: Any, ids: IdMap, path: str = "$") -> list[Difference]:
    """The differences of ``live`` from ``recorded`` (binding their ids in
    ``ids`` as it goes), in document order."""
    found: list[Difference] = []
    _compare(recorded, live, ids, path, found)
    return found


def _compare(recorded: Any, live: Any, ids: IdMap, path: str, found: list[Difference]) -> None:
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key, value in recorded.items():
            if volatile(path, key) or (path == "$" and key == "id"):
                continue  # request ids: the caller pairs them (each side numbers its own)
            where = child(path, key)
            if key not in live:
                found.append(Difference(where, value, None, "live"))
            elif key in ID_KEYS:
                if not ids.bind(value, live[key]):
                    found.append(Difference(where, value, live[key]))
            else:
                _compare(value, live[key], ids, where, found)
        for key, value in live.items():
            if key not in recorded and not volatile(path, key) and not (path == "$" and key == "id"):
                found.append(Difference(child(path, key), None, value, "recorded"))
        return
    if isinstance(recorded, list) and isinstance(live, list):
        for n, (r, v) in enumerate(zip(recorded, live, strict=False)):
            _compare(r, v, ids, child(path, n), found)
        for n in range(len(live), len(recorded)):
            found.append(Difference(child(path, n), recorded[n], None, "live"))
        for n in range(len(recorded), len(live)):
            found.append(Difference(child(path, n), None, live[n], "recorded"))
        return
    if type(recorded) is not type(live) or recorded != live:
        found.append(Difference(path, recorded, live))


def rewrite(value: Any, ids: IdMap, *, to_live: bool, path: str = "$") -> Any:
    """``value`` with the ids of :data:`ID_KEYS` replaced by their other
    run's (recorded -> live when ``to_live``); ids not bound are kept, and
    so is a message's own ``id`` (the caller pairs request ids)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in ID_KEYS:
                out[key] = ids.to_live(item) if to_live else ids.to_recorded(item)
            else:
                out[key] = rewrite(item, ids, to_live=to_live, path=child(path, key))
        return out
    if isinstance(value, list):
        return [rewrite(item, ids, to_live=to_live, path=child(path, n)) for n, item in enumerate(value)]
    return value


def rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string (keys included) found in ``names``
    replaced: ids throughout a fold's snapshot, where they are keys too."""
    if isinstance(value, dict):
        return {names.get(k, k): rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [rename(item, names) for item in value]
    if isinstance(value, str):
        return names.get(value, value)
    return value


class Normalizer:
    """A message as the generated ``package`` reads it: its params (or its
    result, given the method it answers) decoded and encoded again, so that
    a field left out and the same field at its schema default compare
    equal. What the package cannot decode is compared as it is."""

    def __init__(self, package: Any) -> None:
        self.package = package
        self.methods: dict[str, Any] = dict(getattr(package, "METHODS", {})) if package is not None else {}

    def _type(self, method: str | None, part: str) -> str | None:
        info = self.methods.get(method or "")
        if info is None:
            return None
        if part == "result":
            return info.request.result_name if info.request is not None else None
        if info.request is not None:
            return str(info.request.params_name)
        return str(info.notification.params_name) if info.notification is not None else None

    def __call__(self, message: dict[str, Any], answers: str | None = None) -> dict[str, Any]:
        """``message`` normalized; ``answers``: for a response, the method of
        the request it answers."""
        method = message.get("method")
        part = "params" if isinstance(method, str) else "result"
        name = self._type(method if isinstance(method, str) else answers, part)
        if name is None or part not in message:
            return message
        try:
            value = self.package.encode(self.package.decode(name, message[part]))
        except Exception:  # anything the package cannot read is compared as it is
            return message
        return {**message, part: value}
