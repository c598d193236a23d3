"""The wording the classification's summaries and reasons share: names
as code (between backticks, which the Markdown form keeps) with their
article, counts and short lists, the peers in the plural, and the JSON and
Python kinds shown in the messages."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..compile import ir
from ..compile.lower import strip_annotations
from ..jsontypes import Json


def _json_value(value: Json) -> Json:
    return None if value is ir.NO_DEFAULT else value


def _plural(peers: set[str], fallback: str = "peers") -> str:
    names = {"agent": "agents", "client": "clients", "proxy": "proxies"}
    known = [names[p] for p in ("agent", "client", "proxy") if p in peers]
    if not known:
        return fallback
    return " and ".join(known) if len(known) <= 2 else ", ".join(known[:-1]) + " and " + known[-1]


def _receivers(senders: set[str]) -> set[str]:
    if senders == {"agent"}:
        return {"client"}
    if senders == {"client"}:
        return {"agent"}
    return set()


def _c(text: object) -> str:
    """``text`` as code: between backticks, which the Markdown form keeps."""
    shown = str(text)
    return f"``{shown}``" if "`" in shown else f"`{shown}`"


def _a(text: str) -> str:
    """``text`` as code with its indefinite article: "an `Error`"."""
    return ("an " if text[:1].lower() in "aeiou" else "a ") + _c(text)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _list(items: Iterable[str], limit: int = 4, code: bool = False) -> str:
    texts = [_c(i) if code else str(i) for i in items]
    shown = ", ".join(texts[:limit])
    return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


def _stripped(node: Json) -> str:
    return json.dumps(strip_annotations(node), sort_keys=True)


def _callers(side: str) -> set[str]:
    if side == "agent":
        return {"client"}
    if side == "client":
        return {"agent"}
    if side == "protocol":
        return {"agent", "client"}
    return set()


def _python_kind(definition: ir.Definition) -> str:
    return {
        "object": "a dataclass",
        "enum": "an enum",
        "union": "a union of variant classes",
        "alias": "a type alias",
    }[definition.kind]


def _show_json(value: Json) -> str:
    return json.dumps(_json_value(value), sort_keys=True)
