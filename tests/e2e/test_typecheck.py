"""The generated packages under ``mypy --strict`` and pyright's strict mode,
as a user's CI checks them once the package is copied in, and the types a
user program sees: a small program per package is checked with the packages
in one run of each checker, its ``assert_type`` lines must hold, and the lines
marked ``# error`` must be the only errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..conftest import GENERATED, ROOT, SCHEMAS

PACKAGES = sorted(SCHEMAS)
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").glob("*.py"))
"""The README's echo agents and clients, checked with the packages."""

COMMON = """\
from __future__ import annotations

from typing import Any

from typing_extensions import assert_type

import {pkg} as acp
from {pkg} import UNSET, Unset

data: Any = {{}}

update = acp.decode("ToolCallUpdate", data)
assert_type(update, acp.ToolCallUpdate)
assert_type(update.title, "str | None | Unset")
title = update.title
if title is not UNSET and title is not None:
    assert_type(title, str)
    title.upper()
if title is not UNSET:
    assert_type(title, "str | None")
if title:
    assert_type(title, str)
title.upper()  # error: may be None or UNSET
assert_type(acp.decode_class(acp.ToolCallUpdate, data), acp.ToolCallUpdate)
assert_type(acp.ToolCallUpdate.from_wire(data, strict=True), acp.ToolCallUpdate)
assert_type(acp.decode("SessionUpdate", data), acp.SessionUpdate)
assert_type(acp.decode("SessionId", data), acp.SessionId)
assert_type(acp.decode("RequestId", data), {request_id})
request_id: acp.RequestId = 1
request_id = acp.RequestId_  # error: the schema's own spelling, no rename
assert_type(acp.decode("ToolKind", data), {tool_kind})
assert_type(acp.decode("NoSuchDefinition", data), object)
acp.decode(1, data)  # error: names are strings

state = acp.apply(None, update)
assert_type(state, acp.ToolCallState)
assert_type(acp.apply(state, acp.ToolCallUpdateSessionUpdate(tool_call_id=acp.ToolCallId("c1"))), acp.ToolCallState)
assert_type(acp.apply_tool_call_update(state, update), acp.ToolCallState)
assert_type(state.title, {state_title})
acp.apply(state, acp.ToolKind.EDIT)  # error: not an upsert

assert_type(acp.encode(update), dict[str, Any])
assert_type(update.to_wire(), dict[str, Any])
assert_type(acp.encode(state), dict[str, Any])
assert_type(acp.encode(acp.ToolKind.EDIT), str)
assert_type(acp.encode([update]), list[Any])
assert_type(acp.encode(None), None)

# A named string type is a NewType: an id is made from a str by calling its
# type, comes typed from what the package decodes, and is not another id.
session_id = acp.SessionId("s1")
tool_call_id = update.tool_call_id
assert_type(tool_call_id, acp.ToolCallId)
acp.PromptRequest(session_id=session_id, prompt=[])
acp.ToolCallUpdate(tool_call_id=tool_call_id)
acp.PromptRequest(session_id=tool_call_id, prompt=[])  # error: swapped: a ToolCallId for a SessionId
acp.ToolCallUpdate(tool_call_id=session_id)  # error: swapped: a SessionId for a ToolCallId
acp.PromptRequest(session_id="s1", prompt=[])  # error: a plain str for a SessionId

# Trace context: any object with the Tracer methods is a tracer.
traced: acp.ConnectionOptions = {{"tracer": acp.RecordingTracer()}}
otel: acp.ConnectionOptions = {{"tracer": acp.OpenTelemetryTracer()}}
untraced: acp.ConnectionOptions = {{"tracer": 1}}  # error: not a tracer
assert_type(acp.current_trace(), "acp.TraceContext | None")
with acp.use_trace(acp.TraceContext.new()) as context:
    assert_type(context, "acp.TraceContext | None")
assert_type(acp.trace_of(data), "acp.TraceContext | None")
assert_type(acp.without_trace(update), acp.ToolCallUpdate)
assert_type(acp.TraceContext.parse("00-x"), "acp.TraceContext | None")
"""

V1 = """
response = acp.decode("PromptResponse", data)
assert_type(response, acp.PromptResponse)
assert_type(response.stop_reason, acp.StopReason)


async def send(conn: acp.AgentSideConnection[Any]) -> None:
    session = conn.session(acp.SessionId("s1"))
    assert_type(session, acp.SessionSender)
    await session.message("hi")
    tool = await session.tool_call("Read", content=["x", acp.text("y"), acp.diff("/a", "b")])
    assert_type(tool, acp.ToolCallHandle)
    assert_type(tool.tool_call_id, acp.ToolCallId)
    await tool.update(title=None, content=None)
    await tool.complete()
    await session.message(1)  # error: not content
    await tool.complete(status=acp.ToolCallStatus.FAILED)  # error: complete sets the status
"""

V2 = """
response = acp.decode("PromptResponse", data)
assert_type(response, acp.PromptResponse)
assert_type(response.message_id, acp.MessageId)
response.stop_reason  # error: v2 reports the end of a turn in a state_update


async def send(conn: acp.AgentSideConnection[Any]) -> None:
    session = conn.session(acp.SessionId("s1"))
    assert_type(session, acp.SessionSender)
    await session.message_chunk(acp.MessageId("m1"), "hi")
    tool = await session.tool_call_update(title="Run")
    assert_type(tool, acp.ToolCallHandle)
    await tool.fail(content=[acp.tool_content("x"), "y"])
    await session.message_chunk("hi")  # error: the message id comes first
"""


def user_program(package: str) -> str:
    v2 = package.startswith("acp_v2")
    return COMMON.format(
        pkg=package,
        tool_kind='"acp.ToolKind | str"' if v2 else "acp.ToolKind",
        state_title='"str | None"' if v2 else "str",
        request_id='"int | str"' if v2 else '"None | int | str"',
    ) + (V2 if v2 else V1)


def marked_lines(source: str) -> set[int]:
    return {number for number, line in enumerate(source.splitlines(), 1) if "# error" in line}


@dataclass
class Report:
    errors: dict[str, set[int]]
    """File (``acp_v1/codec.py``, ``user_acp_v1.py``) -> lines with an error."""
    output: str
    messages: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    """(file, line) -> the errors there: mypy's message with its code,
    pyright's first line with its rule."""


GOLDEN = ROOT / "tests/fixtures/golden"
"""The golden package (tests/e2e/test_golden.py), checked with the others."""
OTHERS = {"kitchen_sink": GOLDEN, "clash_pkg": None}
"""Packages checked beside the four, by name -> the directory holding it
(None: made for the run). ``clash_pkg`` is the schema of
tests/e2e/test_collisions.py, whose names are those of builtins, typing and
the runtime: told apart in the annotations too (``x: str`` in a module that
defines a class ``str`` would be the class)."""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    """One mypy and one pyright run over the four packages, the golden
    package, the collision package and the four user programs."""
    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    from .test_collisions import _schema

    work = tmp_path_factory.mktemp("typecheck")
    for package in PACKAGES:
        (work / f"user_{package}.py").write_text(user_program(package))
    schema = work / "clash_schema.json"
    schema.write_text(json.dumps(_schema()), encoding="utf-8")
    write_packages(work / "clash", {"clash_pkg": build_package(schema, "clash_pkg")})
    others = {name: (where or work / "clash") for name, where in OTHERS.items()}
    return {"mypy": run_mypy(work, others), "pyright": run_pyright(work, others)}


def run_mypy(work: Path, others: dict[str, Path]) -> Report:
    users = [str(work / f"user_{p}.py") for p in PACKAGES]
    extra = [str(where / name) for name, where in others.items()]
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--no-error-summary",
         "--cache-dir", str(work / ".mypy_cache"), *PACKAGES, *extra, *users, *EXAMPLES],
        cwd=GENERATED, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stdout + out.stderr
    errors: dict[str, set[int]] = {}
    messages: dict[tuple[str, int], list[str]] = {}
    for line in out.stdout.splitlines():
        match = re.match(r"(.+?):(\d+): error: (.*)", line)
        if match:
            path = _relative(Path(GENERATED, match[1]), work, others)
            errors.setdefault(path, set()).add(int(match[2]))
            messages.setdefault((path, int(match[2])), []).append(match[3])
    return Report(errors, out.stdout, messages)


def run_pyright(work: Path, others: dict[str, Path]) -> Report:
    # examples/ too: the network examples import the echo agent and client beside them
    extra = [str(GENERATED), str(ROOT / "examples"), *(str(where) for where in others.values())]
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.10", "extraPaths": extra}
    (work / "pyrightconfig.json").write_text(json.dumps(config))
    pyright = Path(sys.executable).with_name("pyright")
    directories = [GENERATED / p for p in PACKAGES] + [where / name for name, where in others.items()]
    files = [
        str(f)
        for i, directory in enumerate(directories)
        for f in pyright_files(directory, directories[0], *directories[1:i])
    ]
    files += [f"user_{p}.py" for p in PACKAGES] + EXAMPLES
    out = subprocess.run(
        [str(pyright), "--outputjson", "-p", str(work), *files], cwd=work, capture_output=True, text=True
    )
    report = json.loads(out.stdout)
    errors: dict[str, set[int]] = {}
    messages = []
    at: dict[tuple[str, int], list[str]] = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] != "error":
            continue
        path = _relative(Path(diagnostic["file"]), work, others)
        line = diagnostic["range"]["start"]["line"] + 1
        errors.setdefault(path, set()).add(line)
        messages.append(f"{path}:{line}: {diagnostic['message']}")
        first = diagnostic["message"].splitlines()[0]
        at.setdefault((path, line), []).append(f"{first}  [{diagnostic.get('rule', '')}]")
    return Report(errors, "\n".join(messages), at)


RUNTIME_COPIES = sorted(p.name for p in (ROOT / "generator/acpgen/runtime").glob("_*.py") if p.name != "__init__.py")
"""The runtime modules copied into every package (``_connection.py``, ...)."""


def _below_header(path: Path) -> str:
    """A generated module's text below its header comment (which names the
    schema it was generated from)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return "".join(lines[start:])


def pyright_files(package: Path, first: Path, *earlier: Path) -> list[Path]:
    """The modules of ``package`` pyright checks: all of them in the first
    package; in the others, all but the runtime copies that are the same
    text as the first package's below their header (or, for a module the
    first lacks, such as ``_mcp.py`` of the unstable packages only, as the
    copy of the first of ``earlier``, the packages checked before, that has
    one). Those import only one another, so their check is that package's:
    pyright, the costlier checker by far, checks each runtime module once
    (mypy analyses every copy anyway, to type the modules that import them)."""
    same = set()
    if package != first:
        for name in RUNTIME_COPIES:
            reference = next((p for p in (first, *earlier) if (p / name).is_file()), None)
            if (
                reference is not None
                and (package / name).is_file()
                and _below_header(package / name) == _below_header(reference / name)
            ):
                same.add(name)
    return sorted(f for f in package.glob("*.py") if f.name not in same)


def test_each_package_holds_the_runtime_copies_pyright_checks_once() -> None:
    """The committed packages and the golden one hold every runtime module,
    the same text as acp_v1's below the header, so pyright checks none of
    them twice; a copy that differed would be checked where it is."""
    first = GENERATED / PACKAGES[0]
    assert len(RUNTIME_COPIES) >= 15
    earlier: list[Path] = []
    for package in [*(GENERATED / p for p in PACKAGES[1:]), GOLDEN / "kitchen_sink"]:
        checked = {f.name for f in pyright_files(package, first, *earlier)}
        # A runtime module the packages before it lack (_mcp.py, _proxy.py, _conductor.py: the unstable
        # packages only) is checked in the first that has it.
        new = {n for n in RUNTIME_COPIES if (package / n).is_file() and not (first / n).is_file()}
        new -= {n for n in new for p in earlier if (p / n).is_file()}
        assert checked & set(RUNTIME_COPIES) == new, package
        assert {"codec.py", "models.py", "__init__.py"} <= checked
        earlier.append(package)
    assert {f.name for f in pyright_files(first, first)} >= set(RUNTIME_COPIES) - {
        "_mcp.py",
        "_proxy.py",
        "_conductor.py",
    }


def test_a_runtime_copy_that_differs_is_checked_where_it_is(tmp_path: Path) -> None:
    first = GENERATED / PACKAGES[0]
    package = tmp_path / "pkg"
    package.mkdir()
    for name in RUNTIME_COPIES:
        if (first / name).is_file():
            (package / name).write_text((first / name).read_text(encoding="utf-8"), encoding="utf-8")
    (package / "_patch.py").write_text(
        "# another header\n" + _below_header(first / "_patch.py") + "x: int = 'no'\n", encoding="utf-8"
    )
    (package / "_runtime.py").write_text(
        "# another header\n# of two lines\n" + _below_header(first / "_runtime.py"), encoding="utf-8"
    )
    assert [f.name for f in pyright_files(package, first)] == ["_patch.py"]


def _relative(path: Path, work: Path, others: dict[str, Path]) -> str:
    """``acp_v1/codec.py``, ``kitchen_sink/models.py``, ``user_acp_v1.py``."""
    path = path.resolve()
    for base in (GENERATED.resolve(), *(where.resolve() for where in others.values()), work.resolve()):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return path.as_posix()


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("package", PACKAGES)
def test_package_is_clean_under_strict_checking(checked: dict[str, Report], checker: str, package: str) -> None:
    report = checked[checker]
    dirty = sorted(f for f in report.errors if f.startswith(package + "/"))
    assert not dirty, report.output


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("package", sorted(OTHERS))
def test_the_golden_and_the_collision_packages_are_clean_under_strict_checking(
    checked: dict[str, Report], checker: str, package: str
) -> None:
    report = checked[checker]
    dirty = sorted(f for f in report.errors if f.startswith(package + "/"))
    assert not dirty, report.output


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_the_examples_are_clean_under_strict_checking(checked: dict[str, Report], checker: str) -> None:
    report = checked[checker]
    assert len(EXAMPLES) >= 4
    dirty = sorted(f for f in report.errors if "/examples/" in f)
    assert not dirty, report.output


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("package", PACKAGES)
def test_user_program_sees_precise_types(checked: dict[str, Report], checker: str, package: str) -> None:
    """Every ``assert_type`` holds and the ``# error`` lines, only they, fail."""
    report = checked[checker]
    got = report.errors.get(f"user_{package}.py", set())
    assert got == marked_lines(user_program(package)), report.output


SWAPPED = {
    "swapped: a ToolCallId for a SessionId": {
        "mypy": 'Argument "session_id" to "PromptRequest" has incompatible type "ToolCallId"; expected "SessionId"'
        "  [arg-type]",
        "pyright": 'Argument of type "ToolCallId" cannot be assigned to parameter "session_id" of type "SessionId"'
        ' in function "__init__"  [reportArgumentType]',
    },
    "swapped: a SessionId for a ToolCallId": {
        "mypy": 'Argument "tool_call_id" to "ToolCallUpdate" has incompatible type "SessionId"; expected "ToolCallId"'
        "  [arg-type]",
        "pyright": 'Argument of type "SessionId" cannot be assigned to parameter "tool_call_id" of type "ToolCallId"'
        ' in function "__init__"  [reportArgumentType]',
    },
    "a plain str for a SessionId": {
        "mypy": 'Argument "session_id" to "PromptRequest" has incompatible type "str"; expected "SessionId"'
        "  [arg-type]",
        "pyright": 'Argument of type "Literal[\'s1\']" cannot be assigned to parameter "session_id" of type'
        ' "SessionId" in function "__init__"  [reportArgumentType]',
    },
}
"""The user program's lines that pass one id for another (``# error: KEY``)
and the one error each checker reports there."""


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("package", PACKAGES)
def test_a_swapped_id_is_the_error_at_its_line(checked: dict[str, Report], checker: str, package: str) -> None:
    """The named string types are NewTypes: a ToolCallId passed where a
    SessionId goes (or a plain str) is an error, at that line and of that
    kind; the same ids passed where they go are clean
    (:func:`test_user_program_sees_precise_types`)."""
    report = checked[checker]
    lines = user_program(package).splitlines()
    found = {}
    for number, line in enumerate(lines, 1):
        note = line.partition("  # error: ")[2]
        if note in SWAPPED:
            found[note] = report.messages.get((f"user_{package}.py", number))
    assert found == {note: [errors[checker]] for note, errors in SWAPPED.items()}, report.output
