"""acpgen validate on hostile input and in hostile surroundings: bytes that
are not UTF-8, lines nested too deeply, lines too long (or endless), a
reader that closes the output early, an interrupted or failing --schema run,
and an invalid request answered with an error. Each is a finding at its line
(or an exit status), never a traceback, and the lines after it are checked."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc

import pytest
from acpgen.cli.validate import _Output
from acpgen.validate import loader, validate_file, validate_lines

from ..conftest import ROOT, load_generated
from ..patience import HANG

v1 = load_generated("acp_v1")
ACPGEN = str(ROOT / ".venv/bin/acpgen")
PACKAGE = str(ROOT / "generated/acp_v1")


def message(direction, **fields):
    return json.dumps({"direction": direction, "message": {"jsonrpc": "2.0", **fields}})


OPENING = [
    message("client_to_agent", id=0, method="initialize", params={"protocolVersion": 1}),
    message("agent_to_client", id=0, result={"protocolVersion": 1}),
    message("client_to_agent", id=1, method="session/new", params={"cwd": "/", "mcpServers": []}),
    message("agent_to_client", id=1, result={"sessionId": "s"}),
]
CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
GOOD = message("agent_to_client", method="session/update", params={"sessionId": "s", "update": CHUNK})
STRAY = message("agent_to_client", method="session/update", params={"sessionId": "nobody", "update": CHUNK})
"""An update for a session never opened: one ``unknown-session`` error."""


def write(tmp_path, *lines, name="transcript.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return str(path)


def kinds(findings):
    return [(f.line, f.kind) for f in findings]


@pytest.fixture(params=["orjson", "stdlib"])
def backend(request, monkeypatch):
    """The test with orjson and with json (the tests of reading and checking
    lines ask for it; those of --schema and of exit statuses do not)."""
    if request.param == "orjson":
        pytest.importorskip("orjson")
    monkeypatch.setenv("ACPGEN_JSON", request.param)
    return request.param


# ---------------------------------------------------------------- bytes and depth


def test_bytes_that_are_not_utf8_are_a_finding_and_the_rest_is_checked(tmp_path, backend):
    path = write(tmp_path, *OPENING, GOOD.encode().replace(b"hi", b"h\xffi"), b"\xc3\x28", STRAY, GOOD)
    findings = list(validate_file(path, v1))
    assert kinds(findings) == [(5, "bad-line"), (6, "bad-line"), (7, "unknown-session")]
    assert "not UTF-8" in findings[0].message and "0xff" in findings[0].message
    assert "0xc3" in findings[1].message


def test_bytes_lines_given_to_validate_lines_are_read_as_a_file_is(backend):
    lines = [line.encode() for line in OPENING] + [b"\xff", STRAY.encode()]
    assert kinds(validate_lines(lines, v1)) == [(5, "bad-line"), (6, "unknown-session")]


@pytest.mark.parametrize("depth", [100_000, 5_000, 1_100])
def test_a_line_nested_too_deeply_is_a_finding_and_the_rest_is_checked(tmp_path, depth, backend):
    deep = "[" * depth + "]" * depth
    path = write(tmp_path, *OPENING, deep, STRAY)
    findings = list(validate_file(path, v1))
    assert kinds(findings) == [(5, "bad-line"), (6, "unknown-session")]
    assert "deep" in findings[0].message
    assert kinds(validate_lines([*OPENING, deep, STRAY], v1)) == kinds(findings)


def nested(depth):
    value: object = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [100, 600, 900])
@pytest.mark.parametrize("valid", [True, False])
def test_a_message_with_deep_members_is_checked_without_a_crash(depth, valid, backend):
    """Deep JSON in a member the schema leaves open (rawInput, _meta), in a
    message that is valid (the fast path) or not (the decoders, which recurse)."""
    tool = {"sessionUpdate": "tool_call", "toolCallId": "t", "rawInput": nested(depth)}
    if valid:
        tool["title"] = "Read"
    deep = message(
        "agent_to_client", method="session/update", params={"sessionId": "s", "update": tool, "_meta": nested(depth)}
    )
    findings = list(validate_lines([*OPENING, deep, STRAY], v1))
    assert findings[-1].line == 6 and findings[-1].kind == "unknown-session"
    assert [f.line for f in findings[:-1]] == ([] if valid else [5])


# ---------------------------------------------------------------- line length


def test_a_line_over_the_limit_is_a_finding_and_skipped_to_its_end(tmp_path, backend):
    long = message(
        "agent_to_client",
        method="session/update",
        params={"sessionId": "nobody", "update": {**CHUNK, "content": {"type": "text", "text": "x" * 5000}}},
    )
    path = write(tmp_path, *OPENING, long, STRAY, GOOD)
    findings = list(validate_file(path, v1, max_line_bytes=4096))
    assert kinds(findings) == [(5, "bad-line"), (6, "unknown-session")]
    assert "line too long" in findings[0].message and "4096" in findings[0].message
    # At the limit (the newline not counted), the line is read and checked.
    assert kinds(validate_file(path, v1, max_line_bytes=len(long))) == [(5, "unknown-session"), (6, "unknown-session")]
    assert kinds(validate_file(path, v1, max_line_bytes=len(long) - 1))[0] == (5, "bad-line")
    # The same for lines given as str, counted in UTF-8 bytes.
    wide = long.replace("x" * 5000, "é" * 2500)  # 5000 bytes, 2500 characters
    assert kinds(validate_lines([*OPENING, wide], v1, max_line_bytes=4096)) == [(5, "bad-line")]
    assert kinds(validate_lines([*OPENING, wide], v1, max_line_bytes=len(wide.encode()))) == [(5, "unknown-session")]


def test_a_last_line_without_a_newline_is_read(tmp_path, backend):
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(("\n".join([*OPENING, STRAY])).encode())
    assert kinds(validate_file(path, v1)) == [(5, "unknown-session")]
    assert kinds(validate_file(path, v1, max_line_bytes=len(STRAY))) == [(5, "unknown-session")]
    assert kinds(validate_file(path, v1, max_line_bytes=len(STRAY) - 1)) == [(5, "bad-line")]


def test_a_huge_line_is_read_in_bounded_memory(tmp_path, backend):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as out:
        out.write("\n".join(OPENING).encode() + b"\n")
        block = b"x" * (1 << 20)
        for _ in range(32):  # 32 MiB without a newline
            out.write(block)
        out.write(b"\n" + STRAY.encode())  # then a last line without one
    tracemalloc.start()
    try:
        findings = list(validate_file(path, v1, max_line_bytes=1 << 16))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kinds(findings) == [(5, "bad-line"), (6, "unknown-session")]
    assert peak < 4 << 20, f"peak {peak} bytes for a 64 KiB line limit"


def test_an_endless_line_is_reported_at_once_in_bounded_memory(backend):
    """/dev/zero: one line that never ends. Its finding comes as soon as the
    limit is passed; reading on (to a newline that never comes) holds no
    more than a chunk."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    tracemalloc.start()
    try:
        findings = validate_file("/dev/zero", v1, max_line_bytes=1 << 20)
        first = next(findings)
        _, peak = tracemalloc.get_traced_memory()
        findings.close()
    finally:
        tracemalloc.stop()
    assert (first.line, first.kind) == (1, "bad-line")
    assert peak < 4 << 20


def test_the_limit_must_be_positive(backend):
    with pytest.raises(ValueError):
        list(validate_lines([GOOD], v1, max_line_bytes=0))


# ---------------------------------------------------------------- the command


def run(*args, **kwargs):
    return subprocess.run([ACPGEN, "validate", *args], capture_output=True, text=True, **kwargs)


def test_the_command_reports_bad_lines_and_goes_on(tmp_path, backend):
    path = write(tmp_path, *OPENING, b"\xc3\x28", "[" * 50_000, "[" * 100_000 + "]" * 100_000, STRAY)
    out = run(path, "--package", PACKAGE, "--format", "json", "--max-line-bytes", "60000")
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    *found, summary = [json.loads(line) for line in out.stdout.splitlines()]
    assert summary["summary"]["findings"] == {"bad-line": 3, "unknown-session": 1}
    assert [(f["line"], f["kind"]) for f in found] == [
        (5, "bad-line"),
        (6, "bad-line"),
        (7, "bad-line"),
        (8, "unknown-session"),
    ]
    assert "line too long" in found[2]["message"]


def test_usage_errors_exit_2(tmp_path):
    path = write(tmp_path, *OPENING)
    assert run(str(tmp_path / "missing.jsonl")).returncode == 2
    assert run(str(tmp_path)).returncode == 2  # a directory
    bad = run(path, "--package", PACKAGE, "--max-line-bytes", "0")
    assert bad.returncode == 2, bad.stderr
    nowhere = run(path, "--package", str(tmp_path / "nothing"))
    assert nowhere.returncode == 2 and "Traceback" not in nowhere.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_transcript_exits_2(tmp_path):
    path = write(tmp_path, *OPENING)
    os.chmod(path, 0)
    out = run(path, "--package", PACKAGE)
    assert out.returncode == 2 and "Traceback" not in out.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc")
def test_a_transcript_that_fails_while_read_exits_2():
    # Opens for anyone, root included, and fails on the first read (EIO).
    out = run("/proc/self/mem", "--package", PACKAGE)
    assert out.returncode == 2, out.stderr
    assert "cannot read /proc/self/mem" in out.stderr and "Traceback" not in out.stderr


def _closed_early(tmp_path, lines, *args):
    """Run the command, read one line of its output and close the pipe."""
    path = write(tmp_path, *lines)
    command = subprocess.Popen(
        [ACPGEN, "validate", path, "--package", PACKAGE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert command.stdout is not None and command.stderr is not None
    first = command.stdout.readline()
    command.stdout.close()
    stderr = command.stderr.read().decode()
    return first.decode(), command.wait(timeout=HANG), stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_output_with_warnings_only_exits_0(tmp_path, fmt, backend):
    # 20000 requests never answered: warnings, far more than a pipe holds.
    prompts = [
        message("client_to_agent", id=100 + i, method="session/prompt", params={"sessionId": "s", "prompt": []})
        for i in range(20000)
    ]
    first, status, stderr = _closed_early(tmp_path, [*OPENING, *prompts], "--format", fmt)
    assert "unanswered" in first
    assert status == 0, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr and "Broken pipe" not in stderr, stderr
    if fmt == "text":  # the summary counts the whole transcript
        assert "0 error(s), 20000 warning(s)" in stderr


def test_a_closed_output_with_errors_exits_1(tmp_path, backend):
    first, status, stderr = _closed_early(tmp_path, [*OPENING, *[STRAY] * 20000])
    assert "error: unknown-session" in first
    assert status == 1, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert "20000 error(s)" in stderr


def test_text_stdout_cannot_encode_is_escaped():
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    out = _Output(stream)
    out.write("line 1: error: invalid at /params/\ud800/é: x")
    out.flush()
    assert stream.buffer.getvalue() == b"line 1: error: invalid at /params/\\ud800/\\xe9: x\n"


# ---------------------------------------------------------------- --schema leaves nothing behind


def _leftovers(where):
    return sorted(name for name in os.listdir(where) if name.startswith("acpgen-validate-"))


def test_validate_schema_leaves_no_temporary_directory(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    schema = str(ROOT / "schema/v1/schema.json")
    path = write(tmp_path, *OPENING, STRAY)
    out = run(path, "--schema", schema, "--rules", "v1", env=env)
    assert out.returncode == 1, out.stderr
    assert "unknown-session" in out.stdout
    assert _leftovers(tmp) == []
    # Also on a usage error...
    bad = run(str(tmp_path / "missing.jsonl"), "--schema", schema, env=env)
    assert bad.returncode == 2 and _leftovers(tmp) == []
    # ... and when the schema does not generate.
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    failed = run(path, "--schema", str(broken), env=env)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert _leftovers(tmp) == []


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError, SystemExit])
def test_package_from_schema_cleans_up_when_interrupted(tmp_path, monkeypatch, failure):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen = []

    def interrupted(path):
        seen.append(_leftovers(tmp_path))  # the package was written
        raise failure()

    monkeypatch.setattr(loader, "load_package", interrupted)
    with pytest.raises(failure):
        loader.package_from_schema(str(ROOT / "schema/v1/schema.json"), "v1")
    assert seen and seen[0] != []
    assert _leftovers(tmp_path) == []


def test_package_from_schema_gives_a_whole_package(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    package = loader.package_from_schema(str(ROOT / "schema/v1/schema.json"), "v1")
    assert _leftovers(tmp_path) == []
    # Its modules were all imported before the directory went, the lazy ones too.
    assert package.Connection.__name__ == "Connection"
    assert kinds(validate_lines([*OPENING, STRAY], package)) == [(5, "unknown-session")]
    again = loader.package_from_schema(str(ROOT / "schema/v2/schema.json"), "v2")
    assert again.PROTOCOL_VERSION == 2 and again.codec is not package.codec


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_schema_run_leaves_nothing(tmp_path, signum):
    """A signal while the package is generated, or (if that was too quick
    to catch) while /dev/zero is read: exit 130 (143), nothing left."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    command = subprocess.Popen(
        [ACPGEN, "validate", "/dev/zero", "--schema", str(ROOT / "schema/v1/schema.json"), "--max-line-bytes", "1024"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + HANG
    while not _leftovers(tmp) and command.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    if signum == signal.SIGTERM and not _leftovers(tmp):
        time.sleep(0.5)  # past generation: SIGTERM then kills as it always does
    command.send_signal(signum)
    _out, err = command.communicate(timeout=HANG)
    if signum == signal.SIGINT:
        assert command.returncode == 130, err
        assert b"Traceback" not in err
    assert _leftovers(tmp) == []


# ---------------------------------------------------------------- an invalid request in flight

INVALID_PROMPT = message("client_to_agent", id=7, method="session/prompt", params={"sessionId": "s"})


def test_an_invalid_request_and_its_error_reply_are_one_finding(backend):
    reply = message("agent_to_client", id=7, error={"code": -32602, "message": "Invalid params"})
    findings = list(validate_lines([*OPENING, INVALID_PROMPT, reply], v1))
    assert [(f.line, f.kind, f.pointer) for f in findings] == [(5, "invalid", "/params")]  # prompt missing
    # Bare messages too (no directions).
    bare = [json.dumps(json.loads(line)["message"]) for line in [*OPENING, INVALID_PROMPT, reply]]
    assert kinds(validate_lines(bare, v1)) == [(5, "invalid")]


def test_an_invalid_envelope_with_a_usable_id_is_in_flight_too(backend):
    bad = message("client_to_agent", id=8, method=["not", "a", "name"])
    reply = message("agent_to_client", id=8, error={"code": -32600, "message": "Invalid request"})
    assert kinds(validate_lines([*OPENING, bad, reply], v1)) == [(5, "invalid")]


def test_an_invalid_request_never_answered_is_unanswered(backend):
    findings = list(validate_lines([*OPENING, INVALID_PROMPT], v1))
    assert kinds(findings) == [(5, "invalid"), (5, "unanswered")]
    assert "invalid session/prompt" in findings[1].message


def test_an_invalid_request_reusing_an_id_in_flight_is_a_duplicate(backend):
    first = message("client_to_agent", id=7, method="session/prompt", params={"sessionId": "s", "prompt": []})
    findings = list(validate_lines([*OPENING, first, INVALID_PROMPT], v1))
    assert kinds(findings)[:2] == [(6, "invalid"), (6, "duplicate-id")]


def test_an_error_reply_to_nothing_in_flight_is_still_unknown(backend):
    reply = message("agent_to_client", id=9, error={"code": -32602, "message": "Invalid params"})
    assert kinds(validate_lines([*OPENING, reply], v1)) == [(5, "unknown-response")]


@pytest.mark.parametrize("moment", ["made", "named"])
def test_ctrl_c_as_the_schema_package_directory_is_made_leaves_nothing(tmp_path, moment):
    """Ctrl-C the moment the temporary directory exists (``made``, under the
    name it has until it is locked) or has its name (``named``), before the
    code that removes it knows it (the window a polling test hit)."""
    script = f"""
import os, signal, sys, tempfile
sys.path.insert(0, {str(ROOT / "generator")!r})
from acpgen.validate import loader
made, renamed = tempfile.mkdtemp, os.rename
def mkdtemp(*args, **kwargs):
    path = made(*args, **kwargs)
    if {moment!r} == "made" and os.path.basename(path).startswith("acpgen-claim-"):
        os.kill(os.getpid(), signal.SIGINT)
    return path
def rename(source, target, **kwargs):
    renamed(source, target, **kwargs)
    if {moment!r} == "named" and os.path.basename(target).startswith("acpgen-validate-"):
        os.kill(os.getpid(), signal.SIGINT)
tempfile.mkdtemp, os.rename = mkdtemp, rename
try:
    loader.package_from_schema({str(ROOT / "schema/v1/schema.json")!r})
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True, timeout=HANG
    )
    assert done.returncode == 130, done.stderr
    assert os.listdir(tmp) == []  # nor a directory under the name it has until it is locked
