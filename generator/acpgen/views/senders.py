"""The view of ``senders.py``: the agent's ``SessionSender`` (a method per
kind of session update), its ``ToolCallHandle`` and the content helpers, as
source text (the fixed part is the runtime's ``_senders``)."""

from __future__ import annotations

from ..compile import ir
from ..records import dataclass
from . import text
from .inputs import ViewInputs
from .protocol import literals
from .source import absent, doc, header

SUMMARY = (
    "An agent's typed senders of session updates: ``conn.session(session_id)`` returns a SessionSender,"
    " with a method per kind of update the schema defines; the one that starts a tool call returns a"
    " ToolCallHandle, which sends that call's updates. The content helpers build content blocks and"
    " tool call content.\n\n"
    "An optional parameter is UNSET (omitted on the wire) unless given; None sends JSON null."
)

SENDER_DOC = '''"""The updates of one session, as the agent sends them (the agent's
``conn.session(session_id)`` returns one). Each method builds one kind of
``session/update`` and sends it; :meth:`send` sends one built already."""'''

HANDLE_DOC = '''"""One tool call of a session: ``tool_call_id``, and the updates of that
call. A parameter left out leaves the client's value unchanged; None
clears it (or, where the patch rules say so, resets it); a value replaces
it."""'''


@dataclass(frozen=True)
class Method:
    """An ``async`` method (or a helper function): what it takes and what it
    builds, as source."""

    name: str
    signature: str
    """The parameters, ``self`` first for a method."""
    returns: str
    doc: str
    """The docstring, indented for the body."""
    prelude: tuple[str, ...]
    """Lines before the call (a tool call id made up)."""
    call: str
    """What the body sends (a sender), awaits (a handle's) or returns (a helper)."""
    handle: str
    """What a method that starts a tool call returns (empty: nothing)."""
    me: str
    """What the body calls ``self``."""


@dataclass(frozen=True)
class Call:
    """A method of the sender calling the client (a request or a
    notification naming the session)."""

    name: str
    signature: str
    returns: str
    """The result class (``None`` for a notification)."""
    doc: str
    call: str
    """The connection's call, given this session's id."""
    request: bool


@dataclass(frozen=True)
class Handle:
    """The ``ToolCallHandle``."""

    base: str
    doc: str
    methods: tuple[Method, ...]
    """``update``, ``complete`` and ``fail``."""


@dataclass(frozen=True)
class SendersView:
    header: str
    exports: tuple[str, ...]
    present: bool
    """The package has senders (else the module is empty)."""
    base: str
    """The sender's base class, with its type arguments."""
    doc: str
    notification: str
    """The ``session/update`` params class ..."""
    update_type: str
    session_field: str
    update_field: str
    methods: tuple[Method, ...]
    calls: tuple[Call, ...]
    """The requests and notifications to the client naming the session."""
    handle: Handle | None
    helpers: tuple[Method, ...]
    text_class: str
    """The text block's class (empty: a ``str`` is no content block) ..."""
    text_field: str
    text_block: str
    """... and the private function making one, as ``_as_block`` takes it."""
    content_class: str
    """The tool call content variant wrapping a block (empty: none) ..."""
    content_field: str
    content_block: str
    """... the private function wrapping one ..."""
    content_kinds: str
    """... and the union's classes, as a tuple."""
    uses_sequence: bool
    uses_any: bool


class _Builder:
    def __init__(self, inputs: ViewInputs, s: ir.Senders) -> None:
        self.inputs = inputs
        self.s = s
        self.ref = inputs.names.ref
        self.annotate = text.Annotations(inputs.defs, inputs.names.ref, inputs.names.builtin, lambda n: "_" + n)
        self.text_block = "_text_block" if s.text_class else "None"

    def kind(self, t: ir.TypeExpr) -> str:
        """How a value of ``t`` is converted: ``block``, ``blocks``,
        ``item``, ``items`` or ``""`` (as it is)."""
        s = self.s
        items = t.items if isinstance(t, ir.ListT) else None
        if s.text_class and s.block_union:
            if t == ir.RefT(s.block_union):
                return "block"
            if items == ir.RefT(s.block_union):
                return "blocks"
        if s.tool_content_class:
            if t == ir.RefT(s.tool_content_union):
                return "item"
            if items == ir.RefT(s.tool_content_union):
                return "items"
        return ""

    def annotation(self, f: ir.Field) -> str:
        """The parameter's annotation: the field's, taking a ``str`` for a
        content block and a block (or ``str``) for tool call content."""
        t = f.value_type
        kind = self.kind(t)
        b = self.inputs.names.builtin
        string = f" | {b('str')}" if self.s.text_class else ""
        block = self.annotate(ir.RefT(self.s.block_union)) if self.s.block_union else ""
        if kind == "block":
            out = f"{self.annotate(t)}{string}"
        elif kind == "blocks":
            out = f"_Sequence[{self.annotate(ir.RefT(self.s.block_union))}{string}]"
        elif kind == "item":
            out = f"{self.annotate(t)} | {block}{string}"
        elif kind == "items":
            out = f"_Sequence[{self.annotate(ir.RefT(self.s.tool_content_union))} | {block}{string}]"
        else:
            out = self.annotate(t)
        if f.nullable:
            out += " | None"
        if not f.required and f.default_value is None:
            out += " | _Unset"
        return out

    def value(self, f: ir.Field) -> str:
        """The argument that passes the parameter on to the variant."""
        kind = self.kind(f.value_type)
        if kind == "block":
            return f"_as_block({f.name}, {self.text_block})"
        if kind == "blocks":
            return f"_as_blocks({f.name}, {self.text_block})"
        if kind in ("item", "items"):
            function = "_as_tool_item" if kind == "item" else "_as_tool_content"
            return f"{function}({f.name}, _TOOL_CONTENT_KINDS, _content_block, {self.text_block})"
        return f.name

    def parameters(
        self, fields: tuple[ir.Field, ...], keyword_only: bool = False, key: str = "", indent: int = 8
    ) -> list[str]:
        """Required fields first (positional unless ``keyword_only``), then
        the optional ones keyword-only, each group in schema order; ``key``
        (a tool call id the method makes up) is optional, ``None`` by default.
        ``indent``: where a parameter starts when the signature is split."""
        required = [text.parameter(self.annotation(f), f.name, indent) for f in fields if f.required and f.name != key]
        optional = []
        for f in fields:
            if f.name == key:
                optional.append(text.parameter(f"{self.annotate(f.value_type)} | None", f.name, indent, "None"))
            elif not f.required:
                optional.append(text.parameter(self.annotation(f), f.name, indent, absent(f, self.ref)))
        if keyword_only:
            return ["*", *required, *optional] if required or optional else []
        return [*required, *(["*", *optional] if optional else [])]

    def signature(self, me: str, params: list[str]) -> str:
        return ", ".join([me, *params])

    def me(self, fields: tuple[ir.Field, ...]) -> str:
        return "__sender_self__" if any(f.name == "self" for f in fields) else "self"

    def build(self, variant: str, fields: tuple[ir.Field, ...], extra: tuple[str, ...] = ()) -> str:
        args = [*extra, *(f"{f.name}={self.value(f)}" for f in fields)]
        return f"{self.ref(variant)}({', '.join(args)})"

    def field_docs(self, fields: tuple[ir.Field, ...]) -> str:
        """A line per parameter: its name and the first paragraph of the
        field's description (continued lines indented)."""
        lines = []
        for f in fields:
            first = "\n    ".join(line.strip() for line in f.description.strip().split("\n\n")[0].split("\n"))
            note = ""
            kind = self.kind(f.value_type)
            if kind == "block" and self.s.text_class:
                note = " (a ``str`` is sent as a text block)"
            elif kind == "blocks" and self.s.text_class:
                note = " (a ``str`` item is sent as a text block)"
            elif kind in ("item", "items"):
                note = " (a content block, or a ``str`` as a text block, is sent wrapped as content)"
            if first or note:
                lines.append(f"``{f.name}``: {first or 'see the model'}{note}")
        return "\n".join(lines)

    def sender(self, x: ir.Sender) -> Method:
        me = self.me(x.fields)
        if x.wraps:
            wrapped = self.inputs.defs[x.wraps]
            params = [f"value: {text.definition_annotation(wrapped, self.ref, self.inputs.names.builtin)}"]
            call = f"{self.ref(x.variant_class)}(value=value)"
        else:
            params = self.parameters(x.fields, key=x.key if x.starts else "")
            call = self.build(x.variant_class, x.fields)
        prose = x.description.strip() or f"A ``{x.tag}`` update."
        prose += f"\n\nSends the ``{x.tag}`` session update ({x.variant_class})."
        prelude: tuple[str, ...] = ()
        handle = ""
        returns = "None"
        if x.starts and self.s.tool_call is not None:
            key_type = self.annotate(next(f for f in x.fields if f.name == x.key).value_type)
            prelude = (f"{x.key} = {key_type}(_new_tool_call_id()) if {x.key} is None else {x.key}",)
            handle = f"ToolCallHandle({me}, {x.key})"
            returns = "ToolCallHandle"
            prose += f" Returns the tool call's handle; without ``{x.key}`` one is made up (``uuid4().hex``)."
        fields = self.field_docs(x.fields)
        if fields:
            prose += "\n\n" + fields
        return Method(
            name=x.name,
            signature=self.signature(me, params),
            returns=returns,
            doc=doc(prose, 8),
            prelude=prelude,
            call=call,
            handle=handle,
            me=me,
        )

    def session_call(self, c: ir.SessionCall) -> Call:
        me = self.me(c.fields)
        params = self.parameters(c.fields)
        built = self.build(c.params_class, c.fields, (f"{c.session_field}={me}.session_id",))
        kind = "request" if c.result_class else "notification"
        prose = (c.description.strip() or f"The ``{c.method}`` {kind}.") + (
            f"\n\nSends ``{c.method}`` (a {kind}) for this session: the connection's ``{c.name}``"
            f" with a {c.params_class} whose ``{c.session_field}`` is this session's."
        )
        fields = self.field_docs(c.fields)
        if fields:
            prose += "\n\n" + fields
        return Call(
            name=c.name,
            signature=self.signature(me, params),
            returns=self.ref(c.result_class) if c.result_class else "None",
            doc=doc(prose, 8),
            call=f"{me}.connection.{c.name}({built})",
            request=bool(c.result_class),
        )

    def handle(self, t: ir.ToolCall) -> Handle:
        key_field = t.key
        fields = t.fields
        me = self.me(fields)
        update_params = self.parameters(fields, keyword_only=True)
        update = Method(
            name="update",
            signature=self.signature(me, update_params),
            returns="None",
            doc=doc(
                f"Send an update of this tool call ({t.update_class}).\n\n" + self.field_docs(fields),
                8,
            ),
            prelude=(),
            call=f"{me}.sender.send({self.build(t.update_class, fields, (f'{key_field}={me}.tool_call_id',))})",
            handle="",
            me=me,
        )
        rest = tuple(f for f in fields if f.name != t.status)
        rest_params = self.parameters(rest, keyword_only=True)

        def ending(name: str, member: str) -> Method:
            status = f"{self.ref(t.status_enum)}.{member}"
            args = ", ".join([f"{t.status}={status}", *(f"{f.name}={f.name}" for f in rest)])
            return Method(
                name=name,
                signature=self.signature(me, rest_params),
                returns="None",
                doc=doc(
                    f"Send an update of this tool call with ``{t.status}={status}``; the rest as :meth:`update`.", 8
                ),
                prelude=(),
                call=f"{me}.update({args})",
                handle="",
                me=me,
            )

        return Handle(
            base=f"_ToolCallHandleBase[{self.annotate(t.key_type)}]",
            doc=HANDLE_DOC,
            methods=(update, ending("complete", t.completed), ending("fail", t.failed)),
        )

    def helper(self, h: ir.Helper) -> Method:
        params = self.parameters(h.fields, indent=4)
        prose = (h.description.strip() or f"A ``{h.tag}`` {h.union}.") + f"\n\nA {h.variant_class} (``{h.tag}``)."
        fields = self.field_docs(h.fields)
        if fields:
            prose += "\n\n" + fields
        return Method(
            name=h.name,
            signature=", ".join(params),
            returns=self.ref(h.variant_class),
            doc=doc(prose, 4),
            prelude=(),
            call=self.build(h.variant_class, h.fields),
            handle="",
            me="",
        )


def build(inputs: ViewInputs) -> SendersView:
    """The view of ``senders.py``."""
    package = inputs.package
    exports = literals(inputs.exports["senders"])
    s = package.senders
    if s is None:
        return SendersView(
            header=header(package, inputs.generator_version, SUMMARY),
            exports=exports,
            present=False,
            base="",
            doc="",
            notification="",
            update_type="",
            session_field="",
            update_field="",
            methods=(),
            calls=(),
            handle=None,
            helpers=(),
            text_class="",
            text_field="",
            text_block="",
            content_class="",
            content_field="",
            content_block="",
            content_kinds="",
            uses_sequence=False,
            uses_any=False,
        )
    b = _Builder(inputs, s)
    session_type = b.annotate(_notification_field(inputs, s, s.session_field))
    update_type = b.annotate(_notification_field(inputs, s, s.update_field))
    methods = tuple(b.sender(x) for x in s.senders)
    calls = tuple(b.session_call(c) for c in s.calls)
    handle = b.handle(s.tool_call) if s.tool_call is not None else None
    helpers = tuple(b.helper(h) for h in s.helpers)
    texts = [m.signature + m.call for m in (*methods, *helpers)] + [c.signature + c.call for c in calls]
    if handle is not None:
        texts += [m.signature + m.call for m in handle.methods]
    joined = "\n".join(texts)
    return SendersView(
        header=header(package, inputs.generator_version, SUMMARY),
        exports=exports,
        present=True,
        base=f'_SessionSenderBase["_AgentSideConnection[_Any]", {session_type}, {update_type}]',
        doc=SENDER_DOC,
        notification=inputs.names.ref(s.notification_class),
        update_type=update_type,
        session_field=s.session_field,
        update_field=s.update_field,
        methods=methods,
        calls=calls,
        handle=handle,
        helpers=helpers,
        text_class=inputs.names.ref(s.text_class) if s.text_class else "",
        text_field=s.text_field,
        text_block=b.text_block,
        content_class=inputs.names.ref(s.tool_content_class) if s.tool_content_class else "",
        content_field=s.tool_content_field,
        content_block=b.annotate(ir.RefT(s.block_union)) if s.tool_content_class else "",
        content_kinds="(" + "".join(f"{inputs.names.ref(k)}, " for k in s.tool_content_kinds) + ")",
        uses_sequence="_Sequence[" in joined,
        uses_any=True,  # the connection's type argument
    )


def _notification_field(inputs: ViewInputs, s: ir.Senders, name: str) -> ir.TypeExpr:
    """The type of the ``session/update`` params' attribute ``name``."""
    notification = next(d for d in inputs.package.definitions if d.class_name == s.notification_class)
    assert isinstance(notification, ir.ObjectDef)
    return next(f.value_type for f in notification.fields if f.name == name)


def session_type(inputs: ViewInputs) -> str:
    """The annotation of a session id in the module being built (``""``:
    the package has no senders)."""
    s = inputs.package.senders
    if s is None:
        return ""
    annotate = text.Annotations(inputs.defs, inputs.names.ref, inputs.names.builtin, lambda n: "_" + n)
    return annotate(_notification_field(inputs, s, s.session_field))
