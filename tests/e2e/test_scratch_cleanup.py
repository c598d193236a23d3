"""``acpgen schema update`` stopped by SIGTERM while it generates leaves
none of its temporary directories behind (the schemas it generates from,
the formatter's copies), and nothing of the update in the project."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import ROOT
from ..patience import HANG
from .test_schema_bump import FIXTURE, tree

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="signals and flock as on Linux")

_CHILD = """
import sys
import acpgen.emit.fmt
from acpgen.cli import main
acpgen.emit.fmt.ruff_binary = lambda: sys.argv[1]
main(sys.argv[2:])
"""


def test_a_terminated_schema_update_removes_its_temporary_directories(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "generated"\n\n[[tool.acpgen.packages]]\n'
        'schema = "schema/v1/schema.json"\npackage = "acp_v1"\nrules = "v1"\n'
    )
    shutil.copytree(ROOT / "schema", project / "schema")
    shutil.copytree(
        ROOT / "generated/acp_v1", project / "generated/acp_v1", ignore=shutil.ignore_patterns("__pycache__")
    )
    before = _state(project)
    home = tmp_path / "tmp"
    home.mkdir()
    pid_file = tmp_path / "formatter.pid"
    fake = tmp_path / "fake-formatter"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 3600\n")  # hangs: only the signal ends the run
    fake.chmod(0o755)
    args = ["schema", "update", "--from", str(FIXTURE / "v1/schema.json"), "--config", str(project / "pyproject.toml")]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(fake), *args],
        env=dict(os.environ, TMPDIR=str(home)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the formatter did not start"
            time.sleep(0.05)
        # No directory for an npm tarball: the schemas come --from a file.
        assert sorted(p.name.rsplit("-", 1)[0] for p in home.iterdir()) == [
            "acpgen-format",
            "acpgen-updating",
        ]
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=HANG) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if pid_file.exists() and pid_file.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert list(home.iterdir()) == []
    assert _state(project) == before


def _state(project: Path) -> dict[str, dict[str, bytes]]:
    """schema/ and generated/, but for the lock file a run ended by a
    signal leaves (empty, and no run's once it has ended)."""
    return {
        name: {path: data for path, data in tree(project / name).items() if path != ".acpgen.lock"}
        for name in ("schema", "generated")
    }
