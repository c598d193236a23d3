"""The render side's text helpers: what the templates print, composed from
the IR's facts."""

from __future__ import annotations

from acpgen.compile import ir
from acpgen.views import text


def _enum(open_: bool, kind: str = "str", values=("a", "b")) -> ir.EnumDef:
    members = tuple(ir.EnumMember(value=v) for v in values)
    return ir.EnumDef("E", members, open_, kind, class_name="Colour")


def _variant(role: str, tag: str | None = None, title: str = "", keys=()) -> ir.Variant:
    return ir.Variant(role, tag, (), title=title, required_keys=tuple(keys), class_name=title or str(tag))


def _patch(rule: str, t: ir.TypeExpr, initial=None) -> ir.PatchField:
    return ir.PatchField(wire_name="x", name="x", rule=rule, type=t, initial=initial)


def test_enum_annotation_admits_plain_values_only_when_open():
    assert text.definition_annotation(_enum(False)) == "Colour"
    assert text.definition_annotation(_enum(True)) == "Colour | str"
    assert text.definition_annotation(_enum(True, "int", (1, 2))) == "Colour | int"


def test_object_and_union_annotation_is_the_class():
    obj = ir.ObjectDef("O", (), class_name="Thing")
    assert text.definition_annotation(obj) == "Thing"
    annotation = text.Annotations({"O": obj, "E": _enum(True)})
    assert annotation(ir.NullableT(ir.ListT(ir.RefT("O")))) == "list[Thing] | None"
    assert annotation(ir.MapT(ir.RefT("E"))) == "dict[str, Colour | str]"
    assert annotation(ir.RawT("/$defs/X")) == "Any"


def test_enum_expected_message_lists_members_as_json():
    assert text.expected_message(_enum(False)) == 'expected one of "a", "b"'
    assert text.expected_message(_enum(False, "int", (1, 20))) == "expected one of 1, 20"


def test_unknown_tag_message_lists_the_tags_as_json():
    union = ir.UnionDef("U", "type", (_variant(ir.TAGGED, "x"), _variant(ir.TAGGED, "y")))
    assert text.unknown_tag_message(union) == 'expected one of "x", "y"'


def test_untagged_union_messages_name_variants_and_their_keys():
    union = ir.UnionDef(
        "U",
        None,
        (_variant(ir.UNTAGGED, title="A", keys=("a", "b")), _variant(ir.UNTAGGED, title="C", keys=("c",))),
    )
    assert text.no_match_message(union) == "expected an object with the members of A or C (a, b; c)"
    assert text.ambiguous_message(union) == "expected an object with the members of exactly one of A or C (a, b; c)"


def test_keyed_field_messages_name_members_and_their_keys():
    keyed = ir.KeyedT(refs=("Url", "Form"), keys=(("url",), ("a", "b")), exclusive=True)
    assert text.no_match_message(keyed) == "expected the members of Url or Form (url; a, b)"
    assert text.ambiguous_message(keyed) == "expected the members of exactly one of Url or Form (url; a, b)"


def test_patch_fields_say_which_container_a_value_is_copied_with():
    strings = ir.ListT(ir.StrT())
    assert text.value_copy(_patch("replace", strings)) == "list"
    assert text.value_copy(_patch("null-clears", ir.NullableT(strings))) == "list"
    assert text.value_copy(_patch("null-clears", ir.NullableT(ir.MapT(ir.AnyT())))) == ""
    assert text.value_copy(_patch("null-resets", ir.RefT("Status"))) == ""
    assert text.value_copy(_patch("collection", strings)) == "list"
    assert text.value_copy(_patch("collection", ir.MapT(ir.AnyT()))) == "dict"
    assert text.value_copy(_patch("meta-patch", ir.MapT(ir.AnyT()))) == ""


def test_patch_fields_copy_stored_containers():
    assert text.state_copy(_patch("replace", ir.NullableT(ir.MapT(ir.AnyT())))) == "dict"
    assert text.state_copy(_patch("replace", ir.ListT(ir.StrT()))) == "list"
    assert text.state_copy(_patch("replace", ir.StrT())) == ""


def test_an_empty_container_is_printed_as_its_literal():
    assert text.empty("list") == "[]" and text.empty("map") == "{}"


def test_docstrings_of_functions_and_methods():
    upsert = ir.Upsert("ToolCallUpdate", "ToolCallState", "apply_tool_call_update", (), (), sentence="Fields merge.")
    assert text.upsert_doc(upsert).startswith("Fold a ToolCallUpdate into the stored state")
    assert text.upsert_doc(upsert).endswith("\n\nFields merge.")
    chunk = ir.Chunk("Chunk", "append_chunk", ("Chunk",), upsert, "content", "content", "item")
    assert "Chunk" in text.chunk_doc(chunk) and "content of a ToolCallState" in text.chunk_doc(chunk)
    call = ir.Call("session/prompt", "request", "agent", "PromptRequest", "PromptRequest", "prompt")
    assert text.send_doc(call) == "Send ``session/prompt`` (a request)."
    assert text.handler_doc(call) == "``session/prompt`` request"
    summarised = ir.Call(**{**call.__dict__, "summary": "Sends a prompt."})
    assert text.handler_doc(summarised).endswith("request: Sends a prompt.")
    field = ir.SessionField("plan", "plan", "value")
    action = ir.SessionAction(None, "Other", "fold_other", "set", field, reason="Kept.")
    assert text.action_doc(action) == "Any other kind: set plan.\n\nKept."
    assert text.action_doc(ir.SessionAction("plan", "Plan", "fold_plan", "set", field)) == "plan: set plan."


def test_package_docstring_names_the_schema():
    package = ir.Package("acp", "schema/v1/schema.json", "0" * 64, "ACP", ())
    assert "generated from schema/v1/schema.json (ACP)." in text.package_doc(package)
    assert "generated from schema/v1/schema.json." in text.package_doc(
        ir.Package("acp", "schema/v1/schema.json", "", "", ())
    )


def test_enum_doc_says_what_an_open_enum_keeps():
    closed = ir.EnumDef("E", (), False, "str", description="Colours.", class_name="Colour")
    assert text.enum_doc(closed) == "Colours."
    opened = ir.EnumDef("E", (), True, "int", description="Codes.", open_description="Other codes.", class_name="Code")
    assert (
        text.enum_doc(opened)
        == "Codes.\n\nOpen: any other integer is accepted and kept as a plain int.\n\nOther codes."
    )


def test_variant_doc_says_what_selects_the_variant():
    referenced = ir.ObjectDef("Text", (), description="Plain text.", class_name="Text")
    tagged = ir.Variant(ir.TAGGED, "text", (), ref="Text", class_name="TextBlock")
    catch_all = ir.Variant(ir.CATCH_ALL, None, (), description="Anything else.", class_name="OtherBlock")
    plain = ir.Variant(ir.UNTAGGED, None, (), description="Bare.", class_name="Bare")
    union = ir.UnionDef("Block", "type", (tagged, catch_all, plain), class_name="Block")
    defs = {"Text": referenced, "Block": union}
    assert text.variant_doc(defs, union, tagged) == "Plain text.\n\nA variant of Block (`type` is 'text')."
    assert text.variant_doc(defs, union, catch_all).startswith(
        "Anything else.\n\nA variant of Block for any other `type`:"
    )
    assert text.variant_doc(defs, union, plain) == "Bare.\n\nA variant of Block."


def test_state_and_patch_field_docs_carry_the_rule_and_its_sentence():
    field = ir.PatchField("title", "title", "null-clears", ir.StrT(), sentence="Null clears it.")
    assert text.rule_doc(field) == "Rule: null-clears. Null clears it."
    assert text.rule_doc(ir.PatchField("id", "id", "key", ir.StrT())) == "Rule: key."
    upsert = ir.Upsert(
        "ToolCallUpdate",
        "ToolCallState",
        "apply_tool_call_update",
        (field,),
        ("ToolCallUpdate",),
        sentence="Only changed fields.",
    )
    assert text.state_doc(upsert).startswith("The stored state of ToolCallUpdate upserts:")
    assert text.state_doc(upsert).endswith("\n\nOnly changed fields.")


def test_docstring_escapes_what_would_end_or_disguise_it():
    assert text.docstring("plain") == '"""plain"""'
    assert text.docstring('ends with "') == '"""ends with \\""""'
    assert text.docstring("a\\b") == '"""a\\\\b"""'
    assert text.docstring("two\nlines") == '"""two\nlines\n"""'
    assert text.docstring("bidi \u202e") == '"""bidi \\u202e"""'


def test_a_long_union_parameter_is_parenthesised_as_black_prints_it():
    assert text.parameter("A | B", "update") == "update: A | B"
    long = " | ".join(f"Class{i}" for i in range(12))
    assert text.parameter(long, "update") == f"update: ({long})"


def test_a_flattened_field_says_what_it_holds_and_others_keep_their_description():
    keyed = ir.Field("", ir.KeyedT(refs=("SessionScope", "RequestScope")), True, flatten=True)
    assert text.field_doc(keyed) == "One of SessionScope or RequestScope, whose members share the JSON object."
    assert text.field_doc(ir.Field("a", ir.StrT(), True, description="The a.")) == "The a."


def test_an_indented_docstring_is_made_once_per_text_and_width():
    from acpgen.views.source import doc

    doc.cache_clear()
    assert doc("One.\n\nTwo.", 4) == '"""One.\n\n    Two.\n    """'
    assert doc("One.\n\nTwo.", 8) == '"""One.\n\n        Two.\n        """'
    assert doc("One.\n\nTwo.", 4) == '"""One.\n\n    Two.\n    """'
    assert doc("") == ""
    assert (doc.cache_info().hits, doc.cache_info().misses) == (1, 3)
