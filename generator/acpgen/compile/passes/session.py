"""The IR stage for the session fold: ``rules/session.toml``, checked against
the schema and the patch rules.

Every variant of the schema's ``SessionUpdate`` union must have exactly one
entry in the rule set; a missing or unknown one is an error naming it, so a
schema bump that adds an update kind cannot generate a fold that skips it.
The result is :class:`~acpgen.compile.ir.SessionRules`: which Session attribute each
variant changes and how. The template only prints it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AcpgenError
from ...jsontypes import TomlTable, one_of
from .. import ir
from .identifiers import snake
from .options import Options
from .rules import SESSION, builtin_file, extends_chain, read_rules

ACTIONS: tuple[ir.Action, ...] = ("upsert", "chunk", "message-chunk", "set", "keyed-set", "remove", "append")
SOURCES: tuple[ir.SessionSource, ...] = ("result", "params")
CATCH_ALL_TAG = "*"
SESSION_NAMES = (
    "Session",
    "HistoryEntry",
    "HistoryItem",
    "UpdateRule",
    "UPDATE_RULES",
    "PROTOCOL_VERSION",
    "SESSION_SOURCES",
    "apply_session_update",
    "fold_session_update",
    "session_to_json",
    "session_from_json",
)
"""What the generated session module exports besides the message class."""


def builtin_session_rules() -> Path:
    return builtin_file(SESSION)


def _rule_set(rules: TomlTable, name: str, where: str) -> TomlTable:
    """The set's settings and updates, with what it extends (later sets win)."""
    chain = extends_chain(rules, name, where, "session rule set")
    merged: TomlTable = {"updates": []}
    for table in reversed(chain):
        for key, value in table.items():
            if key == "updates":
                merged["updates"] += list(value)
            elif key != "extends":
                merged[key] = value
    return merged


def _entry_class(name: str) -> str:
    """The history entry class of a Session field: ``tool_calls`` -> ``ToolCallEntry``."""
    words = name.split("_")
    if words[-1].endswith("s"):
        words[-1] = words[-1][:-1]
    return "".join(w.title() for w in words) + "Entry"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def apply_session_rules(package: ir.Package, set_name: str, rules_path: Path | None = None) -> ir.Package:
    """The package with its :class:`~acpgen.compile.ir.SessionRules`; needs the patch
    rules applied first. A rule set absent from the file leaves the package
    without a session fold."""
    path = rules_path or builtin_session_rules()
    where = str(path)
    rules = read_rules(path)
    if set_name not in rules:
        return package
    try:
        session = _Lowering(package, _rule_set(rules, set_name, where), set_name, where).run()
    except SchemaMismatch as exc:
        # An older or newer schema than the rules: generate without the fold.
        return replace(package, session=None, warnings=(*package.warnings, f"no Session fold: {exc.message}"))
    return replace(package, session=session)


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the session fold of the package's rule set
    (:func:`apply_session_rules`), none without one."""
    return apply_session_rules(package, package.rule_set) if package.rule_set else package


class SchemaMismatch(AcpgenError):
    """The rules do not fit this schema (an update kind without a rule, or a
    rule whose patch upsert the schema lacks)."""


class _Lowering:
    def __init__(self, package: ir.Package, rules: TomlTable, set_name: str, where: str) -> None:
        self.package = package
        self.rules = rules
        self.set_name = set_name
        self.where = where
        self.defs = {d.name: d for d in package.definitions}
        self.fields: dict[str, ir.SessionField] = {}

    def error(self, message: str) -> AcpgenError:
        return AcpgenError(f"session rule set {self.set_name}: {message}", file=self.where)

    def mismatch(self, message: str) -> SchemaMismatch:
        return SchemaMismatch(f"session rule set {self.set_name}: {message}", file=self.where)

    def run(self) -> ir.SessionRules:
        union = self.defs.get("SessionUpdate")
        if not isinstance(union, ir.UnionDef):
            raise self.error("the schema has no SessionUpdate union")
        notification = next(
            (
                d
                for d in self.package.definitions
                if isinstance(d, ir.ObjectDef) and d.method is not None and d.method.name == "session/update"
            ),
            None,
        )
        if notification is None:
            raise self.error("the schema has no session/update notification")
        entries: dict[str, TomlTable] = {}
        for entry in self.rules["updates"]:
            tag = entry.get("tag")
            if not isinstance(tag, str):
                raise self.error(f"an update needs a 'tag': {entry!r}")
            entries[tag] = entry  # a later rule set overrides
        actions = []
        for variant in union.variants:
            tag = CATCH_ALL_TAG if variant.role == ir.CATCH_ALL else variant.tag
            entry = entries.pop(str(tag), None)
            if entry is None:
                raise self.mismatch(f"the SessionUpdate variant {tag!r} ({variant.class_name}) has no rule")
            actions.append(self.action(variant, entry))
        if entries:
            raise self.mismatch(f"rules for update kinds this schema lacks: {', '.join(sorted(entries))}")
        message_class = str(self.rules.get("message_class", ""))
        if any(a.action == "message-chunk" for a in actions) and not message_class.isidentifier():
            raise self.error("message-chunk needs an identifier 'message_class'")
        for name, f in self.fields.items():
            if f.history:
                self.fields[name] = replace(f, entry_class=_entry_class(name))
        actions = [replace(a, field=self.fields[a.field.name]) for a in actions]
        self.check_in_place(actions)
        prompt_field, prompt_class = self.prompt()
        extra = [f.entry_class for f in self.fields.values() if f.entry_class]
        self.check_names(message_class, *extra, *(["apply_prompt"] if prompt_field else []))
        version = self.rules.get("protocol_version")
        if not isinstance(version, int):
            raise self.error("'protocol_version' must be an integer")
        methods = {m.name for d in self.package.definitions if (m := getattr(d, "method", None)) is not None}
        sources: list[tuple[str, ir.SessionSource]] = []
        for text in self.rules.get("sessions_from", ()):
            method, _, word = str(text).partition(" ")
            part = one_of(word, SOURCES)
            if part is None:
                raise self.error(f"sessions_from {text!r}: say 'METHOD result' or 'METHOD params'")
            if method in methods:
                sources.append((method, part))
        return ir.SessionRules(
            notification_class=notification.class_name,
            fields=tuple(self.fields.values()),
            actions=tuple(actions),
            protocol_version=version,
            message_class=message_class,
            sessions_from=tuple(sources),
            prompt_field=prompt_field,
            prompt_class=prompt_class,
            prompt_entry_class=self.fields[prompt_field].entry_class if prompt_field else "",
        )

    def prompt(self) -> tuple[str, str]:
        """The message field ``apply_prompt`` adds the prompt to, and the
        class of the session/prompt params; ("", "") without a ``prompt``."""
        name = self.rules.get("prompt")
        if name is None:
            return "", ""
        field = self.fields.get(str(name))
        if field is None or field.container != "messages" or not field.history:
            raise self.error(f"prompt {name!r}: must name a message-chunk field with history")
        request = next(
            (
                d
                for d in self.package.definitions
                if isinstance(d, ir.ObjectDef)
                and d.method is not None
                and d.method.name == "session/prompt"
                and any(f.name == "prompt" for f in d.fields)
            ),
            None,
        )
        if request is None:
            raise self.mismatch("prompt: the schema has no session/prompt request with a 'prompt'")
        return field.name, request.class_name

    def check_in_place(self, actions: list[ir.SessionAction]) -> None:
        """The fold appends a field's chunks in place to one list per state."""
        attrs: dict[str, str] = {}
        for a in actions:
            if a.chunk_attr and attrs.setdefault(a.field.name, a.chunk_attr) != a.chunk_attr:
                raise self.error(f"the chunks of {a.field.name!r} append to different lists")

    def check_names(self, *generated: str) -> None:
        taken: set[str] = set()
        for definition in self.package.definitions:
            taken.add(definition.class_name)
            for variant in getattr(definition, "variants", ()):
                taken.add(variant.class_name)
        taken |= {u.state_class for u in self.package.upserts}
        for name in (*SESSION_NAMES, *generated):
            if name and name in taken:
                raise self.error(f"the name {name!r} is already taken in the generated package")

    def add_field(self, field: ir.SessionField) -> ir.SessionField:
        if field.name in ("session_id", "history") or not field.name.isidentifier():
            raise self.error(f"{field.name!r} cannot be a Session field name")
        known = self.fields.get(field.name)
        if known is None:
            self.fields[field.name] = field
            return field
        if replace(known, history=False) != replace(field, history=False):
            raise self.error(f"the updates of the Session field {field.name!r} disagree on what it holds")
        merged = replace(known, history=known.history or field.history)
        self.fields[field.name] = merged
        return merged

    def variant_field(self, variant: ir.Variant, wire: str) -> ir.Field:
        for f in variant.fields:
            if f.wire_name == wire:
                return f
        raise self.mismatch(f"{variant.class_name} has no field {wire!r}")

    def action(self, variant: ir.Variant, entry: TomlTable) -> ir.SessionAction:
        kind = one_of(entry.get("action"), ACTIONS)
        if kind is None:
            raise self.error(f"{variant.tag}: unknown action {entry.get('action')!r} (known: {', '.join(ACTIONS)})")
        name = entry.get("field")
        if not isinstance(name, str):
            raise self.error(f"{variant.tag}: an update needs a 'field'")
        history = bool(entry.get("history", False))
        started_by = tuple(entry.get("started_by", ()))
        reason = str(entry.get("reason", ""))
        tag = variant.tag if variant.role != ir.CATCH_ALL else None
        base: dict[str, Any] = dict(
            tag=tag,
            variant_class=variant.class_name,
            function="_fold_" + (snake(tag) if tag else "unrecognized"),
        )
        if kind == "upsert":
            upsert = next((u for u in self.package.upserts if variant.class_name in u.accepts + u.creates), None)
            if upsert is None:
                raise self.mismatch(f"{variant.tag}: no patch upsert accepts {variant.class_name}")
            key = ""
            if upsert.keys:
                key = self.variant_field(variant, upsert.keys[0].wire_name).name
            field = self.add_field(self.state_field(name, upsert, history))
            return ir.SessionAction(
                **base,
                action=kind,
                field=field,
                key=key,
                patch_function=upsert.function,
                replaces=variant.class_name in upsert.creates,
                started_by=started_by,
                reason=reason,
            )
        if kind == "chunk":
            chunk = next((c for c in self.package.chunks if variant.class_name in c.accepts), None)
            if chunk is None:
                raise self.mismatch(f"{variant.tag}: no patch chunk accepts {variant.class_name}")
            key = chunk.keys[0][1] if chunk.keys else ""
            field = self.add_field(self.state_field(name, chunk.target, history))
            in_place = chunk.append == "item" and field.container == "entities"
            return ir.SessionAction(
                **base,
                action=kind,
                field=field,
                key=key,
                patch_function=chunk.function,
                chunk_attr=chunk.field if in_place else "",
                chunk_source=chunk.source if in_place else "",
                started_by=started_by,
                reason=reason,
            )
        if kind == "message-chunk":
            field = self.add_field(
                ir.SessionField(name=name, wire_name=_camel(name), container="messages", history=history)
            )
            key = self.variant_field(variant, "messageId").name
            content = self.variant_field(variant, "content")
            if content.name != "content":
                raise self.error(f"{variant.tag}: a message chunk's content must be its 'content'")
            return ir.SessionAction(**base, action=kind, field=field, key=key, reason=reason)
        if kind in ("set", "keyed-set"):
            source, value_type = self.source(variant, entry.get("from"))
            item = value_type.items if value_type.kind == "list" else value_type
            if item.kind != "ref":
                raise self.error(f"{variant.tag}: the stored value must be a named type or a list of one")
            key = ""
            container: ir.Container
            if kind == "keyed-set":
                key = self.key_of(item.name, entry.get("key"), variant.tag)
                container = "values"
            else:
                container = "value"
            empty = bool(entry.get("empty", False))
            if empty and value_type.kind != "list":
                raise self.error(f"{variant.tag}: 'empty' needs a list")
            field = self.add_field(
                ir.SessionField(
                    name=name,
                    wire_name=_camel(name),
                    container=container,
                    value_type=value_type,
                    item_def=item.name,
                    empty=empty,
                    history=history,
                )
            )
            return ir.SessionAction(**base, action=kind, field=field, source=source, key=key, reason=reason)
        if kind == "remove":
            keyed = self.fields.get(name)
            if keyed is None or keyed.container != "values":
                raise self.error(f"{variant.tag}: remove needs a keyed-set field {name!r} before it")
            key = self.variant_field(variant, str(entry.get("key"))).name
            return ir.SessionAction(**base, action=kind, field=keyed, key=key, reason=reason)
        # append: the variant itself, decoded back as a SessionUpdate.
        field = self.add_field(
            ir.SessionField(
                name=name,
                wire_name=_camel(name),
                container="items",
                value_type=ir.RefT("SessionUpdate"),
                item_def="SessionUpdate",
                history=history,
            )
        )
        return ir.SessionAction(**base, action=kind, field=field, reason=reason)

    def state_field(self, name: str, upsert: ir.Upsert, history: bool) -> ir.SessionField:
        return ir.SessionField(
            name=name,
            wire_name=_camel(name),
            container="entities" if upsert.keys else "state",
            state_class=upsert.state_class,
            restore_from=upsert.update,
            restore_function=upsert.function,
            history=history,
        )

    def source(self, variant: ir.Variant, wire: object) -> tuple[str, ir.TypeExpr]:
        """The variant's attribute holding the value, and the value's type."""
        if wire is None:
            if variant.wraps is None:
                raise self.error(f"{variant.tag}: 'from' is needed unless the variant wraps one value")
            return "value", ir.RefT(variant.wraps)
        f = self.variant_field(variant, str(wire))
        if not f.required or f.nullable:
            raise self.error(f"{variant.tag}: 'from' must name a required, non-null field")
        return f.name, f.type

    def key_of(self, def_name: str, wire: object, tag: str | None) -> str:
        """The attribute every variant (or the object) of ``def_name`` keeps its key in."""
        definition = self.defs[def_name]
        if isinstance(definition, ir.UnionDef):
            groups = [v.fields for v in definition.variants]
        elif isinstance(definition, ir.ObjectDef):
            groups = [definition.fields]
        else:
            raise self.error(f"{tag}: {def_name} is neither an object nor a union of objects")
        names = set()
        for fields in groups:
            match = [f for f in fields if f.wire_name == wire and f.required]
            if not match:
                raise self.error(f"{tag}: not every {def_name} has a required {wire!r}")
            names.add(match[0].name)
        if len(names) != 1:
            raise self.error(f"{tag}: the key {wire!r} of {def_name} has different names")
        return names.pop()
