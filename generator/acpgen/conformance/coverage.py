"""What the fixtures must exercise, worked out from the schema itself, and
whether they do.

Four kinds of target, each named by the definition it belongs to:

* ``def``: every ``$defs`` name has a valid fixture;
* ``variant``: every member of every union (a definition's own tagged union,
  with its catch-all, untagged and null-tag variants; a union told apart by
  required keys; a first-match or scalar union, as a definition or as a
  property) is selected by a fixture that decodes;
* ``enum``: every value of every enum, and some other value of an open enum;
* ``lenient``: every property carrying an ``x-deserialize-*`` keyword gets,
  in a fixture of its definition, a value that exercises the keyword (an
  invalid value for default-on-error, an array with an invalid item for
  skip-invalid-items, ``null`` for default-on-null).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from .model import LENIENT_KEYWORDS, MISSING, Model, Shape, json_equal, ref_name

if TYPE_CHECKING:  # the conformance check imports nothing of the generator
    from ..jsontypes import Json, JsonArray, JsonObject

CaseTest = Callable[["JsonObject"], bool]
"""Whether a fixture case covers a target."""


@dataclass
class Target:
    kind: str
    """def, variant, enum or lenient."""
    definition: str
    label: str
    test: CaseTest = field(repr=False, default=lambda case: False)
    covered_by: str | None = None

    @property
    def name(self) -> str:
        return f"{self.kind} {self.definition}" + (f" {self.label}" if self.label else "")


def _decodes(case: JsonObject) -> bool:
    return "output" in case or "strict_output" in case


def targets(model: Model) -> list[Target]:
    out: list[Target] = []
    for name, node in model.defs.items():
        out.append(Target("def", name, "", _valid_case(name)))
        shape = model.shape(name)
        out.extend(_union_targets(model, name, shape))
        if shape.kind == "enum":
            for value in shape.values:
                out.append(
                    Target(
                        "enum",
                        name,
                        repr(value),
                        _enum_value_case(name, value),
                    )
                )
            if shape.open:
                out.append(
                    Target(
                        "enum",
                        name,
                        "(another value)",
                        _other_enum_value_case(name, shape),
                    )
                )
        out.extend(_lenient_targets(model, name, node))
    return out


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and json_equal(a, b)


# Each test is built by a function of its own so that it closes over that
# call's values (not the loop variables of the caller).


def _valid_case(name: str) -> CaseTest:
    return lambda c: c["def"] == name and c.get("valid") is True


def _enum_value_case(name: str, value: Any) -> CaseTest:
    return lambda c: c["def"] == name and _decodes(c) and _same(c["input"], value)


def _other_enum_value_case(name: str, shape: Any) -> CaseTest:
    return lambda c: (
        c["def"] == name
        and _decodes(c)
        and type(c["input"]) is (str if shape.value_kind == "str" else int)
        and c["input"] not in shape.values
    )


def _tag_is(tag: str, tag_value: Any) -> CaseTest:
    return lambda value: value.get(tag) == tag_value


def _variant_case(name: str, test: CaseTest) -> CaseTest:
    return lambda c: c["def"] == name and _decodes(c) and isinstance(c["input"], dict) and test(c["input"])


def _keyed_case(name: str, required: tuple[str, ...]) -> CaseTest:
    return lambda c: (
        c["def"] == name and _decodes(c) and isinstance(c["input"], dict) and all(k in c["input"] for k in required)
    )


def _union_targets(model: Model, name: str, shape: Shape) -> list[Target]:
    out = []
    if shape.kind == "tagged":
        tag = shape.tag
        known = {v.tag for v in shape.variants if v.role == "tagged"}
        for variant in shape.variants:
            test: CaseTest
            if variant.role == "tagged":
                label, test = f"{tag}={variant.tag!r}", _tag_is(tag, variant.tag)
            elif variant.role == "catch_all":
                label, test = "catch-all", (lambda value: isinstance(value.get(tag), str) and value[tag] not in known)
            elif variant.role == "untagged":
                label, test = f"untagged ({variant.title})", (lambda value: tag not in value)
            else:
                label, test = f"{tag}=null", (lambda value: value.get(tag, None) is None)
            out.append(
                Target(
                    "variant",
                    name,
                    label,
                    _variant_case(name, test),
                )
            )
    elif shape.kind == "keyed":
        for ref, required, _ in shape.members:
            label = ref if isinstance(ref, str) else f"member {ref}"
            out.append(
                Target(
                    "variant",
                    name,
                    label,
                    _keyed_case(name, required),
                )
            )
    elif shape.kind in ("first_match", "scalar_union", "nullable"):
        out.extend(_member_targets(model, name, None, model.defs[name]))
    if shape.kind == "object":
        for f in shape.fields:
            out.extend(_member_targets(model, name, None if f.flatten else f.wire, f.node))
    return out


def _member_targets(model: Model, name: str, prop: str | None, node: Any) -> list[Target]:
    """The members of a first-match or scalar union at a definition or a
    property (through one level of nullability)."""
    options = union_options(node)
    if not options:
        return []
    out = []
    for index, option in enumerate(options):
        if is_null_option(option):
            continue
        validator = model.validator(option)
        label = _option_label(option, index)
        where = f"{prop}: {label}" if prop else label

        def test(c: JsonObject, n: str = name, p: str | None = prop, v: Draft202012Validator = validator) -> bool:
            if c["def"] != n or not _decodes(c):
                return False
            value = c["input"]
            if p is not None:
                if not isinstance(value, dict) or p not in value:
                    return False
                value = value[p]
            return v.is_valid(value)

        out.append(Target("variant", name, where, test))
    return out


def union_options(node: Json) -> JsonArray:
    """The members of a union that is neither an enum nor tagged: the
    ``anyOf``/``oneOf`` of a node (inside a nullable ``anyOf``)."""
    if not isinstance(node, dict) or ref_name(node):
        return []
    for combinator in ("anyOf", "oneOf"):
        options = node.get(combinator)
        if not isinstance(options, list):
            continue
        non_null = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null" and len(o) <= 2)]
        if len(non_null) == 1 and len(options) == 2:
            return union_options(non_null[0])
        if len(non_null) >= 2 and not any(isinstance(o, dict) and "const" in o for o in non_null):
            if any(_tagged(o) for o in non_null):
                return []
            return options  # the schema's own list (its id names the union)
    return []


def is_null_option(option: Any) -> bool:
    return isinstance(option, dict) and option.get("type") == "null" and len(option) <= 2


def _tagged(option: Any) -> bool:
    return isinstance(option, dict) and any(
        isinstance(p, dict) and "const" in p for p in (option.get("properties") or {}).values()
    )


def _option_label(option: Any, index: int) -> str:
    if isinstance(option, dict):
        title = option.get("title")
        if isinstance(title, str):
            return title
        ref = ref_name(option)
        if ref:
            return ref
        if option.get("type"):
            return str(option["type"])
    return f"#{index}"


def _lenient_targets(model: Model, name: str, node: Any) -> list[Target]:
    if not isinstance(node, dict):
        return []
    holders = [node] + [o for c in ("anyOf", "oneOf") for o in (node.get(c) or []) if isinstance(o, dict)]
    out = []
    seen = set()
    for holder in holders:
        for prop, schema in (holder.get("properties") or {}).items():
            if not isinstance(schema, dict):
                continue
            for keyword in LENIENT_KEYWORDS:
                if schema.get(keyword) is not True or (prop, keyword) in seen:
                    continue
                seen.add((prop, keyword))
                out.append(
                    Target(
                        "lenient",
                        name,
                        f"{prop} [{keyword}]",
                        _lenient_test(model, name, prop, schema, keyword),
                    )
                )
    return out


PROBES = [None, True, 0, -1, 1.5, "", "text", [], [1, "x"], {}, {"type": 7, "k": [None]}]
"""A value of every JSON type: a property that accepts them all accepts anything."""


def _lenient_test(model: Model, name: str, prop: str, schema: JsonObject, keyword: str) -> CaseTest:
    validator = model.validator(schema)
    items = model.validator(schema["items"]) if "items" in schema else None
    # A property that accepts any JSON (rawInput, Error.data) has no invalid
    # value: giving it any value exercises it.
    accepts_anything = all(validator.is_valid(probe) for probe in PROBES)

    def test(c: JsonObject) -> bool:
        if c["def"] != name or not isinstance(c.get("input"), dict):
            return False
        value = c["input"].get(prop, MISSING)
        if value is MISSING:
            return False
        if keyword == "x-deserialize-default-on-null":
            return value is None
        if accepts_anything:
            return True
        if keyword == "x-deserialize-skip-invalid-items":
            return isinstance(value, list) and items is not None and any(not items.is_valid(v) for v in value)
        return not validator.is_valid(value)

    return test


def evaluate(model: Model, cases: list[JsonObject]) -> list[Target]:
    """The targets, each with the first fixture that covers it (or None)."""
    all_targets = targets(model)
    by_def: dict[str, list[JsonObject]] = {}
    for case in cases:
        definition = case.get("def")
        if isinstance(definition, str):
            by_def.setdefault(definition, []).append(case)
    for target in all_targets:
        for case in by_def.get(target.definition, ()):
            try:
                hit = target.test(case)
            except Exception:  # a malformed fixture covers nothing
                hit = False
            if hit:
                target.covered_by = case.get("name", "?")
                break
    return all_targets
