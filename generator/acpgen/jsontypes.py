"""Names for JSON values as the generator's stages read them.

A schema (and a conformance fixture, a message) is parsed by ``json`` and
checked against its metaschema before any stage walks it, so the stages read
it as the JSON it is: :data:`Json` is any parsed value, :data:`JsonObject` a
parsed object, :data:`JsonArray` a parsed array. ``Json`` stays ``Any``: the
checked document's shape is what the stages rely on, and narrowing every
read of a node already known to be an object or a string would restate the
metaschema, not check anything.
"""

from __future__ import annotations

from typing import Any, TypeAlias, TypeVar

Json: TypeAlias = Any
"""A parsed JSON value: None, bool, int, float, str, a list or a dict of them."""

JsonObject: TypeAlias = dict[str, Json]
"""A parsed JSON object."""

JsonArray: TypeAlias = list[Json]
"""A parsed JSON array."""

JsonPath: TypeAlias = tuple[str | int, ...]
"""Where a node sits in a document: object keys and array indexes from the
root, as :func:`acpgen.errors.pointer` renders them."""

TomlTable: TypeAlias = dict[str, Any]
"""A parsed TOML table (the rules files), as ``tomllib`` returns it."""

_Word = TypeVar("_Word", bound=str)


def one_of(value: object, options: tuple[_Word, ...]) -> _Word | None:
    """``value`` as the member of ``options`` it equals, or None: narrows a
    word read from a schema or a rules file to its ``Literal`` type."""
    return next((option for option in options if option == value), None)
