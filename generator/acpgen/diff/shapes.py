"""The shapes ``covers`` and ``overlaps`` compare beside IR type
expressions: what an object definition (:class:`_Obj`), a union or enum
(:class:`_Alt`) or a wrapped variant payload (:class:`_Opaque`) stands for.
``facts._Side`` builds them, ``subtype`` compares them."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar, Literal

from ..compile import ir


@dataclass(frozen=True)
class _Obj:
    """An object: its properties (``{wire name: (shape, required)}``), and
    whether it takes properties it does not declare."""

    fields: dict[str, tuple[Shape, bool]]
    open: bool

    kind: ClassVar[Literal["obj"]] = "obj"


@dataclass(frozen=True)
class _Alt:
    """Any one of ``members`` (a union's variants)."""

    members: tuple[Shape, ...]

    kind: ClassVar[Literal["alt"]] = "alt"


@dataclass(frozen=True)
class _Opaque:
    key: str

    kind: ClassVar[Literal["opaque"]] = "opaque"


Shape = ir.TypeExpr | _Obj | _Alt | _Opaque
"""What ``covers`` and ``overlaps`` compare: a type expression, or the
shape a definition stands for."""

_SeenKey = tuple[str, Hashable, str, Hashable]
"""A pair of shapes being compared, by side label and definition name (or
the shape itself): ``covers`` and ``overlaps`` stop on one seen before."""
