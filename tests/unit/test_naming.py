"""Stage 3: Python names from schema names."""

from __future__ import annotations

import keyword
from dataclasses import replace

from acpgen.compile import ir
from acpgen.compile.passes.identifiers import pascal, snake
from acpgen.compile.passes.naming import class_name, field_name, member_name, name_package, unique


def test_wire_names_become_snake_case():
    assert field_name("toolCallId") == "tool_call_id"
    assert field_name("_meta") == "meta"
    assert field_name("mimeType") == "mime_type"
    assert field_name("HTTPHeaders") == "http_headers"
    assert field_name("rawInput") == "raw_input"
    assert field_name("1st") == "f_1st"
    assert field_name("a-b c") == "a_b_c"
    assert field_name("") == "unnamed"
    assert field_name("名前") == "f_540d_524d"  # no ASCII word: the code points


def test_class_names_keep_identifiers_and_sanitise_the_rest():
    assert class_name("ToolCallUpdate") == "ToolCallUpdate"
    assert class_name("tool-call update") == "ToolCallUpdate"
    assert class_name("9lives") == "T9lives"
    for hostile in ("Ünïcode", "os.system('x')", "a\nb", "\u202eevil", '"""'):
        name = class_name(hostile)
        assert name.isascii() and name.isidentifier(), (hostile, name)


def test_pascal_and_snake():
    assert pascal("user_message_chunk") == "UserMessageChunk"
    assert pascal("resource_link") == "ResourceLink"
    assert snake("sessionUpdate") == "session_update"


def test_unique_appends_underscores_never_numbers():
    used: set[str] = set()
    assert unique("type", used) == "type"
    assert unique("type", used) == "type_"
    assert unique("type", used) == "type__"
    for word in keyword.kwlist:
        assert unique(word, set()) == word + "_"


def test_enum_members_from_titles_or_values():
    assert member_name(ir.EnumMember(value="switch_mode")) == "SWITCH_MODE"
    assert member_name(ir.EnumMember(value=-32700, title="Parse error")) == "PARSE_ERROR"
    assert member_name(ir.EnumMember(value=-32000)) == "MINUS_32000"
    assert member_name(ir.EnumMember(value="1x")) == "V_1X"


def _package(*definitions):
    return ir.Package(name="", schema_path="s", schema_sha256="0", schema_title="", definitions=definitions)


def test_definitions_keep_their_names_even_builtins_and_runtime_names_only_keywords_are_escaped():
    package = name_package(
        _package(
            ir.AliasDef(name="str", target=ir.StrT()),
            ir.AliasDef(name="UNSET", target=ir.StrT()),
            ir.AliasDef(name="RequestId", target=ir.StrT()),
            ir.AliasDef(name="Connection", target=ir.StrT()),
            ir.AliasDef(name="class", target=ir.StrT()),
            ir.AliasDef(name="None", target=ir.StrT()),
        ),
        "p",
    )
    assert [d.class_name for d in package.definitions] == ["str", "UNSET", "RequestId", "Connection", "class_", "None_"]


def test_a_variant_class_may_take_a_builtin_s_name():
    variant = ir.Variant(role=ir.TAGGED, tag="", title="", fields=())
    union = ir.UnionDef(name="list", tag="type", variants=(replace(variant, tag="x"),))
    named = name_package(_package(union), "p")
    assert named.definitions[0].class_name == "list"
    assert [v.class_name for v in named.definitions[0].variants] == ["Xlist"]


def test_colliding_fields_get_distinct_names_deterministically():
    fields = (
        ir.Field("fooBar", ir.StrT(), True),
        ir.Field("foo_bar", ir.StrT(), True),
        ir.Field("from", ir.StrT(), True),
    )
    package = name_package(_package(ir.ObjectDef(name="A", fields=fields)), "p")
    assert [f.name for f in package.definitions[0].fields] == ["foo_bar", "foo_bar_", "from_"]
    again = name_package(_package(ir.ObjectDef(name="A", fields=fields)), "p")
    assert again == package


def test_variant_classes_are_named_from_tags_not_numbers():
    variant = lambda tag: ir.Variant(role=ir.TAGGED, tag=tag, fields=())  # noqa: E731
    union = ir.UnionDef(name="ContentBlock", tag="type", variants=(variant("text"), variant("resource_link")))
    named = name_package(_package(ir.ObjectDef(name="TextContentBlock", fields=()), union), "p")
    names = [v.class_name for v in named.definitions[1].variants]
    # "TextContentBlock" is taken by a definition: the variant moves aside.
    assert names == ["ContentBlockText", "ResourceLinkContentBlock"]
    assert named.definitions[0].class_name == "TextContentBlock"


def test_a_runtime_class_reserves_its_members_and_what_its_methods_set_on_self():
    import ast

    from acpgen.compile.passes.attributes import _class_attributes, model_attributes, runtime_attributes

    source = """
class Base:
    plain = 1
    typed: int
    a, b = 1, 2
    def method(self):
        self.direct = 1
        self.typed_on_self: int
        other.not_self = 1
        local = 1
        for x in y:
            self.in_for = 1
        else:
            self.in_for_else = 1
        while True:
            self.in_while = 1
        try:
            self.in_try = 1
        except E:
            self.in_except = 1
        else:
            self.in_try_else = 1
        finally:
            self.in_finally = 1
        with c:
            if x:
                self.in_if = 1
            else:
                self.in_if_else = self.chained = 1
        match x:
            case 1:
                self.in_case = 1
        self.tuple_a, self.tuple_b = 1, 2
        f(lambda: self.in_lambda)
        def inner():
            self.in_inner = 1
    async def coroutine(self):
        self.in_coroutine += 1
    class Nested:
        nested_plain = 1
        def m(self):
            self.in_nested = 1
"""
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    assert _class_attributes(node.body) == {
        "plain", "typed", "method", "coroutine", "Nested",
        "direct", "typed_on_self", "in_for", "in_for_else", "in_while", "in_try", "in_except", "in_try_else",
        "in_finally", "in_if", "in_if_else", "chained", "in_case", "in_inner", "in_nested",
    }  # fmt: skip
    # What the real runtime classes give the generated ones.
    assert {"close", "request", "notify", "transport"} <= runtime_attributes()
    assert model_attributes() >= {"from_wire", "to_wire"}


def test_the_forms_of_a_name_are_worked_out_once_and_kept_within_bounds():
    from acpgen.compile.passes import identifiers

    for form, text, expected in (
        (identifiers.snake, "keptFormName", "kept_form_name"),
        (identifiers.pascal, "kept form name", "KeptFormName"),
        (identifiers.upper_snake, "keptFormName", "KEPT_FORM_NAME"),
    ):
        form.cache_clear()
        assert form(text) == expected
        assert form(text) == expected
        assert (form.cache_info().hits, form.cache_info().misses) == (1, 1)
        for n in range(identifiers._KEEP + 10):
            form(f"name{n}")
        assert form.cache_info().currsize == identifiers._KEEP
        assert form(text) == expected
