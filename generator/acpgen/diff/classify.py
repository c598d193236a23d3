"""The comparison of the definitions: :class:`_Differ` walks two analysed
schemas (``facts._Side``) and lists every change to their types, fields,
enums and unions (and, through :class:`~acpgen.diff.protocol._ProtocolChanges`,
to their methods and message forms) with its wire and Python API verdicts,
following the rules table in the package docstring; with the helpers only
it uses (variant keys, ``x-deserialize-skip-invalid-items`` positions).

One cohesive thing, longer than the other modules: the one walker of the
type changes, whose cases share its state.
"""

from __future__ import annotations

import json
from collections.abc import Set as AbstractSet

from ..compile import ir
from ..jsontypes import JsonObject
from .facts import _Side, _variant_label, field_key
from .model import COMPATIBLE, OLD_RECEIVERS, OLD_SENDERS, Change, Impact
from .protocol import _ProtocolChanges
from .subtype import _norm, _same_json, python_type, show_type
from .words import _a, _c, _json_value, _list, _plural, _python_kind, _show_json


def _variant_key(union: ir.UnionDef, variant: ir.Variant) -> tuple[str, str]:
    return (variant.role, _variant_label(union, variant))


def _skip_positions(t: ir.TypeExpr, where: str = "") -> set[str]:
    """Where in a type expression lists are ``x-deserialize-skip-invalid-items``."""
    out = set()
    if t.kind == "list":
        if t.skip_invalid:
            out.add(where)
        out |= _skip_positions(t.items, where + "[]")
    elif t.kind == "nullable":
        out |= _skip_positions(t.inner, where)
    elif t.kind == "map":
        out |= _skip_positions(t.values, where + "{}")
    return out


# ---------------------------------------------------------------- the comparison


class _Differ(_ProtocolChanges):
    # -------------------------------------------------------- entry

    def run(self) -> list[Change]:
        old_names, new_names = set(self.old.defs), set(self.new.defs)
        for definition in self.new.package.definitions:
            if definition.name not in old_names:
                self.type_added(definition)
        for name in sorted(old_names & new_names):
            self.definition(self.old.defs[name], self.new.defs[name])
        self.methods()
        self.message_forms()
        # Removed types last: their wire impact is that of the changes at
        # the places that used them.
        memo: dict[str, Impact] = {}
        for definition in self.old.package.definitions:
            if definition.name not in new_names:
                self.type_removed(definition, memo)
        return self.changes

    def type_added(self, definition: ir.Definition) -> None:
        renamed_from = next((o for o, n in self.renamed.items() if n == definition.name), None)
        summary = f"new {self.describe(definition, self.new)}"
        if renamed_from:
            summary += f", the shape of the removed {_c(renamed_from)}"
        self.add(
            "type-added",
            definition.name,
            definition.name,
            summary,
            Impact(False, "a new type: it reaches the wire only where other changes, classified there, refer to it"),
            Impact(False, f"a new name, {_c(definition.class_name)}"),
            new=self.describe(definition, self.new),
        )

    def type_removed(self, definition: ir.Definition, memo: dict[str, Impact]) -> None:
        name = definition.name
        renamed = self.renamed.get(name)
        what = "the alias" if definition.kind == "alias" else "the class"
        api_reason = f"{what} {_c(definition.class_name)} is gone"
        if renamed:
            api_reason += f" (renamed to {_c(self.new.defs[renamed].class_name)})"
        summary = f"removed {self.describe(definition, self.old)}" + (f", renamed to {_c(renamed)}" if renamed else "")
        self.add(
            "type-removed",
            name,
            name,
            summary,
            self._removed_wire(name, memo, frozenset()),
            Impact(True, api_reason),
            old=self.describe(definition, self.old),
            new=renamed,
            python=(definition.class_name,),
        )

    def _removed_wire(self, name: str, memo: dict[str, Impact], active: frozenset[str]) -> Impact:
        if name in memo:
            return memo[name]
        renamed = self.renamed.get(name)
        places = sorted({e.where for e in self.old.referrers.get(name, ())})
        if renamed:
            impact = Impact(False, f"renamed to {_c(renamed)} with the same shape")
        elif not places:
            impact = Impact(False, "no message of the old schema used it")
        else:
            active = active | {name}
            breaking: list[Change] = [
                change
                for change in self.changes
                if change.kind in _USE_KINDS
                and change.wire.breaking
                and any(p == change.path or p.startswith((change.path + ".", change.path + "[")) for p in places)
            ]
            # Places inside other removed types carry those types' impact.
            for edge in self.old.referrers.get(name, ()):
                owner = edge.owner
                if owner and owner not in self.new.defs and owner not in active:
                    inner = self._removed_wire(owner, memo, active)
                    if inner.breaking:
                        breaking.append(Change("type-removed", owner, owner, "", inner, COMPATIBLE))
            shown = _list(places)
            if breaking:
                impact = Impact(
                    True,
                    f"old peers may still send it where the old schema used it ({shown}); the new schema "
                    f"no longer accepts it there (see {_list(sorted({c.path for c in breaking}))})",
                    tuple(sorted({a for c in breaking for a in c.wire.affects})),
                )
            else:
                impact = Impact(False, f"its former uses ({shown}) changed compatibly")
        memo[name] = impact
        return impact

    def definition(self, old: ir.Definition, new: ir.Definition) -> None:
        name = old.name
        if old.kind != new.kind:
            self.kind_changed(old, new)
            return
        if old.class_name != new.class_name:
            self.add(
                "class-renamed",
                name,
                name,
                f"Python class {_c(old.class_name)} is now {_c(new.class_name)}",
                Impact(False, "the wire name is unchanged"),
                Impact(True, f"{_c(old.class_name)} was renamed to {_c(new.class_name)}"),
                old=old.class_name,
                new=new.class_name,
                python=(old.class_name,),
            )
        # Both are of the same kind (checked above).
        if isinstance(old, ir.ObjectDef) and isinstance(new, ir.ObjectDef):
            self.fields(
                name,
                name,
                old.fields,
                new.fields,
                classes=(old.class_name, new.class_name),
                closed=(self.old.closed(name), self.new.closed(name)),
            )
        elif isinstance(old, ir.AliasDef) and isinstance(new, ir.AliasDef):
            self.alias(old, new)
        elif isinstance(old, ir.EnumDef) and isinstance(new, ir.EnumDef):
            self.enum(old, new)
        elif isinstance(old, ir.UnionDef) and isinstance(new, ir.UnionDef):
            self.union(old, new)

    def kind_changed(self, old: ir.Definition, new: ir.Definition) -> None:
        name = old.name
        narrows = not self.covers(self.new.shape(name, "receiver"), self.new, self.old.shape(name, "sender"), self.old)
        widens = not self.covers(self.old.shape(name, "receiver"), self.old, self.new.shape(name, "sender"), self.new)
        overlap = self.overlaps(self.old.shape(name, "receiver"), self.old, self.new.shape(name, "sender"), self.new)
        wire = self.wire(
            name,
            narrows=narrows,
            widens=widens,
            what=_a(name),
            overlap=overlap,
            widen_why="" if overlap else "none of them reads as the old shape",
            compatible=f"every {_c(name)} a sender of either schema emits, the other schema accepts",
        )
        self.add(
            "type-kind-changed",
            name,
            name,
            f"was {self.describe(old, self.old)}, now {self.describe(new, self.new)}",
            wire,
            Impact(True, f"{_c(old.class_name)} was {_python_kind(old)} and is now {_python_kind(new)}"),
            old=self.describe(old, self.old),
            new=self.describe(new, self.new),
            python=(old.class_name,),
        )

    def alias(self, old: ir.AliasDef, new: ir.AliasDef) -> None:
        name = old.name
        if _norm(old.target) != _norm(new.target):
            narrows = not self.covers(new.target, self.new, old.target, self.old)
            widens = not self.covers(old.target, self.old, new.target, self.new)
            self.add(
                "alias-type-changed",
                name,
                name,
                f"was {_c(python_type(old.target, self.old))}, now {_c(python_type(new.target, self.new))}",
                self.wire(
                    name,
                    narrows=narrows,
                    widens=widens,
                    what=f"{_a(name)} value",
                    overlap=self.overlaps(old.target, self.old, new.target, self.new),
                    compatible=self._compatible_type_reason(old.target, new.target),
                ),
                self.api_type(
                    _c(old.class_name), self.old.annotation_parts(old.target), self.new.annotation_parts(new.target)
                ),
                old=show_type(old.target, self.old),
                new=show_type(new.target, self.new),
                python=(old.class_name,),
            )
        self.skip_items(name, name, old.target, new.target)

    # -------------------------------------------------------- fields

    def fields(
        self,
        owner: str,
        prefix: str,
        old_fields: tuple[ir.Field, ...],
        new_fields: tuple[ir.Field, ...],
        *,
        classes: tuple[str, str],
        closed: tuple[bool, bool] = (False, False),
        skip: AbstractSet[str] = frozenset(),
    ) -> None:
        old_by = {field_key(f): f for f in old_fields if f.wire_name not in skip}
        new_by = {field_key(f): f for f in new_fields if f.wire_name not in skip}
        old_class, new_class = classes
        for wire_name, f in new_by.items():
            path = f"{prefix}.{wire_name}"
            if wire_name in old_by:
                self.field(owner, path, old_by[wire_name], f, classes)
                continue
            wire = self.wire(
                owner,
                narrows=f.required,
                widens=closed[0],
                what=f"{_a(prefix)} {'without' if f.required else 'with'} {_c(wire_name)}",
                narrow_why="they omit the new required field",
                widen_why="the old object allows no other properties",
                compatible="an optional field: old receivers ignore it and new receivers do without it",
            )
            if f.required and not f.has_default:
                api = Impact(True, f"constructing {_c(new_class)} now needs the argument {_c(f.name)}")
            elif f.has_default:
                api = Impact(False, f"a new attribute {_c(f.name)}, defaulting to {_c(_show_json(f.default))}")
            else:
                api = Impact(False, f"a new optional attribute {_c(f.name)} (UNSET when omitted)")
            self.add(
                "field-added",
                owner,
                path,
                f"new {'required' if f.required else 'optional'} field {_c(wire_name)}: "
                f"{_c(python_type(f.type, self.new))}",
                wire,
                api,
                new=self.field_json(f, self.new),
                python=(old_class,),
            )
        for wire_name, f in old_by.items():
            if wire_name in new_by:
                continue
            wire = self.wire(
                owner,
                narrows=closed[1],
                widens=f.required,
                what=f"{_a(prefix)} {'with' if closed[1] else 'without'} {_c(wire_name)}",
                narrow_why="the new object allows no other properties",
                widen_why="the field was required",
                compatible="it was optional: receivers already did without it, and an old sender's extra property is ignored",
            )
            self.add(
                "field-removed",
                owner,
                f"{prefix}.{wire_name}",
                f"removed {'required' if f.required else 'optional'} field {_c(wire_name)}",
                wire,
                Impact(True, f"the attribute {_c(old_class + '.' + f.name)} is gone"),
                old=self.field_json(f, self.old),
                python=(f"{old_class}.{f.name}",),
            )

    @staticmethod
    def field_json(f: ir.Field, side: _Side) -> JsonObject:
        out: JsonObject = {"type": show_type(f.type, side), "required": f.required, "python": f.name}
        if f.has_default:
            out["default"] = f.default
        return out

    def field(self, owner: str, path: str, old: ir.Field, new: ir.Field, classes: tuple[str, str]) -> None:
        old_class, new_class = classes
        wire_name = _c(field_key(old))
        attribute = _c(f"{new_class}.{new.name}")
        attr = (f"{old_class}.{old.name}",)
        holder = _a(path.rsplit(".", 1)[0])
        old_tol = (
            "old receivers drop the invalid value (x-deserialize-default-on-error)" if old.on_error != "raise" else ""
        )
        new_tol = (
            "new receivers drop the invalid value (x-deserialize-default-on-error)" if new.on_error != "raise" else ""
        )
        if old.name != new.name:
            self.add(
                "field-renamed",
                owner,
                path,
                f"Python attribute {_c(old.name)} is now {_c(new.name)}",
                Impact(False, "the wire name is unchanged"),
                Impact(True, f"{_c(old_class + '.' + old.name)} was renamed to {_c(new.name)}"),
                old=old.name,
                new=new.name,
                python=attr,
            )
        if old.required != new.required:
            if new.required:
                wire = self.wire(
                    owner,
                    narrows=True,
                    widens=False,
                    what=f"{holder} without {wire_name}",
                    narrow_why="the field was optional",
                )
                api = (
                    Impact(False, f"{_c(new.name)} keeps a default")
                    if new.has_default
                    else Impact(True, f"constructing {_c(new_class)} now needs the argument {_c(new.name)}")
                )
                self.add(
                    "field-required",
                    owner,
                    path,
                    f"{wire_name} is now required",
                    wire,
                    api,
                    old=False,
                    new=True,
                    python=(old_class,),
                )
            else:
                wire = self.wire(
                    owner,
                    narrows=False,
                    widens=True,
                    what=f"{holder} without {wire_name}",
                    widen_why="the field was required",
                )
                api = (
                    Impact(False, f"an omitted {_c(new.name)} reads as its default")
                    if new.has_default
                    else Impact(True, f"{attribute} may now be UNSET when read")
                )
                self.add(
                    "field-optional",
                    owner,
                    path,
                    f"{wire_name} is now optional",
                    wire,
                    api,
                    old=True,
                    new=False,
                    python=attr,
                )
        if old.nullable != new.nullable:
            if new.nullable:
                tol = old_tol or (
                    "old receivers take null as the default (x-deserialize-default-on-null)"
                    if old.default_on_null
                    else ""
                )
                wire = self.wire(owner, narrows=False, widens=True, what=f"null as {wire_name}", old_tolerant=tol)
                self.add(
                    "field-nullable",
                    owner,
                    path,
                    f"{wire_name} may now be null",
                    wire,
                    Impact(True, f"{attribute} may now be None when read"),
                    old=False,
                    new=True,
                    python=attr,
                )
            else:
                tol = new_tol or (
                    "new receivers take null as the default (x-deserialize-default-on-null)"
                    if new.default_on_null
                    else ""
                )
                wire = self.wire(owner, narrows=True, widens=False, what=f"null as {wire_name}", new_tolerant=tol)
                self.add(
                    "field-non-nullable",
                    owner,
                    path,
                    f"{wire_name} may no longer be null",
                    wire,
                    Impact(True, f"None is no longer a value of {attribute}"),
                    old=True,
                    new=False,
                    python=attr,
                )
        old_t, new_t = _norm(old.value_type), _norm(new.value_type)
        if old_t.kind == "keyed" and new_t.kind == "keyed" and old_t != new_t:
            self.keyed_changed(owner, path, old, new, attribute, holder, attr)
        elif old_t != new_t:
            narrows = not self.covers(new_t, self.new, old_t, self.old)
            widens = not self.covers(old_t, self.old, new_t, self.new)
            wire = self.wire(
                owner,
                narrows=narrows,
                widens=widens,
                what=f"{_a(field_key(old))} value",
                old_tolerant=old_tol,
                new_tolerant=new_tol,
                overlap=self.overlaps(old_t, self.old, new_t, self.new),
                compatible=self._compatible_type_reason(old_t, new_t),
            )
            api = self.api_type(
                attribute, self.old.annotation_parts(old.value_type), self.new.annotation_parts(new.value_type)
            )
            self.add(
                "field-type-changed",
                owner,
                path,
                f"{wire_name} was {_c(python_type(old.value_type, self.old))}, "
                f"now {_c(python_type(new.value_type, self.new))}",
                wire,
                api,
                old=show_type(old.type, self.old),
                new=show_type(new.type, self.new),
                python=attr,
            )
        if old.has_default != new.has_default or (old.has_default and not _same_json(old.default, new.default)):
            self.default_changed(owner, path, old, new, attribute, attr)
        for flag, keyword in (
            ("default_on_error", "x-deserialize-default-on-error"),
            ("default_on_null", "x-deserialize-default-on-null"),
        ):
            if getattr(old, flag) != getattr(new, flag):
                self.deserialize(owner, path, keyword, getattr(new, flag))
        self.skip_items(owner, path, old.type, new.type)

    def keyed_changed(
        self, owner: str, path: str, old: ir.Field, new: ir.Field, attribute: str, holder: str, attr: tuple[str, ...]
    ) -> None:
        """A flattened field (``KeyedT``: members told apart by their keys,
        sharing the object that holds them) whose members or keyword changed."""
        old_t, new_t = old.value_type, new.value_type
        assert isinstance(old_t, ir.KeyedT) and isinstance(new_t, ir.KeyedT)
        label = _c(new.name)
        old_members = self.old.annotation_parts(old_t)
        new_members = self.new.annotation_parts(new_t)
        details = []
        if old_t.exclusive != new_t.exclusive:
            before, after = ("oneOf", "anyOf") if old_t.exclusive else ("anyOf", "oneOf")
            details.append(
                f"its members ({_list(new_members, code=True)}) were told apart by `{before}`, now by `{after}`"
                + (" (exactly one may match)" if new_t.exclusive else " (the first that matches wins)")
            )
        if old_members != new_members:
            details.append(f"its members were {_c(' | '.join(old_members))}, now {_c(' | '.join(new_members))}")
        narrows = not self.covers(new_t, self.new, old_t, self.old)
        widens = not self.covers(old_t, self.old, new_t, self.new)
        both = f"{holder} with the keys of more than one {label} member"
        wire = self.wire(
            owner,
            narrows=narrows,
            widens=widens,
            what=both if old_members == new_members else f"{holder} whose {label} is not one of its members",
            narrow_why="`oneOf` refuses an object that two members accept" if new_t.exclusive else "",
            widen_why="`oneOf` refuses an object that two members accept" if old_t.exclusive else "",
            overlap=self.overlaps(old_t, self.old, new_t, self.new),
        )
        self.add(
            "field-type-changed",
            owner,
            path,
            f"the flattened field {label}: " + "; ".join(details),
            wire,
            self.api_type(attribute, old_members, new_members),
            old=show_type(old.type, self.old),
            new=show_type(new.type, self.new),
            python=attr,
        )

    def _compatible_type_reason(self, old_t: ir.TypeExpr, new_t: ir.TypeExpr) -> str:
        if self.covers(new_t, self.new, old_t, self.old) and self.covers(old_t, self.old, new_t, self.new):
            return "both types allow the same values"
        return "messages valid under one schema are valid under the other"

    def default_changed(
        self, owner: str, path: str, old: ir.Field, new: ir.Field, attribute: str, attr: tuple[str, ...]
    ) -> None:
        wire_name = _c(old.wire_name)
        before, after = _c(_show_json(old.default)), _c(_show_json(new.default))
        if not old.has_default:
            summary = f"{wire_name} now defaults to {after}"
            wire = Impact(
                False, "the values that may be sent are unchanged; an omitted value now stands for the default"
            )
            api = Impact(False, f"an omitted {attribute} now reads as {after} instead of UNSET")
        elif not new.has_default:
            summary = f"{wire_name} no longer defaults to {before}"
            wire = Impact(False, "the values that may be sent are unchanged")
            api = (
                Impact(False, f"{attribute} is now required, so it always reads as sent")
                if new.required
                else Impact(True, f"{attribute} may now be UNSET where it read as {before}")
            )
        else:
            summary = f"{wire_name} defaulted to {before}, now {after}"
            peers = _plural(self.senders(owner))
            wire = Impact(
                True,
                f"an omitted {wire_name} means {before} to {peers} built on the old schema "
                f"and {after} to those built on the new one",
                (OLD_RECEIVERS, OLD_SENDERS),
            )
            api = Impact(False, f"the constructor default of {attribute} is now {after}")
        self.add(
            "field-default-changed",
            owner,
            path,
            summary,
            wire,
            api,
            old=_json_value(old.default),
            new=_json_value(new.default),
            python=attr,
        )

    def deserialize(self, owner: str, path: str, keyword: str, added: bool) -> None:
        if added:
            wire = Impact(
                False,
                f"new receivers repair what {keyword} covers instead of rejecting it; valid messages decode the same",
            )
        else:
            wire = Impact(
                False,
                f"new receivers reject what {keyword} used to repair; "
                "messages valid under both schemas decode the same",
            )
        self.add(
            "deserialize-added" if added else "deserialize-removed",
            owner,
            path,
            f"{keyword} {'added' if added else 'removed'}",
            wire,
            Impact(False, "the Python API is the same; only lenient decoding changes"),
            old=not added,
            new=added,
            python=(),
        )

    def skip_items(self, owner: str, path: str, old_t: ir.TypeExpr, new_t: ir.TypeExpr) -> None:
        before, after = _skip_positions(old_t), _skip_positions(new_t)
        for where in sorted(after - before):
            self.deserialize(owner, path + where, "x-deserialize-skip-invalid-items", True)
        for where in sorted(before - after):
            self.deserialize(owner, path + where, "x-deserialize-skip-invalid-items", False)

    def api_type(self, what: str, old_parts: list[str], new_parts: list[str]) -> Impact:
        old_text, new_text = _c(" | ".join(old_parts)), _c(" | ".join(new_parts))
        if old_parts == new_parts:
            return Impact(
                False, f"the Python type of {what} is unchanged ({new_text}); only the allowed values changed"
            )
        if set(old_parts) < set(new_parts):
            added = _c(" | ".join(p for p in new_parts if p not in old_parts))
            return Impact(False, f"{what} may also be {added}: new union members only")
        return Impact(True, f"{what} was {old_text}, now {new_text}")

    # -------------------------------------------------------- enums

    def enum(self, old: ir.EnumDef, new: ir.EnumDef) -> None:
        name = old.name
        if old.value_kind != new.value_kind:
            self.add(
                "type-kind-changed",
                name,
                name,
                f"was an enum of {old.value_kind}, now of {new.value_kind}",
                self.wire(name, narrows=True, widens=True, what=f"{_a(name)} value"),
                Impact(True, f"{_c(old.class_name)} now holds {new.value_kind} values"),
                old=old.value_kind,
                new=new.value_kind,
                python=(old.class_name,),
            )
            return
        old_members = {(type(m.value), m.value): m for m in old.members}
        new_members = {(type(m.value), m.value): m for m in new.members}
        for key, member in new_members.items():
            path = f"{name}:{member.value}"
            value = _c(json.dumps(member.value))
            if key in old_members:
                before = old_members[key]
                if before.name != member.name:
                    self.add(
                        "enum-member-renamed",
                        name,
                        path,
                        f"member {_c(before.name)} is now {_c(member.name)}",
                        Impact(False, "the wire value is unchanged"),
                        Impact(True, f"{_c(old.class_name + '.' + before.name)} was renamed to {_c(member.name)}"),
                        old=before.name,
                        new=member.name,
                        python=(f"{old.class_name}.{before.name}",),
                    )
                continue
            if old.open:
                wire = Impact(False, f"old receivers keep it as a plain value: {_c(name)} is open")
            else:
                wire = self.wire(
                    name,
                    narrows=False,
                    widens=True,
                    what=f"the {_c(name)} value {value}",
                    widen_why=f"{_c(name)} is closed",
                )
            self.add(
                "enum-value-added",
                name,
                path,
                f"new value {value}",
                wire,
                Impact(False, f"a new member {_c(new.class_name + '.' + member.name)}"),
                new=member.value,
                python=(),
            )
        for key, member in old_members.items():
            if key in new_members:
                continue
            value = _c(json.dumps(member.value))
            if new.open:
                wire = Impact(False, f"new receivers still accept it as a plain value: {_c(name)} is open")
            else:
                wire = self.wire(
                    name,
                    narrows=True,
                    widens=False,
                    what=f"the {_c(name)} value {value}",
                    narrow_why=f"{_c(name)} is closed",
                )
            self.add(
                "enum-value-removed",
                name,
                f"{name}:{member.value}",
                f"removed value {value}",
                wire,
                Impact(True, f"the member {_c(old.class_name + '.' + member.name)} is gone"),
                old=member.value,
                python=(f"{old.class_name}.{member.name}",),
            )
        if old.open != new.open:
            if new.open:
                self.add(
                    "enum-opened",
                    name,
                    name,
                    f"{_c(name)} now accepts any other {new.value_kind}",
                    Impact(False, "receivers accept more; senders still emit only the known values"),
                    Impact(True, f"a value of {_c(new.class_name)} may now be read as a plain {new.value_kind}"),
                    old=False,
                    new=True,
                    python=(old.class_name,),
                )
            else:
                self.add(
                    "enum-closed",
                    name,
                    name,
                    f"{_c(name)} no longer accepts other values",
                    Impact(False, "senders emit only the known values, which both schemas accept"),
                    Impact(
                        True, f"a plain {old.value_kind} is no longer a value where {_c(new.class_name)} is expected"
                    ),
                    old=True,
                    new=False,
                    python=(old.class_name,),
                )

    # -------------------------------------------------------- unions

    def union(self, old: ir.UnionDef, new: ir.UnionDef) -> None:
        name = old.name
        if old.tag != new.tag:
            self.add(
                "union-tag-changed",
                name,
                name,
                f"told apart by {_c(new.tag) if new.tag else 'required keys'}, "
                f"was {_c(old.tag) if old.tag else 'required keys'}",
                self.wire(name, narrows=True, widens=True, what=_a(name)),
                Impact(True, f"the variant classes of {_c(new.class_name)} changed with the tag"),
                old=old.tag,
                new=new.tag,
                python=(old.class_name,),
            )
            return
        if old.tag and old.tag_name != new.tag_name:
            self.add(
                "field-renamed",
                name,
                f"{name}.{new.tag}",
                f"Python tag attribute {_c(old.tag_name)} is now {_c(new.tag_name)}",
                Impact(False, "the wire name is unchanged"),
                Impact(True, f"the tag attribute {_c(old.tag_name)} was renamed to {_c(new.tag_name)}"),
                old=old.tag_name,
                new=new.tag_name,
                python=(f"{old.class_name}.{old.tag_name}",),
            )
        if old.tag_lenient != new.tag_lenient:
            self.deserialize(name, f"{name}.{new.tag}", "x-deserialize-default-on-error", new.tag_lenient)
        old_base, new_base = self.old.base_fields(old), self.new.base_fields(new)
        # The shared fields, once for the whole union.
        self.fields(
            name,
            name,
            _first_fields(old, old_base),
            _first_fields(new, new_base),
            classes=(old.class_name, new.class_name),
        )
        old_variants = {_variant_key(old, v): v for v in old.variants}
        new_variants = {_variant_key(new, v): v for v in new.variants}
        for key, variant in new_variants.items():
            label = _variant_label(new, variant)
            path = f"{name}[{label}]"
            if key in old_variants:
                self.variant(old, new, old_variants[key], variant, path, old_base | new_base)
                continue
            if variant.role == ir.CATCH_ALL:
                wire = Impact(False, "receivers now keep unknown tags; senders still emit only the known variants")
            elif old.catch_all is not None:
                wire = Impact(False, f"old receivers keep it as the catch-all variant {_c(old.catch_all.class_name)}")
            else:
                wire = self.wire(
                    name,
                    narrows=False,
                    widens=True,
                    what=f"the {_c(name)} variant {_c(label)}",
                    widen_why="the old union has no catch-all variant",
                )
            self.add(
                "variant-added",
                name,
                path,
                f"new variant {_c(label)}" + (f" ({_c(variant.ref)})" if variant.ref else ""),
                wire,
                Impact(False, f"a new class {_c(variant.class_name)}"),
                new=variant.class_name,
                python=(),
            )
        for key, variant in old_variants.items():
            if key in new_variants:
                continue
            label = _variant_label(old, variant)
            if variant.role == ir.CATCH_ALL:
                wire = Impact(False, "senders emit only the known variants, which the new union still accepts")
            elif new.catch_all is not None:
                wire = Impact(False, f"new receivers keep it as the catch-all variant {_c(new.catch_all.class_name)}")
            else:
                wire = self.wire(
                    name,
                    narrows=True,
                    widens=False,
                    what=f"the {_c(name)} variant {_c(label)}",
                    narrow_why="the new union has no catch-all variant",
                )
            what = "the union member" if variant.reuses_ref else "the variant class"
            self.add(
                "variant-removed",
                name,
                f"{name}[{label}]",
                f"removed variant {_c(label)}" + (f" ({_c(variant.ref)})" if variant.ref else ""),
                wire,
                Impact(True, f"{what} {_c(variant.class_name)} is gone from {_c(old.class_name)}"),
                old=variant.class_name,
                python=(variant.class_name,),
            )

    def variant(
        self,
        old_union: ir.UnionDef,
        new_union: ir.UnionDef,
        old: ir.Variant,
        new: ir.Variant,
        path: str,
        base: set[str],
    ) -> None:
        name = old_union.name
        if old.class_name != new.class_name:
            self.add(
                "variant-renamed",
                name,
                path,
                f"variant class {_c(old.class_name)} is now {_c(new.class_name)}",
                Impact(False, "the wire form is unchanged"),
                Impact(True, f"{_c(old.class_name)} was renamed to {_c(new.class_name)}"),
                old=old.class_name,
                new=new.class_name,
                python=(old.class_name,),
            )
        same_payload = old.wraps == new.wraps and (
            old.ref == new.ref or (old.ref in self.renamed and self.renamed[old.ref] == new.ref)
        )
        if not same_payload:
            new_shape, old_shape = self.new.variant_shape(new_union, new), self.old.variant_shape(old_union, old)
            narrows = not self.covers(new_shape, self.new, old_shape, self.old)
            widens = not self.covers(old_shape, self.old, new_shape, self.new)
            old_names = {f.name for f in old.fields}
            if (
                old.wraps != new.wraps
                or not old_names <= {f.name for f in new.fields}
                or any(f.required and not f.has_default for f in new.fields if f.name not in old_names)
            ):
                api = Impact(True, f"the attributes of {_c(new.class_name)} changed with its payload")
            else:
                api = Impact(False, f"{_c(new.class_name)} keeps its attributes")
            before, after = old.wraps or old.ref, new.wraps or new.ref
            old_wire = [f.wire_name for f in old.fields]
            new_wire = [f.wire_name for f in new.fields]
            details = []
            if [w for w in new_wire if w not in old_wire]:
                details.append("fields added: " + _list([w for w in new_wire if w not in old_wire], code=True))
            if [w for w in old_wire if w not in new_wire]:
                details.append("fields removed: " + _list([w for w in old_wire if w not in new_wire], code=True))
            self.add(
                "variant-changed",
                name,
                path,
                f"payload was {_c(before) if before else 'inline'}, now {_c(after) if after else 'inline'}"
                + (f" ({'; '.join(details)})" if details else ""),
                self.wire(
                    name,
                    narrows=narrows,
                    widens=widens,
                    what=_a(path),
                    overlap=self.overlaps(old_shape, self.old, new_shape, self.new),
                ),
                api,
                old=before,
                new=after,
                python=(old.class_name,),
            )
            return
        if old.reuses_ref and new.reuses_ref:
            return
        # Fields of the payload type are reported on that type; the union's
        # shared fields on the union.
        skip = set(base)
        for side, variant in ((self.old, old), (self.new, new)):
            payload = side.defs.get(variant.ref or "")
            if isinstance(payload, ir.ObjectDef):
                skip |= {f.wire_name for f in payload.fields}
        self.fields(name, path, old.fields, new.fields, classes=(old.class_name, new.class_name), skip=skip)


_USE_KINDS = frozenset(
    {
        "field-removed",
        "field-type-changed",
        "alias-type-changed",
        "variant-removed",
        "variant-changed",
        "type-kind-changed",
        "type-removed",
        "message-form-removed",
        "message-form-changed",
    }
)
"""The changes that can stand for the removal of a type they used."""


def _first_fields(union: ir.UnionDef, names: set[str]) -> tuple[ir.Field, ...]:
    """The union's shared fields, as the first variant carries them."""
    if not names or not union.variants:
        return ()
    return tuple(f for f in union.variants[0].fields if f.wire_name in names)
