"""The IR stage for patch-merge: the rules file, checked against the schema.

``rules/patch.toml`` states, per rule set, which types are upserts, what
identifies their entity, and what an update does to each field. This module
reads it and turns it into :class:`~acpgen.compile.ir.Upsert` and
:class:`~acpgen.compile.ir.Chunk` entries of the named IR:

* a rule of an unknown kind, or a rule set that does not exist, is an error;
* a type or field the rules name but this schema lacks is a warning (older
  schemas still generate);
* a field of an upsert type that no rule covers gets the general rule
  (omitted unchanged, null clears, value replaces) and a warning naming it,
  so a schema bump that adds a field is visible.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ...errors import AcpgenError
from ...jsontypes import TomlTable, one_of
from .. import ir
from .identifiers import snake
from .options import Options
from .rules import PATCH, builtin_file, extends_chain, read_rules
from .values import ValueBuilder

RULES: tuple[ir.Rule | Literal["ignore"], ...] = (
    "key", "replace", "null-clears", "null-resets", "collection", "meta-patch", "ignore"
)  # fmt: skip
APPENDS: tuple[ir.Append, ...] = ("item", "base64")
GENERAL_RULE = "null-clears"


def builtin_rules_file() -> Path:
    return builtin_file(PATCH)


def load_rules(path: Path | None = None) -> TomlTable:
    """The patch rules file's table (the built-in one without ``path``)."""
    return read_rules(path or builtin_rules_file())


def rule_set(rules: TomlTable, name: str, where: str) -> dict[str, list[TomlTable]]:
    """The upserts and chunks of rule set ``name``, with what it extends."""
    upserts: list[TomlTable] = []
    chunks: list[TomlTable] = []
    for table in extends_chain(rules, name, where):
        upserts = list(table.get("upserts", ())) + upserts
        chunks = list(table.get("chunks", ())) + chunks
    return {"upserts": upserts, "chunks": chunks}


def apply_rules(package: ir.Package, set_name: str, rules_path: Path | None = None) -> ir.Package:
    """The package with its upserts and chunks; warnings added to it."""
    where = str(rules_path or builtin_rules_file())
    rules = rule_set(load_rules(rules_path), set_name, where)
    builder = _Builder(package, set_name, where)
    upserts = []
    for entry in rules["upserts"]:
        upsert = builder.upsert(entry)
        if upsert is not None:
            upserts.append(upsert)
    by_update = {u.update: u for u in upserts}
    chunks = []
    for entry in rules["chunks"]:
        chunk = builder.chunk(entry, by_update)
        if chunk is not None:
            chunks.append(chunk)
    _check_names(package, upserts, chunks, where)
    return replace(
        package,
        upserts=tuple(upserts),
        chunks=tuple(chunks),
        warnings=package.warnings + tuple(builder.warnings),
    )


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the upserts and chunks of the package's rule set
    (:func:`apply_rules`), none without one."""
    return apply_rules(package, package.rule_set) if package.rule_set else package


def _check_names(package: ir.Package, upserts: list[ir.Upsert], chunks: list[ir.Chunk], where: str) -> None:
    """The rules' class and function names must not take a name the package
    already uses."""
    taken: set[str] = set()
    for definition in package.definitions:
        taken.add(definition.class_name)
        for variant in getattr(definition, "variants", ()):
            taken.add(variant.class_name)
    for name in [u.state_class for u in upserts] + [u.function for u in upserts] + [c.function for c in chunks]:
        if name in taken:
            raise AcpgenError(f"the rules' name {name!r} is already taken in the generated package", file=where)
        taken.add(name)


class _Builder:
    def __init__(self, package: ir.Package, set_name: str, where: str) -> None:
        self.package = package
        self.set_name = set_name
        self.where = where
        self.defs = {d.name: d for d in package.definitions}
        self.values = ValueBuilder(package)
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(f"rules {self.set_name}: {message}")

    def error(self, message: str) -> AcpgenError:
        return AcpgenError(f"rule set {self.set_name}: {message}", file=self.where)

    def variants_of(self, def_name: str, tags: Collection[str] | None = None) -> list[str]:
        """Classes of union variants that carry ``def_name`` (optionally only
        those with one of ``tags``)."""
        out = []
        for definition in self.package.definitions:
            if isinstance(definition, ir.UnionDef):
                for variant in definition.variants:
                    if (
                        variant.ref == def_name
                        and not variant.wraps
                        and not variant.reuses_ref
                        and (tags is None or variant.tag in tags)
                    ):
                        out.append(variant.class_name)
        return out

    def upsert(self, entry: TomlTable) -> ir.Upsert | None:
        update = entry.get("update")
        state = entry.get("state")
        if not isinstance(update, str) or not isinstance(state, str) or not state.isidentifier():
            raise self.error(f"an upsert needs 'update' and an identifier 'state': {entry!r}")
        definition = self.defs.get(update)
        if definition is None:
            self.warn(f"{update} is not in this schema")
            return None
        if not isinstance(definition, ir.ObjectDef):
            raise self.error(f"{update} is not an object type")
        fields_by_wire = {f.wire_name: f for f in definition.fields}
        rules = entry.get("fields", {})
        for wire in rules:
            if wire not in fields_by_wire:
                self.warn(f"{update}.{wire} is not in this schema")
        keys = list(entry.get("key", ()))
        for key in keys:
            if rules.get(key, {}).get("rule") != "key":
                raise self.error(f'{update}: the key {key!r} needs rule = "key"')
        patch_fields = []
        for f in definition.fields:
            spec = rules.get(f.wire_name)
            if spec is None:
                self.warn(f"{update}.{f.wire_name} has no rule: it gets the general rule ({GENERAL_RULE})")
                spec = {"rule": GENERAL_RULE}
            patch_field = self.patch_field(update, f, spec)
            if patch_field is not None:
                patch_fields.append(patch_field)
        for key in keys:
            if key not in fields_by_wire:
                self.warn(f"{update}: the key {key} is not in this schema; the upsert is left out")
                return None
        creates = []
        for name in entry.get("creates", ()):
            created = self.defs.get(name)
            if created is None:
                self.warn(f"{name} (which creates {update}) is not in this schema")
                continue
            creates.append(created.class_name)
            creates += self.variants_of(name)
        accepts = (definition.class_name, *self.variants_of(update))
        attributes = [self.attributes_of(cls) for cls in (*accepts, *creates)]
        patch_fields = [replace(f, everywhere=all(f.name in names for names in attributes)) for f in patch_fields]
        return ir.Upsert(
            update=update,
            state_class=state,
            function="apply_" + snake(update),
            fields=tuple(patch_fields),
            accepts=accepts,
            creates=tuple(creates),
            sentence=str(entry.get("sentence", "")),
        )

    def attributes_of(self, class_name: str) -> set[str]:
        """The field attributes of a generated class (an object or a union
        variant), by its class name."""
        for definition in self.package.definitions:
            if isinstance(definition, ir.ObjectDef) and definition.class_name == class_name:
                return {f.name for f in definition.fields}
            if isinstance(definition, ir.UnionDef):
                for variant in definition.variants:
                    if variant.class_name == class_name and not variant.reuses_ref:
                        return {f.name for f in variant.fields}
        return set()

    def patch_field(self, update: str, f: ir.Field, spec: TomlTable) -> ir.PatchField | None:
        rule = one_of(spec.get("rule"), RULES)
        if rule is None:
            raise self.error(f"{update}.{f.wire_name}: unknown rule {spec.get('rule')!r} (known: {', '.join(RULES)})")
        if rule == "ignore":
            return None
        value_type = f.value_type
        where = ("rules", self.set_name, update, f.wire_name, "initial")
        has_initial = "initial" in spec
        if rule == "key":
            state_type, initial = value_type, None
        elif rule == "collection":
            if value_type.kind not in ("list", "map"):
                raise self.error(f"{update}.{f.wire_name}: a collection rule needs an array or map field")
            state_type = value_type
            empty: list[object] | dict[str, object] = [] if value_type.kind == "list" else {}
            initial = self.values.value(value_type, spec.get("initial", empty), where)
        elif rule == "meta-patch":
            state_type = ir.MapT(ir.AnyT())
            initial = self.values.value(state_type, spec.get("initial", {}), where)
        elif rule == "null-resets":
            if not has_initial:
                raise self.error(f"{update}.{f.wire_name}: null-resets needs the 'initial' it resets to")
            state_type = value_type
            initial = self.values.value(value_type, spec["initial"], where)
        elif rule == "replace" and has_initial and spec["initial"] is not None:
            state_type = value_type
            initial = self.values.value(value_type, spec["initial"], where)
        else:
            state_type = value_type if value_type.kind == "any" else ir.NullableT(value_type)
            initial = self.values.value(state_type, spec.get("initial"), where)
        return ir.PatchField(
            wire_name=f.wire_name,
            name=f.name,
            rule=rule,
            type=state_type,
            initial=initial,
            sentence=str(spec.get("sentence", "")),
        )

    def chunk(self, entry: TomlTable, upserts: dict[str, ir.Upsert]) -> ir.Chunk | None:
        name = entry.get("chunk")
        if not isinstance(name, str):
            raise self.error(f"a chunk needs a 'chunk' type name: {entry!r}")
        append = one_of(entry.get("append"), APPENDS)
        if append is None:
            raise self.error(f"chunk {name}: unknown append {entry.get('append')!r} (known: {', '.join(APPENDS)})")
        definition = self.defs.get(name)
        if definition is None:
            self.warn(f"{name} is not in this schema")
            return None
        if not isinstance(definition, ir.ObjectDef):
            raise self.error(f"chunk {name} is not an object type")
        target_name = entry.get("target")
        target = upserts.get(target_name) if isinstance(target_name, str) else None
        if target is None:
            self.warn(f"chunk {name}: its target {target_name} is not an upsert of this schema")
            return None
        tags = list(entry.get("tags", ()))
        accepts = self.variants_of(name, tags)
        if not accepts:
            self.warn(f"chunk {name}: no SessionUpdate variant carries it with tags {tags}")
            return None
        if len(self.variants_of(name)) == 1:
            accepts = [definition.class_name, *accepts]
        chunk_fields = {f.wire_name: f for f in definition.fields}
        state_fields = {f.wire_name: f for f in target.fields}
        field, source = entry.get("field"), entry.get("from")
        if field not in state_fields or source not in chunk_fields:
            self.warn(f"chunk {name}: {target.update}.{field} or {name}.{source} is not in this schema")
            return None
        keys = []
        for key in target.keys:
            if key.wire_name not in chunk_fields:
                raise self.error(f"chunk {name} lacks the key {key.wire_name} of {target.update}")
            keys.append((key.name, chunk_fields[key.wire_name].name))
        payload_class = ""
        if append == "base64":
            payload = state_fields[field].type
            payload = payload.inner if payload.kind == "nullable" else payload
            if payload.kind != "ref" or "data" not in {
                f.wire_name for f in getattr(self.defs[payload.name], "fields", ())
            }:
                raise self.error(f"chunk {name}: base64 appends need an object with 'data' as {field}")
            payload_class = self.defs[payload.name].class_name
        tag_part = snake(tags[0]) if len(tags) == 1 else snake(name)
        return ir.Chunk(
            chunk=name,
            function="apply_" + tag_part,
            accepts=tuple(accepts),
            target=target,
            field=state_fields[field].name,
            source=chunk_fields[source].name,
            append=append,
            keys=tuple(keys),
            payload_class=payload_class,
        )
