"""The suite's own scheduling: under ``-n 2 --dist loadgroup`` (as ``make
test`` runs it) the tests of a module with a module-scoped fixture of its
own run on one worker, so that fixture (a probe matrix of a minute of CPU,
a package generated once) is made once, not once per worker. With pytest
9.2 and pytest-xdist 3.8 the groups were silently ignored (pytest-xdist
issue 1386) and the probe matrix was built twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..patience import HANG

ROOT = Path(__file__).resolve().parent.parent.parent

MODULE = """\
import os
import pytest

@pytest.fixture(scope="module")
def made():
    with open(os.environ["BUILDS"], "a") as out:
        out.write("{name}\\n")
    return 1

@pytest.mark.parametrize("i", range(6))
def test_uses(made, i):
    assert made == 1
"""


def test_a_module_fixture_is_made_once_under_loadgroup(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.conftest import pytest_collection_finish, pytest_collection_modifyitems  # noqa: F401\n",
        encoding="utf-8",
    )
    for name in ("test_a", "test_b"):
        (tmp_path / f"{name}.py").write_text(MODULE.format(name=name), encoding="utf-8")
    builds = tmp_path / "builds.txt"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**os.environ, "BUILDS": str(builds)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "12 passed" in run.stdout, run.stdout
    assert sorted(builds.read_text(encoding="utf-8").split()) == ["test_a", "test_b"], run.stdout
