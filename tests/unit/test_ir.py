"""The IR's derived facts: what the templates read without working it out."""

from __future__ import annotations

from acpgen.compile import ir


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


def test_catch_all_known_keys_are_the_tag_and_its_declared_fields():
    field = ir.Field(wire_name="_meta", type=ir.AnyT(), required=False, name="meta")
    catch_all = ir.Variant(ir.CATCH_ALL, None, (field,), class_name="Other")
    union = ir.UnionDef("U", "type", (_variant(ir.TAGGED, "x"), catch_all))
    assert union.catch_all_known_keys == ("type", "_meta")
    assert ir.UnionDef("U", "type", (_variant(ir.TAGGED, "x"),)).catch_all_known_keys == ()


def _patch(rule: str, t: ir.TypeExpr, initial=None) -> ir.PatchField:
    return ir.PatchField(wire_name="x", name="x", rule=rule, type=t, initial=initial)


def test_patch_rules_say_what_null_and_a_value_store():
    strings = ir.ListT(ir.StrT())
    replace = _patch("replace", strings)
    assert replace.null_value is None and not replace.merges
    clears = _patch("null-clears", ir.NullableT(strings))
    assert clears.null_value == ir.JsonValue(None)
    initial = ir.EnumValue(class_name="Status", member="PENDING")
    resets = _patch("null-resets", ir.RefT("Status"), initial)
    assert resets.null_value is initial
    assert _patch("collection", ir.MapT(ir.AnyT())).null_value == ir.JsonValue({})
    assert _patch("collection", strings).null_value == ir.JsonValue([])
    meta = _patch("meta-patch", ir.MapT(ir.AnyT()))
    assert meta.merges and meta.null_value == ir.JsonValue({})


def test_keys_are_not_updated():
    key = _patch("key", ir.StrT())
    other = _patch("replace", ir.StrT())
    upsert = ir.Upsert("U", "UState", "apply_u", (key, other), ("U",))
    assert key.is_key and upsert.keys == (key,) and upsert.updated == (other,)


def test_package_says_which_patch_helpers_it_needs():
    package = ir.Package("acp", "schema/v1/schema.json", "0" * 64, "ACP", ())
    assert not package.applies and not package.appends_base64
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
