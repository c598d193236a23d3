"""The IR pass for cancellation: what a session's cancel does to the
requests being handled, and what a request is answered when its handler is
cancelled.

The schemas say it in prose only (v1 ``StopReason`` "cancelled": "This stop
reason MUST be returned when the client sends a `session/cancel`
notification"; ``RequestPermissionOutcome`` "cancelled": "it MUST respond to
all pending `session/request_permission` requests with this `cancelled`
outcome"), so ``rules/cancellation.toml`` names the notification, the
property naming the session, and the answer of each request. A rule is
checked against the schema: the notification's params and each request's
params must have the session property, and each answer must be valid (JSON
Schema) as its method's result; an answer that is not is left out for that
schema (v2 answers ``session/prompt`` at once, with the user message's id).
The result is :attr:`ir.Package.cancellation`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AcpgenError
from ...records import dataclass
from .. import ir
from .options import Options
from .rules import CANCELLATION, builtin_file, read_rules


@dataclass(frozen=True)
class CancellationRules:
    """The entries of ``rules/cancellation.toml``."""

    notification: str
    session: str
    """The wire name of the property naming the session."""
    answers: tuple[tuple[str, Any], ...]
    """``(method, result as JSON)``, in the file's order."""


def builtin_rules_file() -> Path:
    return builtin_file(CANCELLATION)


def cancellation_rules(path: Path | None = None) -> CancellationRules:
    """The rules file, read."""
    path = path or builtin_rules_file()
    data = read_rules(path)
    notification, session = data.get("notification"), data.get("session")
    if not isinstance(notification, str) or not notification or not isinstance(session, str) or not session:
        raise AcpgenError("the cancellation rules need notification = and session = (strings)", file=str(path))
    answers: list[tuple[str, Any]] = []
    entries = data.get("answer", [])
    if not isinstance(entries, list):
        raise AcpgenError("the cancellation rules' answer must be a list of [[answer]] tables", file=str(path))
    for entry in entries:
        method = entry.get("method") if isinstance(entry, dict) else None
        result = entry.get("result") if isinstance(entry, dict) else None
        if not isinstance(method, str) or not method or not isinstance(result, dict):
            raise AcpgenError("each [[answer]] needs method = a string and result = a table", file=str(path))
        if any(method == m for m, _ in answers):
            raise AcpgenError(f"two [[answer]] entries for {method}", file=str(path))
        answers.append((method, result))
    return CancellationRules(notification, session, tuple(answers))


def find_cancellation(package: ir.Package, rules: CancellationRules | None = None) -> ir.Package:
    """The package with :attr:`~ir.Package.cancellation` set."""
    return replace(package, cancellation=cancellation(package, rules or cancellation_rules()))


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: :func:`find_cancellation`."""
    return find_cancellation(package)


def cancellation(package: ir.Package, rules: CancellationRules) -> ir.Cancellation | None:
    """What a session's cancel does in ``package``: None when the schema has
    no such notification whose params name the session."""
    defs = {d.name: d for d in package.definitions}
    method = next((m for m in package.methods if m.name == rules.notification), None)
    notification = method.notification if method is not None else None
    attribute = _attribute(defs, notification.params, rules.session) if notification is not None else None
    if notification is None or attribute is None:
        return None
    requests = {m.name: m.request for m in package.methods if m.request is not None}
    candidates: list[tuple[str, str, Any]] = []
    for name, result in rules.answers:
        call = requests.get(name)
        if call is None or not call.result or _attribute(defs, call.params, rules.session) != attribute:
            continue
        candidates.append((name, call.result, result))
    valid = _valid(package, [(definition, result) for _, definition, result in candidates])
    answers = [
        (name, json.dumps(result, separators=(",", ":"), sort_keys=True))
        for (name, _, result), ok in zip(candidates, valid, strict=True)
        if ok
    ]
    order = [m.name for m in package.methods]
    answers.sort(key=lambda a: order.index(a[0]))
    return ir.Cancellation(rules.notification, attribute, tuple(answers))


def _attribute(defs: dict[str, ir.Definition], params: str, wire_name: str) -> str | None:
    """The Python attribute of ``params``'s required string-like property
    ``wire_name``, if it has one."""
    found = defs.get(params)
    if not isinstance(found, ir.ObjectDef):
        return None
    field = next((f for f in found.fields if f.wire_name == wire_name), None)
    return field.name if field is not None and field.required else None


def _valid(package: ir.Package, values: list[tuple[str, Any]]) -> list[bool]:
    """Whether each ``(definition, value)`` is valid as ``$defs[definition]``
    of the schema. One validator checks them all (making one from the
    schema's definitions is what costs): value ``i`` is checked as the
    property ``"i"`` of an object that has no other, against ``{"$ref":
    "#/$defs/<definition>"}`` under ``properties``, as valid as it is
    against that reference at the root."""
    defs = package.validation_defs
    known = [i for i, (definition, _) in enumerate(values) if isinstance(defs, dict) and definition in defs]
    if not known:
        return [False] * len(values)
    schema = {"$defs": defs, "properties": {str(i): {"$ref": f"#/$defs/{values[i][0]}"} for i in known}}
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a platform without its wheel
        from jsonschema import Draft202012Validator

        validator: Any = Draft202012Validator(schema)
    else:
        validator = jsonschema_rs.Draft202012Validator(schema)
    return [i in known and bool(validator.is_valid({str(i): value})) for i, (_, value) in enumerate(values)]
