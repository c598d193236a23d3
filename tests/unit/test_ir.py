"""The IR's derived text: what templates print without composing it."""

from __future__ import annotations

from acpgen.compile import ir


def _enum(open_: bool, kind: str = "str", values=("a", "b")) -> ir.EnumDef:
    members = tuple(ir.EnumMember(value=v) for v in values)
    return ir.EnumDef("E", members, open_, kind, class_name="Colour")


def test_enum_annotation_admits_plain_values_only_when_open():
    assert _enum(False).annotation == "Colour"
    assert _enum(True).annotation == "Colour | str"
    assert _enum(True, "int", (1, 2)).annotation == "Colour | int"


def test_enum_expected_message_lists_members_as_json():
    assert _enum(False).expected_message == 'expected one of "a", "b"'
    assert _enum(False, "int", (1, 20)).expected_message == "expected one of 1, 20"


def test_object_and_union_annotation_is_the_class():
    obj = ir.ObjectDef("O", (), class_name="Thing")
    assert obj.annotation == "Thing"


def _variant(role: str, tag: str | None = None, title: str = "", keys=()) -> ir.Variant:
    return ir.Variant(role, tag, (), title=title, required_keys=tuple(keys), class_name=title or str(tag))


def test_union_fallback_is_the_untagged_variant_not_the_null_tag_one():
    tagged = (_variant(ir.TAGGED, "x"), _variant(ir.TAGGED, "y"))
    with_untagged = ir.UnionDef("U", "type", (*tagged, _variant(ir.UNTAGGED, title="Plain")))
    assert with_untagged.fallback is with_untagged.variants[2]
    assert with_untagged.null_tag_variant is None
    with_null = ir.UnionDef("U", "type", (*tagged, _variant(ir.NULL_TAG, title="Nothing")))
    assert with_null.fallback is None
    assert with_null.null_tag_variant is with_null.variants[2]
    assert with_null.unknown_tag_message == 'expected one of "x", "y"'


def test_untagged_union_messages_name_variants_and_their_keys():
    union = ir.UnionDef(
        "U",
        None,
        (_variant(ir.UNTAGGED, title="A", keys=("a", "b")), _variant(ir.UNTAGGED, title="C", keys=("c",))),
    )
    assert union.no_match_message == "expected an object with the members of A or C (a, b; c)"
    assert union.ambiguous_message == "expected an object with the members of exactly one of A or C (a, b; c)"


def test_catch_all_known_keys_are_the_tag_and_its_declared_fields():
    field = ir.Field(wire_name="_meta", type=ir.AnyT(), required=False, name="meta")
    catch_all = ir.Variant(ir.CATCH_ALL, None, (field,), class_name="Other")
    union = ir.UnionDef("U", "type", (_variant(ir.TAGGED, "x"), catch_all))
    assert union.catch_all_known_keys == ("type", "_meta")
    assert ir.UnionDef("U", "type", (_variant(ir.TAGGED, "x"),)).catch_all_known_keys == ()


def test_keyed_field_messages_name_members_and_their_keys():
    keyed = ir.KeyedT(refs=("Url", "Form"), keys=(("url",), ("a", "b")), exclusive=True)
    assert keyed.no_match_message == "expected the members of Url or Form (url; a, b)"
    assert keyed.ambiguous_message == "expected the members of exactly one of Url or Form (url; a, b)"


def _patch(rule: str, t: ir.TypeExpr, initial=None) -> ir.PatchField:
    return ir.PatchField(wire_name="x", name="x", rule=rule, type=t, initial=initial)


def test_patch_rules_say_what_null_and_a_value_store():
    strings = ir.ListT(ir.StrT())
    replace = _patch("replace", strings)
    assert replace.null_value is None and replace.value_copy == "list" and not replace.merges
    clears = _patch("null-clears", ir.NullableT(strings))
    assert clears.null_value == ir.JsonValue(None) and clears.value_copy == "list"
    assert _patch("null-clears", ir.NullableT(ir.MapT(ir.AnyT()))).value_copy == ""
    initial = ir.EnumValue(class_name="Status", member="PENDING")
    resets = _patch("null-resets", ir.RefT("Status"), initial)
    assert resets.null_value is initial and resets.value_copy == ""
    assert _patch("collection", ir.MapT(ir.AnyT())).null_value == ir.JsonValue({})
    assert _patch("collection", strings).null_value == ir.JsonValue([])
    assert _patch("collection", strings).value_copy == "list"
    meta = _patch("meta-patch", ir.MapT(ir.AnyT()))
    assert meta.merges and meta.null_value == ir.JsonValue({})


def test_patch_fields_copy_stored_containers_and_keys_are_not_updated():
    assert _patch("replace", ir.NullableT(ir.MapT(ir.AnyT()))).state_copy == "dict"
    assert _patch("replace", ir.ListT(ir.StrT())).state_copy == "list"
    assert _patch("replace", ir.StrT()).state_copy == ""
    key = _patch("key", ir.StrT())
    other = _patch("replace", ir.StrT())
    upsert = ir.Upsert("U", "UState", "apply_u", (key, other), ("U",))
    assert key.is_key and upsert.keys == (key,) and upsert.updated == (other,)


def test_docstrings_are_assembled_in_the_ir():
    upsert = ir.Upsert("ToolCallUpdate", "ToolCallState", "apply_tool_call_update", (), (), sentence="Fields merge.")
    assert upsert.doc.startswith("Fold a ToolCallUpdate into the stored state")
    assert upsert.doc.endswith("\n\nFields merge.")
    chunk = ir.Chunk("Chunk", "append_chunk", ("Chunk",), upsert, "content", "content", "item")
    assert "Chunk" in chunk.doc and "content of a ToolCallState" in chunk.doc
    call = ir.Call("session/prompt", "request", "agent", "PromptRequest", "PromptRequest", "prompt")
    assert call.send_doc == "Send ``session/prompt`` (a request)."
    assert call.handler_doc == "``session/prompt`` request"
    assert ir.Call(**{**call.__dict__, "summary": "Sends a prompt."}).handler_doc.endswith("request: Sends a prompt.")
    field = ir.SessionField("plan", "plan", "value")
    action = ir.SessionAction(None, "Other", "fold_other", "set", field, reason="Kept.")
    assert action.doc == "Any other kind: set plan.\n\nKept."
    assert ir.SessionAction("plan", "Plan", "fold_plan", "set", field).doc == "plan: set plan."


def test_package_says_which_patch_helpers_it_needs_and_its_docstring():
    package = ir.Package("acp", "schema/v1/schema.json", "0" * 64, "ACP", ())
    assert not package.applies and not package.appends_base64
    assert "generated from schema/v1/schema.json (ACP)." in package.doc
    assert "generated from schema/v1/schema.json." in ir.Package("acp", "schema/v1/schema.json", "", "", ()).doc
    upsert = ir.Upsert("U", "UState", "apply_u", (), ())
    item = ir.Chunk("C", "append_c", ("C",), upsert, "items", "item", "item")
    data = ir.Chunk("D", "append_d", ("D",), upsert, "data", "data", "base64")
    assert ir.Package("acp", "s", "", "", (), chunks=(item,)).applies
    assert not ir.Package("acp", "s", "", "", (), chunks=(item,)).appends_base64
    assert ir.Package("acp", "s", "", "", (), chunks=(item, data)).appends_base64


def test_classes_an_apply_function_and_supports_take_are_listed_once():
    upsert = ir.Upsert("U", "UState", "apply_u", (), ("U", "Variant"), creates=("Full", "U"))
    assert upsert.takes == ("U", "Variant", "Full")
    caps = (
        ir.Capability("AgentCaps", "a", "a", "flag"),
        ir.Capability("ClientCaps", "b", "b", "flag"),
        ir.Capability("AgentCaps", "c", "c", "flag"),
    )
    assert ir.Package("acp", "s", "", "", (), capabilities=caps).capability_classes == ("AgentCaps", "ClientCaps")


def test_enum_doc_says_what_an_open_enum_keeps():
    closed = ir.EnumDef("E", (), False, "str", description="Colours.", class_name="Colour")
    assert closed.doc == "Colours."
    opened = ir.EnumDef("E", (), True, "int", description="Codes.", open_description="Other codes.", class_name="Code")
    assert opened.doc == "Codes.\n\nOpen: any other integer is accepted and kept as a plain int.\n\nOther codes."


def test_variant_doc_says_what_selects_the_variant():
    referenced = ir.ObjectDef("Text", (), description="Plain text.", class_name="Text")
    tagged = ir.Variant(ir.TAGGED, "text", (), ref="Text", class_name="TextBlock")
    catch_all = ir.Variant(ir.CATCH_ALL, None, (), description="Anything else.", class_name="OtherBlock")
    plain = ir.Variant(ir.UNTAGGED, None, (), description="Bare.", class_name="Bare")
    union = ir.UnionDef("Block", "type", (tagged, catch_all, plain), class_name="Block")
    package = ir.Package("p", "s.json", "", "", (referenced, union))
    assert package.variant_doc(union, tagged) == "Plain text.\n\nA variant of Block (`type` is 'text')."
    assert package.variant_doc(union, catch_all).startswith(
        "Anything else.\n\nA variant of Block for any other `type`:"
    )
    assert package.variant_doc(union, plain) == "Bare.\n\nA variant of Block."


def test_state_and_patch_field_docs_carry_the_rule_and_its_sentence():
    field = ir.PatchField("title", "title", "null-clears", ir.StrT(), sentence="Null clears it.")
    assert field.doc == "Rule: null-clears. Null clears it."
    assert ir.PatchField("id", "id", "key", ir.StrT()).doc == "Rule: key."
    upsert = ir.Upsert(
        "ToolCallUpdate",
        "ToolCallState",
        "apply_tool_call_update",
        (field,),
        ("ToolCallUpdate",),
        sentence="Only changed fields.",
    )
    assert upsert.state_doc.startswith("The stored state of ToolCallUpdate upserts:")
    assert upsert.state_doc.endswith("\n\nOnly changed fields.")


def test_init_params_say_which_are_required_unset_or_built_per_instance():
    required = ir.Field("toolCallId", ir.StrT(), True, name="tool_call_id")
    optional = ir.Field("title", ir.StrT(), False, name="title")
    listed = ir.Field("content", ir.ListT(), False, default_value=ir.JsonValue([]), name="content")
    params = ir.ObjectDef("O", (required, optional, listed)).init_params
    assert [(p.name, p.default, p.unset, p.factory) for p in params] == [
        ("tool_call_id", None, False, False),
        ("title", None, True, False),
        ("content", ir.JsonValue([]), False, True),
    ]
    catch_all = ir.Variant(ir.CATCH_ALL, None, (optional,), class_name="Other")
    union = ir.UnionDef("U", "type", (catch_all,), tag_name="type")
    assert [p.name for p in union.init_params(catch_all)] == ["type", "title", "extra"]
    assert union.init_params(catch_all)[-1].factory
