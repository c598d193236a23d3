"""acpgen tap between real peers: the bytes both ends see are the same, the
transcript validates, invalid traffic is reported while the session goes
on, the agent's exit status and the signals pass through, nothing the
checks meet (a full disk, a slow or dead checker, a 10 MB line) breaks the
session, a kill at any moment loses no line the other side got, and tap
never waits for its checks."""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from acpgen.report import fold_file

from ..conftest import ROOT
from ..interop import harness
from ..patience import HANG

PYTHON = sys.executable
ACPGEN = str(Path(sys.executable).with_name("acpgen"))
RELAY = str(Path(__file__).with_name("tee_relay.py"))
ECHO_AGENT = [PYTHON, str(ROOT / "examples/echo_agent.py")]


def tap(*options: str, agent: list[str]) -> list[str]:
    return [ACPGEN, "tap", *options, "--", *agent]


def relayed(log: Path, command: list[str]) -> list[str]:
    return [PYTHON, RELAY, str(log), "--", *command]


def records(path: Path) -> list[dict]:
    """Every record of a transcript, the start and end records too."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def traffic(path: Path, direction: str | None = None) -> list[dict]:
    """The records of lines of traffic (in ``direction``)."""
    return [r for r in records(path) if "direction" in r and direction in (None, r["direction"])]


def summary(findings: Path) -> str:
    """The observer's summary line of ``findings``, once it is written (the
    observer runs on after tap exits: this waits for its last line)."""
    deadline = time.monotonic() + HANG
    while True:
        lines = findings.read_text(encoding="utf-8").splitlines() if findings.exists() else []
        if lines and lines[-1].startswith("summary: "):
            return lines[-1]
        if time.monotonic() > deadline:
            raise AssertionError(f"no summary in {findings} after {HANG:g} s: {lines[-5:]}")
        time.sleep(0.01)


def wait_gone(pidfd: int) -> None:
    """Wait for the process of ``pidfd`` (``os.pidfd_open``) to end."""
    ready, _, _ = select.select([pidfd], [], [], HANG)
    assert ready, f"still running after {HANG:g} s"


def validate(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ACPGEN, "validate", str(path), *options], capture_output=True, text=True, timeout=HANG, cwd=ROOT
    )


# ------------------------------------------------------------------ real sessions

SESSIONS = {
    # name: (client command up to its agent, agent, protocol, the agent's name, package tap should pick)
    "echo_client-v1": (
        lambda: [PYTHON, str(ROOT / "examples/echo_client.py"), "tapped hello", "--"],
        lambda: ECHO_AGENT,
        "v1",
        None,
        "acp_v1",
    ),
    "acpgen_client-v2": (
        lambda: harness.acpgen_client("v2"),
        lambda: harness.acpgen_agent("v2"),
        "v2",
        "acpgen-echo-agent",
        "acp_v2",
    ),
    "python_sdk-v1": (harness.python_sdk_client, harness.python_sdk_agent, "v1", "python-sdk-echo-agent", "acp_v1"),
}


@pytest.mark.parametrize("name", list(SESSIONS))
def test_both_ends_see_the_same_bytes_and_the_transcript_validates(tmp_path, name):
    client, agent, protocol, agent_name, package = SESSIONS[name]
    client, agent = client(), agent()
    transcript, findings = tmp_path / "t.jsonl", tmp_path / "findings.txt"
    editor_side, agent_side = tmp_path / "editor", tmp_path / "agent"
    command = [
        *client,
        *relayed(
            editor_side, tap("--out", str(transcript), "--findings", str(findings), agent=relayed(agent_side, agent))
        ),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=HANG, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    if agent_name is None:
        assert done.stdout.startswith("tapped hello") and "[end_turn]" in done.stdout, done.stdout
    else:
        harness.check_report(json.loads(done.stdout.strip().splitlines()[-1]), protocol, agent_name)

    for direction in ("client_to_agent", "agent_to_client"):
        sent = (editor_side.parent / f"editor.{direction}").read_bytes()
        assert sent, direction
        assert (agent_side.parent / f"agent.{direction}").read_bytes() == sent, direction
        # the transcript holds each line's bytes as they were
        lines = traffic(transcript, direction)
        assert len(lines) == sent.count(b"\n")
    raw = transcript.read_bytes()
    for line in (editor_side.parent / "editor.client_to_agent").read_bytes().splitlines():
        assert b'"message": ' + line + b"}\n" in raw

    assert summary(findings).startswith(f"summary: {len(records(transcript))} lines, 0 error(s), 0 warning(s)")
    assert findings.read_text().splitlines() == [summary(findings)]
    kept = records(transcript)
    assert kept[0]["recorder"] == "acpgen tap" and kept[-1]["status"] == 0 and "end" in kept[-1]
    # What the checks say on stderr ("checking against acp_v1 ...") is not
    # asserted here: the observer runs on after tap and the client have
    # exited, and the client copies its agent's stderr only until then (see
    # test_the_package_the_version_picks_is_found_where_generate_writes,
    # which reads tap's own stderr).
    checked = validate(transcript, "--strict", "--package", package)
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stdout + checked.stderr
    assert all(r["timestamp"].endswith("Z") for r in traffic(transcript))
    # acpgen report shows the start and end records as no row (and no bad line)
    assert "bad" not in {row.kind for row in fold_file(transcript)[0].rows}


class Editor:
    """The test as the editor: tap (and its agent) on pipes, lines written,
    lines read by id."""

    def __init__(self, command: list[str], cwd: Path = ROOT) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
        )
        self.lines: list[bytes] = []
        self.ended = False
        """Whether tap's stdout has ended."""
        self.arrived = threading.Condition()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.arrived:
                self.lines.append(line)
                self.arrived.notify_all()
        with self.arrived:
            self.ended = True
            self.arrived.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, data: bytes | dict) -> None:
        assert self.process.stdin is not None
        if isinstance(data, dict):
            data = json.dumps(data).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def wait_for(self, predicate, timeout: float = HANG) -> bytes:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for line in self.lines:
                    if predicate(line):
                        return line
                if self.ended:
                    raise AssertionError(f"not seen before tap's stdout ended; got {self.lines[-5:]}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"not seen in {timeout} s; got {self.lines[-5:]}")
                self.arrived.wait(left)

    def answer(self, request_id: int) -> dict:
        line = self.wait_for(lambda line: _id(line) == request_id)
        return json.loads(line)

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(HANG)
        return code

    def finish(self) -> bytes:
        """tap's stderr to its end: the end of the observer too, which shares
        it and runs on after tap exits."""
        self.stderr_reader.join(HANG)
        assert not self.stderr_reader.is_alive(), "stderr still open"
        return self.stderr


def _id(line: bytes):
    try:
        return json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None


def request(request_id: int, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def prompt(request_id: int, session: str, text: str) -> dict:
    return request(request_id, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]})


def test_invalid_traffic_is_reported_and_the_session_goes_on(tmp_path):
    transcript, findings = tmp_path / "t.jsonl", tmp_path / "findings.txt"
    editor = Editor(tap("--out", str(transcript), "--findings", str(findings), agent=ECHO_AGENT))
    editor.send(request(0, "initialize", {"protocolVersion": 1}))
    assert editor.answer(0)["result"]["protocolVersion"] == 1
    editor.send(request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    session = editor.answer(1)["result"]["sessionId"]
    editor.send(b"this is not JSON\n")  # line 5 (the agent's parse error may come before or after)
    editor.send({"jsonrpc": "2.0", "id": 999, "result": {}})  # a response to an id never sent
    editor.send(prompt(2, "ghost", "boo"))  # a session that does not exist: the agent streams updates for it
    assert editor.answer(2)["result"]["stopReason"] == "end_turn"
    editor.send(prompt(3, session, "still here"))
    assert editor.answer(3)["result"]["stopReason"] == "end_turn"
    assert editor.close() == 0
    editor.finish()

    reported = findings.read_text().splitlines()
    assert reported.pop().startswith("summary: ")
    lines = {
        r["message"].get("id") if "message" in r else "garbage": n
        for n, r in enumerate(records(transcript), 1)
        if r.get("direction") == "client_to_agent"
    }

    def one(kind: str) -> str:
        (found,) = [f for f in reported if f": error: {kind}" in f]
        return found

    assert one("bad-line").startswith(f"line {lines['garbage']} (client_to_agent): error: bad-line: not JSON")
    assert one("unknown-response ") == (
        f"line {lines[999]} (client_to_agent): error: unknown-response at /id: no request with id 999 is in flight"
    )
    ghost = [f for f in reported if "unknown-session" in f]
    assert ghost[0] == (
        f"line {lines[2]} (client_to_agent): error: unknown-session at /params/sessionId: "
        "session/prompt for session 'ghost', never opened"
    )
    kept = records(transcript)
    update = next(r for r in kept if r.get("message", {}).get("method") == "session/update")
    assert ghost[1].startswith(f"line {kept.index(update) + 1} (agent_to_client): error: unknown-session")
    assert "session/update for session 'ghost'" in ghost[1]
    assert len(reported) == 3 + 1  # the garbage, the stray response, the ghost prompt and its one update
    assert b"4 error(s), 0 warning(s)" in editor.finish()
    # what the engine of acpgen validate finds in the transcript is what was reported live
    offline = validate(transcript).stdout.splitlines()
    assert [f.split(": ", 1)[1] for f in offline] == [f.split(": ", 1)[1] for f in reported]


# ------------------------------------------------------------------ the process

AGENT_EXITING = "import sys; sys.stdin.read(); sys.exit(3)"
AGENT_KILLED = "import os, signal, sys; sys.stdin.read(); os.kill(os.getpid(), signal.SIGKILL)"


@pytest.mark.parametrize("code, status", [(AGENT_EXITING, 3), (AGENT_KILLED, 128 + signal.SIGKILL)])
def test_the_exit_status_is_the_agent_s(code, status):
    done = subprocess.run(tap(agent=[PYTHON, "-c", code]), input=b"", capture_output=True, timeout=HANG)
    assert done.returncode == status, done.stderr


def test_an_agent_that_cannot_start_is_127_and_said():
    done = subprocess.run(tap(agent=["/nonexistent/agent"]), input=b"", capture_output=True, timeout=HANG)
    assert done.returncode == 127
    assert b"cannot start the agent '/nonexistent/agent'" in done.stderr


SIGNALLED_AGENT = """
import signal, sys, os
def handler(signum, frame):
    os.write(1, f"got {signum}\\n".encode())
    os._exit(signum + 10)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, handler)
os.write(1, b"ready\\n")
signal.pause()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signals_are_passed_to_the_agent(signum):
    editor = Editor(tap(agent=[PYTHON, "-c", SIGNALLED_AGENT]))
    editor.wait_for(lambda line: line == b"ready\n")
    editor.process.send_signal(signum)
    editor.wait_for(lambda line: line == f"got {signum}\n".encode())
    assert editor.process.wait(HANG) == signum + 10  # tap lived on to exit with the agent's status


def test_an_agent_ended_by_a_passed_signal_gives_128_plus_the_signal():
    editor = Editor(tap(agent=[PYTHON, "-c", "import os, signal; os.write(1, b'ready\\n'); signal.pause()"]))
    editor.wait_for(lambda line: line == b"ready\n")
    editor.process.send_signal(signal.SIGTERM)
    assert editor.process.wait(HANG) == 128 + signal.SIGTERM


def cat_through_tap(tmp_path, data: bytes, *options: str, pick: bool = False) -> subprocess.CompletedProcess[bytes]:
    """``data`` written to tap in front of ``cat``, stdin closed, all read back
    (in ``tmp_path``, checked against acp_v1 unless ``--package`` says, or
    ``pick``: the package the version picks)."""
    if "--package" not in options and not pick:
        options = (*options, "--package", str(ROOT / "generated/acp_v1"))
    return subprocess.run(tap(*options, agent=["cat"]), input=data, capture_output=True, timeout=HANG, cwd=tmp_path)


def test_the_editor_closing_its_side_closes_the_agent_s_stdin_and_odd_bytes_pass_unchanged(tmp_path):
    data = b'{"jsonrpc": "2.0", "method": "x"}\n\xff\xfe\x00 not utf-8\r\n\n   \npartial line, no newline'
    done = cat_through_tap(tmp_path, data, "--out", "t.jsonl")
    assert (done.returncode, done.stdout) == (0, data), done.stderr
    kept = traffic(tmp_path / "t.jsonl", "client_to_agent")
    assert kept[0]["message"] == {"jsonrpc": "2.0", "method": "x"}
    assert kept[1]["line"].encode("utf-8", "surrogateescape") == b"\xff\xfe\x00 not utf-8\r"
    assert [r["line"] for r in kept[2:]] == ["", "   ", "partial line, no newline"]


def test_a_10_mb_line_passes_unchanged_and_is_recorded(tmp_path):
    text = "x" * (10 << 20)
    line = json.dumps({"jsonrpc": "2.0", "method": "_big", "params": {"text": text}}).encode() + b"\n"
    done = cat_through_tap(tmp_path, line + line[:1000], "--out", "t.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stdout == line + line[:1000]
    for direction in ("client_to_agent", "agent_to_client"):
        whole, partial = traffic(tmp_path / "t.jsonl", direction)
        assert whole["message"]["params"]["text"] == text
        assert partial["line"].encode() == line[:1000]


def test_a_line_over_the_limit_passes_unchanged_and_is_recorded_by_its_length(tmp_path):
    data = b"a" * 5000 + b"\nshort\n" + b"b" * 3000
    done = cat_through_tap(tmp_path, data, "--out", "t.jsonl", "--findings", "f.txt", "--max-line-bytes", "1000")
    assert (done.returncode, done.stdout) == (0, data), done.stderr
    kept = traffic(tmp_path / "t.jsonl", "client_to_agent")
    assert [r.get("omitted", r.get("line")) for r in kept] == [5000, "short", 3000]
    assert "bad-line: line too long: 5000 bytes" in (tmp_path / "f.txt").read_text()
    assert validate(tmp_path / "t.jsonl", "--max-line-bytes", "1000").stdout.count("line too long") == 4


@pytest.mark.parametrize("out", ["/dev/full", "/nonexistent/dir/t.jsonl"])
def test_a_transcript_that_cannot_be_written_is_said_and_forwarding_goes_on(tmp_path, out):
    data = b"".join(json.dumps({"jsonrpc": "2.0", "method": f"_n{i}"}).encode() + b"\n" for i in range(100))
    done = cat_through_tap(tmp_path, data, "--out", out)
    assert (done.returncode, done.stdout) == (0, data)
    assert done.stderr.count(f"cannot write the transcript {out}".encode()) == 1, done.stderr


def test_validation_that_falls_behind_stops_said_and_recording_and_forwarding_go_on(tmp_path):
    data = b"".join(json.dumps({"jsonrpc": "2.0", "method": f"_n{i}"}).encode() + b"\n" for i in range(20_000))
    done = cat_through_tap(tmp_path, data, "--out", "t.jsonl", "--max-backlog", "5")
    assert (done.returncode, done.stdout) == (0, data)
    assert done.stderr.count(b"validation fell behind (5 lines") == 1, done.stderr
    assert len(traffic(tmp_path / "t.jsonl")) == 40_000


BROKEN_PACKAGE = """
import sys
sys.path.insert(0, {generated!r})
import acp_v1 as _real
# Its public names, those it loads on first use too, but not its codec
# module: no fast path, every message reaches decode_message.
globals().update({{k: getattr(_real, k) for k in _real.__all__}})
assert "codec" not in globals()

def decode_message(data, strict=False):
    if isinstance(data, dict) and data.get("method") == "_boom":
        raise RuntimeError("boom")
    return _real.decode_message(data, strict=strict)
"""


def test_an_error_of_the_checks_is_said_once_and_checking_goes_on(tmp_path):
    package = tmp_path / "broken_acp"
    package.mkdir()
    (package / "__init__.py").write_text(BROKEN_PACKAGE.format(generated=str(ROOT / "generated")))
    boom = json.dumps({"jsonrpc": "2.0", "method": "_boom"}).encode() + b"\n"
    data = boom + boom + b"garbage\n"
    done = cat_through_tap(tmp_path, data, "--package", str(package), "--findings", "f.txt")
    assert (done.returncode, done.stdout) == (0, data)
    assert done.stderr.count(b"internal error in the checks at line 2 (RuntimeError('boom'))") == 1, done.stderr
    assert b"4 line(s) the checks failed on" in done.stderr  # twice each way through cat
    found = (tmp_path / "f.txt").read_text().splitlines()
    assert found.pop().startswith("summary: 8 lines, 2 error(s), 0 warning(s), 4 line(s) the checks failed on")
    found.sort(key=lambda f: "agent_to_client" in f)
    assert [f.split(": ", 1)[1] for f in found] == [
        "error: bad-line: not JSON: Expecting value: line 1 column 1 (char 0)"
    ] * 2
    assert "(client_to_agent)" in found[0] and "(agent_to_client)" in found[1]


def _observer(tap_pid: int) -> int:
    for child in Path(f"/proc/{tap_pid}/task/{tap_pid}/children").read_text().split():
        if b"acpgen.tap.observer" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    raise AssertionError("no observer process")


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_stuck_observer_costs_the_session_nothing_and_the_transcript_is_whole(tmp_path):
    transcript = tmp_path / "t.jsonl"
    editor = Editor(tap("--out", str(transcript), agent=["cat"]))
    editor.send(b"hello\n")
    editor.wait_for(lambda line: line == b"hello\n")
    observer = _observer(editor.process.pid)
    os.kill(observer, signal.SIGSTOP)
    try:
        chunk = b"y" * ((1 << 20) - 1) + b"\n"
        for _ in range(20):  # 20 MiB each way, which the stopped observer never reads
            editor.send(chunk)
        editor.send(b"bye\n")
        editor.wait_for(lambda line: line == b"bye\n")
        assert sum(len(line) for line in editor.lines) == 6 + 20 * len(chunk) + 4
        assert _peak_rss_kib(editor.process.pid) < 200 << 10
    finally:
        os.kill(observer, signal.SIGCONT)
    assert editor.close() == 0
    assert [len(r["line"]) for r in traffic(transcript, "agent_to_client")] == [5, *[len(chunk) - 1] * 20, 3]
    assert b"fell behind" not in editor.finish()


def test_a_dead_observer_is_said_and_forwarding_and_recording_go_on(tmp_path):
    editor = Editor(tap("--out", str(tmp_path / "t.jsonl"), agent=["cat"]))
    editor.send(b"hello\n")
    editor.wait_for(lambda line: line == b"hello\n")
    observer = os.pidfd_open(_observer(editor.process.pid))
    signal.pidfd_send_signal(observer, signal.SIGKILL)
    wait_gone(observer)
    for i in range(200):
        editor.send(b"x" * 1000 + str(i).encode() + b"\n")
    editor.send(b"bye\n")
    editor.wait_for(lambda line: line == b"bye\n")
    assert len(editor.lines) == 202
    assert editor.close() == 0
    assert editor.finish().count(b"the checks stopped") == 1, editor.stderr
    assert len(traffic(tmp_path / "t.jsonl", "client_to_agent")) == 202


def test_without_a_package_to_check_against_it_says_so_and_forwards_and_records(tmp_path):
    data = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}\ngarbage\n'
    done = cat_through_tap(tmp_path, data, "--out", "t.jsonl", "--package", str(tmp_path / "nowhere"))
    assert (done.returncode, done.stdout) == (0, data)
    assert b"cannot validate: " in done.stderr and b"nowhere" in done.stderr, done.stderr
    assert b"error: bad-line" not in done.stderr
    assert len(traffic(tmp_path / "t.jsonl")) == 4
    # picked by the version asked for (no answer: cat echoes the request), and not there either
    done = cat_through_tap(tmp_path, data, pick=True)
    assert b"cannot validate: acp_v2: no such generated package" in done.stderr, done.stderr


def test_the_package_the_version_picks_is_found_where_generate_writes(tmp_path):
    """A project whose [tool.acpgen] generates to vendor/ (no generated/):
    the package initialize picks is found there."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "vendor"\n\n[[tool.acpgen.packages]]\nschema = "s.json"\npackage = "acp_v2"\n',
        encoding="utf-8",
    )
    shutil.copytree(ROOT / "generated/acp_v2", tmp_path / "vendor/acp_v2", ignore=shutil.ignore_patterns("__pycache__"))
    data = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}\n'
    done = cat_through_tap(tmp_path, data, pick=True)
    assert (done.returncode, done.stdout) == (0, data)
    assert b"checking against acp_v2 (protocol version 2, negotiated at initialize)" in done.stderr, done.stderr
    assert b"cannot validate" not in done.stderr


# ------------------------------------------------------------------ kills and ends


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for child in children for p in _tree(int(child)))]


NUMBERED = [json.dumps({"jsonrpc": "2.0", "method": "_n", "params": {"n": n}}).encode() + b"\n" for n in range(1000)]


def _killed_session(tmp_path: Path, kill_at: int, transcript: Path) -> list[bytes]:
    """A session of the 1,000 numbered notifications through tap in front of
    ``cat``, the whole process tree SIGKILLed (as an editor ends it) once
    ``kill_at`` echoes have come back; the lines that came back."""
    process = subprocess.Popen(
        tap("--out", str(transcript), "--package", str(ROOT / "generated/acp_v1"), agent=["cat"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert process.stdin is not None and process.stdout is not None

    def write() -> None:
        try:
            process.stdin.write(b"".join(NUMBERED))  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    received: list[bytes] = []
    killed = False
    while True:
        if len(received) == kill_at and not killed:
            for pid in _tree(process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed = True
        line = process.stdout.readline()
        if not line:
            break
        received.append(line)
    assert process.wait(HANG) == -signal.SIGKILL
    writer.join(HANG)
    with contextlib.suppress(BrokenPipeError):
        process.stdin.close()
    return received


def test_a_kill_of_the_whole_tree_at_any_moment_loses_no_line_the_other_side_got(tmp_path):
    rng = random.Random(20261202)
    cut = biggest = None
    for attempt in range(50):
        transcript = tmp_path / f"t{attempt}.jsonl"
        received = _killed_session(tmp_path, rng.randrange(1001), transcript)
        got = [line for line in received if line.endswith(b"\n")]  # the last may be cut by the kill
        raw = transcript.read_bytes() if transcript.exists() else b""
        lines = raw.split(b"\n")
        last = lines.pop()  # b"" when the transcript ends with a newline
        kept = [json.loads(line) for line in lines]  # every line but the last is a whole record
        for direction in ("client_to_agent", "agent_to_client"):
            recorded = [r["message"]["params"]["n"] for r in kept if r.get("direction") == direction]
            assert recorded == list(range(len(recorded)))
            # every line the client got went through tap both ways: both are in the transcript
            assert len(recorded) >= len(got), (attempt, direction, len(recorded), len(got))
        assert not kept or kept[0]["recorder"] == "acpgen tap"
        assert not any("end" in r for r in kept)  # killed: no end record
        if last and kept:
            cut = transcript
        if biggest is None or len(raw) > biggest[1]:
            biggest = (transcript, len(raw))
    # a transcript cut inside a line (made so when no kill landed inside a write) is read, not crashed on
    assert biggest is not None
    if cut is None:
        cut = tmp_path / "cut.jsonl"
        cut.write_bytes(biggest[0].read_bytes() + b'{"direction": "agent_to_client", "timestamp": "2026-12-')
    checked = validate(cut, "--package", "acp_v1")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    found = checked.stdout.splitlines()
    assert ": error: bad-line: not JSON: " in found[-2], found
    assert ": error: cut-short: the transcript ends with no end record after line " in found[-1], found


STATUS_3_ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\nsys.exit(3)"


def test_tap_exits_with_its_agent_however_far_behind_the_checks_are(tmp_path):
    transcript, findings = tmp_path / "t.jsonl", tmp_path / "findings.fifo"
    os.mkfifo(findings)  # the checks block opening it until it is read: they cannot finish before that
    editor = Editor(tap("--out", str(transcript), "--findings", str(findings), agent=[PYTHON, "-c", STATUS_3_ECHO]))
    for i in range(100):
        editor.send(f"line {i}\n".encode())
    editor.wait_for(lambda line: line == b"line 99\n")
    assert editor.close() == 3  # the agent's status, with the checks blocked all along
    # the proxy wrote the transcript: whole, with its end record
    kept = records(transcript)
    assert [r["line"] for r in kept if r.get("direction") == "agent_to_client"] == [f"line {i}" for i in range(100)]
    assert kept[-1]["status"] == 3 and "end" in kept[-1]
    # the checks were not stopped with tap: they go on, and finish on their own
    with open(findings, "rb") as reader:
        found = reader.read().decode().splitlines()
    assert len(found) == 200 + 1
    assert found[-1] == f"summary: {len(kept)} lines, 200 error(s), 0 warning(s); transcript {transcript}"


TURN_NEVER_ENDING_AGENT = """
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, answer = message.get("method"), None
    if method == "initialize":
        answer = {"protocolVersion": 1}
    elif method == "session/new":
        answer = {"sessionId": "s1"}
    elif method == "session/prompt":  # streams, and never ends the turn
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "thinking"}}
        note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}
        sys.stdout.write(json.dumps(note) + "\\n")
    if answer is not None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}) + "\\n")
    sys.stdout.flush()
"""


def test_findings_and_the_summary_reach_the_findings_file_also_when_tap_is_killed(tmp_path):
    transcript, findings = tmp_path / "t.jsonl", tmp_path / "f.txt"
    agent = [PYTHON, "-c", TURN_NEVER_ENDING_AGENT]
    editor = Editor(tap("--out", str(transcript), "--findings", str(findings), agent=agent))
    editor.send(request(0, "initialize", {"protocolVersion": 1}))
    editor.answer(0)
    editor.send(request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    assert editor.answer(1)["result"]["sessionId"] == "s1"
    editor.send(b"not JSON\n")
    editor.send(prompt(2, "s1", "hi"))
    editor.wait_for(lambda line: b'"thinking"' in line)
    # tap is killed in the turn (its observer is not)
    observer = os.pidfd_open(_observer(editor.process.pid))
    editor.process.kill()
    assert editor.process.wait(HANG) == -signal.SIGKILL
    wait_gone(observer)
    found = findings.read_text().splitlines()
    lines = len(records(transcript))
    assert found[3:] == [f"summary: {lines} lines, 2 error(s), 1 warning(s); transcript {transcript}"], found
    assert found[0] == "line 6 (client_to_agent): error: bad-line: not JSON: Expecting value: line 1 column 1 (char 0)"
    assert found[1] == (
        f"line {lines}: error: cut-short: the transcript ends mid-turn (the session/prompt of line 7 has no "
        f"response) with no end record after line {lines}: the recording (started at line 1) was cut short, and "
        "what came after is missing"
    )
    assert found[2].startswith("line 7 (client_to_agent): warning: unanswered at /id: session/prompt (id 2)")
    offline = validate(transcript).stdout.splitlines()
    assert [f.split(": ", 1)[1] for f in offline] == [f.split(": ", 1)[1] for f in found[:-1]]


HOLDING_AGENT = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import signal; signal.pause()'])\n"
    "print(child.pid, flush=True)\n"
    "sys.exit(5)"
)


def test_a_child_of_the_agent_holding_its_stdout_keeps_tap_no_longer_than_drain_seconds(tmp_path):
    editor = Editor(
        tap("--out", str(tmp_path / "t.jsonl"), "--drain-seconds", "0", agent=[PYTHON, "-c", HOLDING_AGENT])
    )
    holder = os.pidfd_open(int(editor.wait_for(lambda line: line.strip().isdigit())))
    try:
        assert editor.process.wait(HANG) == 5  # the editor's side still open, the agent's stdout too
        assert records(tmp_path / "t.jsonl")[-1]["status"] == 5
    finally:
        signal.pidfd_send_signal(holder, signal.SIGKILL)
    assert b"the agent's stdout is still open 0 s after the agent exited" in editor.finish()


READY_THEN_EXITING = "import sys; print('ready', flush=True); sys.stdin.read(); sys.exit(3)"


def test_a_sigterm_storm_as_tap_exits_never_takes_the_agent_s_status():
    # An editor closes the agent's stdin, then SIGTERMs its process tree: tap,
    # on its way out after the agent's own exit, exits with the agent's status.
    for _ in range(20):
        process = subprocess.Popen(
            tap("--no-checks", agent=[PYTHON, "-c", READY_THEN_EXITING]), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        # forwarded: tap's pumps run, so its handlers of the signals are in place
        assert process.stdout.readline() == b"ready\n"
        process.stdin.close()
        while process.poll() is None:  # a SIGTERM every millisecond until tap exits
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.001)  # unpaced, the storm starves tap's threads of the GIL
        assert process.wait(HANG) in (3, 128 + signal.SIGTERM)  # the agent ended by it, or not
        process.stdout.close()
