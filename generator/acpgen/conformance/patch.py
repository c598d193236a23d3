"""Patch-merge checks: the package's ``apply(state, update)`` against the
patch fixtures and the patch laws.

Everything that depends on the patch API lives in this module. What it
assumes of a generated package:

* ``apply(state, update)`` is a pure function: ``state`` is ``None`` for a
  key not seen before (or what an earlier ``apply`` returned), ``update`` is a
  decoded value (``decode(<update type>, wire)``); it returns the new state and
  changes neither argument;
* ``encode(state)`` is the full snapshot in wire form: every field of the
  update type present, cleared values as ``null``, empty collections as
  ``[]``, metadata as ``{}`` when empty;
* states compare with ``encode`` (two states are the same when their
  snapshots are equal).

A patch fixture is ``{"name", "upsert", "updates": [wire, ...], "expected":
snapshot, "sentence"}``, run as ``state = None; for u in updates: state =
apply(state, decode(upsert, u))``; an optional ``"defs"`` list, parallel to
``updates``, names another type for some updates (v1 ``ToolCall`` before its
``ToolCallUpdate``s, v2 ``ContentChunk`` appended to a ``UserMessage``).

The upsert types come from the schema: object definitions whose description
says "upsert", "patch semantics" or "partial updates", or that a field left
out leaves the stored value unchanged (on the definition or on one of its
properties). Their
identity key is the required properties named ``...Id``; in v1, an update
type ``XUpdate`` that is not itself an upsert starts from ``X``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from .model import Model

if TYPE_CHECKING:
    from ..jsontypes import JsonArray, JsonObject

_UPSERT = re.compile(
    r"\bupsert\b|patch semantics|partial updates|(?:omitted|omission|omitting)[^.]*\bunchanged\b", re.I
)
_META_PATCH = re.compile(r"patch(?:es)? the stored metadata|by top-level key", re.I)
_FIELD = re.compile(r"(?:omitted|omission|omitting)[^.]*\bunchanged\b", re.I)

LAWS = (
    (
        "identity",
        "an update carrying only the key (and the other required fields, unchanged) is the identity",
    ),
    ("idempotent", "applying the same update twice equals applying it once"),
    ("null-then-value", "null then a value equals the value"),
    ("meta-empty", "a `_meta` patch of `{}` changes nothing"),
    ("pure", "apply never mutates its inputs"),
)


@dataclass
class Upsert:
    name: str
    keys: tuple[str, ...]
    required: tuple[str, ...]
    creator: str | None
    fields: tuple[str, ...]
    nullable: tuple[str, ...]
    meta_patch: bool
    """The schema says a concrete ``_meta`` patches the stored metadata by
    top-level key (v2); elsewhere a ``_meta`` value replaces it."""


def upsert_types(document: JsonObject) -> list[Upsert]:
    defs = document["$defs"]
    model = Model(document)
    out = []
    for name, node in defs.items():
        if not isinstance(node, dict) or node.get("type") != "object" or not isinstance(node.get("properties"), dict):
            continue
        props = node["properties"]
        described = bool(_UPSERT.search(node.get("description", "") or ""))
        per_field = any(isinstance(p, dict) and _FIELD.search(p.get("description", "") or "") for p in props.values())
        if not (described or per_field):
            continue
        required = tuple(node.get("required", ()))
        keys = tuple(k for k in required if k.endswith("Id"))
        creator = None
        if keys and not re.search(r"\bupsert\b", node.get("description", "") or "", re.I) and name.endswith("Update"):
            base = name[: -len("Update")]
            if isinstance(defs.get(base), dict) and set(keys) <= set(defs[base].get("required", ())):
                creator = base
        nullable = tuple(
            k for k, p in props.items() if k not in required and k != "_meta" and model.validator(p).is_valid(None)
        )
        out.append(
            Upsert(
                name=name,
                keys=keys,
                required=required,
                creator=creator,
                fields=tuple(props),
                nullable=nullable,
                meta_patch="_meta" in props
                and bool(
                    _META_PATCH.search(
                        (node.get("description") or "") + " " + (props["_meta"].get("description") or "")
                    )
                ),
            )
        )
    return out


@dataclass
class PatchOutcome:
    definition: str
    name: str
    ok: bool
    message: str = ""


def wire_equal(a: object, b: object) -> bool:
    """JSON equality that tells ``true`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(wire_equal(x, y) for x, y in zip(a, b, strict=False))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(wire_equal(a[k], b[k]) for k in a)
    return a == b


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 400 else text[:397] + "..."


class PatchChecker:
    def __init__(self, package: Any, document: JsonObject, samples: dict[str, JsonArray]) -> None:
        self.package = package
        self.document = document
        self.samples = samples
        """``{def name: [valid wire values]}`` from the fixtures."""
        self.types = upsert_types(document)
        self.apply: Callable[[Any, Any], Any] | None = getattr(package, "apply", None)

    # -------------------------------------------------------------- helpers

    def missing_api(self) -> str | None:
        if not callable(self.apply):
            return "the package does not export apply(state, update): the patch checks cannot run"
        return None

    def fold(self, steps: list[tuple[str, Any]], state: Any = None) -> Any:
        apply = self.apply
        assert apply is not None, "fold runs only when missing_api() found apply"
        for name, wire in steps:
            update = self.package.decode(name, wire)
            before_update = copy.deepcopy(update)
            before_state = copy.deepcopy(state)
            snapshot_before = self.package.encode(state) if state is not None else None
            new = apply(state, update)
            if update != before_update:
                raise PatchFailure(f"apply changed its update argument ({name} {_show(wire)})")
            if state is not None and (
                state != before_state or not wire_equal(self.package.encode(state), snapshot_before)
            ):
                raise PatchFailure(f"apply changed its state argument ({name} {_show(wire)})")
            state = new
        return state

    def snapshot(self, state: Any) -> Any:
        return self.package.encode(state)

    # -------------------------------------------------------------- fixtures

    def run_fixture(self, case: JsonObject) -> PatchOutcome:
        name = case.get("name", "?")
        upsert = case.get("upsert", "?")
        missing = self.missing_api()
        if missing:
            return PatchOutcome(upsert, name, False, missing)
        updates = case.get("updates", [])
        defs = case.get("defs") or [upsert] * len(updates)
        try:
            state = self.fold(list(zip(defs, updates, strict=False)))
            got = self.snapshot(state)
        except PatchFailure as failure:
            return PatchOutcome(upsert, name, False, str(failure))
        except Exception as exc:
            return PatchOutcome(upsert, name, False, f"{type(exc).__name__}: {exc}")
        if not wire_equal(got, case.get("expected")):
            return PatchOutcome(upsert, name, False, f"snapshot {_show(got)}, expected {_show(case.get('expected'))}")
        return PatchOutcome(upsert, name, True)

    # -------------------------------------------------------------- laws

    def run_laws(self) -> list[PatchOutcome]:
        out = []
        missing = self.missing_api()
        for upsert in self.types:
            for law, text in LAWS:
                label = f"patch law {law}: {text}"
                if missing:
                    out.append(PatchOutcome(upsert.name, label, False, missing))
                    continue
                try:
                    message = getattr(self, "law_" + law.replace("-", "_"))(upsert)
                except PatchFailure as failure:
                    message = str(failure)
                except Exception as exc:
                    message = f"{type(exc).__name__}: {exc}"
                if message is NOT_APPLICABLE:
                    continue
                out.append(PatchOutcome(upsert.name, label, message is None, message or ""))
        return out

    def _samples(self, upsert: Upsert) -> list[JsonObject]:
        values = [v for v in self.samples.get(upsert.name, []) if isinstance(v, dict)]
        if not values:
            raise PatchFailure(f"no valid {upsert.name} fixture to build the law's updates from")
        return values

    def _start(self, upsert: Upsert) -> tuple[Any, JsonObject]:
        """A state and the key values it is stored under."""
        samples = self._samples(upsert)
        if upsert.creator:
            creators = [v for v in self.samples.get(upsert.creator, []) if isinstance(v, dict)]
            if not creators:
                raise PatchFailure(f"no valid {upsert.creator} fixture to start a {upsert.name} state from")
            first = creators[-1]
            state = self.fold([(upsert.creator, first)])
        else:
            first = samples[-1]
            state = self.fold([(upsert.name, first)])
        return state, {k: first[k] for k in upsert.keys if k in first}

    def _update(self, upsert: Upsert, state: Any, keys: JsonObject, fields: JsonObject | None = None) -> JsonObject:
        """An update for the stored ``state``: its key, the other required
        fields as stored, and ``fields``."""
        snapshot = self.snapshot(state)
        out = dict(keys)
        for key in upsert.required:
            if key not in out:
                if not isinstance(snapshot, dict) or key not in snapshot:
                    raise PatchFailure(f"the snapshot has no {key!r}: {_show(snapshot)}")
                out[key] = snapshot[key]
        out.update(fields or {})
        return out

    def _same(self, a: Any, b: Any, what: str) -> str | None:
        sa, sb = self.snapshot(a), self.snapshot(b)
        if wire_equal(sa, sb):
            return None
        return f"{what}: {_show(sa)} != {_show(sb)}"

    def law_identity(self, upsert: Upsert) -> str | None:
        state, keys = self._start(upsert)
        update = self._update(upsert, state, keys)
        return self._same(
            self.fold([(upsert.name, update)], state), state, f"applying {_show(update)} changed the state"
        )

    def law_idempotent(self, upsert: Upsert) -> str | None:
        state, keys = self._start(upsert)
        for sample in self._samples(upsert)[:3]:
            update = dict(sample, **keys)
            once = self.fold([(upsert.name, update)], state)
            twice = self.fold([(upsert.name, update)], once)
            problem = self._same(twice, once, f"applying {_show(update)} twice differs from once")
            if problem:
                return problem
        return None

    def law_null_then_value(self, upsert: Upsert) -> LawResult:
        state, keys = self._start(upsert)
        checked = 0
        for field in upsert.nullable:
            value = next((s[field] for s in self._samples(upsert) if s.get(field) is not None and field in s), None)
            if value is None:
                continue
            null = self._update(upsert, state, keys, {field: None})
            concrete = self._update(upsert, state, keys, {field: value})
            both = self.fold([(upsert.name, null), (upsert.name, concrete)], state)
            direct = self.fold([(upsert.name, concrete)], state)
            problem = self._same(both, direct, f"{field}: null then {_show(value)} differs from {_show(value)}")
            if problem:
                return problem
            checked += 1
        if not upsert.nullable:
            return NOT_APPLICABLE
        if not checked:
            raise PatchFailure(f"no fixture gives a non-null value to any of {', '.join(upsert.nullable)}")
        return None

    def law_meta_empty(self, upsert: Upsert) -> LawResult:
        if not upsert.meta_patch:
            return NOT_APPLICABLE  # ``_meta`` does not patch by key here
        state, keys = self._start(upsert)
        with_meta = self._update(upsert, state, keys, {"_meta": {"kept": 1}})
        state = self.fold([(upsert.name, with_meta)], state)
        update = self._update(upsert, state, keys, {"_meta": {}})
        return self._same(self.fold([(upsert.name, update)], state), state, "a `_meta` patch of {} changed the state")

    def law_pure(self, upsert: Upsert) -> str | None:
        # ``fold`` checks every call for changed arguments; run a few.
        state, keys = self._start(upsert)
        for sample in self._samples(upsert)[:3]:
            state = self.fold([(upsert.name, dict(sample, **keys))], state)
        return None


class PatchFailure(Exception):
    pass


class _NotApplicable(Enum):
    NOT_APPLICABLE = "not applicable"


NOT_APPLICABLE = _NotApplicable.NOT_APPLICABLE
"""A law that the schema gives no reason to expect of this type."""

LawResult = str | None | _NotApplicable
"""What a law gives: a failure's message, None when it holds, or
:data:`NOT_APPLICABLE`."""
