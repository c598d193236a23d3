"""The formatter's temporary directory goes however formatting ends: an
error, a formatter killed or timed out, Ctrl-C, SIGTERM, SIGHUP; after a
SIGKILL, the next run deletes it, and never the directory of a run still
going."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from acpgen.emit import fmt
from acpgen.errors import AcpgenError

from ..patience import HANG

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="signals, flock and /proc as on Linux")


@pytest.fixture
def scratch_home(tmp_path, monkeypatch) -> Path:
    """A private system temporary directory for this test."""
    home = tmp_path / "tmp"
    home.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(home))  # read by acpgen.scratch
    return home


def _fake_formatter(tmp_path: Path, body: str) -> Path:
    fake = tmp_path / "fake-formatter"
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'formatter.pid'}\n{body}\n")
    fake.chmod(0o755)
    return fake


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_a_killed_formatter_leaves_no_temporary_directory(tmp_path, scratch_home, monkeypatch):
    fake = _fake_formatter(tmp_path, "kill -9 $$")
    monkeypatch.setattr(fmt, "ruff_binary", lambda: str(fake))
    with pytest.raises(AcpgenError, match=r"exit -9"):
        fmt.format_files({"p/m.py": "x = 1\n"})
    assert list(scratch_home.iterdir()) == []


def test_a_formatter_that_hangs_is_stopped_and_leaves_nothing(tmp_path, scratch_home, monkeypatch):
    fake = _fake_formatter(tmp_path, "exec sleep 3600")
    monkeypatch.setattr(fmt, "ruff_binary", lambda: str(fake))
    monkeypatch.setattr(fmt, "TIMEOUT", 0.5)
    started = time.monotonic()
    with pytest.raises(AcpgenError, match=r"did not finish within 0\.5 seconds"):
        fmt.format_files({"p/m.py": "x = 1\n"})
    assert time.monotonic() - started < HANG  # stopped, not waited out
    assert list(scratch_home.iterdir()) == []
    assert not _alive(int((tmp_path / "formatter.pid").read_text()))


_CHILD = """
import sys
import acpgen.emit.fmt
acpgen.emit.fmt.ruff_binary = lambda: sys.argv[1]
print("formatting", flush=True)
try:
    acpgen.emit.fmt.format_files({"p/m.py": "x = 1\\n"})
except KeyboardInterrupt:
    sys.exit(130)
"""


def _run_and_signal(tmp_path: Path, home: Path, how: signal.Signals) -> int:
    """Run a format in a child process with ``home`` as its temporary
    directory, send ``how`` while the (hanging) formatter runs; its exit
    status."""
    fake = _fake_formatter(tmp_path, "exec sleep 3600")  # hangs: only the signal ends the run
    pid_file = tmp_path / "formatter.pid"
    env = dict(os.environ, TMPDIR=str(home))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(fake)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "formatting"
        deadline = time.monotonic() + HANG
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the formatter did not start"
            time.sleep(0.02)
        assert [p.name.startswith(fmt.SCRATCH_PREFIX) for p in home.iterdir()] == [True]
        child.send_signal(how)
        return child.wait(timeout=HANG)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        formatter = int(pid_file.read_text()) if pid_file.exists() and pid_file.read_text().strip() else None
        deadline = time.monotonic() + HANG
        while formatter is not None and _alive(formatter) and time.monotonic() < deadline:
            time.sleep(0.02)
        if formatter is not None and _alive(formatter):
            os.kill(formatter, signal.SIGKILL)


@pytest.mark.parametrize(
    ("how", "status"),
    [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP), (signal.SIGINT, 130)],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_an_interrupted_run_removes_its_temporary_directory(tmp_path, how, status):
    home = tmp_path / "tmp"
    home.mkdir()
    # SIGTERM and SIGHUP still end the run as they would have, once the
    # directory is removed.
    assert _run_and_signal(tmp_path, home, how) == status
    assert list(home.iterdir()) == []


def test_the_next_run_removes_what_a_run_killed_with_sigkill_left(tmp_path, scratch_home):
    assert _run_and_signal(tmp_path, scratch_home, signal.SIGKILL) == -signal.SIGKILL
    (left,) = scratch_home.iterdir()
    assert any(left.iterdir())
    # An empty one goes too (a run killed before it wrote anything: a
    # directory is locked before it gets its name); not the directory of a
    # run still going, a directory not yet named (a run about to lock it),
    # one of another prefix, nor a link.
    busy = scratch_home / f"{fmt.SCRATCH_PREFIX}busy"
    busy.mkdir()
    (busy / "m0_0.py").write_text("x = 1\n")
    empty = scratch_home / f"{fmt.SCRATCH_PREFIX}empty"
    empty.mkdir()
    claiming = scratch_home / "acpgen-claim-pending"
    claiming.mkdir()
    older = scratch_home / "acpgen-fmt-older"
    older.mkdir()
    (older / "m0_0.py").write_text("x = 1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (scratch_home / f"{fmt.SCRATCH_PREFIX}link").symlink_to(elsewhere)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); "
            "print('locked', flush=True); sys.stdin.read()",
            str(busy),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert fmt.format_files({"p/m.py": "x  =  1\n"}) == {"p/m.py": "x = 1\n"}
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=HANG)
    assert not left.exists() and not empty.exists()
    assert sorted(p.name for p in scratch_home.iterdir()) == sorted(
        [busy.name, claiming.name, older.name, f"{fmt.SCRATCH_PREFIX}link"]
    )
    assert (busy / "m0_0.py").exists() and (elsewhere / "keep.txt").read_text() == "keep"
