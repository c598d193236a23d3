"""One version's schema as the bridge reads it, and the field-by-field
translation of a value from one version's type to the other's.

A :class:`Side` is a generated package's schema (``_schema.SCHEMA_JSON``, the
definitions without annotations) and its ``METHODS`` table. The
correspondence is computed from the two: :class:`Converter` walks a value
with its type on both sides at once, property by property (the same wire
name, or a rule of ``bridge.toml``), variant by tag, enum value by value,
and records every value the target type has no place for
(:class:`LostValue`) instead of carrying it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import pointer
from ..jsontypes import Json, JsonObject, JsonPath

if TYPE_CHECKING:
    from .rules import BridgeRules

VALUE_CHARS = 200
"""A lost value is recorded as its JSON, cut to this many characters."""


class _Lost:
    def __repr__(self) -> str:
        return "LOST"


LOST: Any = _Lost()
"""What :meth:`Converter.convert` returns for a value with no counterpart."""


@dataclass(frozen=True)
class LostValue:
    """A value the bridge could not carry: where it was in the message
    (a JSON pointer), which way it was going and the value's JSON (cut)."""

    direction: str
    """``v1->v2`` or ``v2->v1``."""
    sender: str
    """``client`` or ``agent``: who sent the message."""
    method: str
    path: str
    value: str
    reason: str = ""

    def record(self) -> JsonObject:
        out: JsonObject = {
            "direction": self.direction,
            "sender": self.sender,
            "method": self.method,
            "path": self.path,
            "value": self.value,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


def show(value: Json) -> str:
    """``value`` as JSON, cut to :data:`VALUE_CHARS`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


@dataclass(frozen=True)
class MethodTypes:
    """The ``$defs`` names of a method's types (None where it has no such use)."""

    params: str | None
    result: str | None
    notification: str | None
    side: str


class Side:
    """One version's schema: its definitions and methods."""

    def __init__(self, version: int, defs: dict[str, JsonObject], methods: dict[str, MethodTypes]) -> None:
        self.version = version
        self.defs = defs
        self.methods = methods

    @classmethod
    def from_package(cls, package: ModuleType) -> Side:
        """The schema a generated package was made from."""
        from importlib import import_module

        schema = import_module(f"{package.__name__}._schema")
        protocol = import_module(f"{package.__name__}.protocol")
        defs: dict[str, JsonObject] = json.loads(schema.SCHEMA_JSON)
        methods: dict[str, MethodTypes] = {}
        for name, info in protocol.METHODS.items():
            request, note = info.request, info.notification
            methods[name] = MethodTypes(
                params=request.params_name if request else None,
                result=request.result_name if request else None,
                notification=note.params_name if note else None,
                side=(request or note).side,
            )
        return cls(int(package.PROTOCOL_VERSION), defs, methods)

    # -- reading nodes -------------------------------------------------

    def unwrap(self, node: JsonObject) -> tuple[JsonObject, str | None, bool]:
        """``node`` without ``$ref``s, one-member ``allOf``s and a null
        alternative: the node, the last ``$defs`` name on the way, and
        whether null is allowed."""
        name: str | None = None
        nullable = False
        for _ in range(64):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                node = self.defs[name]
                continue
            if set(node) == {"allOf"} and len(node["allOf"]) == 1:
                node = node["allOf"][0]
                continue
            alternatives = node.get("anyOf") or node.get("oneOf")
            if set(node) <= {"anyOf", "oneOf"} and alternatives and len(alternatives) == 2:
                rest = [a for a in alternatives if a != {"type": "null"}]
                if len(rest) == 1:
                    nullable = True
                    node = rest[0]
                    continue
            break
        kinds = node.get("type")
        if isinstance(kinds, list) and "null" in kinds:
            nullable = True
        return node, name, nullable

    def kind(self, node: JsonObject) -> str:
        """``any``, ``object``, ``union`` (tagged objects), ``enum``,
        ``array``, ``untagged`` (alternatives told apart by shape) or
        ``primitive``."""
        if not node:
            return "any"
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "array" in kinds:
            return "array"
        if "properties" in node or "object" in kinds:
            return "object"
        alternatives = node.get("anyOf") or node.get("oneOf")
        if alternatives:
            if all("const" in a or (a.get("type") == "string" and "properties" not in a) for a in alternatives):
                return "enum"
            if self.tag_of(node):
                return "union"
            return "untagged"
        if "const" in node:
            return "enum"
        return "primitive"

    def tag_of(self, node: JsonObject) -> str | None:
        """The property that tells the variants of ``node`` apart, if one does."""
        for alternative in node.get("anyOf") or node.get("oneOf") or []:
            for key, sub in alternative.get("properties", {}).items():
                if isinstance(sub, dict) and "const" in sub and key in alternative.get("required", []):
                    return str(key)
        return None

    def variants(self, node: JsonObject) -> tuple[dict[str, JsonObject], JsonObject | None]:
        """The tagged variants of ``node`` by tag value, and its catch-all."""
        tag = self.tag_of(node)
        found: dict[str, JsonObject] = {}
        other: JsonObject | None = None
        for alternative in node.get("anyOf") or node.get("oneOf") or []:
            const = alternative.get("properties", {}).get(tag, {}).get("const") if tag else None
            if const is not None:
                found[str(const)] = alternative
            elif tag and "not" in alternative:
                other = alternative
        return found, other

    def variant_tags(self, union: str) -> set[str]:
        node, _, _ = self.unwrap({"$ref": f"#/$defs/{union}"})
        return set(self.variants(node)[0])

    def properties(self, node: JsonObject, value: Json = None) -> dict[str, JsonObject]:
        """The properties of object ``node`` (its ``allOf`` parts merged),
        and those of the variant ``value`` picks when ``node`` has variants."""
        node, _, _ = self.unwrap(node)
        props: dict[str, JsonObject] = dict(node.get("properties", {}))
        for part in node.get("allOf", []):
            props.update(self.properties(part, value))
        if (node.get("anyOf") or node.get("oneOf")) and isinstance(value, dict):
            chosen = self.pick(node, value)
            if chosen is not None:
                props.update(self.properties(chosen, value))
        return props

    def required(self, node: JsonObject, value: Json = None) -> set[str]:
        node, _, _ = self.unwrap(node)
        out = set(node.get("required", []))
        for part in node.get("allOf", []):
            out |= self.required(part, value)
        if (node.get("anyOf") or node.get("oneOf")) and isinstance(value, dict):
            chosen = self.pick(node, value)
            if chosen is not None:
                out |= self.required(chosen, value)
        return out

    def pick(self, node: JsonObject, value: JsonObject) -> JsonObject | None:
        """The alternative of ``node`` that ``value`` is: by tag, else the
        first whose required properties ``value`` has."""
        tag = self.tag_of(node)
        if tag is not None:
            found, other = self.variants(node)
            key = value.get(tag)
            if isinstance(key, str) and key in found:
                return found[key]
            return other
        for alternative in node.get("anyOf") or node.get("oneOf") or []:
            inner, _, _ = self.unwrap(alternative)
            if self.kind(inner) in ("object", "union") and self.required(inner, value) <= set(value):
                chosen: JsonObject = alternative
                return chosen
        return None

    def object_node(self, node: JsonObject) -> JsonObject | None:
        inner, _, _ = self.unwrap(node)
        return inner if self.kind(inner) in ("object", "union") else None

    def named(self, name: str) -> JsonObject:
        return {"$ref": f"#/$defs/{name}"}


def _types_match(value: Json, node: JsonObject) -> bool:
    kinds = node.get("type")
    if kinds is None:
        return True
    kinds = kinds if isinstance(kinds, list) else [kinds]
    for kind in kinds:
        if kind == "null" and value is None:
            return True
        if kind == "string" and isinstance(value, str):
            return True
        if kind == "boolean" and isinstance(value, bool):
            return True
        if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if kind == "object" and isinstance(value, dict):
            return True
        if kind == "array" and isinstance(value, list):
            return True
    return False


def _enum_values(node: JsonObject) -> tuple[set[Json], bool]:
    if "const" in node:
        return {node["const"]}, False
    values: set[Json] = set()
    open_ = False
    for alternative in node.get("anyOf") or node.get("oneOf") or []:
        if "const" in alternative:
            values.add(alternative["const"])
        else:
            open_ = True
    return values, open_


def set_path(target: JsonObject, path: tuple[str, ...], value: Json) -> None:
    """Set ``value`` at dotted ``path`` of ``target``, merging objects on the way."""
    for part in path[:-1]:
        inner = target.get(part)
        if not isinstance(inner, dict):
            inner = {}
            target[part] = inner
        target = inner
    existing = target.get(path[-1])
    if isinstance(existing, dict) and isinstance(value, dict):
        existing.update(value)
    else:
        target[path[-1]] = value


class Converter:
    """Translates values from ``src``'s types to ``dst``'s, calling
    ``lose(path, value, reason)`` for each value with no counterpart."""

    def __init__(
        self,
        src: Side,
        dst: Side,
        rules: BridgeRules,
        lose: Callable[[JsonPath, Json, str], None],
        forget: Callable[[JsonPath], None],
    ) -> None:
        self.src, self.dst, self.rules = src, dst, rules
        self.lose, self.forget = lose, forget

    def by_name(self, value: Json, src_name: str, dst_name: str, path: JsonPath) -> Json:
        return self.convert(value, self.src.named(src_name), self.dst.named(dst_name), path)

    def convert(self, value: Json, snode: JsonObject, dnode: JsonObject, path: JsonPath) -> Json:
        s, sname, _ = self.src.unwrap(snode)
        d, dname, dnull = self.dst.unwrap(dnode)
        dkind = self.dst.kind(d)
        if dkind == "any":
            return value
        if value is None:
            if dnull:
                return None
            self.lose(path, value, "null is not allowed here")
            return LOST
        if dkind in ("object", "union"):
            if not isinstance(value, dict):
                self.lose(path, value, "not an object")
                return LOST
            return self._object(value, s, d, sname, dname, path)
        if dkind == "array":
            if not isinstance(value, list):
                self.lose(path, value, "not an array")
                return LOST
            sitems = s.get("items", {}) if self.src.kind(s) == "array" else {}
            out = []
            for index, item in enumerate(value):
                converted = self.convert(item, sitems, d.get("items", {}), (*path, index))
                if converted is not LOST:
                    out.append(converted)
            return out
        if dkind == "enum":
            values, open_ = _enum_values(d)
            if value in values or (open_ and isinstance(value, str)):
                return value
            self.lose(path, value, f"no such value in v{self.dst.version}")
            return LOST
        if dkind == "untagged":
            if isinstance(value, dict):
                dchoice = self.dst.pick(d, value)
                schoice = self.src.pick(s, value) if self.src.kind(s) in ("untagged", "union") else s
                if dchoice is not None:
                    return self.convert(value, schoice or {}, dchoice, path)
            else:
                for alternative in d.get("anyOf") or d.get("oneOf") or []:
                    inner, _, _ = self.dst.unwrap(alternative)
                    if self.dst.kind(inner) != "object" and _types_match(value, inner):
                        return self.convert(value, s, alternative, path)
            self.lose(path, value, f"no alternative of v{self.dst.version} takes it")
            return LOST
        if _types_match(value, d):
            return value
        self.lose(path, value, f"not of the v{self.dst.version} type")
        return LOST

    def _object(
        self, value: JsonObject, s: JsonObject, d: JsonObject, sname: str | None, dname: str | None, path: JsonPath
    ) -> Json:
        if self.dst.kind(d) == "union" or d.get("anyOf") or d.get("oneOf"):
            tag = self.dst.tag_of(d)
            if tag is not None:
                found, other = self.dst.variants(d)
                key = value.get(tag)
                if key not in found:
                    src_found = self.src.variants(s)[0] if self.src.tag_of(s) == tag else {}
                    if other is None or key in src_found:
                        self.lose(path, value, f"v{self.dst.version} has no {tag} {key!r}")
                        return LOST
                    return value  # unknown to both: carried as it is
        names = {n for n in (sname, dname) if n}
        version = self.src.version
        moves: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for rule in self.rules.fields:
            if rule.type in names:
                moves.append((rule.v1, rule.v2) if version == 1 else (rule.v2, rule.v1))
        flags: set[str] = set()
        for name in names:
            flags.update(self.rules.flags.get(name, ()))
        sprops = self.src.properties(s, value)
        dprops = self.dst.properties(d, value)
        out: JsonObject = {}
        rest = dict(value)
        moved: list[tuple[tuple[str, ...], Json, JsonObject | None, JsonPath]] = []
        # Nested sources first (v2 `session.prompt`), so the rest of their parent moves too.
        for source, target in sorted(moves, key=lambda m: -len(m[0])):
            holder: Json = rest
            for part in source[:-1]:
                holder = holder.get(part) if isinstance(holder, dict) else None
            if not isinstance(holder, dict) or source[-1] not in holder:
                continue
            if len(source) > 1:
                holder = dict(holder)
                parent = rest
                for part in source[:-2]:
                    parent = parent[part]
                parent[source[-2]] = holder
            item = holder.pop(source[-1])
            moved.append((target, item, self._node_at(self.src, s, source, value), (*path, *source)))
        for target, item, snode, where in moved:
            dnode = self._node_at(self.dst, d, target, value)
            if dnode is None:
                self.lose(where, item, "no place for it")
                continue
            converted = self.convert(item, snode or {}, dnode, where)
            if converted is not LOST:
                set_path(out, target, converted)
        for key, item in rest.items():
            where = (*path, key)
            if key in flags and key in dprops:
                converted = self._flag(item, where)
                if converted is not LOST:
                    out[key] = converted
            elif key in dprops:
                converted = self.convert(item, sprops.get(key, {}), dprops[key], where)
                if converted is not LOST:
                    set_path(out, (key,), converted)
            elif key in sprops:
                self.lose(where, item, f"v{self.dst.version} has no field {key!r} here")
            else:
                out[key] = item  # declared by neither schema: carried as it is
        missing = self.dst.required(d, value) - set(out)
        for name in sorted(missing):
            fill = next(
                (f for f in self.rules.fills if f.version == self.dst.version and f.type in names and f.field == name),
                None,
            )
            if fill is not None:
                out[name] = fill.value
        missing = self.dst.required(d, out) - set(out)
        if missing:
            self.forget(path)
            self.lose(path, value, f"v{self.dst.version} requires {', '.join(sorted(missing))}")
            return LOST
        return out

    def _flag(self, item: Json, where: JsonPath) -> Json:
        if self.dst.version == 2:
            return {} if item is True else LOST  # false: the capability's object is absent
        if isinstance(item, dict):
            extra = {k: v for k, v in item.items() if v is not None}
            if extra:
                self.lose(where, extra, "v1 states this capability as a boolean")
            return True
        return False if item is None else LOST

    def _node_at(self, side: Side, node: JsonObject, path: tuple[str, ...], value: Json) -> JsonObject | None:
        current: JsonObject | None = node
        for part in path:
            if current is None:
                return None
            props = side.properties(current, value if current is node else None)
            if part not in props:
                return None
            current = props[part]
        return current


def describe(path: JsonPath) -> str:
    return pointer(path)
