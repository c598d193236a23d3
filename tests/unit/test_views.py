"""The typed views of models.py, codec.py, patch.py, _schema.py and the
package's __init__.py (``acpgen.views``): what they decide, on small
schemas and on the kitchen sink, and that their templates only print them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from acpgen import __version__
from acpgen.compile import ir
from acpgen.compile.load import load_schema
from acpgen.emit.render import MODULES, builtin_templates
from acpgen.pipeline import build_ir
from acpgen.views import VIEWS, ViewInputs
from acpgen.views.codec import CodecView, Expressions, build_codec_view
from acpgen.views.models import ModelsView, build_models_view
from acpgen.views.names import CODEC_HELPERS, ModuleNames, _uses_word, exports, schema_names
from acpgen.views.package import build_package_view, build_schema_view
from acpgen.views.patch import build_patch_view
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, meta, nodes

from ..conftest import examples

ROOT = Path(__file__).resolve().parents[2]

OWN_TEMPLATES = tuple(sorted(p.name for p in builtin_templates().glob("*.jinja")))
"""Every built-in template: each is rendered from its module's view."""

MAX_FIXED_LINES = 40
"""A template holds fewer lines of plain Python than this."""

_IMPORT = re.compile(r"\s*(from \S+ import |import )")


def fixed_python_lines(source: str) -> list[str]:
    """The lines of a template with no Jinja in them (no ``{{``, ``{%`` or
    ``{#``, and not inside a Jinja comment), leaving out blank lines, import
    statements and the imports marker: the Python a template prints whatever
    its view holds. The module docstring (a triple-quoted string before any
    other fixed line) is left out too."""
    lines: list[str] = []
    in_comment = False
    in_docstring = False
    for line in source.splitlines():
        if in_docstring:
            in_docstring = '"""' not in line
            continue
        if not lines and line.startswith('"""') and "{{" not in line:
            in_docstring = line.count('"""') == 1
            continue
        if in_comment:
            in_comment = "#}" not in line
            continue
        if "{#" in line and "#}" not in line.split("{#", 1)[1]:
            in_comment = True
            continue
        if not line.strip() or any(mark in line for mark in ("{{", "{%", "{#")):
            continue
        if _IMPORT.match(line) or line.strip() == "#acpgen:imports#":
            continue
        lines.append(line)
    return lines


def _inputs(package: ir.Package, stem: str) -> ViewInputs:
    """What render gives the view builder of module ``stem``."""
    names = exports(package)
    module_names = ModuleNames(
        own=frozenset(names.get(stem, ())),
        schema=schema_names(package),
        binds_schema=stem in ("models", "__init__"),
        sorted_imports=stem != "codec",
        optional_imports=CODEC_HELPERS if stem == "codec" else (),
    )
    return ViewInputs(
        package=package,
        defs={d.name: d for d in package.definitions},
        names=module_names,
        exports=names,
        generator_version=__version__,
    )


def _package(tmp_path: Path, defs: dict[str, object], rules: str = "none") -> ir.Package:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}))
    return build_ir(load_schema(path), "small", rules)


def _tagged(tag: str, **properties: object) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {"kind": {"type": "string", "const": tag}, **properties},
        "required": ["kind", *properties],
    }


SMALL = {
    # A tagged union with an untagged fallback variant, and one without.
    "Pick": {
        "anyOf": [
            _tagged("a", x={"type": "integer"}),
            {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]},
        ]
    },
    "Tagged": {"anyOf": [_tagged("a", x={"type": "integer"}), _tagged("b")]},
    "Name": {"type": "string"},
    "Slug": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
    "Names": {"type": "array", "items": {"type": "string"}},
    "Status": {"type": "string", "enum": ["on", "off"]},
    "Holder": {
        "type": "object",
        "properties": {
            "pick": {"$ref": "#/$defs/Pick"},
            "tagged": {"$ref": "#/$defs/Tagged"},
            "picks": {"type": "array", "items": {"$ref": "#/$defs/Pick"}},
            "taggeds": {"type": "array", "items": {"$ref": "#/$defs/Tagged"}},
            "count": {"type": "integer", "format": "uint32", "minimum": 0},
            "small": {"type": "integer", "minimum": 1, "maximum": 10},
            "name": {"$ref": "#/$defs/Name"},
            "slug": {"$ref": "#/$defs/Slug"},
            "names": {"$ref": "#/$defs/Names"},
            "status": {"$ref": "#/$defs/Status"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["pick", "tagged", "picks", "taggeds", "count", "small", "name", "names", "status", "either"],
    },
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> CodecView:
    return build_codec_view(_inputs(_package(tmp_path_factory.mktemp("small"), SMALL), "codec"))


def _holder_fields(view: CodecView) -> dict[str, object]:
    holder = next(d.object for d in view.definitions if d.object is not None and d.object.class_name == "Holder")
    return {f.name: f for f in holder.fields}


def test_a_union_with_a_fallback_is_decoded_by_its_own_decoder_not_by_tag(small: CodecView) -> None:
    unions = {u.class_name: u for u in small.unions}
    pick, tagged = unions["Pick"].tagged, unions["Tagged"].tagged
    assert pick is not None and tagged is not None
    # The union with the untagged variant: it takes what no tag selects and
    # what the tagged variant refuses; no "unknown tag" error.
    assert pick.options == ", fallback=_decode_UntaggedPick"
    assert [r.source for r in pick.readers] == ["_read_APick"]
    assert tagged.options == ', unknown=\'expected one of "a", "b"\''
    fields = _holder_fields(small)
    # A field of the union with a fallback calls the union's decoder; a
    # field of the other looks the variant up by its tag first.
    assert (fields["pick"].tag, fields["pick"].decode) == ("", "_decode_Pick(v, strict)")
    assert fields["tagged"].tag == "'kind'"
    assert fields["tagged"].decode == (
        "(_VARIANTS_Tagged.get(tag, _decode_Tagged) if type(tag) is str else _decode_Tagged)(v, strict)"
    )
    assert fields["picks"].decode == "_check_list(v, _decode_Pick, strict)"
    assert fields["taggeds"].decode == "_check_variants(v, 'kind', _VARIANTS_Tagged, _decode_Tagged, strict)"


def test_integer_bounds_lenient_mode_holds_to_the_format_strict_mode_to_the_schema(small: CodecView) -> None:
    fields = _holder_fields(small)
    assert fields["count"].decode == (
        "(v if type(v) is int and 0 <= v <= 4294967295"
        " else (_check_int(v, 0, None) if strict else _check_int(v, 0, 4294967295)))"
    )
    # Bounds from the schema alone: one check for both modes.
    assert fields["small"].decode == "(v if type(v) is int and 1 <= v <= 10 else _check_int(v, 1, 10))"


def test_an_alias_of_a_scalar_is_decoded_in_place_and_others_by_their_decoder(small: CodecView) -> None:
    fields = _holder_fields(small)
    # A named string type (a NewType) is checked in place too, without a
    # call for a valid string: compared with ``_any_str`` (``str`` typed
    # Any) the string keeps the NewType the local is declared with, and
    # what a check returns (an error in lenient mode, strict mode's
    # pattern) is cast to it.
    assert fields["name"].decode == "(v if type(v) is _any_str else _cast('Name', _check_str(v)))"
    assert fields["name"].annotation == "Name"
    assert fields["slug"].decode == (
        "(_cast('Slug', _check_str(v, 1, '^[a-z]+$')) if strict"
        " else (v if type(v) is _any_str else _cast('Slug', _check_str(v))))"
    )
    decoders = {d.alias.class_name: d.alias.decode for d in small.definitions if d.alias is not None}
    assert decoders["Name"] == fields["name"].decode
    assert fields["names"].decode == "_decode_Names(v, strict)"
    assert fields["status"].decode == (
        "(_MEMBERS_Status[v] if type(v) is str and v in _MEMBERS_Status else _decode_Status(v, strict))"
    )


def test_a_scalar_union_dispatches_on_the_json_kind(small: CodecView) -> None:
    either = _holder_fields(small)["either"].decode
    assert "{ 'integer': lambda x, strict:" in either
    assert "'string': lambda x, strict: (x if type(x) is str else _check_str(x))" in either
    assert either.endswith(", 'integer or string'))")


def test_expressions_of_numbers_nullables_and_containers() -> None:
    x = Expressions({}, ModuleNames(own=frozenset(), schema=(), binds_schema=False))
    assert x.decode(ir.NumT(minimum=0.5), "v") == (
        "(v if type(v) is float and 0.5 <= v <= _FLOAT_MAX else _check_num(v, 0.5, None))"
    )
    assert (
        x.decode(ir.NullableT(ir.BoolT()), "v") == "(None if v is None else (v if type(v) is bool else _check_bool(v)))"
    )
    assert x.decode(ir.MapT(ir.AnyT()), "v") == "_check_map(v, None, strict)"
    assert x.decode(ir.ListT(ir.StrT(), min_items=1, skip_invalid=True), "v") == (
        "_check_list_skipping(v, lambda x, strict: (x if type(x) is str else _check_str(x)), strict, 1)"
    )
    assert x.encode(ir.ListT(ir.StrT()), "o.a") == "list(o.a)"
    assert x.encode(ir.MapT(ir.ListT(ir.AnyT())), "o.a") == "{k: list(_wire_json(x)) for k, x in o.a.items()}"
    assert x.encode(ir.NullableT(ir.RawT()), "o.a") == "_wire_json(o.a)"
    # A list whose items take an encoder is built by a loop in the encoder's body.
    assert x.looped(ir.ListT(ir.StrT()), "x_a") is None
    assert x.looped(ir.NullableT(ir.ListT(ir.ListT(ir.AnyT()))), "x_a") == ("list(_wire_json(x_a))", True)
    assert x.looped(ir.ListT(ir.MapT(ir.StrT())), "x_a") == ("dict(x_a)", False)


def test_a_module_imports_the_optional_helpers_it_uses_as_whole_words() -> None:
    names = ModuleNames(
        own=frozenset(),
        schema=(),
        binds_schema=False,
        optional_imports=(("_codec", "check_str"), ("_codec", "check_list"), ("_codec", "check_map")),
    )
    # _check_list only inside longer words, _check_map at the very end.
    body = "x = _check_str(v)\ny = _check_list_skipping(v) + my_check_list(v)\nz = _check_map"
    assert names.imports(body) == (
        "from ._codec import check_str as _check_str\nfrom ._codec import check_map as _check_map"
    )
    assert names.imports("_check_list") == "from ._codec import check_list as _check_list"
    assert names.imports("é_check_list _check_list2 _check_listé") == ""


_WORD_TEXT = st.lists(st.sampled_from(["_a", "_ab", "a", "b", "_", " ", "(", "é", "1", "\n"]), max_size=20).map("".join)


@given(text=_WORD_TEXT, word=st.sampled_from(["_a", "_ab", "_a_b"]))
@settings(max_examples=examples(300))
def test_a_whole_word_is_found_as_the_look_behind_pattern_found_it(text: str, word: str) -> None:
    # What ModuleNames.imports read before: every underscore-first word.
    assert _uses_word(text, word) == (word in set(re.findall(r"(?<!\w)_\w+", text)))


def test_a_union_field_looks_its_variants_encoder_up_in_place(small: CodecView) -> None:
    holder = next(d.object for d in small.definitions if d.object is not None and d.object.class_name == "Holder")
    entries = {e.key: e for e in holder.encoder.entries + holder.encoder.assigned}
    assert entries["'tagged'"].source == "(_CLASS_ENCODERS.get(type(o.tagged)) or _encode_Tagged)(o.tagged)"
    # A list of them is built by a loop; the members from it on are set in
    # order after the dict literal.
    taggeds = entries["'taggeds'"]
    assert (taggeds.items, taggeds.iterable, taggeds.result) == (
        "(_CLASS_ENCODERS.get(type(x_taggeds)) or _encode_Tagged)(x_taggeds)",
        "o.taggeds",
        "l_taggeds",
    )
    assert [e.key for e in holder.encoder.entries] == ["'pick'", "'tagged'"]
    assert holder.encoder.assigned[0].key == "'picks'"


def test_enum_decoders_are_chosen_by_openness_and_kind(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "Closed": {"type": "string", "enum": ["a", "b"]},
            "OpenInt": {
                "anyOf": [
                    {"title": "One", "type": "integer", "format": "int32", "const": 1},
                    {"title": "Other", "type": "integer", "format": "int32"},
                ]
            },
        },
    )
    view = build_codec_view(_inputs(package, "codec"))
    enums = {d.enum.class_name: d.enum for d in view.definitions if d.enum is not None}
    assert enums["Closed"].decoder == '_closed_enum(_MEMBERS_Closed, True, \'expected one of "a", "b"\')'
    assert enums["OpenInt"].decoder == "_open_int_enum(_MEMBERS_OpenInt, -2147483648, 2147483647)"
    assert enums["OpenInt"].annotation == "OpenInt | int"


def test_the_kitchen_sink_codec_view_covers_every_definition() -> None:
    package = build_ir(load_schema(ROOT / "tests/kitchen/schema.json"), "kitchen_sink")
    view = build_codec_view(_inputs(package, "codec"))
    assert len(view.definitions) == len(package.definitions)
    assert [e.key for e in view.decoders] == [repr(d.name) for d in package.definitions]
    assert view.overloads[-1].name == "str"
    # A union another type names has an encoder (its variant's); the others none.
    encoded = {u.class_name for u in view.union_encoders}
    unions = {d.class_name for d in package.definitions if isinstance(d, ir.UnionDef)}
    assert encoded == {d.class_name for d in package.definitions if d.name in package.referenced} & unions
    untagged = {u.class_name: u.untagged for u in view.unions if u.untagged is not None}
    assert [v.key for v in untagged["Outcome"].variants] == ["('result',)", "('error',)"]
    assert untagged["Outcome"].ambiguous == ""
    assert untagged["Scope"].ambiguous.startswith(", 'expected an object with the members of exactly one of")


def test_models_view_names_a_builtin_a_field_shadows_through_builtins() -> None:
    package = build_ir(load_schema(ROOT / "tests/kitchen/schema.json"), "kitchen_sink")
    view: ModelsView = build_models_view(_inputs(package, "models"))
    shadowing = next(c for c in view.classes if c.class_name == "FieldsNamedLikeBuiltins")
    lines = [a.line for a in shadowing.attributes]
    # After a field named like a builtin, that builtin is the field in the class body.
    assert any("_builtins." in line for line in lines), lines
    assert [e.class_name for e in view.enums] == [
        d.class_name for d in package.definitions if isinstance(d, ir.EnumDef)
    ]
    assert [a.name for a in view.aliases] == [
        next(d.class_name for d in package.definitions if d.name == n) for n in package.alias_order
    ]


def test_models_view_prints_a_named_string_type_as_a_new_type() -> None:
    package = build_ir(load_schema(ROOT / "tests/kitchen/schema.json"), "kitchen_sink")
    view: ModelsView = build_models_view(_inputs(package, "models"))
    aliases = {a.name: a for a in view.aliases}
    assert view.uses_new_type
    new_types = {name for name, a in aliases.items() if a.new_type}
    assert {"SessionId", "ToolCallId", "Slug"} <= new_types
    assert not new_types & {"RequestId", "Percent", "Labels", "WidgetRef", "Payload"}
    assert (aliases["SessionId"].value, aliases["SessionId"].name_literal) == ("str", "'SessionId'")
    assert aliases["SessionId"].doc.startswith('"""')


def test_patch_view_without_rules_has_an_empty_table_and_says_so(tmp_path: Path) -> None:
    view = build_patch_view(_inputs(_package(tmp_path, SMALL), "patch"))
    assert (view.rules, view.apply_table, view.overloads, view.upserts) == ("False", (), (), ())
    assert not view.uses_unset and not view.checks_keys
    kitchen = build_ir(load_schema(ROOT / "tests/kitchen/schema.json"), "kitchen_sink")
    ruled = build_patch_view(_inputs(kitchen, "patch"))
    assert ruled.rules == "True"
    assert len(ruled.overloads) == len(ruled.apply_table)
    classes = [c.cls for c in ruled.capabilities]
    assert classes == sorted(classes)


def test_package_view_moves_metadata_names_the_schema_takes(tmp_path: Path) -> None:
    package = _package(tmp_path, {"SCHEMA_FILE": {"type": "string"}, "Other": {"type": "integer"}})
    view = build_package_view(_inputs(package, "__init__"))
    assert view.meta.schema_file == "_SCHEMA_FILE"
    assert view.meta.schema_sha256 == "SCHEMA_SHA256"
    assert [d.class_name for d in view.definitions] == ["SCHEMA_FILE", "Other"]
    schema = build_schema_view(_inputs(package, "_schema"))
    assert json.loads(eval(schema.schema_json)) == package.validation_defs


def test_every_converted_module_has_its_view_registered() -> None:
    assert len(OWN_TEMPLATES) == len(MODULES) == 10
    for template in OWN_TEMPLATES:
        assert template.removesuffix(".py.jinja") in VIEWS
    assert {t.removesuffix(".jinja") for t in OWN_TEMPLATES} == set(MODULES)


@pytest.mark.parametrize("template", OWN_TEMPLATES)
def test_a_template_receives_only_its_view(template: str) -> None:
    env = Environment()
    source = (builtin_templates() / template).read_text(encoding="utf-8")
    tree = env.parse(source)
    assert meta.find_undeclared_variables(tree) == {"view"}
    # Printing only: no filter, test, arithmetic, comparison or import; a
    # call is of a macro of the template itself (printing a view's item).
    computing = (nodes.Filter, nodes.Test, nodes.BinExpr, nodes.Compare, nodes.Import, nodes.FromImport)
    assert [type(n).__name__ for n in tree.find_all(computing)] == []
    macros = {m.name for m in tree.find_all(nodes.Macro)}
    for call in tree.find_all(nodes.Call):
        assert isinstance(call.node, nodes.Name) and call.node.name in macros, call


@pytest.mark.parametrize("template", OWN_TEMPLATES)
def test_a_template_holds_little_fixed_python(template: str) -> None:
    source = (builtin_templates() / template).read_text(encoding="utf-8")
    fixed = fixed_python_lines(source)
    assert len(fixed) < MAX_FIXED_LINES, "\n".join(fixed)


def test_fixed_python_lines_are_counted_as_such() -> None:
    source = (
        "{{ view.header }}\nimport os\nfrom . import x as _x\n#acpgen:imports#\n\nX = 1\n"
        "{# a comment\n   over lines #}\n{% if view.a %}\n    y = {{ view.y }}\n    return y\n{% endif %}\n"
    )
    assert fixed_python_lines(source) == ["X = 1", "    return y"]
    docstring = '"""The module.\n\nMore of it.\n"""\nX = 1\n"""Not the module docstring."""\n'
    assert fixed_python_lines(docstring) == ["X = 1", '"""Not the module docstring."""']


def test_package_view_loads_on_first_use_what_decoding_does_not_need(tmp_path: Path) -> None:
    package = _package(tmp_path, {"Request": {"type": "string"}, "Other": {"type": "integer"}})
    view = build_package_view(_inputs(package, "__init__"))
    assert view.eager_imports.splitlines()[-1] == "from .models import *  # noqa: F401,F403"
    assert "from .session" not in view.eager_imports and "from .protocol" not in view.eager_imports
    lazy = {eval(entry.name): eval(entry.module) for entry in view.lazy}
    assert lazy["Notification"] == "protocol" and lazy["spawn_agent"] == "connection"
    assert lazy["merge_meta"] == "patch"
    # The schema's Request is the models' (loaded with the package): the
    # protocol's is left out, as the package's own imports leave it out.
    assert "Request" not in lazy and "Other" not in lazy
    assert "    from .protocol import Notification as Notification" in view.lazy_imports.splitlines()
