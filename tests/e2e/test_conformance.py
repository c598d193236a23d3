"""`acpgen conformance`: the command line, and proof that the suite catches
faults. Each seeded fault wraps a generated package (through its public API
only, as a package generated with other templates would differ) and must be
reported as a failure naming the definition; the same run without the fault
must not report that definition."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from acpgen.cli import main
from click.testing import CliRunner

from ..conftest import GENERATED, ROOT, SCHEMAS

FIXTURES = ROOT / "tests/fixtures/conformance"
FINAL = re.compile(r"^(\d+) passed, (\d+) failed$")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["conformance", *args])
    return result.exit_code, result.output


@pytest.fixture
def hostile_depth_past_the_recursion_limit(monkeypatch):
    """Runs over a fixture subset with the hostile deep input only somewhat
    deeper than the recursion limit (a dict and a list a level), not the
    suite's 5,000 levels: every definition is still decoded from it, so a
    decoder that recurses still meets a RecursionError, but a run no longer
    spends most of its time walking 10,000 containers once per definition
    and mode. The four full runs below keep the suite's own depth."""
    from acpgen.conformance import runner

    monkeypatch.setattr(runner, "DEEP", runner._deep(sys.getrecursionlimit() + 100))


def fail_lines(output: str, definition: str) -> list[str]:
    """The failures reported for ``definition``, not counting coverage (a
    fixture subset leaves targets uncovered)."""
    return [
        line
        for line in output.splitlines()
        if line.strip().startswith(f"FAIL {definition}:") and f"FAIL {definition}: coverage:" not in line
    ]


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize("package", sorted(set(SCHEMAS) - {"acp_v1"}))
def test_each_vendored_package_conforms_with_a_line_per_definition_and_full_coverage(package):
    """The whole suite, once per package (the only full runs in the tests,
    with acp_v1's in tests/e2e/test_wheel.py: an installed acpgen makes its
    fixtures from the schema, which are the committed ones,
    tests/e2e/test_conformance_fixtures.py checks, and runs them)."""
    code, output = run("--package", str(GENERATED / package))
    assert code == 0, output[-3000:]
    lines = output.splitlines()
    final = FINAL.match(lines[-1])
    assert final and final.group(2) == "0"
    assert int(final.group(1)) > 3000
    defs = json.loads(SCHEMAS[package].read_text())["$defs"]
    for name in ("ToolCallUpdate", "ContentBlock", "ToolKind", "InitializeRequest"):
        assert any(re.match(rf"^  {name}\s+\d+ passed", line) for line in lines), name
    assert sum(1 for line in lines if re.match(r"^  \S+\s+\d+ passed", line)) >= len(defs)
    n = len(defs)
    assert re.search(rf"^coverage: def {n}/{n}, variant (\d+)/\1, lenient (\d+)/\2, enum (\d+)/\3$", output, re.M), (
        output[-2000:]
    )


def test_several_packages_in_one_run_end_with_the_total(tmp_path):
    """Two packages in one run, each against the default fixtures of the
    project around the working directory: here a project holding a few."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "schema", project / "schema")
    subset(project / "tests/fixtures/conformance/v1", "v1", ["ToolCallUpdate", "ContentBlock"])
    acpgen = str(Path(sys.executable).parent / "acpgen")
    package = str(GENERATED / "acp_v1")

    def conformance(*packages: str) -> list[str]:
        args = [acpgen, "conformance", "-q", "--only", "ToolCallUpdate", "--only", "ContentBlock"]
        args += [arg for p in packages for arg in ("--package", p)]
        out = subprocess.run(args, capture_output=True, text=True, cwd=project)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr
        assert str(project / "tests/fixtures/conformance/v1") in out.stdout
        return out.stdout.splitlines()

    lines = conformance(package, package)
    per_package = [re.match(r"^acp_v1: (\d+) passed, (\d+) failed in", line) for line in lines]
    counts = [tuple(map(int, m.groups())) for m in per_package if m]
    assert len(counts) == 2 and counts[0] == counts[1]
    passed, failed = counts[0]
    assert passed > 50
    assert lines[-1] == f"{2 * passed} passed, {2 * failed} failed"
    assert conformance(package)[-1] == f"{passed} passed, {failed} failed"


@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_the_package_can_be_named_by_import_name_or_its_parent_directory(tmp_path):
    holder = tmp_path / "vendor"
    shutil.copytree(GENERATED / "acp_v2", holder / "acp_v2", ignore=shutil.ignore_patterns("__pycache__"))
    fixtures = subset(tmp_path / "fx", "v2", [])
    _code, output = run("-q", "--package", str(holder), "--fixtures", str(fixtures), "--only", "ToolKind")
    assert "conformance of acp_v2" in output and "schema/v2/schema.json" in output
    env = dict(os.environ, PYTHONPATH=str(holder))
    out = subprocess.run(
        [
            str(Path(sys.executable).parent / "acpgen"),
            "conformance",
            "-q",
            "--package",
            "acp_v2",
            "--fixtures",
            str(fixtures),
            "--only",
            "ToolKind",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert f"({(holder / 'acp_v2').resolve()})" in out.stdout, out.stderr


def test_bad_arguments_exit_2(tmp_path):
    code, output = run("--package", str(tmp_path / "nope"))
    assert code == 2 and "no such directory" in output
    code, output = run("--package", "no_such_package_anywhere")
    assert code == 2
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("x = 1\n")
    code, output = run("--package", str(tmp_path / "pkg"))
    assert code == 2 and "not a generated ACP package" in output
    code, output = run("--package", str(GENERATED / "acp_v1"), "--schema", str(tmp_path / "missing.json"))
    assert code == 2


@pytest.mark.parametrize(
    "entry",
    [
        "runpy.run_module('acpgen.conformance', run_name='__main__')",
        "from acpgen.cli import main; main(['conformance', *sys.argv[1:]], prog_name='acpgen')",
    ],
)
def test_the_check_loads_none_of_the_generator_stages(tmp_path, entry):
    """`python -m acpgen.conformance` and `acpgen conformance` run the check
    without importing the generator (load, lower, naming, render ...) or its
    dependencies: only the command, the package under test, its schema and
    the fixtures (a few: the full run is tested above; the check fails on the
    coverage a subset leaves, with status 1). What JSON Schema keywords mean
    (``acpgen.vocabulary``, which imports nothing of acpgen) is all it shares
    with the generator."""
    fixtures = subset(tmp_path / "fx", "v1", ["ToolCallUpdate"])
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['x', '-q', '--package', {str(GENERATED / 'acp_v1')!r}, '--fixtures', {str(fixtures)!r}]\n"
        f"try:\n    {entry}\n"
        "except SystemExit as exit:\n    status = exit.code\n"
        "stages = sorted(m for m in sys.modules if m.startswith('acpgen.') and not m.startswith('acpgen.conformance')"
        " and m not in ('acpgen.cli', 'acpgen.cli.conformance', 'acpgen.vocabulary'))\n"
        "stages += [m for m in ('jinja2', 'black') if m in sys.modules]\n"
        "print('STAGES', stages, 'STATUS', status)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "STAGES [] STATUS 1" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


def test_the_package_is_imported_in_isolation():
    before = set(sys.modules)
    from acpgen.conformance.loader import import_package

    module = import_package(GENERATED / "acp_v2")
    assert module.__name__.startswith("_acpgen_conformance_")
    assert "acp_v2" not in set(sys.modules) - before
    assert import_package(GENERATED / "acp_v2") is not module


# ------------------------------------------------------------------ fixtures


def subset(directory: Path, key: str, generated: list[str], messages: bool = False) -> Path:
    """A fixtures directory with the hand-written fixtures of ``key``, the
    generated files of ``generated`` definitions and, with ``messages``, the
    message fixtures."""
    source = FIXTURES / key
    shutil.copytree(source / "handwritten", directory / "handwritten")
    shutil.copy(source / "manifest.json", directory / "manifest.json")
    if messages:
        shutil.copy(source / "messages.json", directory / "messages.json")
    (directory / "generated").mkdir()
    for name in generated:
        shutil.copy(source / "generated" / f"{name}.json", directory / "generated" / f"{name}.json")
    return directory


@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_a_known_failure_that_passes_is_a_failure(tmp_path):
    fixtures = subset(tmp_path / "fx", "v2", [])
    (fixtures / "handwritten" / "extra.json").write_text(
        json.dumps(
            {
                "known_failures": {"kind is open": "not really failing"},
                "cases": [{"name": "kind is open", "def": "ToolKind", "input": "x", "output": "x", "valid": True}],
            }
        )
    )
    code, output = run("-q", "--package", str(GENERATED / "acp_v2"), "--fixtures", str(fixtures), "--only", "ToolKind")
    assert code == 1
    assert "FAIL ToolKind: kind is open: listed in known_failures (not really failing) but passes now" in output


@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_fixtures_for_another_schema_are_a_failure(tmp_path):
    fixtures = subset(tmp_path / "fx", "v2", ["ToolKind"])
    manifest = json.loads((fixtures / "manifest.json").read_text())
    manifest["schema_sha256"] = "0" * 64
    (fixtures / "manifest.json").write_text(json.dumps(manifest))
    code, output = run("-q", "--package", str(GENERATED / "acp_v2"), "--fixtures", str(fixtures), "--only", "ToolKind")
    assert code == 1 and "regenerate them (make fixtures)" in output


# ------------------------------------------------------------------ seeded faults

WRAPPER = """
import dataclasses as _dc
import importlib.util as _u
import pathlib as _p
import sys as _s

_dir = _p.Path({real!r})
_spec = _u.spec_from_file_location("_wrapped_{name}", _dir / "__init__.py", submodule_search_locations=[str(_dir)])
_real = _u.module_from_spec(_spec)
_s.modules[_spec.name] = _real
_spec.loader.exec_module(_real)

ValidationError = _real.ValidationError
UNSET = _real.UNSET
SCHEMA_FILE = _real.SCHEMA_FILE
SCHEMA_SHA256 = _real.SCHEMA_SHA256


def decode(name, data, *, strict=False):
    return _real.decode(name, data, strict=strict)


def encode(value):
    return _real.encode(value)


def apply(state, update):
    return _real.apply(state, update)
"""

FAULTS = {
    "null-is-omitted": (
        "acp_v2",
        "ToolCallUpdate",
        ["ToolCallUpdate"],
        """
        def _strip(value):
            if isinstance(value, dict):
                return {k: _strip(v) for k, v in value.items() if v is not None}
            if isinstance(value, list):
                return [_strip(v) for v in value]
            return value

        def decode(name, data, *, strict=False):
            return _real.decode(name, _strip(data), strict=strict)
        """,
    ),
    "bad-known-variant-is-catch-all": (
        "acp_v2",
        "ContentBlock",
        ["ContentBlock"],
        """
        class _CatchAll:
            def __init__(self, wire):
                self.wire = wire

            def __eq__(self, other):
                return isinstance(other, _CatchAll) and other.wire == self.wire

        def decode(name, data, *, strict=False):
            try:
                return _real.decode(name, data, strict=strict)
            except _real.ValidationError:
                if name == "ContentBlock" and isinstance(data, dict) and isinstance(data.get("type"), str):
                    return _CatchAll(dict(data))  # kept verbatim, as the catch-all keeps an unknown tag
                raise

        def encode(value):
            return dict(value.wire) if isinstance(value, _CatchAll) else _real.encode(value)
        """,
    ),
    "default-ignored": (
        "acp_v1",
        "ClientCapabilities",
        ["ClientCapabilities"],
        """
        def decode(name, data, *, strict=False):
            value = _real.decode(name, data, strict=strict)
            if name == "ClientCapabilities" and isinstance(data, dict) and "fs" not in data:
                value = _dc.replace(value, fs=UNSET)  # the schema default of fs is ignored
            return value
        """,
    ),
    "meta-patch-keeps-null-keys": (
        "acp_v2",
        "ToolCallUpdate",
        [],
        """
        def apply(state, update):
            new = _real.apply(state, update)
            patch = getattr(update, "meta", None)
            if isinstance(patch, dict) and isinstance(getattr(new, "meta", None), dict):
                nulls = {k: None for k, v in patch.items() if v is None}
                if nulls:
                    new = _dc.replace(new, meta={**new.meta, **nulls})
            return new
        """,
    ),
    "encode-writes-null-for-unset": (
        "acp_v2",
        "ToolCallUpdate",
        ["ToolCallUpdate"],
        """
        def _wire_name(name):
            if name == "meta":
                return "_meta"
            head, *rest = name.split("_")
            return head + "".join(part.title() for part in rest)

        def encode(value):
            wire = _real.encode(value)
            if _dc.is_dataclass(value) and isinstance(wire, dict):
                for f in _dc.fields(value):
                    if getattr(value, f.name) is UNSET:
                        wire.setdefault(_wire_name(f.name), None)
            return wire
        """,
    ),
}


def wrap(directory: Path, package: str, fault: str) -> Path:
    directory.mkdir(parents=True)
    unique = f"{package}_{abs(hash(str(directory)))}"  # submodules are cached by package name
    code = WRAPPER.format(real=str(GENERATED / package), name=unique) + textwrap.dedent(fault)
    (directory / "__init__.py").write_text(code)
    return directory


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_a_seeded_fault_is_reported_as_a_failure_naming_the_definition(tmp_path, fault):
    package, definition, generated, code = FAULTS[fault]
    key = package.replace("acp_", "")
    schema = ROOT / f"schema/{key.split('_')[0]}/schema{'.unstable' if 'unstable' in key else ''}.json"
    fixtures = subset(tmp_path / "fx", key, generated)
    only = ("--only", definition)  # the full runs above check every definition
    honest = wrap(tmp_path / "honest", package, "")
    status, output = run("-q", "--package", str(honest), "--schema", str(schema), "--fixtures", str(fixtures), *only)
    assert not fail_lines(output, definition), "\n".join(fail_lines(output, definition))[:2000]
    faulty = wrap(tmp_path / "faulty", package, code)
    status, output = run("-q", "--package", str(faulty), "--schema", str(schema), "--fixtures", str(fixtures), *only)
    assert status == 1, output[-3000:]
    assert fail_lines(output, definition), output[-3000:]
    assert int(FINAL.match(output.splitlines()[-1]).group(2)) > 0


@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_without_apply_the_patch_checks_fail(tmp_path):
    fixtures = subset(tmp_path / "fx", "v2", [])
    faulty = wrap(tmp_path / "noapply", "acp_v2", "del apply\n")
    status, output = run(
        "-q",
        "--package",
        str(faulty),
        "--schema",
        str(ROOT / "schema/v2/schema.json"),
        "--fixtures",
        str(fixtures),
        "--only",
        "ToolCallUpdate",
    )
    assert status == 1
    lines = fail_lines(output, "ToolCallUpdate")
    assert any("patch: tool call" in line and "does not export apply" in line for line in lines)
    assert any("patch law idempotent" in line for line in lines)


# ------------------------------------------------------------------ seeded faults in the JSON-RPC layer

RPC_WRAPPER = """
METHODS = _real.METHODS
DEFINITIONS = _real.DEFINITIONS
Request, Notification, Response, ErrorResponse = _real.Request, _real.Notification, _real.Response, _real.ErrorResponse
Agent, Client = _real.Agent, _real.Client


def decode_message(data, *, strict=False):
    return _real.decode_message(data, strict=strict)


def encode_message(message):
    return _real.encode_message(message)


def decode_result(method, data, *, strict=False):
    return _real.decode_result(method, data, strict=strict)
"""

RPC_FAULTS = {
    "jsonrpc-not-checked": (
        "acp_v1",
        "(messages)",
        """
        def decode_message(data, *, strict=False):
            if isinstance(data, dict):
                data = {"jsonrpc": "2.0", **data}
            return _real.decode_message(data, strict=strict)
        """,
    ),
    "params-kept-as-json": (
        "acp_v2",
        "session/prompt",
        """
        def decode_message(data, *, strict=False):
            message = _real.decode_message(data, strict=strict)
            if isinstance(message, Request) and message.method == "session/prompt":
                return Request(message.id, message.method, data.get("params"))
            return message
        """,
    ),
    "wrong-side": (
        "acp_v2_unstable",
        "mcp/message",
        """
        METHODS = dict(_real.METHODS)
        _info = METHODS["mcp/message"]
        METHODS["mcp/message"] = _dc.replace(_info, notification=_dc.replace(_info.notification, side="client"))
        """,
    ),
    "method-missing": (
        "acp_v1",
        "session/update",
        """
        METHODS = {k: v for k, v in _real.METHODS.items() if k != "session/update"}
        """,
    ),
    "result-typed-in-the-message": (
        "acp_v1",
        "session/new",
        """
        def decode_message(data, *, strict=False):
            message = _real.decode_message(data, strict=strict)
            if isinstance(message, Response) and isinstance(message.result, dict) and "sessionId" in message.result:
                return Response(message.id, _real.decode("NewSessionResponse", message.result))
            return message
        """,
    ),
}


@pytest.mark.parametrize("fault", sorted(RPC_FAULTS))
@pytest.mark.usefixtures("hostile_depth_past_the_recursion_limit")
def test_a_seeded_fault_in_the_json_rpc_layer_is_reported_naming_the_method(tmp_path, fault):
    package, method, code = RPC_FAULTS[fault]
    key = package.replace("acp_", "")
    schema = ROOT / f"schema/{key.split('_')[0]}/schema{'.unstable' if 'unstable' in key else ''}.json"
    fixtures = subset(tmp_path / "fx", key, [], messages=True)
    # The envelope fixtures, of no method, go with any method's run.
    only = ("--only", "initialize" if method == "(messages)" else method)
    honest = wrap(tmp_path / "honest", package, RPC_WRAPPER)
    status, output = run("-q", "--package", str(honest), "--schema", str(schema), "--fixtures", str(fixtures), *only)
    assert not fail_lines(output, method), "\n".join(fail_lines(output, method))[:2000]
    faulty = wrap(tmp_path / "faulty", package, RPC_WRAPPER + textwrap.dedent(code))
    status, output = run("-q", "--package", str(faulty), "--schema", str(schema), "--fixtures", str(fixtures), *only)
    assert status == 1, output[-3000:]
    assert fail_lines(output, method), output[-3000:]


def test_only_checks_the_named_definitions_and_methods(tmp_path):
    """A fault in ContentBlock fails a run of everything (above) but not a run
    limited to ToolCallUpdate; limited to ContentBlock it is found, and the
    summary says what the run was limited to."""
    fixtures = subset(tmp_path / "fx", "v2", ["ContentBlock", "ToolCallUpdate"])
    schema = ROOT / "schema/v2/schema.json"
    faulty = wrap(tmp_path / "faulty", "acp_v2", textwrap.dedent(FAULTS["bad-known-variant-is-catch-all"][3]))
    args = ("--package", str(faulty), "--schema", str(schema), "--fixtures", str(fixtures))
    status, output = run(*args, "--only", "ToolCallUpdate")
    assert status == 0, output[-3000:]
    assert "only:     ToolCallUpdate" in output and "ContentBlock" not in output
    assert "coverage: def 1/1" in output
    status, output = run("-q", *args, "--only", "ContentBlock", "--only", "session/prompt")
    assert status == 1 and fail_lines(output, "ContentBlock"), output[-3000:]
    assert "only:     ContentBlock, session/prompt" in output


def test_only_a_name_the_schema_lacks_is_refused(tmp_path):
    code, output = run("--package", str(GENERATED / "acp_v1"), "--only", "ToolCallUpdate", "--only", "nope/method")
    assert code == 2
    assert "--only nope/method:" in output and "no definition or method of that name" in output


# ------------------------------------------------------------------ verdicts


def test_the_verdict_is_jsonschema_s_where_jsonschema_rs_differs_or_cannot_answer(tmp_path):
    """A recorded verdict jsonschema-rs confirms stands; where jsonschema-rs
    differs from it or cannot take the value, jsonschema decides. The two
    validators differ on a pattern's ``$`` before a final newline (Python's
    ``re`` matches, ECMA 262's does not)."""
    import types

    import jsonschema_rs
    from acpgen.conformance.runner import Runner

    defs = {"Word": {"type": "string", "pattern": "^[a-z]+$"}, "Anything": {}}
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}))
    package = types.ModuleType("package")
    package.ValidationError = ValueError  # type: ignore[attr-defined]
    runner = Runner(package, "package", schema, tmp_path)
    assert jsonschema_rs.validator_for(defs["Word"]).is_valid("abc\n") is False  # the two differ here
    assert runner.verdict("Word", "abc\n", True) is True  # jsonschema's
    assert runner.verdict("Word", "abc\n", None) is True
    assert runner.verdict("Word", "abc\n", False) is False  # jsonschema-rs's, which confirms it
    assert runner.verdict("Word", "ABC", True) is False  # neither confirms the record
    assert runner.verdict("Word", "abc", True) is True
    assert runner.verdict("Anything", {1: "a key jsonschema-rs cannot take"}, False) is True
