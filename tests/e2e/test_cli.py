"""The acpgen command line: generate, check, errors, templates, help."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import acpgen
import pytest
from acpgen.cli import main
from click.testing import CliRunner

from ..conftest import schema_with
from ..patience import HANG

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
        "_asgi.py",
        "_capabilities.py",
        "_codec.py",
        "_connection.py",
        "_exports.py",
        "_folding.py",
        "_handshake.py",
        "_jsonrpc.py",
        "_links.py",
        "_models.py",
        "_otel.py",
        "_patch.py",
        "_permissions.py",
        "_remote.py",
        "_resume.py",
        "_runtime.py",
        "_schema.py",
        "_senders.py",
        "_session.py",
        "_sides.py",
        "_trace.py",
        "_transport.py",
        "_validator.py",
        "_versions.py",
        "codec.py",
        "connection.py",
        "models.py",
        "patch.py",
        "protocol.py",
        "py.typed",
        "senders.py",
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
        (
            b'{"$defs": {"A": {"type": "strin"}}}',
            "#/$defs/A/type: does not conform to the JSON Schema 2020-12 metaschema",
        ),
        (b'{"$defs": {"A": {"$ref": "#/$defs/B"}}}', "#/$defs/A/$ref: unresolvable $ref '#/$defs/B'"),
        (b'{"$defs": {', ": invalid JSON at line 1 column 12"),
        (
            b'{"$defs": {"A": {"type": "string", "enum": ["ok", "a\\ud800"]}}}',
            "#/$defs/A/enum/1: the string holds a lone surrogate (\\ud800), which is not Unicode text",
        ),
        (
            b'{"$defs": {"A\\udc00": {"type": "string"}}}',
            "#/$defs: a member's name holds a lone surrogate (\\udc00), which is not Unicode text",
        ),
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
    out = tmp_path / "out"
    result = _run("generate", "--schema", str(tmp_path / "none.json"), "--package", "x", "--out", str(out))
    assert result.exit_code == 2 and "no such file" in result.output
    assert not out.exists()


def _one_error_line(result) -> str:
    """The whole of a failed run's output: one ``acpgen: error:`` line, exit 2."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("acpgen: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["diff", "a.json", "b.json", "--format", "xml"],
            "acpgen: error: Invalid value for '--format': 'xml' is not one of 'json', 'markdown', 'text' "
            "(`acpgen diff --help` shows the usage)",
        ),
        (
            ["validate", "/nonexistent/transcript.jsonl"],
            "acpgen: error: Invalid value for 'TRANSCRIPT': File '/nonexistent/transcript.jsonl' does not exist "
            "(`acpgen validate --help` shows the usage)",
        ),
        (["diff", "a.json"], "acpgen: error: Missing argument 'NEW' (`acpgen diff --help` shows the usage)"),
        (
            ["schema", "update", "--bogus"],
            "acpgen: error: No such option '--bogus' (`acpgen schema update --help` shows the usage)",
        ),
        (["generat"], "acpgen: error: No such command 'generat'"),
    ],
)
def test_usage_errors_are_one_line(args, expected):
    line = _one_error_line(_run(*args))
    assert line.startswith(expected), line


def test_help_stays_clicks_own():
    assert _run("diff", "--help").output.startswith("Usage: acpgen diff [OPTIONS] OLD NEW")
    bare = _run("schema")
    assert bare.output.startswith("Usage: acpgen schema [OPTIONS] COMMAND [ARGS]...")


def test_out_naming_a_file_says_so(tmp_path, small):
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    line = _one_error_line(_run("generate", "--schema", str(small), "--package", "small", "--out", str(afile)))
    assert (
        line == f"acpgen: error: {afile}: --out names a file, not a directory: give the directory the package goes into"
    )
    line = _one_error_line(
        _run("generate", "--schema", str(small), "--package", "small", "--out", str(afile / "deeper"))
    )
    assert line == f"acpgen: error: {afile / 'deeper'}: --out is under {afile}, which is a file, not a directory"
    # A file where the package directory goes.
    line = _one_error_line(_run("generate", "--schema", str(small), "--package", "afile", "--out", str(tmp_path)))
    assert line.startswith(f"acpgen: error: {afile}: a file is where the package directory afile goes")
    assert "--overwrite-foreign" in line
    assert afile.read_text() == "mine\n"


def test_out_is_created_one_level_deep_at_most(tmp_path, small):
    deep = tmp_path / "no" / "such" / "dir"
    line = _one_error_line(_run("generate", "--schema", str(small), "--package", "small", "--out", str(deep)))
    assert line.startswith(
        f"acpgen: error: {deep}: --out: the directory {deep.parent} does not exist; acpgen creates "
        "only the last level of the output directory (as mkdir does)"
    )
    assert not (tmp_path / "no").exists()
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / "one"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "one/small/models.py").is_file()
    # The configured out of [tool.acpgen] too.
    project = _project(tmp_path, small)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('out = "gen"', 'out = "build/gen"'))
    line = _one_error_line(_run("generate", cwd=project))
    assert "[tool.acpgen] out = 'build/gen': the directory" in line and "build does not exist" in line


def test_check_on_a_hand_edited_package_names_the_flag_that_overwrites_it(tmp_path, small):
    project = _project(tmp_path, small)
    assert _run("generate", cwd=project).exit_code == 0
    models = project / "gen/small/models.py"
    models.write_text(models.read_text() + "# my fix\n")
    result = _run("check", cwd=project)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "stale: gen/small/models.py" in lines
    assert any(
        line.startswith(
            "edited: gen/small: files changed since acpgen wrote them (models.py (changed)); "
            "`acpgen generate` refuses to overwrite them"
        )
        and line.endswith("then `acpgen generate --overwrite-edited` discards them")
        for line in lines
    ), lines
    assert lines[-1] == "1 package(s) out of date: small; run `acpgen generate --overwrite-edited`"
    # As said: generate refuses, the flag overwrites.
    assert _run("generate", cwd=project).exit_code == 2
    assert _run("generate", "--overwrite-edited", cwd=project).exit_code == 0
    assert _run("check", cwd=project).exit_code == 0
    # A stale package that is not edited (its schema changed) needs no flag.
    schema = project / "schema/small.json"
    data = json.loads(schema.read_text())
    data["$defs"]["Greeting"]["properties"]["extra"] = {"type": "string"}
    schema.write_text(json.dumps(data))
    result = _run("check", cwd=project)
    assert result.exit_code == 1 and "edited:" not in result.stdout
    assert result.stdout.splitlines()[-1] == "1 package(s) out of date: small; run `acpgen generate`"


def test_a_schema_without_methods_warns_that_methods_is_empty(tmp_path, small):
    result = _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert (
        f"acpgen: warning: small: {small} marks no type with x-method, so the package's METHODS is empty"
        in result.stderr
    )
    # The ACP schemas say nothing of the kind.
    root = Path(__file__).resolve().parents[2]
    result = _run(
        "generate", "--schema", str(root / "schema/v1/schema.json"), "--package", "acp", "--out", str(tmp_path / "acp")
    )
    assert result.exit_code == 0, result.output
    assert "x-method" not in result.stderr


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
    result = _run(
        "generate", "--schema", str(small), "--package", "small", "--out", str(out), "--templates", str(templates)
    )
    assert result.exit_code == 0, result.output
    assert "CUSTOMISED = True" in (out / "small/_schema.py").read_text()
    assert "CUSTOMISED" not in (out / "small/models.py").read_text()


def test_a_broken_template_is_a_clear_error(tmp_path, small):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "models.py.jinja").write_text("{{ no_such_thing }}\n")
    result = _run(
        "generate",
        "--schema",
        str(small),
        "--package",
        "small",
        "--out",
        str(tmp_path / "out"),
        "--templates",
        str(templates),
    )
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
    assert (
        f"acpgen: error: {home / 'Documents'}: refusing to replace a directory acpgen did not generate" in result.output
    )
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
    result = _run(
        "generate", "--schema", str(small), "--package", "Documents", "--out", str(home), "--overwrite-foreign"
    )
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
    # The installed distribution's version is the one the packages record.
    assert _run("--version").output.strip() == f"acpgen, version {importlib.metadata.version('acpgen')}"
    assert importlib.metadata.version("acpgen") == acpgen.__version__


def test_the_installed_console_script_runs():
    out = subprocess.run([str(Path(sys.executable).parent / "acpgen"), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "acpgen" in out.stdout


def _acpgen(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed console script, in a process of its own: a run that
    hangs fails the test (after HANG) instead of stalling the suite."""
    command = [str(Path(sys.executable).parent / "acpgen"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=HANG, cwd=cwd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_as_the_schema_is_refused_at_once_naming_it(tmp_path):
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    # Nobody writes to it: reading it would wait forever.
    out = _acpgen("generate", "--schema", str(fifo), "--package", "small", "--out", str(tmp_path / "out"))
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        f"acpgen: error: {fifo}: is a FIFO (named pipe), not a regular file: a schema is read from a file"
    )
    # The [tool.acpgen] schema and acpgen diff read it the same way.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        f'[tool.acpgen]\nout = "gen"\n\n[[tool.acpgen.packages]]\nschema = "{fifo.as_posix()}"\npackage = "small"\n'
    )
    out = _acpgen("generate", cwd=project)
    assert out.returncode == 2 and "is a FIFO (named pipe), not a regular file" in out.stderr, out.stderr
    out = _acpgen("diff", str(fifo), str(fifo))
    assert out.returncode == 2 and f"{fifo}: is a FIFO (named pipe)" in out.stderr, out.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="a POSIX device")
def test_a_device_as_the_schema_is_refused_naming_it(tmp_path):
    # /dev/null stands for /dev/zero, which a reader that read it whole
    # would never finish: the same kind of file, refused before any read.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "gen"\n\n[[tool.acpgen.packages]]\nschema = "/dev/null"\npackage = "small"\n'
    )
    line = _one_error_line(_run("generate", cwd=project))
    assert line == "acpgen: error: /dev/null: is a character device, not a regular file: a schema is read from a file"


def test_a_schema_over_the_cap_is_refused_before_it_is_read(tmp_path, small, monkeypatch):
    from acpgen.compile.load import schema as load

    big = tmp_path / "big.json"
    # A sparse file one byte over 64 MiB: nothing of it is read.
    with big.open("wb") as file:
        file.truncate(load.MAX_SCHEMA_BYTES + 1)
    line = _one_error_line(_run("generate", "--schema", str(big), "--package", "small", "--out", str(tmp_path / "o")))
    assert line == f"acpgen: error: {big}: is larger than 64 MiB, the most acpgen reads of a schema file"
    monkeypatch.setattr(load, "MAX_SCHEMA_BYTES", small.stat().st_size)
    assert _run("generate", "--schema", str(small), "--package", "small", "--out", str(tmp_path / "o")).exit_code == 0


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="a Linux /proc")
def test_a_file_that_says_it_is_empty_is_read_to_its_end_or_the_cap(monkeypatch):
    from acpgen.compile.load import schema as load
    from acpgen.errors import AcpgenError

    status = Path("/proc/self/status")
    assert status.stat().st_size == 0  # and yet it holds lines
    assert load.read_schema_bytes(status).startswith(b"Name:")
    # Its size says nothing of what it holds: the cap cuts it as it is read.
    monkeypatch.setattr(load, "MAX_SCHEMA_BYTES", 10)
    with pytest.raises(AcpgenError, match="is larger than 0 MiB") as raised:
        load.read_schema_bytes(status)
    assert raised.value.file == str(status)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="a Linux /proc")
@pytest.mark.parametrize("out", ["/proc/self", "/proc/self/new"])
def test_out_under_proc_is_refused_naming_the_option(tmp_path, small, out):
    # In a process of its own: a run that wrote into /proc/self spun for ever.
    result = _acpgen("generate", "--schema", str(small), "--package", "small", "--out", out)
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.startswith(f"acpgen: error: {out}: --out is under /proc, where the system keeps"), (
        result.stderr
    )


def test_out_that_is_the_home_directory_itself_is_refused(tmp_path, small):
    home = tmp_path / "home"
    home.mkdir()
    # HOME points at a directory of the test's own: a run that took it
    # would write there, not in the real home directory.
    env = {**os.environ, "HOME": str(home), "USERPROFILE": str(home)}
    command = [str(Path(sys.executable).parent / "acpgen"), "generate", "--schema", str(small), "--package", "small"]
    link = tmp_path / "link"
    link.symlink_to(home)
    for out in (str(home), f"{home}/.", str(link)):
        result = subprocess.run([*command, "--out", out], capture_output=True, text=True, timeout=HANG, env=env)
        assert result.returncode == 2, result
        assert "--out is the home directory itself" in result.stderr, result.stderr
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    "out, what",
    [
        ("/", "is the root of a file system"),
        ("/sys/kernel", "is under /sys"),
        ("/dev/shm", "is under /dev"),
        ("/dev", "is under /dev"),
    ],
)
def test_out_that_is_a_root_or_a_system_directory_is_refused(out, what):
    # Called directly, never through generate: a regression must not write
    # into / or /dev.
    from acpgen.cli.common import check_out_dir
    from acpgen.errors import AcpgenError

    with pytest.raises(AcpgenError) as raised:
        check_out_dir(Path(out), "--out")
    assert str(raised.value).startswith(f"{out}: --out {what}")


def test_out_through_a_link_to_proc_is_refused(tmp_path, small):
    if not os.path.isdir("/proc/self"):
        pytest.skip("a Linux /proc")
    link = tmp_path / "link"
    link.symlink_to("/proc/self")
    result = _acpgen("generate", "--schema", str(small), "--package", "small", "--out", str(link))
    assert result.returncode == 2, result
    assert result.stderr.startswith(f"acpgen: error: {link}: --out is under /proc"), result.stderr


@pytest.mark.parametrize("out", [".", "", "./", "../project"])
def test_configured_out_that_is_the_project_root_itself_is_refused_naming_the_entry(tmp_path, small, out):
    project = _project(tmp_path, small)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('out = "gen"', f"out = {out!r}"))
    line = _one_error_line(_run("generate", cwd=project))
    assert line.startswith(
        f"acpgen: error: {os.path.normpath(project / out)}: [tool.acpgen] out = {out!r} is the project root itself"
    ), line
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "schema"]
    # The same check as for --out: the root, /proc ... are refused from here too.
    from acpgen.cli.common import check_out_dir
    from acpgen.errors import AcpgenError

    with pytest.raises(AcpgenError, match=r"\[tool.acpgen\] out = '/' is the root of a file system"):
        check_out_dir(Path("/"), "[tool.acpgen] out = '/'", project)


@pytest.mark.parametrize(
    "name, problem",
    [
        ("sitecustomize", "is a module Python's site imports at every start"),
        ("usercustomize", "is a module Python's site imports at every start"),
        ("__main__", "has the form __name__"),
        ("__init__", "has the form __name__"),
        ("__pycache__", "has the form __name__"),
        ("os", "is a standard-library module"),
        ("antigravity", "is a standard-library module"),
    ],
)
def test_package_names_python_treats_specially_are_refused_naming_the_option_or_entry(tmp_path, small, name, problem):
    line = _one_error_line(_run("generate", "--schema", str(small), "--package", name, "--out", str(tmp_path / "out")))
    assert line.startswith(f"acpgen: error: the package name {name!r} (--package) {problem}"), line
    assert not (tmp_path / "out").exists()
    project = _project(tmp_path, small)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('package = "small"', f'package = "{name}"'))
    for command in ("generate", "check"):
        line = _one_error_line(_run(command, cwd=project))
        assert line.startswith(
            f"acpgen: error: {pyproject}: [[tool.acpgen.packages]] entry 1: the package name {name!r} {problem}"
        ), line
    assert not (project / "gen").exists()
