"""The JSON Schema 2020-12 validator behind strict mode: what the typed codec
keeps as JSON is checked against its subschema here, and so is the wire form
of ``encode(value, validate=True)``."""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any, cast

from ._runtime import (
    INF,
    ValidationError,
    json_array,
    json_equal,
    show_found,
    show_number,
    show_value,
)

if TYPE_CHECKING:
    from ._runtime import JsonObject, JsonPath

__all__ = ["resolve", "schema_root", "validate"]


_SCHEMA_CACHE: dict[int, JsonObject] = {}


def schema_root(text: str) -> JsonObject:
    root = _SCHEMA_CACHE.get(id(text))
    if root is None:
        root = _SCHEMA_CACHE[id(text)] = {"$defs": json.loads(text)}
    return root


def validate(root: JsonObject, pointer: str, value: Any) -> None:
    """Check ``value`` against the subschema at ``pointer`` as a JSON Schema
    2020-12 validator does (``format`` is an annotation), raising
    :class:`ValidationError` with the path of the first failure."""
    _Validator(root).check(resolve(root, pointer), value, ())


_RESOLVED: dict[int, tuple[JsonObject, dict[str, Any]]] = {}
"""id(root) -> (root, pointer -> node): the root is held, so its id stays its."""


def resolve(root: JsonObject, pointer: str) -> Any:
    entry = _RESOLVED.get(id(root))
    if entry is None or entry[0] is not root:
        entry = _RESOLVED[id(root)] = (root, {})
    known = entry[1]
    node: Any = known.get(pointer)
    if node is not None:
        return node
    node = root
    for part in pointer.lstrip("#").split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if type(node) is json_array else node[part]
    known[pointer] = node
    return node


_Tag = tuple[str, Any, bool]
"""A member a branch fixes: its name, its ``const`` and whether it is required."""

_TAGS: dict[int, tuple[Any, tuple[_Tag, ...]]] = {}
"""id(branch) -> (branch, its tags); the branch is held, so its id stays its."""


def _is_type(value: object, kind: str) -> bool:
    t = type(value)
    if kind == "object":
        return t is dict
    if kind == "array":
        return t is list
    if kind == "string":
        return t is str
    if kind == "integer":
        return t is int or (type(value) is float and value.is_integer())
    if kind == "number":
        return t is int or (t is float and -INF < cast(float, value) < INF)
    if kind == "boolean":
        return t is bool
    if kind == "null":
        return value is None
    return False


class _Validator:
    """A JSON Schema 2020-12 validator for the keywords ACP schemas use; the
    generator refuses schemas with keywords it does not implement."""

    def __init__(self, root: JsonObject) -> None:
        self.root = root

    def fail(self, message: str, path: JsonPath, keyword: str = "") -> ValidationError:
        error = ValidationError(message, path)
        error.keyword = keyword
        return error

    def check(self, schema: Any, value: Any, path: JsonPath) -> set[str]:
        """Validate; return the object properties evaluated (for
        ``unevaluatedProperties``)."""
        if schema is True:
            return set()
        if schema is False:
            raise self.fail("no value is allowed here", path)
        evaluated: set[str] = set()
        if "$ref" in schema:
            evaluated |= self.check(resolve(self.root, schema["$ref"]), value, path)
        kind = schema.get("type")
        if kind is not None:
            kinds: list[str] = kind if type(kind) is json_array else [kind]
            if not any(_is_type(value, k) for k in kinds):
                expected = " or ".join(kinds)
                error = self.fail(
                    f"expected {expected}, found {show_found(value)}",
                    path,
                    "type",
                )
                error.kinds = tuple(kinds)
                error.found = value
                raise error
        if "const" in schema and not json_equal(value, schema["const"]):
            error = self.fail(
                f"expected {show_value(schema['const'])}, found {show_value(value)}",
                path,
                "const",
            )
            error.expected = (schema["const"],)
            error.found = value
            raise error
        if "enum" in schema and not any(json_equal(value, e) for e in schema["enum"]):
            allowed: list[Any] = schema["enum"]
            error = self.fail(
                f"expected one of {_listed(allowed)}, found {show_value(value)}",
                path,
                "const",
            )
            error.expected = tuple(allowed)
            error.found = value
            raise error
        t: type[object] = value.__class__
        if (t is int or t is float) and t is not bool:
            self._number(schema, value, path)
        elif t is str:
            self._string(schema, value, path)
        elif t is list:
            self._array(schema, value, path)
        elif t is dict:
            evaluated |= self._object(schema, value, path)
        for sub in schema.get("allOf", ()):
            evaluated |= self.check(sub, value, path)
        if "anyOf" in schema:
            evaluated |= self._any_of(schema["anyOf"], value, path)
        if "oneOf" in schema:
            evaluated |= self._one_of(schema["oneOf"], value, path)
        if "not" in schema:
            try:
                self.check(schema["not"], value, path)
            except ValidationError:
                pass
            else:
                raise self.fail(
                    "the value matches a schema it must not match", path, "not"
                )
        if "if" in schema:
            try:
                evaluated |= self.check(schema["if"], value, path)
            except ValidationError:
                if "else" in schema:
                    evaluated |= self.check(schema["else"], value, path)
            else:
                if "then" in schema:
                    evaluated |= self.check(schema["then"], value, path)
        if t is dict and "unevaluatedProperties" in schema:
            extra = [k for k in value if k not in evaluated]
            for key in extra:
                self.check(schema["unevaluatedProperties"], value[key], (*path, key))
            evaluated |= set(extra)
        return evaluated

    def _number(self, schema: JsonObject, value: Any, path: JsonPath) -> None:
        if "minimum" in schema and value < schema["minimum"]:
            raise self.fail(
                f"expected a number >= {schema['minimum']}, found {show_number(value)}",
                path,
            )
        if "maximum" in schema and value > schema["maximum"]:
            raise self.fail(
                f"expected a number <= {schema['maximum']}, found {show_number(value)}",
                path,
            )
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise self.fail(
                f"expected a number > {schema['exclusiveMinimum']}, found {show_number(value)}",
                path,
            )
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            raise self.fail(
                f"expected a number < {schema['exclusiveMaximum']}, found {show_number(value)}",
                path,
            )
        if "multipleOf" in schema:
            divisor = schema["multipleOf"]
            if type(value) is int and type(divisor) is int:
                whole = value % divisor == 0
            else:
                try:
                    quotient = value / divisor
                except OverflowError:
                    quotient = INF
                whole = -INF < quotient < INF and float(quotient).is_integer()
            if not whole:
                raise self.fail(
                    f"expected a multiple of {schema['multipleOf']}, found {show_number(value)}",
                    path,
                )

    def _string(self, schema: JsonObject, value: str, path: JsonPath) -> None:
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise self.fail(
                f"expected at least {schema['minLength']} characters, found {show_value(value)}",
                path,
            )
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise self.fail(
                f"expected at most {schema['maxLength']} characters, found {show_value(value)}",
                path,
            )
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            raise self.fail(
                f"expected a string matching {show_value(schema['pattern'])}, found {show_value(value)}",
                path,
            )

    def _array(self, schema: JsonObject, value: list[Any], path: JsonPath) -> None:
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise self.fail(
                f"expected at least {schema['minItems']} items, found {len(value)}",
                path,
            )
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise self.fail(
                f"expected at most {schema['maxItems']} items, found {len(value)}", path
            )
        prefix = schema.get("prefixItems", ())
        for index, sub in enumerate(prefix[: len(value)]):
            self.check(sub, value[index], (*path, index))
        if "items" in schema:
            for index in range(len(prefix), len(value)):
                self.check(schema["items"], value[index], (*path, index))
        if schema.get("uniqueItems") is True:
            for i in range(len(value)):
                for j in range(i):
                    if json_equal(value[i], value[j]):
                        raise self.fail("expected unique items", (*path, i))

    def _object(
        self, schema: JsonObject, value: JsonObject, path: JsonPath
    ) -> set[str]:
        evaluated: set[str] = set()
        for key in schema.get("required", ()):
            if key not in value:
                raise self.fail(f"missing required property {json.dumps(key)}", path)
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            raise self.fail(
                f"expected at least {schema['minProperties']} properties", path
            )
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            raise self.fail(
                f"expected at most {schema['maxProperties']} properties", path
            )
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for key, sub in properties.items():
            if key in value:
                self.check(sub, value[key], (*path, key))
                evaluated.add(key)
        for pattern, sub in patterns.items():
            for key in value:
                if re.search(pattern, key):
                    self.check(sub, value[key], (*path, key))
                    evaluated.add(key)
        if "additionalProperties" in schema:
            for key in value:
                if key in properties or any(re.search(p, key) for p in patterns):
                    continue
                if schema["additionalProperties"] is False:
                    raise self.fail(
                        f"unexpected property {json.dumps(key)}", (*path, key)
                    )
                self.check(schema["additionalProperties"], value[key], (*path, key))
                evaluated.add(key)
        if "propertyNames" in schema:
            for key in value:
                self.check(schema["propertyNames"], key, (*path, key))
        for key, needed in schema.get("dependentRequired", {}).items():
            if key in value:
                for other in needed:
                    if other not in value:
                        raise self.fail(
                            f"missing property {json.dumps(other)} required by {json.dumps(key)}",
                            path,
                        )
        return evaluated

    def _tags(self, branch: Any) -> tuple[_Tag, ...]:
        """The members whose ``const`` the branch (with what its ``$ref``
        and ``allOf`` add) fixes: a value with another one there, or
        without a required one, fails the branch."""
        entry = _TAGS.get(id(branch))
        if entry is not None and entry[0] is branch:
            return entry[1]
        tags: list[_Tag] = []
        stack: list[Any] = [branch]
        seen = 0
        while stack and seen < 16:
            node: Any = stack.pop()
            seen += 1
            if type(node) is not dict:
                continue
            schema = cast("JsonObject", node)
            required: list[str] = schema.get("required", [])
            properties: JsonObject = schema.get("properties", {})
            for key, sub in properties.items():
                if type(sub) is dict and "const" in sub:
                    const: Any = cast("JsonObject", sub)["const"]
                    tags.append((key, const, key in required))
            if "$ref" in schema:
                stack.append(resolve(self.root, schema["$ref"]))
            stack.extend(schema.get("allOf", []))
        found = tuple(tags)
        _TAGS[id(branch)] = (branch, found)
        return found

    def _candidates(self, options: list[Any], value: JsonObject) -> list[Any]:
        """The branches a tag does not already rule out."""
        kept: list[Any] = []
        for sub in options:
            for key, const, required in self._tags(sub):
                if key in value:
                    if not json_equal(value[key], const):
                        break
                elif required:
                    break
            else:
                kept.append(sub)
        return kept

    def _any_of(self, options: list[Any], value: Any, path: JsonPath) -> set[str]:
        if type(value) is dict and len(options) > 1:
            # The branches a tag rules out cannot match: try the rest first;
            # only when none matches are all tried, for the error to give.
            candidates = self._candidates(options, cast("JsonObject", value))
            if len(candidates) < len(options):
                evaluated: set[str] = set()
                matched = False
                for sub in candidates:
                    with contextlib.suppress(ValidationError):
                        evaluated |= self.check(sub, value, path)
                        matched = True
                if matched:
                    return evaluated
        evaluated = set()
        errors: list[ValidationError] = []
        matched = False
        for sub in options:
            try:
                evaluated |= self.check(sub, value, path)
                matched = True
            except ValidationError as error:
                errors.append(error)
        if not matched:
            raise self._best(errors, path, "any of the allowed shapes")
        return evaluated

    def _one_of(self, options: list[Any], value: Any, path: JsonPath) -> set[str]:
        if type(value) is dict and len(options) > 1:
            candidates = self._candidates(options, cast("JsonObject", value))
            if len(candidates) < len(options):
                found: list[set[str]] = []
                for sub in candidates:
                    with contextlib.suppress(ValidationError):
                        found.append(self.check(sub, value, path))
                if len(found) == 1:
                    return found[0]
                if len(found) > 1:
                    raise self.fail(
                        "the value matches more than one of the shapes of a oneOf",
                        path,
                    )
        evaluated: set[str] = set()
        errors: list[ValidationError] = []
        matches = 0
        for sub in options:
            try:
                evaluated = self.check(sub, value, path)
                matches += 1
            except ValidationError as error:
                errors.append(error)
        if matches == 0:
            raise self._best(errors, path, "exactly one of the allowed shapes")
        if matches > 1:
            raise self.fail(
                "the value matches more than one of the shapes of a oneOf", path
            )
        return evaluated

    def _best(
        self, errors: list[ValidationError], path: JsonPath, expected: str
    ) -> ValidationError:
        """The error of the branch that was meant, or a summary.

        A branch is not meant when it fails on the value's own type, on a
        ``not``, or on a constant at the value or one of its members (a union
        tag); among the others, the one that got furthest wins.
        """
        depth = len(path)
        meant = [e for e in errors if not _rejects_branch(e, depth)]
        if meant:
            return max(meant, key=lambda e: len(e.segments))
        tags = [
            e for e in errors if e.keyword == "const" and len(e.segments) == depth + 1
        ]
        if tags and len({e.segments for e in tags}) == 1:
            # Every branch refused the same member's value (a union tag): say
            # so there, with the values it could have had.
            wanted = tuple(value for e in tags for value in e.expected)
            error = self.fail(
                f"expected one of {_listed(wanted)}, found {show_value(tags[0].found)}",
                tags[0].segments,
                "const",
            )
            error.expected = wanted
            error.found = tags[0].found
            return error
        if all(
            len(e.segments) == depth and e.keyword in ("const", "type") for e in errors
        ):
            # The choices are values (an enum, perhaps with null) or types:
            # name every one of them.
            return self._choices(errors, path)
        reasons = sorted({e.message for e in errors})
        more = f"; and {len(reasons) - 3} more" if len(reasons) > 3 else ""
        return self.fail(f"expected {expected} ({'; '.join(reasons[:3])}{more})", path)

    def _choices(
        self, errors: list[ValidationError], path: JsonPath
    ) -> ValidationError:
        """Every branch refused the value itself, by its value or its type:
        the error lists each value and type that was allowed."""
        values: list[Any] = []
        kinds: list[str] = []
        for e in errors:
            values.extend(v for v in e.expected if not _listed_in(values, v))
            kinds.extend(k for k in e.kinds if k not in kinds)
        found: Any = errors[0].found
        if not values:
            error = self.fail(
                f"expected {' or '.join(kinds)}, found {show_found(found)}",
                path,
                "type",
            )
        else:
            others = f" or {' or '.join(kinds)}" if kinds else ""
            error = self.fail(
                f"expected one of {_listed(values)}{others}, found {show_value(found)}",
                path,
                "const",
            )
        error.expected = tuple(values)
        error.kinds = tuple(kinds)
        error.found = found
        return error


def _listed(values: Any) -> str:
    """Allowed values as a message lists them: ``"a", "b", "c"``."""
    return ", ".join(show_value(value) for value in values)


def _listed_in(values: list[Any], value: Any) -> bool:
    return any(json_equal(value, v) for v in values)


def _rejects_branch(error: ValidationError, depth: int) -> bool:
    length = len(error.segments)
    if error.keyword in ("type", "not"):
        return length == depth
    if error.keyword == "const":
        return length <= depth + 1
    return False
