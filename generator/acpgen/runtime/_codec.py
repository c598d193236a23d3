"""The codec's entry points, the same in every package: ``decode``,
``decode_class`` and ``encode`` are built here over the tables the package's
generated ``codec.py`` holds (a decoder and a schema pointer per definition, an
encoder per class), so the generated module prints only what the schema
decides. So are the decoders of its unions and the fallback decoders of its
enums (over the table of the variants by tag, of the variants' required keys,
of the enum's members), the encoders of its unions (over the table of the
variants' encoders), and the checks of a closed object's keys and a catch-all
variant's other members."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, overload

from ._runtime import (
    MISSING,
    UNSET,
    NotPlainJson,
    ValidationError,
    check_int,
    check_json,
    check_tag,
    check_wire,
    exactly_one,
    furthest,
    json_array,
    json_object,
    missing,
    plain_json,
    salvage,
    type_error,
    unexpected,
    wire_json,
)
from ._validator import schema_root, validate

if TYPE_CHECKING:
    from ._runtime import Decoder, JsonObject

__all__ = [
    "DecodeClass",
    "Encode",
    "Wire",
    "add_extra",
    "check_closed",
    "check_other_tag",
    "class_decoding",
    "closed_enum",
    "decoding",
    "encoding",
    "extra_members",
    "new",
    "open_int_enum",
    "open_str_enum",
    "raw_checking",
    "recovered",
    "tagged_union",
    "untagged_union",
    "variant_encoding",
]

_T = TypeVar("_T")
_E = TypeVar("_E")

_TOO_DEEP = "the value is nested too deeply to decode"


class Wire(Protocol):
    """A generated class: its wire form is a JSON object."""

    def to_wire(self) -> dict[str, Any]: ...


class DecodeClass(Protocol):
    """The type of a package's ``decode_class``."""

    def __call__(self, cls: type[_T], data: Any, *, strict: bool = False) -> _T: ...


class Encode(Protocol):
    """The type of a package's ``encode``: a generated class gives a dict,
    other values their own JSON type."""

    @overload
    def __call__(self, value: Wire, *, validate: bool = False) -> dict[str, Any]: ...
    @overload
    def __call__(self, value: str, *, validate: bool = False) -> str: ...
    @overload
    def __call__(self, value: bool, *, validate: bool = False) -> bool: ...
    @overload
    def __call__(self, value: int, *, validate: bool = False) -> int: ...
    @overload
    def __call__(self, value: float, *, validate: bool = False) -> float: ...
    @overload
    def __call__(self, value: None, *, validate: bool = False) -> None: ...
    @overload
    def __call__(self, value: list[Any], *, validate: bool = False) -> list[Any]: ...
    @overload
    def __call__(
        self, value: dict[str, Any], *, validate: bool = False
    ) -> dict[str, Any]: ...


def decoding(
    decoders: Mapping[str, tuple[Decoder[object], str]],
) -> Callable[..., object]:
    """The package's ``decode``, over ``decoders``: ``$defs`` name -> (its
    decoder, its schema pointer)."""

    def decode(name: str, data: Any, *, strict: bool = False) -> object:
        """Decode ``data``, a value as ``json.loads`` returns it, as the
        ``$defs`` type ``name``.

        Lenient mode (the default) follows the reference implementations;
        ``strict=True`` accepts exactly what the schema accepts. Raises
        :class:`ValidationError`, whose ``path`` says where the value is
        wrong; the input is never changed.
        """
        try:
            decoder = decoders[name][0]
        except KeyError:
            raise KeyError(f"the schema has no definition named {name!r}") from None
        try:
            return decoder(data, strict)
        except (ValidationError, NotPlainJson) as error:
            return retry(decoder, data, strict, error)
        except RecursionError:
            raise ValidationError(_TOO_DEEP) from None

    def decoder_of(name: str) -> Decoder[object]:
        """The bare decoder of ``name``: no retry, no rewording of errors
        (what :class:`MessageCodec` binds per method, falling back to
        ``decode`` when it refuses)."""
        return decoders[name][0]

    # A plain function stays the cheapest thing to call; the table is lent
    # through an attribute.
    setattr(decode, "decoder_of", decoder_of)  # noqa: B010
    return decode


def class_decoding(
    decoders: Mapping[type[object], tuple[Decoder[object], str]],
) -> DecodeClass:
    """The package's ``decode_class``, over ``decoders``: generated class ->
    (its decoder, its schema pointer)."""

    def decode_class(cls: type[_T], data: Any, *, strict: bool = False) -> _T:
        """Decode ``data`` as the generated class ``cls``."""
        try:
            decoder = decoders[cls][0]
        except KeyError:
            raise KeyError(f"{cls!r} is not a class of this package") from None
        # The table pairs each class with its own decoder.
        try:
            value = decoder(data, strict)
        except (ValidationError, NotPlainJson) as error:
            value = retry(decoder, data, strict, error)
        except RecursionError:
            raise ValidationError(_TOO_DEEP) from None
        return cast(_T, value)

    return decode_class


def retry(
    decoder: Decoder[object], data: Any, strict: bool, error: Exception
) -> object:
    """After ``decoder`` refused ``data`` with a ValidationError, or raised
    NotPlainJson where decoding was about to drop a part of it (or, in strict
    mode, keep it as JSON): subclasses of the JSON types (``OrderedDict`` from
    ``object_pairs_hook``, ``IntEnum`` and ``str`` enum members) are the JSON
    values they stand for, so ``data`` is decoded again with them replaced;
    without any, ``error`` stands (NotPlainJson is only raised for a value
    that holds one). The first attempt is the fast path: it costs nothing when
    ``data`` is plain JSON. Input holding such a subclass and also a reference
    cycle is refused here (a cycle is not JSON), even where the cycle is in an
    ``Any`` field."""
    plain = plain_json(data)
    if plain is MISSING:
        raise error
    try:
        return decoder(plain, strict)
    except RecursionError:
        raise ValidationError(_TOO_DEEP) from None


def encoding(
    encoders: Mapping[type[object], Callable[[Any], object]],
    pointers: Mapping[type[object], str],
    schema_json: str,
) -> Encode:
    """The package's ``encode``, over ``encoders`` (class -> its encoder) and
    ``pointers`` (generated class or enum -> where it is in the schema, whose
    text is ``schema_json``)."""
    lookup = encoders.get

    # ``validate`` is keyword-only in ``Encode``; here it may be passed by
    # position too: a positional default costs less to fill in than a
    # keyword-only one, on every call.
    def encode(value: object, validate: bool = False) -> object:
        """The JSON-compatible wire form of a decoded or constructed value:
        ``UNSET`` fields are left out, ``None`` is ``null``, and the wire
        names come back (``tool_call_id`` -> ``toolCallId``). A generated
        class gives a dict, an enum member its value, lists and dicts their
        items' wire forms.

        ``encode`` trusts a value it is given: a hand-built object with a
        wrong type in a field, or ``UNSET`` in a required one, gives a wire
        form the schema rejects. ``validate=True`` (for a value of a
        generated class or enum) checks the wire form against the schema and
        raises :class:`ValidationError` with the path of what is wrong. A
        reference cycle raises ``ValueError``."""
        encoder = lookup(type(value))
        if encoder is None or validate:
            return _encode_checked(value, validate)
        try:
            return encoder(value)
        except RecursionError:
            raise ValueError(_CYCLE) from None

    def _encode_checked(value: object, validate: bool) -> object:
        try:
            encoder = lookup(type(value))
            wire = encoder(value) if encoder is not None else encode_value(value)
        except RecursionError:
            raise ValueError(_CYCLE) from None
        if validate:
            try:
                pointer = pointers[type(value)]
            except KeyError:
                raise TypeError(
                    f"validate=True checks a value of a generated class or enum, not {type(value).__name__}"
                ) from None
            check_wire(wire)
            validate_wire(schema_root(schema_json), pointer, wire)
        return wire

    def encode_value(value: object) -> Any:
        """The wire form of a value that is not a generated class: JSON as it
        is, or lists and dicts holding generated values. Walked without
        recursion, so any depth that ``json`` handles works here too."""
        root: list[object] = [value]
        stack: list[tuple[Any, Any]] = [(root, 0)]
        active: set[int] = set()
        while stack:
            container, key = stack.pop()
            if container is None:
                active.discard(key)  # every item of that list or dict is done
                continue
            item: object = container[key]
            encoder = lookup(type(item))
            if encoder is not None:
                container[key] = encoder(item)
            elif isinstance(item, Enum):
                if item is UNSET:
                    raise ValueError(
                        "UNSET has no wire form: it marks an omitted field"
                    )
                container[key] = item.value
            elif type(item) is json_array or type(item) is json_object:
                if id(item) in active:
                    raise ValueError("a reference cycle has no wire form")
                active.add(id(item))
                stack.append((None, id(item)))
                if type(item) is json_array:
                    items = container[key] = list(item)
                    stack.extend((items, index) for index in range(len(items)))
                else:
                    members = container[key] = dict(item)
                    stack.extend((members, k) for k in members)
        return root[0]

    # One function for every overload of Encode.
    return cast(Encode, encode)


validate_wire = validate
"""The schema check of ``encode(value, validate=True)``."""

_CYCLE = "the value is nested too deeply to encode, or holds a reference cycle"


def raw_checking(schema_json: str) -> Callable[[Any, str, bool], Any]:
    """The package's ``check_raw``: a value the typed codec keeps as JSON,
    checked against its subschema at a pointer into ``schema_json``; in strict
    mode also as JSON values (:func:`check_json`)."""

    def check_raw(value: Any, pointer: str, strict: bool) -> Any:
        if strict:
            check_json(value)
        validate(schema_root(schema_json), pointer, value)
        return value

    return check_raw


new = object.__new__
"""How decoders build objects: without calling ``__init__``, as they have
already computed every field, defaults included."""


# ---------------------------------------------------------------- unions


def tagged_union(
    tag: str,
    variants: Mapping[str, Decoder[_T]],
    *,
    unknown: str = "",
    lenient_tag: bool = False,
    fallback: Decoder[_T] | None = None,
    catch_all: Decoder[_T] | None = None,
    null_tag: Decoder[_T] | None = None,
) -> Decoder[_T]:
    """The decoder of a union told apart by the string member ``tag``:
    ``variants`` maps each tag value to the reader of its variant (which
    takes an object whose tag it is). Another tag string goes to the
    ``catch_all`` reader, else to the untagged ``fallback`` variant, else is
    refused with the error ``unknown``; with a ``fallback``, an object a
    tagged variant refuses is given to it too. A tag that is ``null`` or
    absent goes to the ``null_tag`` variant, else to the ``fallback``.
    ``lenient_tag`` (``x-deserialize-default-on-error`` on the tag): lenient
    mode reads a tag that is not a string as absent."""

    def decode(d: Any, strict: bool) -> _T:
        if type(d) is not json_object:
            raise type_error("an object", d)
        found = d.get(tag, MISSING)
        if (
            lenient_tag
            and not strict
            and not (found is MISSING or found is None or type(found) is str)
        ):
            salvage(found)
            found = MISSING  # the tag's default-on-error: dropped
        if type(found) is str:
            decoder = variants.get(found)
            if decoder is not None:
                if fallback is None:
                    return decoder(d, strict)
                try:
                    return decoder(d, strict)
                except ValidationError as error:
                    # The untagged variant takes what the tagged one refuses.
                    salvage(d)
                    try:
                        return fallback(d, strict)
                    except ValidationError:
                        raise error from None
            if catch_all is not None:
                return catch_all(d, strict)
            if fallback is not None:
                return fallback(d, strict)
            raise unexpected(unknown, found).at(tag)
        if null_tag is not None:
            if found is MISSING or found is None:
                return null_tag(d, strict)
            raise type_error("a string or null", found).at(tag)
        if fallback is not None:
            return fallback(d, strict)
        if found is MISSING:
            raise missing(tag)
        raise type_error("a string", found).at(tag)

    return decode


def _has_all(d: JsonObject, keys: tuple[str, ...]) -> bool:
    # A loop: cheaper than all() over a generator.
    for key in keys:  # noqa: SIM110
        if key not in d:
            return False
    return True


def untagged_union(
    variants: Sequence[tuple[tuple[str, ...], Decoder[_T]]],
    no_match: str,
    ambiguous: str | None = None,
) -> Decoder[_T]:
    """The decoder of a union without a tag: ``variants`` pairs the required
    keys that select a variant with its decoder. Without ``ambiguous``
    (``anyOf``), the first variant whose keys an object has and that decodes
    wins, as serde's untagged enums choose; with it (``oneOf``), exactly one
    may decode, and ``ambiguous`` is the error when several do. ``no_match``
    is the error for an object with the keys of none."""

    def decode(d: Any, strict: bool) -> _T:
        if type(d) is not json_object:
            raise type_error("an object", d)
        if ambiguous is not None:
            candidates = [decoder for keys, decoder in variants if _has_all(d, keys)]
            if not candidates:
                raise ValidationError(no_match)
            return cast(_T, exactly_one(d, strict, candidates, ambiguous))
        errors: list[ValidationError] = []
        for keys, decoder in variants:
            if _has_all(d, keys):
                try:
                    return decoder(d, strict)
                except ValidationError as error:
                    salvage(d)
                    errors.append(error)
        if errors:
            raise furthest(errors)
        raise ValidationError(no_match)

    return decode


def variant_encoding(
    encoders: Mapping[type[object], Callable[[Any], dict[str, Any]]], union: str
) -> Callable[[Any], dict[str, Any]]:
    """The encoder of the union named ``union``: its variant's, from
    ``encoders`` (the package's encoder of each class)."""

    def encode(o: Any) -> dict[str, Any]:
        try:
            encoder = encoders[type(o)]
        except KeyError:
            raise TypeError(f"{type(o).__name__} is not a variant of {union}") from None
        return encoder(o)

    return encode


# ---------------------------------------------------------------- enums
# The codec looks an enum's members up in place; these decoders take what
# that lookup does not find.


def closed_enum(members: Mapping[Any, _E], strings: bool, expected: str) -> Decoder[_E]:
    """The decoder of a closed enum of strings (``strings``) or integers:
    the member of ``members`` with the value, else the error ``expected``."""

    def decode(v: Any, strict: bool) -> _E:
        if strings:
            if type(v) is not str:
                raise type_error("a string", v)
        else:
            v = check_int(v)
        member = members.get(v)
        if member is not None:
            return member
        raise unexpected(expected, v)

    return decode


def open_str_enum(members: Mapping[str, _E]) -> Decoder[_E | str]:
    """The decoder of an open enum of strings: its member, or the string."""

    def decode(v: Any, strict: bool) -> _E | str:
        if type(v) is not str:
            raise type_error("a string", v)
        member = members.get(v)
        return v if member is None else member

    return decode


def open_int_enum(
    members: Mapping[int, _E], low: int | None = None, high: int | None = None
) -> Decoder[_E | int]:
    """The decoder of an open enum of integers: its member, or the integer,
    which lenient mode also holds to ``low`` and ``high`` (the catch-all's
    format and bounds)."""

    def decode(v: Any, strict: bool) -> _E | int:
        n = check_int(v) if strict else check_int(v, low, high)
        member = members.get(n)
        return n if member is None else member

    return decode


# ---------------------------------------------------------------- objects


def check_closed(d: JsonObject, known: frozenset[str]) -> None:
    """Strict decoding of an object whose schema allows no other members
    (``additionalProperties: false``): the first key not in ``known`` is an
    error."""
    for key in d:
        if key not in known:
            raise unexpected("no member the schema does not declare", key).at(key)


def extra_members(d: JsonObject, known: Container[str], strict: bool) -> dict[str, Any]:
    """A catch-all variant's ``extra``: the members of ``d`` it does not
    read (its tag and fields, ``known``), as they are; strict mode checks
    that they are JSON (:func:`check_json`)."""
    extra = {key: member for key, member in d.items() if key not in known}
    if strict:
        check_json(extra)
    return extra


def add_extra(d: dict[str, Any], extra: dict[str, Any]) -> None:
    """Encoding a catch-all variant: its ``extra`` members go into its wire
    form ``d``, after (and never over) its tag and fields."""
    for key, value in wire_json(extra).items():
        d.setdefault(key, value)


def recovered(
    error: ValidationError, value: object, strict: bool, key: str, default: _T
) -> _T:
    """Lenient decoding of a member ``key`` whose ``value`` its decoder
    refused with ``error`` (``x-deserialize-default-on-error``): ``default``
    stands for it. Strict mode raises ``error``, at ``key``."""
    if strict:
        raise error.at(key)
    salvage(value)
    return default


def check_other_tag(
    d: JsonObject, tag: str, tags: Container[str], strict: bool
) -> None:
    """A catch-all variant's tag: a string, and in strict mode none of the
    other variants' ``tags`` (the schema's catch-all excludes them with a
    ``not``)."""
    found = d.get(tag)
    if type(found) is not str:
        raise check_tag(d, tag, None)
    if strict and found in tags:
        raise unexpected("expected a tag that no other variant has", found).at(tag)
