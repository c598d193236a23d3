"""The IR pass for the agent's session senders (the generated ``senders``
module): a method of ``SessionSender`` per kind of session update, the tool
call handle and the content helpers.

The kinds are the tagged variants of the union the ``session/update``
notification carries (the catch-all is no kind an agent sends), each sent by
a method named by :func:`sender_name`, the one naming rule. What the schema
does not say (where a ``str`` is accepted for content, which unions get
helpers, which upsert a tool call handle follows and the statuses it sets)
is in ``rules/senders.toml``; which variant starts a tool call comes from
the patch rules (``rules/patch.toml``: the upsert's ``creates``, else the
upsert's own variant).

Two kinds sent under one name, a name the runtime's sender class already
has (:func:`~.attributes.sender_attributes`), two helpers under one name,
or a status the enum lacks, is an error naming both. A package without a
``session/update`` notification carrying a tagged union has no senders.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from ...errors import AcpgenError, pointer
from ...jsontypes import TomlTable
from .. import ir
from .attributes import SENDER_BASE, runtime_attributes, sender_attributes
from .identifiers import snake
from .options import Options
from .rules import SENDERS, builtin_file, read_rules

METHOD = "session/update"
"""The notification the senders send."""
CONNECTION_METHOD = "session"
"""The agent's connection's method that returns a session's sender."""
AGENT_PREFIX = "agent_"
CHUNK_SUFFIX = "_chunk"


def builtin_senders_rules() -> Path:
    return builtin_file(SENDERS)


def sender_name(tag: str, tags: Iterable[str]) -> str:
    """The ``SessionSender`` method that sends the variant tagged ``tag``,
    among the union's ``tags``: the one naming rule.

    The tag in snake_case, minus a leading ``agent_`` (the agent is the
    sender: ``agent_thought_chunk`` -> ``thought_chunk``), then minus a
    trailing ``_chunk`` unless another tag, minus its ``agent_``, is that
    name already (v1's ``agent_message_chunk`` is ``message``; v2 also has
    ``agent_message``, so there they are ``message`` and ``message_chunk``).
    A keyword gets a trailing underscore. Two tags that come out the same
    are the caller's to refuse."""
    base = _unprefixed(tag)
    if base.endswith(CHUNK_SUFFIX) and len(base) > len(CHUNK_SUFFIX):
        short = base[: -len(CHUNK_SUFFIX)]
        if short not in {_unprefixed(t) for t in tags if t != tag}:
            base = short
    return base + "_" if keyword.iskeyword(base) else base


def _unprefixed(tag: str) -> str:
    name = snake(tag)
    if name.startswith(AGENT_PREFIX) and len(name) > len(AGENT_PREFIX):
        name = name[len(AGENT_PREFIX) :]
    return name


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the package's senders (:func:`find_senders`)."""
    return find_senders(package)


def find_senders(package: ir.Package, rules_path: Path | None = None) -> ir.Package:
    """The package with its :class:`~acpgen.compile.ir.Senders`, when it has
    a ``session/update`` notification carrying a tagged union."""
    path = rules_path or builtin_senders_rules()
    return _Finder(package, read_rules(path), str(path)).run()


class _Finder:
    def __init__(self, package: ir.Package, rules: TomlTable, where: str) -> None:
        self.package = package
        self.rules = rules
        self.where = where
        self.defs = {d.name: d for d in package.definitions}

    def error(self, message: str, *parts: str) -> AcpgenError:
        return AcpgenError(message, file=self.package.schema_path, pointer=pointer(("$defs", *parts)) if parts else "")

    def table(self, name: str) -> Mapping[str, object]:
        value = self.rules.get(name, {})
        if not isinstance(value, dict):
            raise AcpgenError(f"[{name}] must be a table", file=self.where)
        return value

    def run(self) -> ir.Package:
        notification = next(
            (
                d
                for d in self.package.definitions
                if isinstance(d, ir.ObjectDef) and d.method is not None and d.method.name == METHOD
            ),
            None,
        )
        if notification is None:
            return self.package
        session = next((f for f in notification.fields if f.wire_name == "sessionId" and f.required), None)
        unions = {
            f.name: d
            for f in notification.fields
            if f.required
            and isinstance(f.type, ir.RefT)
            and isinstance(d := self.defs.get(f.type.name), ir.UnionDef)
            and d.tag is not None
        }
        if session is None or len(unions) != 1:
            return self.package
        ((update, union),) = unions.items()
        self.check_connection_method()
        tool_call = self.tool_call(union)
        senders = self.senders(union, tool_call)
        calls = self.calls({s.name for s in senders})
        text_class, text_field, block_union = self.text()
        content = self.tool_content()
        return replace(
            self.package,
            senders=ir.Senders(
                notification_class=notification.class_name,
                method=METHOD,
                session_field=session.name,
                update_field=update,
                senders=senders,
                tool_call=tool_call[0] if tool_call else None,
                helpers=self.helpers(),
                calls=calls,
                block_union=block_union,
                text_class=text_class,
                text_field=text_field,
                tool_content_union=content[0],
                tool_content_class=content[1],
                tool_content_field=content[2],
                tool_content_kinds=content[3],
            ),
        )

    def check_connection_method(self) -> None:
        """``conn.session(...)`` keeps clear of the agent's connection's
        other methods: the runtime's and one per call of the client."""
        taken = {c.handler: c.params for c in self.package.calls("client")}
        if CONNECTION_METHOD in runtime_attributes():
            raise AcpgenError(f"the runtime's connection already has a {CONNECTION_METHOD!r} attribute")
        if CONNECTION_METHOD in taken:
            raise self.error(
                f"{taken[CONNECTION_METHOD]!r} would be sent as {CONNECTION_METHOD!r}, the agent's connection's"
                " method that returns a session's sender: name its handler in rules/methods.toml",
                taken[CONNECTION_METHOD],
            )

    def described(self, variant: ir.Variant) -> str:
        """A variant's description, else that of the definition it refers to."""
        if variant.description or not variant.ref or variant.ref not in self.defs:
            return variant.description
        return str(getattr(self.defs[variant.ref], "description", ""))

    def calls(self, named: set[str]) -> tuple[ir.SessionCall, ...]:
        """The requests and notifications the agent sends the client whose
        params have a required ``sessionId`` (but ``session/update``): each
        a method of the sender under its handler's name, which must not be
        a sender's or the base class's."""
        reserved = sender_attributes()
        out = []
        for call in self.package.calls("client"):
            params = self.defs.get(call.params)
            if call.method == METHOD or not isinstance(params, ir.ObjectDef):
                continue
            session = next((f for f in params.fields if f.wire_name == "sessionId" and f.required), None)
            if session is None:
                continue
            if call.handler in named or call.handler in reserved:
                raise self.error(
                    f"{call.params!r} would be sent as {call.handler!r} by the session's sender, which "
                    + ("a session update is sent as" if call.handler in named else f"{SENDER_BASE} already defines"),
                    call.params,
                )
            out.append(
                ir.SessionCall(
                    name=call.handler,
                    method=call.method,
                    params_class=call.params_class,
                    result_class=call.result_class if call.kind == "request" else "",
                    session_field=session.name,
                    fields=tuple(f for f in params.fields if f is not session),
                    description=call.summary,
                )
            )
        return tuple(out)

    def senders(self, union: ir.UnionDef, tool_call: tuple[ir.ToolCall, str, str] | None) -> tuple[ir.Sender, ...]:
        tagged = [v for v in union.variants if v.role == ir.TAGGED and v.tag is not None]
        tags = [str(v.tag) for v in tagged]
        reserved = sender_attributes()
        named: dict[str, str] = {}
        out = []
        for variant in tagged:
            tag = str(variant.tag)
            name = sender_name(tag, tags)
            if name in named:
                raise self.error(
                    f"the {union.name} variants {named[name]!r} and {tag!r} would both be sent as {name!r}",
                    union.name,
                )
            if name in reserved or not name.isidentifier() or name.startswith("_"):
                raise self.error(
                    f"the {union.name} variant {tag!r} would be sent as {name!r}, which {SENDER_BASE} already defines"
                    if name in reserved
                    else f"the {union.name} variant {tag!r} gives no usable method name ({name!r})",
                    union.name,
                )
            named[name] = tag
            description = self.described(variant)
            out.append(
                ir.Sender(
                    name=name,
                    tag=tag,
                    variant_class=variant.class_name,
                    fields=() if variant.wraps else variant.fields,
                    description=description,
                    wraps=variant.wraps or "",
                    starts=tool_call is not None and variant.class_name == tool_call[1],
                    key=tool_call[2] if tool_call is not None and variant.class_name == tool_call[1] else "",
                )
            )
        return tuple(out)

    def tool_call(self, union: ir.UnionDef) -> tuple[ir.ToolCall, str, str] | None:
        """The tool call a handle follows, the variant that starts one and
        the attribute holding its id there; None when the rules name an
        upsert the package lacks (or it has no single key)."""
        rules = self.table("tool_call")
        name = rules.get("upsert")
        upsert = next((u for u in self.package.upserts if u.update == name), None)
        if upsert is None or len(upsert.keys) != 1:
            return None
        variants = {v.class_name: v for v in union.variants if v.role == ir.TAGGED}
        updates = [c for c in upsert.accepts if c in variants]
        starts = [c for c in upsert.creates if c in variants] or updates
        if len(updates) != 1 or len(starts) != 1:
            return None
        update = variants[updates[0]]
        key = upsert.keys[0].wire_name
        key_field = next((f for f in update.fields if f.wire_name == key), None)
        start_key = next((f for f in variants[starts[0]].fields if f.wire_name == key), None)
        if key_field is None or start_key is None or not self.is_string(key_field.type):
            return None
        status_wire = rules.get("status")
        status = next((f for f in update.fields if f.wire_name == status_wire), None)
        enum = self.defs.get(status.value_type.name) if status and isinstance(status.value_type, ir.RefT) else None
        if status is None or not isinstance(enum, ir.EnumDef):
            raise self.error(
                f"the tool call's {status_wire!r} (rules/senders.toml) is no enum field of {update.class_name}",
                union.name,
            )
        members = {m.value: m.name for m in enum.members}
        wanted: dict[str, str] = {}
        for which in ("completed", "failed"):
            value = rules.get(which)
            member = members.get(value) if isinstance(value, (str, int)) else None
            if member is None:
                raise self.error(
                    f"the tool call status {value!r} ({which}, rules/senders.toml) is not a member of {enum.name}",
                    enum.name,
                )
            wanted[which] = member
        return (
            ir.ToolCall(
                key=key_field.name,
                key_type=key_field.type,
                update_class=update.class_name,
                fields=tuple(f for f in update.fields if f.wire_name != key),
                status=status.name,
                status_enum=enum.class_name,
                completed=wanted["completed"],
                failed=wanted["failed"],
            ),
            starts[0],
            start_key.name,
        )

    def is_string(self, t: ir.TypeExpr) -> bool:
        """A string, or an alias of one: a made-up id fits it."""
        while isinstance(t, ir.RefT) and isinstance(self.defs.get(t.name), ir.AliasDef):
            alias = self.defs[t.name]
            assert isinstance(alias, ir.AliasDef)
            t = alias.target
        return isinstance(t, ir.StrT)

    def variant(self, union_name: object, tag: object) -> tuple[ir.UnionDef, ir.Variant] | None:
        union = self.defs.get(str(union_name))
        if not isinstance(union, ir.UnionDef):
            return None
        variant = next((v for v in union.variants if v.role == ir.TAGGED and v.tag == tag), None)
        return (union, variant) if variant is not None else None

    def text(self) -> tuple[str, str, str]:
        """The text variant's class and attribute (empty: a ``str`` is no
        content block), and the content block union (empty: none)."""
        rules = self.table("text")
        union = self.defs.get(str(rules.get("union")))
        if not isinstance(union, ir.UnionDef):
            return "", "", ""
        found = self.variant(union.name, rules.get("tag"))
        required = [f for f in found[1].fields if f.required] if found else []
        if found is None or len(required) != 1 or not isinstance(required[0].type, ir.StrT):
            return "", "", union.name
        return found[1].class_name, required[0].name, union.name

    def tool_content(self) -> tuple[str, str, str, tuple[str, ...]]:
        """The tool call content union, its variant that wraps a content
        block, that variant's attribute, and the union's classes."""
        rules = self.table("tool_content")
        found = self.variant(rules.get("union"), rules.get("tag"))
        block = self.table("text").get("union")
        if found is None:
            return "", "", "", ()
        union, variant = found
        required = [f for f in variant.fields if f.required]
        if len(required) != 1 or required[0].type != ir.RefT(str(block)):
            return "", "", "", ()
        return union.name, variant.class_name, required[0].name, tuple(v.class_name for v in union.variants)

    def helpers(self) -> tuple[ir.Helper, ...]:
        rules = self.table("helpers")
        unions = rules.get("unions", [])
        names = rules.get("names", {})
        if not isinstance(unions, list) or not isinstance(names, dict):
            raise AcpgenError("[helpers] needs a list 'unions' and a table 'names'", file=self.where)
        out: list[ir.Helper] = []
        named: dict[str, str] = {}
        for union_name in unions:
            union = self.defs.get(str(union_name))
            if not isinstance(union, ir.UnionDef):
                continue
            for variant in union.variants:
                if variant.role != ir.TAGGED or variant.tag is None or variant.wraps:
                    continue
                name = str(names.get(f"{union.name}.{variant.tag}", snake(variant.tag)))
                if keyword.iskeyword(name):
                    name += "_"
                where = f"{union.name} {variant.tag!r}"
                if name in named:
                    raise self.error(f"the helpers of {named[name]} and {where} would both be {name!r}", union.name)
                if not name.isidentifier() or name.startswith("_"):
                    raise self.error(f"the helper of {where} gives no usable name ({name!r})", union.name)
                named[name] = where
                description = self.described(variant)
                out.append(
                    ir.Helper(
                        name=name,
                        union=union.name,
                        tag=variant.tag,
                        variant_class=variant.class_name,
                        fields=variant.fields,
                        description=description,
                    )
                )
        return tuple(out)
