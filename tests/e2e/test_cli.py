"""The acpgen command line: generate, check, errors, templates, help."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from acpgen.cli import main

from ..conftest import schema_with

SMALL = schema_with(
    {
        "Greeting": {
            "description": "A greeting.",
            "type": "object",
            "properties": {"text": {"type": "string"}, "loud": {"type": "boolean", "default": False}},
            "required": ["text"],
        },
        "Mood": {"anyOf": [{"type": "string", "const": "happy"}, {"type": "string"}]},
    }
)


def _run(*args: str, cwd: Path | None = None):
    return CliRunner().invoke(main, list(args), catch_exceptions=False) if cwd is None else _in(cwd, args)


def _in(cwd: Path, args):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL))
    return path


def test_generate_one_schema_writes_an_importable_package(tmp_path, small):
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (tmp_path / "out/small").iterdir())
    assert files == [
        ".acpgen",
        "__init__.py",
        "_codec.py",
        "_models.py",
        "_runtime.py",
        "_schema.py",
        "_validator.py",
        "codec.py",
        "connection.py",
        "models.py",
        "patch.py",
        "protocol.py",
        "py.typed",
        "session.py",
    ]
    code = "import small; g = small.decode('Greeting', {'text': 'hi'}); print(g.loud, small.encode(g))"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path / "out", capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False {'text': 'hi', 'loud': False}"


def test_generation_is_deterministic(tmp_path, small):
    for run in ("a", "b"):
        _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / run))
    a = {p.name: p.read_bytes() for p in (tmp_path / "a/small").iterdir()}
    b = {p.name: p.read_bytes() for p in (tmp_path / "b/small").iterdir()}
    assert a == b


@pytest.mark.parametrize(
    "content, expected",
    [
        (b'{"$defs": {"A": {"type": "strin"}}}', "#/$defs/A/type: does not conform to the JSON Schema 2020-12 metaschema"),
        (b'{"$defs": {"A": {"$ref": "#/$defs/B"}}}', "#/$defs/A/$ref: unresolvable $ref '#/$defs/B'"),
        (b'{"$defs": {', ": invalid JSON at line 1 column 12"),
    ],
)
def test_a_malformed_schema_is_one_line_exit_2_and_writes_nothing(tmp_path, small, content, expected):
    out = tmp_path / "out"
    assert _run("generate", "--schema", str(small), "--package", "small", "--out", str(out)).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    result = _run("generate", "--schema", str(bad), "--package", "small", "--out", str(out))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"acpgen: error: {bad}") and expected in lines[0]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_missing_schema_file(tmp_path):
    result = _run("generate", "--schema", str(tmp_path / "none.json"), "--package", "x", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip() == f"acpgen: error: {tmp_path / 'none.json'}: no such file"


def test_a_failed_generate_leaves_no_output_directory_behind(tmp_path):
    """The run takes the output directory's lock before it reads the
    schema; when it fails, the directory it created for that goes too."""
    out = tmp_path / "new" / "out"
    result = _run("generate", "--schema", str(tmp_path / "none.json"), "--package", "x", "--out", str(out))
    assert result.exit_code == 2 and "no such file" in result.output
    assert not (tmp_path / "new").exists()


def _project(tmp_path: Path, small: Path) -> Path:
    project = tmp_path / "project"
    (project / "schema").mkdir(parents=True)
    shutil.copy(small, project / "schema/small.json")
    (project / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "gen"\n\n[[tool.acpgen.packages]]\nschema = "schema/small.json"\npackage = "small"\n'
    )
    return project


def test_check_names_stale_files_and_writes_nothing(tmp_path, small):
    project = _project(tmp_path, small)
    assert _run("generate", cwd=project).exit_code == 0
    assert _run("check", cwd=project).exit_code == 0
    models = project / "gen/small/models.py"
    models.write_text(models.read_text() + "# edited\n")
    (project / "gen/small/leftover.py").write_text("")
    result = _run("check", cwd=project)
    assert result.exit_code == 1
    assert "stale: gen/small/models.py" in result.output
    assert "stale: gen/small/leftover.py" in result.output
    assert "small" in result.output.splitlines()[-1]
    assert models.read_text().endswith("# edited\n")


def test_check_warns_about_what_an_interrupted_run_left_beside_the_packages(tmp_path, small):
    project = _project(tmp_path, small)
    assert _run("generate", cwd=project).exit_code == 0
    aside = project / "gen/.acpgen-old-small-0123abcd"
    shutil.copytree(project / "gen/small", aside)
    result = _run("check", cwd=project)
    assert result.exit_code == 0, result.output  # the packages themselves are current
    assert "gen/.acpgen-old-small-0123abcd was left by an interrupted acpgen run (a copy of gen/small)" in result.stderr
    assert aside.is_dir()  # check writes and deletes nothing
    shutil.rmtree(aside)
    result = _run("check", cwd=project)
    assert result.exit_code == 0 and result.stderr == ""


def test_templates_override_by_file_name(tmp_path, small):
    templates = tmp_path / "templates"
    templates.mkdir()
    builtin = Path(__file__).resolve().parents[2] / "templates" / "_schema.py.jinja"
    (templates / "_schema.py.jinja").write_text(builtin.read_text() + "\nCUSTOMISED = True\n")
    out = tmp_path / "out"
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(out), "--templates", str(templates))
    assert result.exit_code == 0, result.output
    assert "CUSTOMISED = True" in (out / "small/_schema.py").read_text()
    assert "CUSTOMISED" not in (out / "small/models.py").read_text()


def test_a_broken_template_is_a_clear_error(tmp_path, small):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "models.py.jinja").write_text("{{ no_such_thing }}\n")
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / "out"), "--templates", str(templates))
    assert result.exit_code == 2
    assert "models.py.jinja" in result.output and "no_such_thing" in result.output
    assert not (tmp_path / "out/small").exists()


def _snapshot(directory: Path) -> dict:
    return {p: p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def test_generate_never_replaces_a_directory_it_did_not_make(tmp_path, small):
    home = tmp_path / "home"
    (home / "Documents/.git").mkdir(parents=True)
    (home / "Documents/.git/HEAD").write_text("ref: refs/heads/main\n")
    (home / "Documents/taxes.txt").write_text("2025")
    before = _snapshot(home)
    result = _run("generate", "--schema", str(small), "--package", "Documents", "--out", str(home))
    assert result.exit_code == 2
    assert f"acpgen: error: {home / 'Documents'}: refusing to replace a directory acpgen did not generate" in result.output
    assert "--overwrite-foreign" in result.output
    assert _snapshot(home) == before and sorted(p.name for p in home.iterdir()) == ["Documents"]
    # A project's own tests directory, with --out .
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests/test_app.py").write_text("def test(): pass\n")
    result = _run("generate", "--schema", str(small), "--package", "tests", "--out", ".", cwd=project)
    assert result.exit_code == 2 and "refusing" in result.output
    assert (project / "tests/test_app.py").read_text() == "def test(): pass\n"
    # Asked for explicitly, it is replaced.
    result = _run("generate", "--schema", str(small), "--package", "Documents", "--out", str(home), "--overwrite-foreign")
    assert result.exit_code == 0, result.output
    assert not (home / "Documents/taxes.txt").exists() and (home / "Documents/models.py").exists()


def test_a_hand_edited_package_is_refused_unless_overwrite_edited(tmp_path, small):
    out = tmp_path / "out"
    assert _run("generate", "--schema", str(small), "--package", "small", "--out", str(out)).exit_code == 0
    models = out / "small/models.py"
    models.write_text(models.read_text() + "# my fix\n")
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(out))
    assert result.exit_code == 2
    assert "models.py (changed)" in result.output and "--overwrite-edited" in result.output
    assert models.read_text().endswith("# my fix\n")
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(out), "--overwrite-edited")
    assert result.exit_code == 0, result.output
    assert not models.read_text().endswith("# my fix\n")


@pytest.mark.parametrize("name", ["os", "typing", "json", "sys", "my-package", "class", "naïve", "1st"])
def test_package_names_that_are_not_identifiers_or_are_stdlib_modules_are_refused(tmp_path, small, name):
    result = _run("generate", "--schema", str(small), "--package", name, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.output.startswith(f"acpgen: error: the package name {name!r}")
    assert not (tmp_path / "out").exists()


def test_help_and_version():
    assert "Usage" in _run("--help").output
    for command in ("generate", "check", "diff", "conformance", "conformance-fixtures"):
        result = _run(command, "--help")
        assert result.exit_code == 0 and "Usage" in result.output
    assert _run("schema", "update", "--help").exit_code == 0
    top = _run("--help").output
    for command in ("generate", "check", "diff", "schema update", "conformance", "conformance-fixtures"):
        assert f"\n  {command} " in top  # each command said what it is for
    assert "--overwrite-foreign" in _run("generate", "--help").output
    assert _run("--version").output.strip() == "acpgen, version 0.1.0"


def test_the_installed_console_script_runs():
    out = subprocess.run([str(Path(sys.executable).parent / "acpgen"), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "acpgen" in out.stdout
