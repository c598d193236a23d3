"""Translating a value of one version's types into the other's, field by
field, by the correspondence of :mod:`.shapes` and the rules of
:mod:`.rules`."""

from __future__ import annotations

from collections.abc import Callable

from ..jsontypes import Json, JsonObject, JsonPath
from .rules import BridgeRules
from .shapes import LOST, Side, enum_values, set_path, types_match


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
            values, open_ = enum_values(d)
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
                    if self.dst.kind(inner) != "object" and types_match(value, inner):
                        return self.convert(value, s, alternative, path)
            self.lose(path, value, f"no alternative of v{self.dst.version} takes it")
            return LOST
        if types_match(value, d):
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
