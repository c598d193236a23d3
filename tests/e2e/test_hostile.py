"""Schema text is input: names and descriptions must never become code."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from ..conftest import schema_with

PAYLOAD = "__import__('os').environ.__setitem__('ACPGEN_PWNED', '1')"


EVIL_DOC = f'"""\n{PAYLOAD}\n"""\\ \u202e \u2028 \x00 \x1b[31m end with a quote"'


def _hostile_schema() -> dict:
    evil_doc = EVIL_DOC
    return schema_with(
        {
            f"Bad Name'); {PAYLOAD} #": {
                "description": evil_doc,
                "type": "object",
                "properties": {
                    f"x'): {PAYLOAD}#": {"type": "string", "description": evil_doc},
                    "class": {"type": "string"},
                    "from_wire": {"type": "integer"},
                    "\\": {"type": "boolean"},
                },
                "required": ["class"],
            },
            "str": {"type": "string", "description": '"""'},
            "Kind": {
                "anyOf": [
                    {"type": "string", "const": f"'); {PAYLOAD}; ('"},
                    {"type": "string", "const": '"""\\'},
                    {"type": "string", "description": evil_doc},
                ]
            },
            "Union": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"t": {"type": "string", "const": f"{PAYLOAD}\n"}},
                        "required": ["t"],
                    },
                    {
                        "title": f"other{PAYLOAD}",
                        "type": "object",
                        "properties": {"t": {"type": "string"}},
                        "required": ["t"],
                    },
                ]
            },
        }
    )


def test_a_hostile_schema_generates_a_package_that_imports_and_runs_nothing(make_package, monkeypatch):
    monkeypatch.delenv("ACPGEN_PWNED", raising=False)
    package = make_package(_hostile_schema())
    import os

    assert "ACPGEN_PWNED" not in os.environ
    for name, value in package.DEFINITIONS.items():
        # Every $defs name is an attribute under its exact name ...
        assert getattr(package, name) is value
    models = sys.modules[package.__name__ + ".models"]
    for attribute in models.__all__:
        # ... and every name the generator made is a plain identifier.
        assert attribute.isascii() and attribute.isidentifier()
    bad = package.DEFINITIONS[f"Bad Name'); {PAYLOAD} #"]
    # The description is the docstring, character for character.
    assert inspect.cleandoc(bad.__doc__).rstrip() == EVIL_DOC
    value = package.decode(f"Bad Name'); {PAYLOAD} #", {"class": "c", f"x'): {PAYLOAD}#": "v", "\\": True})
    assert package.encode(value) == {"class": "c", f"x'): {PAYLOAD}#": "v", "\\": True}
    assert package.decode("Kind", f"'); {PAYLOAD}; ('") is next(iter(package.DEFINITIONS["Kind"]))
    union = package.decode("Union", {"t": f"{PAYLOAD}\n"})
    assert package.encode(union) == {"t": f"{PAYLOAD}\n"}
    # The definition named "str" is a NewType of the builtin str, which it
    # does not shadow: a value of it decodes to a builtin str.
    named = package.DEFINITIONS["str"]
    assert named.__supertype__ is str and named.__name__ == "str"
    assert type(package.decode("str", PAYLOAD)) is str
    assert "ACPGEN_PWNED" not in os.environ


def test_definitions_named_like_the_codecs_own_helpers_do_not_shadow_them(make_package):
    names = ["validate", "missing", "check_str", "_new", "SCHEMA_JSON", "encode_value", "apply", "field"]
    defs = {name: {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]} for name in names}
    defs["Holder"] = {
        "type": "object",
        "properties": {
            "名前": {"type": "string"},
            "field": {"type": "array", "items": {"type": "string"}, "default": []},
            "missing": {"$ref": "#/$defs/missing"},
        },
        "required": ["missing"],
    }
    package = make_package(schema_with(defs))
    for name in names:
        assert package.decode(name, {"x": "v"}, strict=True) == package.DEFINITIONS[name](x="v")
        with pytest.raises(package.ValidationError):
            package.decode(name, {}, strict=False)
    holder = package.decode("Holder", {"名前": "n", "missing": {"x": "y"}})
    assert package.encode(holder) == {"名前": "n", "field": [], "missing": {"x": "y"}}


def test_a_hostile_schema_file_name_stays_text(tmp_path):
    import subprocess

    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    path = tmp_path / 'evil\nprint("PWNED")\n#.json'
    path.write_text(json.dumps(schema_with({"A": {"type": "string"}})))
    write_packages(tmp_path / "out", {"evil": build_package(path, "evil")})
    code = "import evil; print(evil.SCHEMA_FILE == " + repr(str(path)) + ")"
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path / "out", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "True\n"  # and nothing else was printed


# ------------------------------------------------------------------ numbers, depth, names, refs

SCHEMA_HEAD = '{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"A": '


def _generate(tmp_path, text: str, name: str = "hostile"):
    from acpgen.cli import main
    from click.testing import CliRunner

    path = tmp_path / "s.json"
    path.write_text(text)
    return path, CliRunner().invoke(
        main, ["generate", "--schema", str(path), "--package", name, "--out", str(tmp_path / "out")]
    )


@pytest.mark.parametrize(
    "value, pointer, message",
    [
        ('{"type": "number", "default": NaN}', "#/$defs/A/default", "NaN is not JSON"),
        ('{"type": "number", "maximum": Infinity}', "#/$defs/A/maximum", "Infinity is not JSON"),
        ('{"type": "number", "enum": [1, -Infinity]}', "#/$defs/A/enum/1", "-Infinity is not JSON"),
        ('{"type": "number", "maximum": 1e999}', "#/$defs/A/maximum", "too large to be a finite float"),
        ('{"type": "integer", "maximum": ' + "9" * 5000 + "}", "#/$defs/A/maximum", "5000 digits"),
        ('{"type": "array", "items": ' * 1200 + "{}" + "}" * 1200, "#/$defs/A" + "/items" * 98, "nested more than 100"),
        ('{"anyOf": [' * 600 + "{}" + "]}" * 600, "#/$defs/A" + "/anyOf/0" * 49, "nested more than 100"),
        # Deep enough to refuse, shallow enough for json to parse: the depth
        # of the parsed document sends it to the scan.
        ('{"anyOf": [' * 60 + "{}" + "]}" * 60, "#/$defs/A" + "/anyOf/0" * 49, "nested more than 100"),
        ('{"type": "number", "enum": [-1e999]}', "#/$defs/A/enum/0", "too large to be a finite float"),
        ('{"type": "integer", "maximum": -' + "9" * 4301 + "}", "#/$defs/A/maximum", "4301 digits"),
    ],
)
def test_json_python_accepts_but_json_does_not_is_refused_with_its_pointer(tmp_path, value, pointer, message):
    path, result = _generate(tmp_path, SCHEMA_HEAD + value + "}}")
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"acpgen: error: {path}{pointer}: ") and message in line
    assert not (tmp_path / "out").exists()


def test_nesting_up_to_the_limit_generates(tmp_path):
    depth = 95
    _, result = _generate(
        tmp_path, SCHEMA_HEAD + '{"type": "array", "items": ' * depth + '{"type": "string"}' + "}" * depth + "}}"
    )
    assert result.exit_code == 0, result.output
    code = (
        "import hostile\nprint(hostile.decode('A', [[[]]], strict=True))\n"
        "try:\n    hostile.decode('A', [['x']], strict=True)\nexcept hostile.ValidationError as e:\n    print(e.path)"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path / "out", capture_output=True, text=True)
    assert out.stdout == "[[[]]]\n$[0][0]\n", out.stderr


def _tag_union(tag: str) -> dict:
    return {
        "oneOf": [
            {"type": "object", "properties": {tag: {"const": "a"}, "x": {"type": "string"}}, "required": [tag]},
            {"type": "object", "properties": {tag: {"const": "b"}}, "required": [tag]},
            {"type": "object", "properties": {tag: {"type": "string"}}, "required": [tag]},
        ]
    }


@pytest.mark.parametrize("tag", ["class", "from", "to_wire", "from_wire", "extra", "value", "__getattr__", "__init__"])
def test_a_union_tag_named_like_a_keyword_or_a_generated_member(make_package, tag):
    package = make_package(schema_with({"U": _tag_union(tag)}))
    known = package.decode("U", {tag: "a", "x": "y"})
    assert known.to_wire() == package.encode(known) == {tag: "a", "x": "y"}
    assert type(known).from_wire({tag: "a", "x": "z"}).x == "z"
    other = package.decode("U", {tag: "zz", "q": 1})
    assert other.extra == {"q": 1}
    assert other.to_wire() == {tag: "zz", "q": 1}
    # The tag is the same attribute, escaped the same way, on every variant.
    attributes = {name for name in vars(type(known)) if not name.startswith("_")} - {"x", "from_wire", "to_wire"}
    (attribute,) = attributes
    assert getattr(known, attribute) == "a" and getattr(other, attribute) == "zz"


def test_definitions_named_like_generated_members_or_dunders(make_package):
    object_ = {"type": "object", "properties": {"x": {"type": "string"}}}
    names = ["to_wire", "from_wire", "extra", "value", "__getattr__", "__dir__", "__init__", "__path__", "__all__"]
    package = make_package(schema_with({name: object_ for name in names}))
    for name in names:
        value = package.decode(name, {"x": "v"}, strict=True)
        assert value.to_wire() == {"x": "v"}
        assert type(value) is package.DEFINITIONS[name]
    # The package still works as a module: no definition took a dunder.
    with pytest.raises(AttributeError):
        _ = package.no_such_name
    assert isinstance(package.__path__, list) and "decode" in package.__all__
    for name in ("to_wire", "from_wire", "extra", "value"):
        assert getattr(package, name) is package.DEFINITIONS[name]


def test_ref_fragments_are_percent_decoded(make_package):
    package = make_package(
        schema_with(
            {
                "a b": {"type": "string", "minLength": 2},
                "c/d%": {"type": "integer"},
                "B": {
                    "type": "object",
                    "properties": {
                        "x": {"$ref": "#/$defs/a%20b"},
                        "y": {"$ref": "#/%24defs/c~1d%25"},
                    },
                },
            }
        )
    )
    assert package.encode(package.decode("B", {"x": "hi", "y": 3}, strict=True)) == {"x": "hi", "y": 3}
    with pytest.raises(package.ValidationError):
        package.decode("B", {"x": "h"}, strict=True)
    with pytest.raises(package.ValidationError):
        package.decode("B", {"y": "3"}, strict=True)
