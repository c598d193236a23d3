"""The fixture generator: valid instances of every ``$defs`` type and
mutations of them, with the outcomes the schema and the rules of docs/codec.md require.

Deterministic: the random choices for a definition come from a generator
seeded with ``"<seed>:<definition name>"``, so adding or changing one
definition changes only its own fixture file, and a schema bump shows up as a
readable diff of ``tests/fixtures/conformance/<schema key>/generated/``.

Valid instances honour ``$ref``, ``allOf``, ``anyOf``/``oneOf`` (every member
of a definition's own union is chosen at least once), ``const``, ``enum``,
``required``, nullability, ``items``, ``minItems``, ``minLength``,
``minimum``/``maximum`` and integer ``format`` ranges; each is checked with
jsonschema's Draft 2020-12 validator before it is written. Mutations break one
thing: a required key dropped, a wrong JSON type, ``null`` where it is not
allowed, an unknown tag, a known tag with a bad payload, a missing or
non-string tag, an invalid array item, an integer out of range, ``true`` for an
integer. Whether a mutation is still valid is jsonschema's verdict, and what
lenient and strict decoding must give is :class:`~.model.Model`'s.

One cohesive thing, longer than the other modules: one generator whose
valid instances and mutations share the walk of the schema.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ..vocabulary import common_tag
from . import messages
from .coverage import is_null_option, union_options
from .model import DEFS, INTEGER_FORMATS, Model, Reject, format_path, json_kind

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonArray, JsonObject, JsonPath

GENERATOR_VERSION = 2
"""Bumped when the generator's output changes for the same schema and seed."""
DEFAULT_SEED = "acp-conformance"

# The JSON aliases are imported for type checking only (the conformance check
# imports nothing of the generator), so the aliases below quote them.
Merged = TypedDict(
    "Merged",
    {
        "types": "set[str] | None",
        "const": "JsonArray",
        "enum": "JsonArray | None",
        "properties": "dict[str, JsonArray]",
        "required": "list[str]",
        "items": "Json",
        "minItems": int,
        "minimum": "Json",
        "maximum": "Json",
        "format": "Json",
        "minLength": int,
        "additional": "Json",
        "not": "JsonArray",
    },
)
"""What the parts of a subschema (itself, through ``$ref`` and ``allOf``, and
the union members chosen) require together: the JSON types all of them allow
(None: any), the constants and enum values, every property's subschemas, the
required keys, the tightest bounds, and the subschemas values must not match."""

_Group = tuple[str, "JsonArray", "JsonObject"]
"""A union still to choose a member of: ``anyOf`` or ``oneOf``, its
options, and the subschema holding it."""

MAX_DEPTH = 5


@dataclass
class Site:
    """Where a value was generated, and from what."""

    path: JsonPath
    node: Any
    """The subschema the value was generated for (before any choice)."""
    kind: str
    """The JSON type of the generated value."""
    merged: Merged = field(default_factory=lambda: Instances.merge([]))
    tag: str | None = None
    """For an object chosen from a tagged union: the tag property."""
    known_tags: tuple[Json, ...] = ()
    tag_value: Any = None


class Instances:
    """Generate JSON values valid against subschemas of one document."""

    def __init__(self, document: JsonObject, rng: random.Random) -> None:
        self.document = document
        self.defs = document["$defs"]
        self.rng = rng
        self.sites: list[Site] = []
        self.counter = 0
        self.forced: dict[int, int] = {}
        """``{id(options list): index}``: unions whose member is chosen."""

    # -------------------------------------------------------------- schema

    def resolve(self, ref: str) -> Any:
        return self.defs[ref[len(DEFS) :]]

    def flatten(self, node: Json, parts: list[JsonObject], groups: list[_Group], depth: int = 0) -> None:
        """Follow ``$ref`` and ``allOf``; collect the parts and the
        ``anyOf``/``oneOf`` groups still to choose from."""
        if depth > 40 or not isinstance(node, dict):
            if node is False:
                parts.append({"not": {}})
            return
        parts.append(node)
        if isinstance(node.get("$ref"), str):
            self.flatten(self.resolve(node["$ref"]), parts, groups, depth + 1)
        for sub in node.get("allOf", ()):
            self.flatten(sub, parts, groups, depth + 1)
        for combinator in ("anyOf", "oneOf"):
            if isinstance(node.get(combinator), list):
                groups.append((combinator, node[combinator], node))

    @staticmethod
    def merge(parts: list[JsonObject]) -> Merged:
        merged: Merged = {
            "types": None,
            "const": [],
            "enum": None,
            "properties": {},
            "required": [],
            "items": None,
            "minItems": 0,
            "minimum": None,
            "maximum": None,
            "format": None,
            "minLength": 0,
            "additional": None,
            "not": [],
        }
        for part in parts:
            kind = part.get("type")
            if kind is not None:
                kinds = set(kind if isinstance(kind, list) else [kind])
                merged["types"] = kinds if merged["types"] is None else _intersect(merged["types"], kinds)
            if "const" in part:
                merged["const"].append(part["const"])
            if "enum" in part:
                merged["enum"] = list(part["enum"])
            for key, sub in (part.get("properties") or {}).items():
                merged["properties"].setdefault(key, []).append(sub)
            for key in part.get("required", ()):
                if key not in merged["required"]:
                    merged["required"].append(key)
            if "items" in part:
                merged["items"] = part["items"]
            merged["minItems"] = max(merged["minItems"], part.get("minItems", 0))
            merged["minLength"] = max(merged["minLength"], part.get("minLength", 0))
            if "minimum" in part:
                merged["minimum"] = (
                    part["minimum"] if merged["minimum"] is None else max(merged["minimum"], part["minimum"])
                )
            if "maximum" in part:
                merged["maximum"] = (
                    part["maximum"] if merged["maximum"] is None else min(merged["maximum"], part["maximum"])
                )
            if "format" in part:
                merged["format"] = part["format"]
            if "additionalProperties" in part and not part.get("properties"):
                merged["additional"] = part["additionalProperties"]
            if "not" in part:
                merged["not"].append(part["not"])
        return merged

    # -------------------------------------------------------------- values

    def value(self, node: Any, mode: str, path: JsonPath = (), depth: int = 0, choose: int | None = None) -> Any:
        """A value for ``node``. ``mode`` is ``full`` (every property, non-null
        where possible), ``minimal`` (required properties only), ``nulls``
        (null wherever allowed) or ``random``. ``choose`` picks the option of
        the node's own union."""
        if depth > MAX_DEPTH and mode != "minimal":
            mode = "minimal"
        parts: list[JsonObject] = []
        groups: list[_Group] = []
        self.flatten(node, parts, groups)
        tag_info = None
        chosen_groups = 0
        while groups and chosen_groups < 20:
            _combinator, options, _owner = groups.pop(0)
            forced = self.forced.get(id(options))
            index = self.pick_option(
                options, mode, forced if forced is not None else choose if chosen_groups == 0 else None
            )
            chosen_groups += 1
            tag = common_tag(options)
            if tag is not None:
                known = tuple(
                    o["properties"][tag]["const"]
                    for o in options
                    if isinstance(o, dict)
                    and isinstance(o.get("properties", {}).get(tag), dict)
                    and "const" in o["properties"][tag]
                )
                tag_info = (tag, known)
            self.flatten(options[index], parts, groups)
        merged = self.merge(parts)
        kind = self.pick_kind(merged, mode)
        site = Site(path=path, node=node, kind=kind, merged=merged)
        if tag_info is not None and kind == "object":
            site.tag, site.known_tags = tag_info
        self.sites.append(site)
        out = self.make(kind, merged, mode, path, depth)
        if site.tag is not None and isinstance(out, dict):
            site.tag_value = out.get(site.tag)
        return out

    def pick_option(self, options: JsonArray, mode: str, choose: int | None) -> int:
        if choose is not None:
            return choose
        nulls = [i for i, o in enumerate(options) if isinstance(o, dict) and o.get("type") == "null" and len(o) <= 2]
        others = [i for i in range(len(options)) if i not in nulls]
        if mode == "nulls" and nulls:
            return nulls[0]
        if not others:
            return 0
        if mode == "minimal":
            return others[0]
        if mode == "random" and nulls and self.rng.random() < 0.25:
            return nulls[0]
        return self.rng.choice(others)

    def pick_kind(self, merged: Merged, mode: str) -> str:
        if merged["const"]:
            return json_kind(merged["const"][0])
        if merged["enum"]:
            return json_kind(merged["enum"][0])
        types = merged["types"]
        if types is None:
            if merged["properties"] or merged["required"]:
                return "object"
            if merged["items"] is not None:
                return "array"
            return "any"
        if mode == "nulls" and "null" in types:
            return "null"
        order = ["object", "array", "string", "integer", "number", "boolean", "null"]
        candidates = [t for t in order if t in types]
        if not candidates:
            return "null"
        non_null = [t for t in candidates if t != "null"] or candidates
        if mode == "random" and "null" in candidates and self.rng.random() < 0.25:
            return "null"
        return non_null[0] if mode != "random" else self.rng.choice(non_null)

    def word(self, hint: str) -> str:
        self.counter += 1
        return f"{hint or 'v'}-{self.counter}"

    def make(self, kind: str, merged: Merged, mode: str, path: JsonPath, depth: int) -> Any:
        if merged["const"]:
            return merged["const"][0]
        if merged["enum"]:
            return self.rng.choice(merged["enum"])
        hint = path[-1] if path and isinstance(path[-1], str) else ""
        if kind == "null":
            return None
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "string":
            return self.string(merged, hint)
        if kind == "integer":
            return self.integer(merged)
        if kind == "number":
            low, high = merged["minimum"], merged["maximum"]
            candidates = [
                v for v in (0.5, 1.5, 0.25, 12.75) if (low is None or v >= low) and (high is None or v <= high)
            ]
            return self.rng.choice(candidates) if candidates else (low if low is not None else 0)
        if kind == "array":
            items = merged["items"] if merged["items"] is not None else True
            low = merged["minItems"]
            count = {"minimal": low, "nulls": max(low, 1), "full": max(low, 2)}.get(
                mode, max(low, self.rng.randint(0, 2))
            )
            if depth >= MAX_DEPTH:
                count = low
            return [self.value(items, mode, (*path, i), depth + 1) for i in range(count)]
        if kind == "object":
            return self.object(merged, mode, path, depth)
        return self.any_value(hint)

    def string(self, merged: Merged, hint: str) -> str:
        fmt = merged["format"]
        self.counter += 1
        n = self.counter
        if fmt == "uri":
            value = f"file:///home/user/project/{hint or 'file'}{n}.txt"
        elif fmt == "date-time":
            value = f"2025-01-{1 + n % 28:02d}T10:{n % 60:02d}:00Z"
        elif hint in ("cwd", "path", "oldPath", "newPath", "additionalDirectories") or "Path" in hint:
            value = f"/home/user/{hint or 'p'}{n}"
        else:
            value = f"{hint or 'text'}-{n}"
        while len(value) < merged["minLength"]:
            value += "x"
        return value

    def integer(self, merged: Merged) -> int:
        low, high = merged["minimum"], merged["maximum"]
        fmt = INTEGER_FORMATS.get(merged["format"])
        if fmt:
            low = fmt[0] if low is None else max(low, fmt[0])
            high = fmt[1] if high is None else min(high, fmt[1])
        candidates = [v for v in (1, 2, 7, 42, 100, 0) if (low is None or v >= low) and (high is None or v <= high)]
        if not candidates:
            return int(low if low is not None else high)
        return self.rng.choice(candidates)

    def any_value(self, hint: str) -> Any:
        return self.rng.choice(
            [{"key": "value", "n": 1}, "anything", 3, [1, "two", None], True, {"nested": {"deep": [1, 2]}}]
        )

    def object(self, merged: Merged, mode: str, path: JsonPath, depth: int) -> JsonObject:
        out: JsonObject = {}
        required = merged["required"]
        for key, subs in merged["properties"].items():
            include = key in required or mode in ("full", "nulls") or (mode == "random" and self.rng.random() < 0.5)
            if depth >= MAX_DEPTH and key not in required:
                include = False
            if not include:
                continue
            sub = subs[0] if len(subs) == 1 else {"allOf": subs}
            out[key] = self.value(sub, mode, (*path, key), depth + 1)
        for key in required:
            if key not in out:
                out[key] = self.value(True, mode, (*path, key), depth + 1)
        additional = merged["additional"]
        if not merged["properties"] and additional is not None and additional is not False and mode != "minimal":
            if additional is True:
                out["trace"] = self.word("t")
            else:
                out["key1"] = self.value(additional, mode, (*path, "key1"), depth + 1)
        return out


def _intersect(a: set[str], b: set[str]) -> set[str]:
    """JSON types allowed by both (an integer is a number)."""
    out = a & b
    if ("number" in a and "integer" in b) or ("integer" in a and "number" in b):
        out.add("integer")
    return out


# ------------------------------------------------------------------ mutations


WRONG_VALUES = ["wrong", 7, 2.5, True, [], {}, [1], {"unexpected": 1}]


def get_at(value: Any, path: JsonPath) -> Any:
    for segment in path:
        value = value[segment]
    return value


def set_at(value: Any, path: JsonPath, new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced (``path`` must
    not be empty)."""
    copy = json.loads(json.dumps(value))
    parent = get_at(copy, path[:-1])
    parent[path[-1]] = new
    return copy


def delete_at(value: Any, path: JsonPath) -> Any:
    copy = json.loads(json.dumps(value))
    parent = get_at(copy, path[:-1])
    del parent[path[-1]]
    return copy


def replace(value: Any, path: JsonPath, new: Any) -> Any:
    return new if not path else set_at(value, path, new)


class DefFixtures:
    """The generated fixtures of one definition."""

    def __init__(self, model: Model, name: str, seed: str) -> None:
        self.model = model
        self.document = model.document
        self.name = name
        self.rng = random.Random(f"{seed}:{name}")
        self.cases: list[JsonObject] = []
        self.names: set[str] = set()
        self.inputs: set[str] = set()
        self.node = {"$ref": DEFS + name}

    # -------------------------------------------------------------- cases

    def add(self, label: str, value: Any, note: str = "") -> JsonObject | None:
        key = json.dumps(value, sort_keys=True)
        if key in self.inputs:
            return None
        self.inputs.add(key)
        name = label
        n = 2
        while name in self.names:
            name = f"{label} #{n}"
            n += 1
        self.names.add(name)
        case = expect(self.model, self.name, value)
        case = {"name": name, "def": self.name, "input": value, **case}
        if note:
            case["note"] = note
        self.cases.append(case)
        return case

    def instance(
        self, mode: str, choose: int | None = None, tries: int = 12, force: dict[int, int] | None = None
    ) -> tuple[Any, list[Site]] | None:
        validator = self.model.validator(self.node)
        for _ in range(tries):
            gen = Instances(self.document, self.rng)
            gen.forced = dict(force or {})
            try:
                value = gen.value(self.node, mode, (), 0, choose)
            except RecursionError:  # pragma: no cover - defensive
                continue
            if validator.is_valid(value):
                return value, gen.sites
        return None

    # -------------------------------------------------------------- build

    def build(self) -> list[JsonObject]:
        definition = self.document["$defs"][self.name]
        own = self.own_options(definition)
        bases: list[tuple[str, Any, list[Site]]] = []
        for mode in ("minimal", "full", "nulls", "random"):
            made = self.instance(mode)
            if made is not None:
                bases.append((mode, *made))
        for index, option in enumerate(own):
            for mode in ("full", "minimal"):
                made = self.instance(mode, choose=index)
                if made is not None:
                    bases.append((f"{mode} {option_label(option, index)}", *made))
        if isinstance(definition, dict):
            for prop, node in (definition.get("properties") or {}).items():
                options = union_options(node)
                for index, option in enumerate(options):
                    if is_null_option(option):
                        continue
                    made = self.instance("full", force={id(options): index})
                    if made is not None:
                        bases.append((f"full {prop}: {option_label(option, index)}", *made))
        enum_values = self.enum_values(definition)
        for value in enum_values:
            self.add(f"enum value {json.dumps(value)}", value)
        for label, value, _ in bases:
            self.add(f"valid {label}", value)
        if not bases:
            return self.cases
        # Mutations: every site of the first instances at depth <= 1, and a
        # sample of deeper ones.
        seen_paths: set[tuple[str, str, Json]] = set()
        shallow: list[tuple[Any, Site]] = []
        deep: list[tuple[Any, Site]] = []
        for _label, value, sites in bases:
            for site in sites:
                key = (format_path(site.path), site.kind, site.tag_value if site.tag else None)
                if key in seen_paths:
                    continue
                seen_paths.add(key)
                (shallow if len(site.path) <= 1 else deep).append((value, site))
        for value, site in shallow:
            self.mutate(value, site, thorough=True)
        self.rng.shuffle(deep)
        for value, site in deep[:6]:
            self.mutate(value, site, thorough=False)
        return self.cases

    @staticmethod
    def own_options(definition: Json) -> JsonArray:
        if not isinstance(definition, dict):
            return []
        for combinator in ("anyOf", "oneOf"):
            options = definition.get(combinator)
            if isinstance(options, list) and not all(isinstance(o, dict) and "const" in o for o in options):
                return options
        return []

    @staticmethod
    def enum_values(definition: Json) -> JsonArray:
        if not isinstance(definition, dict):
            return []
        out = []
        for combinator in ("anyOf", "oneOf"):
            for option in definition.get(combinator, ()) or ():
                if isinstance(option, dict) and "const" in option:
                    out.append(option["const"])
        for value in definition.get("enum", ()) or ():
            out.append(value)
        if out:
            for option in definition.get("anyOf", ()) or ():
                if isinstance(option, dict) and "const" not in option and option.get("type") == "string":
                    out.append("custom_value")  # an open enum's other value
                if isinstance(option, dict) and "const" not in option and option.get("type") == "integer":
                    format_name = option.get("format")
                    fmt = INTEGER_FORMATS.get(format_name) if isinstance(format_name, str) else None
                    out.extend([-1, fmt[1], fmt[1] + 1] if fmt else [-1])
            out.extend([None, 3.5 if json_kind(out[0]) == "integer" else 3])
        return out

    def mutate(self, value: Any, site: Site, thorough: bool) -> None:
        path = site.path
        where = format_path(path)
        # A wrong JSON type.
        candidates = self.model.rejected(site.node, WRONG_VALUES)
        if candidates and (thorough or self.rng.random() < 0.6):
            wrong = candidates[0] if thorough else self.rng.choice(candidates)
            self.add(f"wrong type ({json_kind(wrong)}) at {where}", replace(value, path, wrong))
        # null where it is not allowed.
        if self.model.rejected(site.node, [None]) and path:
            self.add(f"null at {where}", replace(value, path, None))
        current = get_at(value, path)
        if site.kind == "object" and isinstance(current, dict):
            for key in site.merged["required"]:
                if key in current and key != site.tag:
                    self.add(f"required {key} dropped at {where}", delete_at(value, (*path, key)))
                    if not thorough:
                        break
            if site.tag is not None and site.tag in current:
                tag_path = (*path, site.tag)
                self.add(f"unknown tag at {format_path(tag_path)}", set_at(value, tag_path, "unknown_variant"))
                self.add(f"tag dropped at {where}", delete_at(value, tag_path))
                self.add(f"non-string tag at {format_path(tag_path)}", set_at(value, tag_path, 7))
                self.bad_payload(value, site, site.tag, current)
            if not path or (thorough and site.tag is not None):
                # Unknown keys: ignored by known objects, kept by catch-alls
                # (at the root, and at each tagged object just below it).
                extras = set_at(value, (*path, "unknownKey"), {"x": 1}) if path else dict(value, unknownKey={"x": 1})
                self.add(f"unknown key at {where}", extras)
        if site.kind == "array" and isinstance(current, list):
            items = site.merged["items"]
            if items is not None:
                bad = self.model.rejected(items, [*WRONG_VALUES, None])
                if bad:
                    wrong = bad[0] if thorough else self.rng.choice(bad)
                    mutated = list(current)
                    mutated.insert(min(1, len(mutated)), wrong)
                    self.add(f"invalid item at {where}[{min(1, len(current))}]", replace(value, path, mutated))
            if thorough and site.merged["minItems"]:
                self.add(f"too few items at {where}", replace(value, path, current[: site.merged["minItems"] - 1]))
        if site.kind == "integer":
            merged = site.merged
            low, high = merged["minimum"], merged["maximum"]
            fmt = INTEGER_FORMATS.get(merged["format"])
            bounds = set()
            for bound in (low, fmt[0] if fmt else None):
                if bound is not None:
                    bounds.add(bound - 1)
            for bound in (high, fmt[1] if fmt else None):
                if bound is not None:
                    bounds.add(bound + 1)
            for outside in sorted(bounds):
                self.add(f"integer {outside} out of range at {where}", replace(value, path, outside))
            self.add(f"true for an integer at {where}", replace(value, path, True))
            if isinstance(current, int) and not isinstance(current, bool):
                self.add(f"whole float for an integer at {where}", replace(value, path, float(current)))
            if thorough:
                self.add(f"fraction for an integer at {where}", replace(value, path, 1.5))

    def bad_payload(self, value: Json, site: Site, tag: str, current: JsonObject) -> None:
        """A known tag (the value of ``tag``) with a bad payload: a required
        member dropped, or a member of the wrong type."""
        path = site.path
        where = format_path(path)
        for key in site.merged["required"]:
            if key != tag and key in current:
                self.add(
                    f"known tag {current[tag]!r} with required {key} dropped at {where}",
                    delete_at(value, (*path, key)),
                )
                break
        for key, subs in site.merged["properties"].items():
            if key == tag or key not in current:
                continue
            node = subs[0] if len(subs) == 1 else {"allOf": subs}
            wrong = next(iter(self.model.rejected(node, WRONG_VALUES)), None)
            if wrong is not None:
                self.add(
                    f"known tag {current[tag]!r} with a bad {key} at {where}",
                    set_at(value, (*path, key), wrong) if path else dict(value, **{key: wrong}),
                )
                break


def option_label(option: Any, index: int) -> str:
    if isinstance(option, dict):
        for key, prop in (option.get("properties") or {}).items():
            if isinstance(prop, dict) and "const" in prop:
                return f"variant {key}={prop['const']}"
        if option.get("title"):
            return f"variant {option['title']}"
        if option.get("type") == "null":
            return "variant null"
    return f"variant #{index}"


def expect(model: Model, name: str, value: Json) -> JsonObject:
    """The expectations of one input: jsonschema's verdict, the lenient
    outcome and the strict one."""
    out: JsonObject = {"valid": model.is_valid(name, value)}
    try:
        out["output"] = model.decode(name, value)
    except Reject as error:
        out["error"] = path_spec(error)
    if out["valid"]:
        try:
            strict = model._decode(model.shape(name), value, (), True)  # already validated
        except Reject as error:  # pragma: no cover - valid values decode
            raise AssertionError(f"{name}: a valid value fails strict decoding: {error}") from None
        if "output" not in out or strict != out["output"]:
            out["strict_output"] = strict
    else:
        try:
            model._decode(model.shape(name), value, (), True)
        except Reject as error:
            out["strict_error"] = path_spec(error)
        else:
            out["strict_error"] = {"under": "$"}
    return out


def path_spec(error: Reject) -> Any:
    path = format_path(error.path)
    return path if error.exact else {"under": path}


# ------------------------------------------------------------------ files


def schema_key(schema_path: str | Path) -> str:
    """``schema/v2/schema.unstable.json`` -> ``v2_unstable``."""
    path = Path(schema_path)
    version = path.parent.name
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    suffix = stem[len("schema") :].lstrip(".") if stem.startswith("schema") else stem
    return version + ("_" + suffix.replace(".", "_") if suffix else "")


def generate(schema_path: str | Path, seed: str = DEFAULT_SEED, display: str | None = None) -> dict[str, Any]:
    """``{relative file name: JSON document}`` of the generated fixtures of
    one schema: ``manifest.json`` and ``generated/<Def>.json``."""
    raw = Path(schema_path).read_bytes()
    document = json.loads(raw)
    model = Model(document)
    sha = hashlib.sha256(raw).hexdigest()
    files: dict[str, Any] = {}
    counts = {"valid": 0, "invalid": 0, "lenient": 0}
    by_def: dict[str, list[JsonObject]] = {}
    for name in document["$defs"]:
        cases = by_def[name] = DefFixtures(model, name, seed).build()
        for case in cases:
            counts[category(case)] += 1
        files[f"generated/{name}.json"] = {
            "def": name,
            "schema_sha256": sha,
            "cases": cases,
        }
    files["messages.json"] = messages.build(document, by_def, sha)
    counts["messages"] = len(files["messages.json"]["messages"])
    files["manifest.json"] = {
        "description": "Generated by `acpgen conformance-fixtures`; do not edit. Regenerate with `make fixtures`.",
        "schema": display or Path(schema_path).as_posix(),
        "schema_sha256": sha,
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
        "defs": len(document["$defs"]),
        "counts": counts,
    }
    return files


def generate_many(jobs: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    """:func:`generate` for several ``(schema path, seed, display)`` at once,
    in parallel processes when there are several and CPUs to run them."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [generate(*job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_generate_job, jobs))


def _generate_job(job: tuple[str, str, str | None]) -> dict[str, Any]:
    return generate(*job)


def category(case: JsonObject) -> str:
    """valid, invalid (lenient decoding fails too) or lenient (invalid, but
    lenient decoding salvages it)."""
    if case.get("valid"):
        return "valid"
    return "lenient" if "output" in case else "invalid"


def dump(document: Any) -> str:
    """A fixture file as text: one case per line, so that a diff shows which
    cases a schema bump changes."""
    key = _list_key(document)
    if key is not None:
        head = {k: v for k, v in document.items() if k != key}
        lines = ["{"]
        for name, value in head.items():
            lines.append(f" {json.dumps(name)}: {json.dumps(value, ensure_ascii=False, sort_keys=True)},")
        cases = document[key]
        lines.append(f" {json.dumps(key)}: [")
        for index, case in enumerate(cases):
            comma = "," if index < len(cases) - 1 else ""
            lines.append("  " + json.dumps(case, ensure_ascii=False) + comma)
        lines.append(" ]")
        lines.append("}")
        return "\n".join(lines) + "\n"
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def committed_seed(out_dir: str | Path) -> str:
    """The seed recorded in ``out_dir``'s manifest, or the default."""
    manifest = Path(out_dir) / "manifest.json"
    if manifest.is_file():
        try:
            seed = json.loads(manifest.read_text(encoding="utf-8")).get("seed")
        except ValueError:
            seed = None
        if isinstance(seed, str):
            return seed
    return DEFAULT_SEED


def _with_known_failures(path: Path, document: Any) -> Any:
    """Carry over the hand-maintained ``known_failures`` of a generated file
    (those whose fixture still exists)."""
    key = _list_key(document)
    if key is None or not path.is_file():
        return document
    try:
        old = json.loads(path.read_text(encoding="utf-8")).get("known_failures") or {}
    except ValueError:
        old = {}
    names = {case["name"] for case in document[key]}
    kept = {name: reason for name, reason in old.items() if name in names}
    if not kept:
        return document
    out = {k: v for k, v in document.items() if k != key}
    out["known_failures"] = kept
    out[key] = document[key]
    return out


def _list_key(document: Any) -> str | None:
    """The key of a fixture file's list of fixtures, one per line."""
    for key in ("cases", "messages"):
        if isinstance(document, dict) and isinstance(document.get(key), list):
            return key
    return None


def _rendered(out: Path, files: dict[str, Any]) -> dict[Path, str]:
    return {out / name: dump(_with_known_failures(out / name, document)) for name, document in files.items()}


def stale(out_dir: str | Path, files: dict[str, Any]) -> list[str]:
    """The files that :func:`write` would change."""
    out = Path(out_dir)
    rendered = _rendered(out, files)
    changed = [
        str(p) for p, text in sorted(rendered.items()) if not p.is_file() or p.read_text(encoding="utf-8") != text
    ]
    generated_dir = out / "generated"
    if generated_dir.is_dir():
        changed += [str(p) for p in sorted(generated_dir.glob("*.json")) if p not in rendered]
    return changed


def write(out_dir: str | Path, files: dict[str, Any]) -> list[str]:
    """Write the generated files under ``out_dir`` (keeping their
    ``known_failures``), removing the files of definitions that are gone.
    Returns the files that changed."""
    out = Path(out_dir)
    rendered = _rendered(out, files)
    changed = []
    generated_dir = out / "generated"
    if generated_dir.is_dir():
        for old in sorted(generated_dir.glob("*.json")):
            if old not in rendered:
                old.unlink()
                changed.append(str(old))
    for path, text in sorted(rendered.items()):
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        changed.append(str(path))
    return changed
