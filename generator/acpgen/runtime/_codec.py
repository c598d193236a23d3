"""The codec's entry points, the same in every package: ``decode``,
``decode_class`` and ``encode`` are built here over the tables the package's
generated ``codec.py`` holds (a decoder and a schema pointer per definition, an
encoder per class), so the generated module prints only what the schema
decides."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, overload

from ._runtime import (
    MISSING,
    UNSET,
    NotPlainJson,
    ValidationError,
    check_json,
    check_wire,
    json_array,
    json_object,
    plain_json,
)
from ._validator import schema_root, validate

if TYPE_CHECKING:
    from ._runtime import Decoder

__all__ = [
    "DecodeClass",
    "Encode",
    "Wire",
    "class_decoding",
    "decoding",
    "encoding",
    "raw_checking",
]

_T = TypeVar("_T")

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
