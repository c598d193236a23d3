"""Patch-merge helpers, the same in every package: what the generated
``patch.py`` calls from its per-update functions (``merge_meta``,
``check_key``, ``append_base64``), and its ``apply`` and ``supports``, built
here over the tables the generated module holds (the apply function of
each update class, the capability fields of each capabilities class), so
that the generated module prints only what the schema and its rules
decide."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, Protocol, TypeVar

from ._runtime import UNSET

__all__ = [
    "NO_RULES",
    "Payload",
    "append_base64",
    "applying",
    "check_key",
    "merge_meta",
    "supporting",
]

NO_RULES = (
    "this package was generated without patch rules (acpgen --rules none, or a schema"
    " whose ACP version acpgen could not tell), so it has no patch-merge functions"
)
"""What ``apply`` of a package without patch rules raises (a TypeError)."""


def merge_meta(stored: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Patch metadata by top-level key: keys the patch omits are unchanged, a
    key set to ``None`` (JSON null) is removed, and any other value replaces
    that key's value without merging nested objects. Returns a new dict."""
    merged = dict(stored)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def check_key(
    state: object, update: object, pairs: tuple[tuple[str, str], ...]
) -> None:
    """Raise ``ValueError`` unless, for each (state field, update field)
    pair, ``update`` names the entity ``state`` is for."""
    for state_field, update_field in pairs:
        if getattr(state, state_field) != getattr(update, update_field):
            raise ValueError(
                f"{type(update).__name__}.{update_field} is {getattr(update, update_field)!r}, "
                f"but the state is for {getattr(state, state_field)!r}"
            )


class Payload(Protocol):
    """A dataclass with base64 ``data``, which chunks append to."""

    __dataclass_fields__: ClassVar[dict[str, Any]]
    data: str


P = TypeVar("P", bound=Payload)


def append_base64(stored: P | None, data: str, payload: Callable[..., P]) -> P:
    """``stored`` (a payload object with base64 ``data``, or None) with the
    bytes of ``data`` appended; its other members are kept. Raises
    ``ValueError`` (``binascii.Error``) when ``data`` is not base64."""
    base64.b64decode(data, validate=True)
    if stored is None:
        return payload(data=data)
    if len(stored.data) % 4 == 0 and not stored.data.endswith("="):
        # Whole 3-byte groups: the base64 texts concatenate.
        return replace(stored, data=stored.data + data)
    joined = base64.b64decode(stored.data) + base64.b64decode(data)
    return replace(stored, data=base64.b64encode(joined).decode("ascii"))


Apply = Callable[[Any, object], object]
"""The type of a package's ``apply``."""


def applying(
    table: Mapping[type[object], Callable[[Any, Any], object]], rules: bool
) -> Apply:
    """A package's ``apply`` over ``table`` (update class -> the function
    folding it); for a package generated without patch rules (``rules``
    false), one that raises :data:`NO_RULES`."""

    def apply(state: Any, update: object) -> object:
        """Fold ``update`` (a decoded upsert, chunk or session-update variant)
        into ``state``, or into a new state when ``state`` is None."""
        try:
            function = table[type(update)]
        except KeyError:
            if not rules:
                raise TypeError(NO_RULES) from None
            raise TypeError(
                f"{type(update).__name__} is not an upsert of this schema"
                " (a chunk type shared by several updates needs its tagged variant)"
            ) from None
        return function(state, update)

    return apply


Supports = Callable[[Any, str], bool]
"""The type of a package's ``supports``."""


def supporting(
    table: Mapping[type[object], Mapping[str, tuple[str, str]]],
) -> Supports:
    """A package's ``supports`` over ``table`` (its ``CAPABILITIES``: class
    -> Python or wire name -> (attribute, ``presence`` or ``flag``))."""

    def supports(capabilities: object, name: str) -> bool:
        """Whether ``capabilities`` advertises ``name`` (a field's Python or wire
        name): ``{}`` counts as supported, omitted and ``null`` do not. Never test
        the truthiness of a capability object instead: ``{}`` decodes to one with
        no members."""
        try:
            attribute, kind = table[type(capabilities)][name]
        except KeyError:
            known = sorted(table.get(type(capabilities), {}))
            raise KeyError(
                f"{type(capabilities).__name__} has no capability {name!r} (known: {known})"
            ) from None
        value = getattr(capabilities, attribute)
        if kind == "flag":
            return value is True
        return value is not None and value is not UNSET

    return supports
