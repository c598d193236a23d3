"""Runtime support: the UNSET sentinel, ValidationError, the scalar and
container checks the generated decoders call, and the walks over JSON values
(subclasses of the JSON types, the wire check of ``encode``). The JSON Schema
validator behind strict mode is in ``_validator.py``, the codec's entry points
in ``_codec.py``.

One cohesive thing, longer than the other modules: the helpers the
generated decoders and encoders call, kept in one module so that each
generated module imports them from one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    NoReturn,
    TypeVar,
    cast,
    overload,
)

__all__ = ["UNSET", "Unset", "ValidationError"]

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing import TypeAlias

    Decoder: TypeAlias = Callable[[Any, bool], _T]
    """A decoding function: ``(JSON value, strict) -> decoded value``."""

    JsonObject: TypeAlias = dict[str, Any]
    """A JSON object as ``json.loads`` returns it."""

    JsonPath: TypeAlias = tuple[str | int, ...]
    """Object keys and array indexes from the root to a value."""

json_object: Final[type[dict[str, Any]]] = dict
"""``dict``, typed so that ``type(d) is json_object`` narrows a JSON value to a
JSON object with string keys (``type(d) is dict`` leaves the key type unknown)."""

json_array: Final[type[list[Any]]] = list
"""``list``, typed so that ``type(v) is json_array`` narrows a JSON value to a
list of JSON values."""

any_str: Final[Any] = str
"""``str``, typed ``Any``, so that ``type(v) is any_str`` does not narrow a JSON
value to ``str``: a decoder of a named string type (a ``NewType`` over
``str``, such as ``SessionId``) returns the string it checked that way as
that type, with no call on the way."""


class Unset(Enum):
    """The type of :data:`UNSET`: a field that is omitted on the wire.

    ``UNSET`` is falsy and distinct from ``None``, which is JSON ``null``. It is
    the only member of this enum, so ``x is not UNSET`` removes ``Unset`` from
    the type of ``x`` for type checkers.
    """

    UNSET = "UNSET"

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "UNSET"

    def __str__(self) -> str:
        return "UNSET"

    def __copy__(self) -> Unset:
        return self

    def __deepcopy__(self, memo: object) -> Unset:
        return self


UNSET: Final = Unset.UNSET
"""A field omitted on the wire."""

MISSING: Final = object()
"""Internal: a key absent from the JSON object being decoded."""


class ValidationError(ValueError):
    """A JSON value does not have the shape its type requires.

    ``path`` says where, in the form ``$.update.content[2].type``; ``message``
    says what was expected and what was found.
    """

    expected: tuple[Any, ...] = ()
    """Internal: the constants a ``const`` failure wanted ..."""
    found: Any = None
    """... and the value it found."""
    kinds: tuple[str, ...] = ()
    """Internal: the JSON types a ``type`` failure wanted."""
    keyword = ""
    """Internal: the schema keyword that failed (``type``, ``const`` ...), used
    to tell a union's inapplicable branches from the one that failed."""

    def __init__(self, message: str, path: JsonPath = ()) -> None:
        super().__init__(message)
        self.message = message
        self._segments: list[str | int] = list(reversed(path))

    def at_path(self, path: JsonPath) -> ValidationError:
        """Prefix the path with ``path`` (keys and indexes from the root)."""
        self._segments.extend(reversed(path))
        return self

    def at(self, segment: str | int) -> ValidationError:
        """Prefix the path with one more key or index (used while unwinding)."""
        self._segments.append(segment)
        return self

    @property
    def segments(self) -> JsonPath:
        return tuple(reversed(self._segments))

    @property
    def path(self) -> str:
        out = ["$"]
        for segment in reversed(self._segments):
            if type(segment) is int:
                out.append(f"[{segment}]")
            elif type(segment) is not str:
                # Not JSON (a Python caller's dict key): shown, never raised on.
                out.append(f"[{show_value(segment)}]")
            elif _PLAIN_KEY.fullmatch(segment):
                out.append("." + segment)
            else:
                out.append("[" + json.dumps(segment) + "]")
        return "".join(out)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def __reduce__(self) -> tuple[type[ValidationError], tuple[str, JsonPath]]:
        return (ValidationError, (self.message, self.segments))


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_type(value: object) -> str:
    """The JSON type name of a decoded JSON value, for messages."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    if kind is list:
        return "array"
    if kind is dict:
        return "object"
    return kind.__name__


INF = float("inf")
"""Infinity: a float ``x`` is finite when ``-INF < x < INF`` (NaN compares
false), as ``math.isfinite`` says, without importing ``math``. (``json``,
which the error messages quote with, is imported with the package: an
error's first message would otherwise pay its import.)"""


def show_value(value: object) -> str:
    """A value for a message: its JSON text, shortened; a number beyond what
    ``str`` converts (4,300 digits) by its size; anything else by its type."""
    if type(value) is int and value.bit_length() > 1000:
        return _big(value)
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        if type(value) is float:
            return repr(value)
        return json_type(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _big(value: int) -> str:
    return f"an integer of about {int(value.bit_length() * 0.30103)} digits"


def show_found(value: object) -> str:
    """What a message says was found: the JSON type and the value
    (``string "x"``), or ``null`` alone, which is both."""
    if value is None:
        return "null"
    return f"{json_type(value)} {show_value(value)}"


def show_number(value: float) -> str:
    """A number for a message, whatever its size."""
    return show_value(value) if type(value) is int else repr(value)


def type_error(expected: str, value: object) -> ValidationError:
    return ValidationError(f"expected {expected}, found {show_found(value)}")


def unexpected(expected: str, value: object) -> ValidationError:
    """``expected ..., found <value>``, the value shortened for the message."""
    return ValidationError(f"{expected}, found {show_value(value)}")


def missing(key: str) -> ValidationError:
    return ValidationError(f"missing required property {json.dumps(key)}")


def check_tag(d: JsonObject, tag: str, expected: str | None) -> ValidationError:
    """The error for an object whose tag does not select the variant asked
    for (``expected``; None for a catch-all, which takes any string)."""
    value = d.get(tag, MISSING)
    if value is MISSING:
        return missing(tag)
    if expected is None:
        return type_error("a string", value).at(tag)
    return unexpected(f"expected {json.dumps(expected)}", value).at(tag)


def check_str(
    value: object, min_length: int | None = None, pattern: str | None = None
) -> str:
    if type(value) is not str:
        raise type_error("a string", value)
    if min_length is not None and len(value) < min_length:
        raise ValidationError(
            f"expected a string of at least {min_length} characters, found {show_value(value)}"
        )
    if pattern is not None and re.search(pattern, value) is None:
        raise ValidationError(
            f"expected a string matching {show_value(pattern)}, found {show_value(value)}"
        )
    return value


def check_bool(value: object) -> bool:
    if type(value) is not bool:
        raise type_error("a boolean", value)
    return value


def check_int(value: object, low: int | None = None, high: int | None = None) -> int:
    """An integer: not a boolean; a float with no fraction becomes an int."""
    if type(value) is not int:
        if type(value) is float and value.is_integer():
            value = int(value)
        else:
            raise type_error("an integer", value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValidationError(
            f"expected an integer {_range(low, high)}, found {show_number(value)}"
        )
    return value


def _range(low: float | None, high: float | None) -> str:
    """The allowed range, in words: ``>= 0``, ``<= 9`` or ``in [0, 9]``."""
    if high is None:
        return f">= {low}"
    if low is None:
        return f"<= {high}"
    return f"in [{low}, {high}]"


FLOAT_MAX: Final[float] = 1.7976931348623157e308
"""The largest finite float: ``-FLOAT_MAX <= x <= FLOAT_MAX`` holds for a
float that is neither NaN nor an infinity (the codec's inline check)."""


def check_num(
    value: object, low: float | None = None, high: float | None = None
) -> int | float:
    kind = type(value)
    if kind is not int and kind is not float:
        raise type_error("a number", value)
    number = cast("int | float", value)
    if kind is float and not -INF < number < INF:
        # json.loads accepts NaN and Infinity; JSON has no such numbers.
        raise type_error("a finite number", value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValidationError(
            f"expected a number {_range(low, high)}, found {show_number(number)}"
        )
    return number


def not_null(value: object) -> NoReturn:
    """The error for a value that should be ``null``: the codec decodes a
    null-only type as ``None if v is None else not_null(v)``."""
    raise type_error("null", value)


def check_const(value: object, expected: _T) -> _T:
    if not json_equal(value, expected):
        raise ValidationError(
            f"expected {show_value(expected)}, found {show_value(value)}"
        )
    return expected


def check_list(
    value: Any, item: Decoder[_T], strict: bool, min_items: int | None = None
) -> list[_T]:
    if type(value) is not json_array:
        raise type_error("an array", value)
    out: list[_T] = []
    append = out.append
    index = 0
    try:
        for index, element in enumerate(value):
            append(item(element, strict))
    except ValidationError as error:
        raise error.at(index)
    if strict and min_items is not None and len(out) < min_items:
        raise too_short(out, min_items)
    return out


def too_short(items: list[Any], min_items: int) -> ValidationError:
    """The error for an array under its ``minItems``. Strict mode only checks
    it: lenient mode reads it as the reference does, as documentation (a Rust
    ``Vec`` takes any length)."""
    return ValidationError(
        f"expected an array of at least {min_items} items, found {len(items)}"
    )


def check_variants(
    value: Any,
    tag: str,
    variants: dict[str, Decoder[_T]],
    union: Decoder[_T],
    strict: bool,
    min_items: int | None = None,
) -> list[_T]:
    """:func:`check_list` for the items of a tagged union: an item whose tag
    ``variants`` has is read by that variant's decoder directly, the rest by
    the ``union``'s own decoder (which raises the error, or takes the item as
    its catch-all)."""
    if type(value) is not json_array:
        raise type_error("an array", value)
    out: list[_T] = []
    index = 0
    try:
        for index, element in enumerate(value):
            key = element.get(tag) if type(element) is json_object else None
            out.append(
                (variants.get(key, union) if type(key) is str else union)(
                    element, strict
                )
            )
    except ValidationError as error:
        raise error.at(index)
    if strict and min_items is not None and len(out) < min_items:
        raise too_short(out, min_items)
    return out


def check_variants_skipping(
    value: Any,
    tag: str,
    variants: dict[str, Decoder[_T]],
    union: Decoder[_T],
    strict: bool,
    min_items: int | None = None,
) -> list[_T]:
    """:func:`check_list_skipping` for the items of a tagged union, read as
    :func:`check_variants` reads them."""
    if strict:
        return check_variants(value, tag, variants, union, strict, min_items)
    if type(value) is not json_array:
        raise type_error("an array", value)
    out: list[_T] = []
    for element in value:
        key = element.get(tag) if type(element) is json_object else None
        try:
            out.append(
                (variants.get(key, union) if type(key) is str else union)(
                    element, strict
                )
            )
        except ValidationError:
            salvage(element)
    return out


def check_list_skipping(
    value: Any, item: Decoder[_T], strict: bool, min_items: int | None = None
) -> list[_T]:
    """``x-deserialize-skip-invalid-items``: in lenient mode, bad items are dropped."""
    if strict:
        return check_list(value, item, strict, min_items)
    if type(value) is not json_array:
        raise type_error("an array", value)
    out: list[_T] = []
    for element in value:
        try:
            out.append(item(element, strict))
        except ValidationError:
            salvage(element)
    return out


@overload
def check_map(
    value: Any, item: None = None, strict: bool = False
) -> dict[str, Any]: ...
@overload
def check_map(value: Any, item: Decoder[_T], strict: bool) -> dict[str, _T]: ...
def check_map(
    value: Any, item: Decoder[Any] | None = None, strict: bool = False
) -> dict[str, Any]:
    """A JSON object used as a map; a new dict, so the input is never shared.
    Without ``item`` its values are any JSON, which strict mode checks as
    :func:`check_json` does."""
    if type(value) is not json_object:
        raise type_error("an object", value)
    for key in value:
        if type(key) is not str:
            raise type_error("a string key", key)
    if item is None:
        if strict:
            check_json(value)
        return dict(value)
    out: dict[str, Any] = {}
    for key, element in value.items():
        try:
            out[key] = item(element, strict)
        except ValidationError as error:
            raise error.at(key)
    return out


def scalar_union(
    value: Any, strict: bool, by_type: dict[str, Decoder[object]], expected: str
) -> object:
    """Decode a union whose members have distinct JSON types. The caller knows
    the union the decoders give, and casts to it."""
    kind = json_type(value)
    decoder = by_type.get(kind)
    if decoder is None and kind == "number" and value.is_integer():
        decoder = by_type.get("integer")
    if decoder is None:
        raise type_error(expected, value)
    return decoder(value, strict)


def first_match(
    value: Any, strict: bool, decoders: Sequence[Decoder[object]]
) -> object:
    """Decode an untagged union nothing on the wire tells apart: the first
    member that accepts the value wins (serde's ``untagged``). On failure the
    error of the member that got furthest is raised. The caller knows the union
    the decoders give, and casts to it. A member refusing a value that holds
    subclasses of the JSON types is :func:`salvage`'s case: the next member
    must not take what the refused one would have taken as plain JSON."""
    errors: list[ValidationError] = []
    for decoder in decoders:
        try:
            return decoder(value, strict)
        except ValidationError as error:
            salvage(value)
            errors.append(error)
    raise furthest(errors)


def furthest(errors: Sequence[ValidationError]) -> ValidationError:
    """Of the errors of the members of a union that all refused a value, the
    one that got furthest into it (the first of those with the longest path)."""
    return max(errors, key=lambda e: len(e.segments))


def exactly_one(
    value: Any, strict: bool, decoders: Sequence[Decoder[object]], several: str
) -> object:
    """Decode a ``oneOf`` union: the one member that accepts the value; when
    several do, ``several`` is the error; when none does, the error of the
    member that got furthest. The caller casts to the union. A refusal is
    :func:`salvage`'s case, as in :func:`first_match`."""
    results: list[object] = []
    errors: list[ValidationError] = []
    for decoder in decoders:
        try:
            results.append(decoder(value, strict))
        except ValidationError as error:
            salvage(value)
            errors.append(error)
    if len(results) == 1:
        return results[0]
    if results:
        raise ValidationError(several)
    raise furthest(errors)


def any_value(value: Any, strict: bool = False) -> Any:
    """Any JSON value, as it is; a list or object is a shallow copy (its
    items are shared with the input), a plain ``list`` or ``dict`` also for a
    subclass such as ``OrderedDict``. Strict mode first checks it is JSON
    through and through (:func:`check_json`)."""
    if strict:
        check_json(value)
    kind: type[object] = type(cast(object, value))
    if kind is json_object:
        return dict(value)
    if kind is json_array:
        return list(value)
    if kind in _PLAIN or value is None:
        return value
    if issubclass(kind, dict):
        return dict(cast("dict[str, Any]", value))
    if issubclass(kind, list):
        return list(cast("list[Any]", value))
    return value


class NotPlainJson(Exception):
    """Lenient decoding was about to drop a value holding subclasses of the
    JSON types (see :func:`plain_json`), which stand for valid JSON: the
    package's ``decode`` functions catch it and decode their whole input again
    with those replaced. Never a :class:`ValidationError`, so no lenient
    handler on the way up swallows it."""


def salvage(value: Any) -> None:
    """Called where decoding drops a refused ``value`` (a default-on-error
    field, a skipped item, a tag read as absent) or passes it to the next
    member of a union: raise :class:`NotPlainJson` when it holds an
    ``OrderedDict``, an ``IntEnum``, a ``str`` enum member or another
    subclass of the JSON types, which may be all it was refused for; the
    entry point then decodes the whole input again as plain JSON. Costs
    nothing on valid input: only refused values get here."""
    if _has_subclass(value):
        raise NotPlainJson


def plain_json(value: Any) -> Any:
    """``value`` with every subclass of ``dict``, ``list``, ``str``, ``int``
    and ``float`` (``OrderedDict`` from ``object_pairs_hook``, ``IntEnum`` and
    ``str`` enum members), object keys included, replaced by the plain type,
    which is what a JSON Schema validator accepts them as; :data:`MISSING`
    when there is none.
    Walked without recursion; a reference cycle is a :class:`ValidationError`."""
    if not _has_subclass(value):
        return MISSING
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    active: set[int] = set()
    while stack:
        container, key = stack.pop()
        if container is None:
            active.discard(key)  # leaving a container
            continue
        item: Any = container[key]
        kind: type[object] = type(cast(object, item))
        if issubclass(kind, (dict, list)):
            if id(item) in active:
                raise ValidationError("a reference cycle is not JSON")
            active.add(id(item))
            stack.append((None, id(item)))
            if issubclass(kind, dict):
                members: dict[Any, Any] = {_plain_key(k): v for k, v in item.items()}
                container[key] = members
                stack.extend((members, k) for k in members)
            else:
                items: list[Any] = list(item)
                container[key] = items
                stack.extend((items, i) for i in range(len(items)))
        elif kind in _PLAIN or item is None:
            continue
        elif issubclass(kind, str):
            container[key] = str.__str__(item)
        elif issubclass(kind, int):
            container[key] = int.__index__(item)
        elif issubclass(kind, float):
            container[key] = float.__float__(item)
    return root[0]


def _plain_key(key: Any) -> Any:
    return str.__str__(key) if type(key) is not str and isinstance(key, str) else key


def check_wire(value: Any) -> None:
    """Raise :class:`ValidationError`, with its path, at the first thing in an
    encoded value that is not JSON: ``UNSET`` (a required field left unset),
    another object that is not a JSON value (a subclass of a JSON type
    included), a key that is not a string, NaN or an infinity, a reference
    cycle. Linear in the size of ``value``, whatever its depth."""
    _check_values(value, False)


def check_json(value: Any) -> None:
    """Strict decoding of a value kept as JSON (an ``Any`` field, a map's
    values, a catch-all's members): raise :class:`ValidationError`, with its
    path, at what JSON cannot hold (NaN or an infinity, a key that is not a
    string, a reference cycle, an object that is not a JSON value), as
    :func:`check_wire` does for ``encode(value, validate=True)``; and
    :class:`NotPlainJson` at a subclass of the JSON types, so the entry point
    decodes the whole input again with those replaced. Linear in the size of
    ``value``, whatever its depth."""
    kind: type[object] = type(cast(object, value))
    if kind is json_object:
        # The common case, a map of strings, integers, booleans and nulls,
        # without a walk.
        for key, member in cast("dict[Any, Any]", value).items():
            t = member.__class__
            if type(key) is not str or (
                t is not str and t is not int and t is not bool and member is not None
            ):
                break
        else:
            return
    elif kind is str or kind is int or kind is bool or value is None:
        return
    _check_values(value, True)


def check_unknown(value: JsonObject, known: frozenset[str]) -> None:
    """Strict decoding of the members of an object that its class has no
    field for (the schema lets them through: no ``additionalProperties``):
    JSON Schema accepts any JSON value there, and only a JSON value, so each
    is checked as :func:`check_json` does (NaN or an infinity, a key that is
    not a string, a reference cycle, an object that is not a JSON value is a
    :class:`ValidationError` with its path). ``known`` holds the keys the
    class reads. An object with no other members costs one set test."""
    if known.issuperset(value):
        return
    check_json({key: member for key, member in value.items() if key not in known})


def _check_values(value: Any, decoding: bool) -> None:
    # Each stack entry is (value, its path node); a path node is (parent
    # node, key) or None at the root, so a child's path costs one tuple and
    # the full path is only built for an error.
    stack: list[tuple[Any, Any]] = [(value, None)]
    active: set[int] = set()
    while stack:
        item, node = stack.pop()
        if node is _DONE:
            active.discard(item)  # every member of that container is done
            continue
        kind: type[object] = type(cast(object, item))
        if kind is json_object or kind is json_array:
            ident = id(item)
            if ident in active:
                raise ValidationError("a reference cycle is not JSON", _path(node))
            active.add(ident)
            stack.append((ident, _DONE))
            if kind is json_object:
                for key, member in cast("dict[Any, Any]", item).items():
                    if type(key) is not str:
                        if decoding and isinstance(key, str):
                            raise NotPlainJson
                        raise type_error("a string key", key).at_path(_path(node))
                    stack.append((member, (node, key)))
            else:
                stack.extend(
                    (member, (node, index)) for index, member in enumerate(item)
                )
        elif kind is str or kind is int or kind is bool or item is None:
            continue
        elif kind is float:
            if not -INF < item < INF:
                raise type_error("a finite number", item).at_path(_path(node))
        elif item is UNSET:
            raise ValidationError(
                "UNSET where the schema wants a value (a required field left unset)",
                _path(node),
            )
        elif decoding and isinstance(item, (dict, list, str, int, float)):
            raise NotPlainJson
        else:
            raise ValidationError(f"a {kind.__name__} is not a JSON value", _path(node))


def _path(node: Any) -> JsonPath:
    """The keys and indexes of a path node of :func:`_check_values`."""
    out: list[str | int] = []
    while node is not None:
        node, key = node
        out.append(key)
    return tuple(reversed(out))


def wire_json(value: Any) -> Any:
    """``value``, a field the codec keeps as JSON, for the wire form: raise
    ``ValueError`` when it holds a reference cycle (which has no wire form).
    Shared parts are not cycles; nothing is copied. A container of strings,
    integers, booleans and nulls (most ``_meta`` maps and tool inputs) is
    told apart by a loop over its members, without a walk. (No ``cast``
    on the way: it is a call at run time.)"""
    if type(value) is json_object:
        for member in value.values():
            if type(member) not in _FLAT:
                _acyclic(value)
                break
        return value
    if type(value) is json_array:
        for member in value:
            if type(member) not in _FLAT:
                _acyclic(value)
                break
        return value
    if type(value) in _FLAT or not isinstance(value, (dict, list)):
        return value
    _acyclic(value)
    return cast(Any, value)


def wire_map(value: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of a map of JSON values, for the wire form; as
    :func:`wire_json` for the values."""
    for member in value.values():
        if type(member) not in _FLAT:
            _acyclic(value)
            break
    return dict(value)


_FLAT = frozenset({str, int, bool, float, type(None)})
"""The types of values that hold no other (a set test is cheaper than a
chain of ``is`` tests)."""


def _acyclic(value: Any) -> None:
    stack: list[Any] = [value]
    active: set[int] = set()
    while stack:
        item: Any = stack.pop()
        if type(item) is int:
            active.discard(item)  # leaving the container of that id
            continue
        ident = id(item)
        if ident in active:
            raise ValueError("a reference cycle has no wire form")
        active.add(ident)
        stack.append(ident)
        members: Iterable[Any] = (
            cast("Mapping[Any, Any]", item).values() if isinstance(item, dict) else item
        )
        for member in members:
            if isinstance(member, (dict, list)):
                stack.append(member)


_DONE: Any = ("done",)


_PLAIN = frozenset({dict, list, str, int, float, bool})


def _has_subclass(value: Any) -> bool:
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item: Any = stack.pop()
        kind: type[object] = type(cast(object, item))
        if kind is json_array or kind is json_object:
            if id(item) in seen:
                continue
            seen.add(id(item))
            if kind is json_object:
                stack.extend(item)  # the keys: a str enum member may be one
                stack.extend(item.values())
            else:
                stack.extend(item)
        elif (
            kind not in _PLAIN
            and item is not None
            and isinstance(item, (dict, list, str, int, float))
        ):
            return True
    return False


def json_equal(a: object, b: object) -> bool:
    """Equality of JSON values: ``1 == 1.0``, but ``true != 1``."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    if type(a) is json_array:
        return (
            type(b) is json_array
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
        )
    if type(a) is json_object:
        return (
            type(b) is json_object
            and a.keys() == b.keys()
            and all(json_equal(a[k], b[k]) for k in a)
        )
    return type(a) is type(b) and a == b
