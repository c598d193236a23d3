"""The bridge's rules file (``rules/bridge.toml``), read and checked against
the two schemas: every type, field, variant and method it names must exist
where it says. A bad rule is an :class:`~acpgen.errors.AcpgenError` naming
the file and the JSON pointer of the rule (``/field/3/v2``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compile.passes.rules import builtin_file, read_rules
from ..errors import AcpgenError, pointer
from ..jsontypes import Json, JsonObject, TomlTable
from .shapes import Side

BRIDGE = "bridge.toml"

HANDLERS = ("tool_call", "chunk", "plan", "turn_state")
"""The variant translations :mod:`.translate` implements."""


@dataclass(frozen=True)
class FieldRule:
    """A field renamed or moved: its path in ``type`` on each side."""

    type: str
    v1: tuple[str, ...]
    v2: tuple[str, ...]


@dataclass(frozen=True)
class VariantRule:
    """A variant of ``union`` whose counterpart has another tag or shape."""

    union: str
    v1: str | None
    v2: str | None
    handler: str


@dataclass(frozen=True)
class FillRule:
    """The value filled into a required ``field`` of ``type`` on ``version``'s side."""

    type: str
    version: int
    field: str
    value: Json


@dataclass(frozen=True)
class BridgeRules:
    """The rules of ``bridge.toml``, checked."""

    file: str
    renamed: dict[str, str] = field(default_factory=dict[str, str])
    """v1 method name -> v2 method name."""
    fields: tuple[FieldRule, ...] = ()
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Type name -> fields that are a v1 boolean and a v2 presence object."""
    fills: tuple[FillRule, ...] = ()
    variants: tuple[VariantRule, ...] = ()
    permission: dict[str, str] = field(default_factory=dict[str, str])
    turn: dict[str, str] = field(default_factory=dict[str, str])

    def renamed_to(self, version: int) -> dict[str, str]:
        """Method names from the other version's to ``version``'s."""
        if version == 2:
            return dict(self.renamed)
        return {new: old for old, new in self.renamed.items()}

    def variant(self, union: str, version: int, tag: str) -> VariantRule | None:
        """The rule of ``union``'s variant ``tag`` on ``version``'s side."""
        for rule in self.variants:
            if rule.union == union and (rule.v1 if version == 1 else rule.v2) == tag:
                return rule
        return None


class _Reader:
    def __init__(self, file: str, sides: dict[int, Side]) -> None:
        self.file = file
        self.sides = sides

    def fail(self, where: tuple[str | int, ...], message: str) -> AcpgenError:
        return AcpgenError(message, file=self.file, pointer=pointer(where))

    def table(self, value: Any, where: tuple[str | int, ...]) -> TomlTable:
        if not isinstance(value, dict):
            raise self.fail(where, "expected a table")
        return value

    def string(self, table: TomlTable, key: str, where: tuple[str | int, ...], optional: bool = False) -> str | None:
        value = table.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail((*where, key), f"{key!r} must be a non-empty string")
        return value

    def known(self, table: TomlTable, keys: set[str], where: tuple[str | int, ...]) -> None:
        for key in table:
            if key not in keys:
                raise self.fail((*where, key), f"unknown key {key!r} (expected one of: {', '.join(sorted(keys))})")

    def type_on(self, name: str, where: tuple[str | int, ...], versions: tuple[int, ...] = (1, 2)) -> None:
        if not any(name in self.sides[v].defs for v in versions):
            on = " or ".join(f"v{v}" for v in versions)
            raise self.fail(where, f"no type {name!r} in the {on} schema")

    def path_in(self, type_name: str, path: tuple[str, ...], version: int, where: tuple[str | int, ...]) -> None:
        side = self.sides[version]
        if type_name not in side.defs:
            return  # the rule applies on the side that has the type
        node: JsonObject | None = side.defs[type_name]
        for part in path:
            props = side.properties(node) if node is not None else {}
            if part not in props:
                raise self.fail(
                    where, f"v{version} {type_name} has no field {'.'.join(path)!r} ({part!r} is not there)"
                )
            node = side.object_node(props[part])

    def method(self, name: str, version: int, where: tuple[str | int, ...]) -> None:
        if name not in self.sides[version].methods:
            raise self.fail(where, f"no method {name!r} in the v{version} schema")


def load_bridge_rules(sides: dict[int, Side], path: Path | None = None) -> BridgeRules:
    """The rules at ``path`` (default: the ``bridge.toml`` acpgen ships),
    checked against ``sides`` (``{1: Side, 2: Side}``)."""
    path = path or builtin_file(BRIDGE)
    raw = read_rules(path)
    reader = _Reader(str(path), sides)
    reader.known(raw, {"methods", "field", "flag", "fill", "variant", "permission", "turn"}, ())

    renamed: dict[str, str] = {}
    methods = reader.table(raw.get("methods", {}), ("methods",))
    reader.known(methods, {"renamed"}, ("methods",))
    for old, new in reader.table(methods.get("renamed", {}), ("methods", "renamed")).items():
        where: tuple[str | int, ...] = ("methods", "renamed", old)
        reader.method(old, 1, where)
        if not isinstance(new, str):
            raise reader.fail(where, "expected the v2 method name")
        reader.method(new, 2, where)
        renamed[old] = new

    fields: list[FieldRule] = []
    for index, item in enumerate(_array(reader, raw, "field")):
        where = ("field", index)
        table = reader.table(item, where)
        reader.known(table, {"type", "v1", "v2"}, where)
        type_name = reader.string(table, "type", where)
        assert type_name is not None
        reader.type_on(type_name, (*where, "type"))
        paths = []
        for version in (1, 2):
            text = reader.string(table, f"v{version}", where)
            assert text is not None
            parts = tuple(text.split("."))
            # A moved field must exist at the first step; deeper steps are created.
            reader.path_in(type_name, parts[:1], version, (*where, f"v{version}"))
            paths.append(parts)
        fields.append(FieldRule(type_name, paths[0], paths[1]))

    flags: dict[str, tuple[str, ...]] = {}
    for index, item in enumerate(_array(reader, raw, "flag")):
        where = ("flag", index)
        table = reader.table(item, where)
        reader.known(table, {"type", "fields"}, where)
        type_name = reader.string(table, "type", where)
        assert type_name is not None
        reader.type_on(type_name, (*where, "type"))
        names = table.get("fields")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise reader.fail((*where, "fields"), "'fields' must be a non-empty list of field names")
        for position, name in enumerate(names):
            for version in (1, 2):
                reader.path_in(type_name, (name,), version, (*where, "fields", position))
        flags[type_name] = tuple(names)

    fills: list[FillRule] = []
    for index, item in enumerate(_array(reader, raw, "fill")):
        where = ("fill", index)
        table = reader.table(item, where)
        reader.known(table, {"type", "version", "field", "value"}, where)
        type_name = reader.string(table, "type", where)
        name = reader.string(table, "field", where)
        assert type_name is not None and name is not None
        fill_version = table.get("version")
        if fill_version not in (1, 2):
            raise reader.fail((*where, "version"), "'version' must be 1 or 2")
        assert isinstance(fill_version, int)
        reader.type_on(type_name, (*where, "type"), (fill_version,))
        reader.path_in(type_name, (name,), fill_version, (*where, "field"))
        if "value" not in table:
            raise reader.fail((*where, "value"), "'value' is missing")
        fills.append(FillRule(type_name, fill_version, name, table["value"]))

    variants: list[VariantRule] = []
    for index, item in enumerate(_array(reader, raw, "variant")):
        where = ("variant", index)
        table = reader.table(item, where)
        reader.known(table, {"union", "v1", "v2", "handler"}, where)
        union = reader.string(table, "union", where)
        handler = reader.string(table, "handler", where)
        assert union is not None and handler is not None
        reader.type_on(union, (*where, "union"))
        if handler not in HANDLERS:
            raise reader.fail(
                (*where, "handler"), f"unknown handler {handler!r} (expected one of: {', '.join(HANDLERS)})"
            )
        tags: list[str | None] = []
        for version in (1, 2):
            tag = reader.string(table, f"v{version}", where, optional=True)
            if tag is not None and tag not in sides[version].variant_tags(union):
                raise reader.fail((*where, f"v{version}"), f"v{version} {union} has no variant {tag!r}")
            tags.append(tag)
        if tags == [None, None]:
            raise reader.fail(where, "a variant rule names the v1 tag, the v2 tag or both")
        variants.append(VariantRule(union, tags[0], tags[1], handler))

    permission = _strings(reader, raw, "permission", {"v1", "v2", "subject_type", "title_fallback"})
    turn = _strings(reader, raw, "turn", {"v1_result", "v2_result", "update", "end_state", "error_stop_reason"})
    return BridgeRules(
        file=str(path),
        renamed=renamed,
        fields=tuple(fields),
        flags=flags,
        fills=tuple(fills),
        variants=tuple(variants),
        permission=permission,
        turn=turn,
    )


def _array(reader: _Reader, raw: TomlTable, key: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise reader.fail((key,), f"expected an array of tables ([[{key}]])")
    return value


def _strings(reader: _Reader, raw: TomlTable, key: str, keys: set[str]) -> dict[str, str]:
    table = reader.table(raw.get(key), (key,)) if key in raw else None
    if table is None:
        raise reader.fail((key,), f"the [{key}] table is missing")
    reader.known(table, keys, (key,))
    out: dict[str, str] = {}
    for name in sorted(keys):
        value = reader.string(table, name, (key,))
        assert value is not None
        out[name] = value
    return out
