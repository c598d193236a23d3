"""The probe's temporary directories (a client's agent socket, the sandbox
an agent works in, the empty additional directory) are claimed as
``acpgen.scratch`` claims them: locked while a run holds them, so that a
run killed with SIGKILL leaves nothing the next run does not delete, and
the next run never deletes those of a run still going."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from acpgen import scratch
from acpgen.emit import fmt
from acpgen.probe import checks, client_context, sandbox
from acpgen.replay import runs
from acpgen.update import applying

from ..patience import HANG

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="flock as on Linux")

ROOT = Path(__file__).resolve().parent.parent.parent

HOLDERS = {
    client_context.PREFIX: "from acpgen.probe.client_context import ClientProcess; held = ClientProcess(['x'])",
    sandbox.PREFIX: "from acpgen.probe.sandbox import Sandbox; held = Sandbox(False, False)",
    checks.EXTRA_PREFIX: f"from acpgen.scratch import claim; held = claim({checks.EXTRA_PREFIX!r})",
}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A private system temporary directory for this test (and its children)."""
    home = tmp_path / "tmp"
    home.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(home))
    monkeypatch.setenv("TMPDIR", str(home))
    return home


def _holder(prefix: str) -> tuple[subprocess.Popen[str], Path]:
    """A process holding a directory of ``prefix`` as the probe does, and that directory."""
    code = f"{HOLDERS[prefix]}\nimport sys\nprint(getattr(held, 'directory', None) or getattr(held, 'root', None) or held.path, flush=True)\nsys.stdin.read()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generator")}
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _make_new(prefix: str) -> tuple[Path, object]:
    if prefix == client_context.PREFIX:
        process = client_context.ClientProcess(["x"])
        return Path(process.directory), process
    if prefix == sandbox.PREFIX:
        box = sandbox.Sandbox(False, False)
        return box.root, box
    held = scratch.claim(prefix)
    return Path(held.path), held


def _release(holder: object) -> None:
    if isinstance(holder, scratch.Claim):
        holder.release()
    else:
        asyncio.run(holder.close())  # type: ignore[attr-defined]


@pytest.mark.parametrize("prefix", sorted(HOLDERS))
def test_a_killed_run_s_directory_goes_with_the_next_run_and_a_live_one_s_stays(home, prefix):
    live, busy = _holder(prefix)
    try:
        (busy / "file").write_text("in use")
        killed, left = _holder(prefix)
        (left / "file").write_text("left by a run killed with SIGKILL")
        killed.kill()
        killed.wait(timeout=HANG)
        assert left.parent == home and left.name.startswith(prefix)
        made, holder = _make_new(prefix)
        try:
            assert not left.exists()
            assert (busy / "file").read_text() == "in use"
            assert made.is_dir() and made.name.startswith(prefix) and made != busy
        finally:
            _release(holder)
        assert not made.exists()
        _release(holder)  # a second release does nothing
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait(timeout=HANG)
    assert busy.exists()  # only a run, not its end, deletes what was left
    assert sorted(p.name for p in home.iterdir()) == [busy.name]


def test_no_prefix_sweeps_another_s_directories():
    """A run sweeps the unlocked directories whose names start with its
    prefix: no prefix may start another's."""
    prefixes = [
        *HOLDERS,
        fmt.SCRATCH_PREFIX,
        applying.SCRATCH_PREFIX,
        runs.SCRATCH_PREFIX,
        "acpgen-npm-pack-",
        "acpgen-validate-",
        "acpgen-fixtures-",
    ]
    assert len(set(prefixes)) == len(prefixes)
    for prefix in prefixes:
        assert not [other for other in prefixes if other != prefix and other.startswith(prefix)], prefix


def test_a_claim_stays_locked_until_released(home):
    held = scratch.claim("acpgen-probe-extra-")
    probe = [
        sys.executable,
        "-c",
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        held.path,
    ]
    assert subprocess.run(probe, capture_output=True).returncode != 0  # locked by this run
    path = held.path
    held.release()
    assert not os.path.exists(path)


INTERRUPTED_CLAIM = """
import os, signal, sys
from acpgen import scratch

make = scratch._make

def interrupted(*args):
    held = make(*args)
    os.kill(os.getpid(), signal.SIGINT)  # held off until the block ends
    return held

scratch._make = interrupted
try:
    scratch.claim(sys.argv[1])
except KeyboardInterrupt:
    home = os.environ["TMPDIR"]
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, closed since
            pass
    print("left", sorted(os.listdir(home)), "held", [path for path in held if path.startswith(home)])
else:
    print("no interrupt")
"""


def test_an_interrupt_as_a_claim_is_made_leaves_no_directory_and_no_lock(home):
    """The interrupt is held off while the directory is made, locked and
    named, and comes as it is let through: the claim is undone, not lost.
    In a process of its own, whose main thread gets the signal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generator")}
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_CLAIM, checks.EXTRA_PREFIX],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG,
    )
    assert done.stdout.strip() == "left [] held []", done.stdout + done.stderr
    assert list(home.iterdir()) == []
