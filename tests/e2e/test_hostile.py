"""Schema text is input: names and descriptions must never become code."""

from __future__ import annotations

import inspect
import json
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
                    {"type": "string", "const": "\"\"\"\\"},
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
    assert package.decode("Kind", f"'); {PAYLOAD}; ('") is list(package.DEFINITIONS["Kind"])[0]
    union = package.decode("Union", {"t": f"{PAYLOAD}\n"})
    assert package.encode(union) == {"t": f"{PAYLOAD}\n"}
    # The builtin str is not shadowed by the definition named "str".
    assert package.DEFINITIONS["str"] is str
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

    from acpgen.pipeline import build_package
    from acpgen.write import write_packages

    path = tmp_path / 'evil\nprint("PWNED")\n#.json'
    path.write_text(json.dumps(schema_with({"A": {"type": "string"}})))
    write_packages(tmp_path / "out", {"evil": build_package(path, "evil")})
    code = "import evil; print(evil.SCHEMA_FILE == " + repr(str(path)) + ")"
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path / "out", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "True\n"  # and nothing else was printed
