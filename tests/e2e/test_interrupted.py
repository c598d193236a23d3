"""Runs killed with SIGKILL at the swap, and concurrent runs, in real
processes: the output directory ends up with the complete old set or the
complete new set of packages (schema/ included for ``schema update``), and
no staging directory outlives the next run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from acpgen.output.journal import JOURNAL_FILE
from acpgen.output.recovery import recover

from ..conftest import schema_with
from ..patience import HANG

ACPGEN = str(Path(sys.executable).parent / "acpgen")
OLD = schema_with({"Greeting": {"type": "object", "properties": {"text": {"type": "string"}}}})
NEW = schema_with(
    {"Greeting": {"type": "object", "properties": {"text": {"type": "string"}, "loud": {"type": "boolean"}}}}
)
PACKAGES = ("alpha", "beta", "gamma")


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.name != ".acpgen.lock"
    }


_GENERATED: list[Path] = []


def _generated_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of OLD with its three packages generated, made once per
    test process by a real ``acpgen generate``; a test gets a copy of it."""
    if not _GENERATED:
        root = tmp_path_factory.mktemp("interrupted") / "project"
        (root / "schema").mkdir(parents=True)
        (root / "schema/greeting.json").write_text(json.dumps(OLD))
        entries = "".join(
            f'\n[[tool.acpgen.packages]]\nschema = "schema/greeting.json"\npackage = "{name}"\n' for name in PACKAGES
        )
        (root / "pyproject.toml").write_text(f'[tool.acpgen]\nout = "gen"\n{entries}')
        run(root, "generate")
        _GENERATED.append(root)
    return _GENERATED[0]


@pytest.fixture
def project(tmp_path, tmp_path_factory) -> Path:
    """A generated project of its own: a copy (files, links and times) of
    the one generated once, which is what a fresh ``acpgen generate`` of it
    writes (no file of a generated tree names its directory); the tests
    themselves run acpgen on it for real."""
    root = tmp_path / "project"
    shutil.copytree(_generated_project(tmp_path_factory), root, symlinks=True)
    assert leftovers(root / "gen") == [], "the generated project holds no state of a run"
    return root


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([ACPGEN, *args], cwd=cwd, capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 0, result.stderr
    return result


def paused(cwd: Path, phase: str, flag: Path, *args: str) -> subprocess.Popen:
    """Start ``acpgen ARGS`` and wait until it pauses at ``phase``."""
    env = dict(os.environ, ACPGEN_TEST_PAUSE=phase, ACPGEN_TEST_PAUSE_FILE=str(flag))
    process = subprocess.Popen(
        [ACPGEN, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + HANG
    while not flag.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never reached the pause"
        time.sleep(0.02)
    return process


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    assert process.returncode == -signal.SIGKILL


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("phase, survivor", [("staged", "old"), ("swap", "old"), ("committed", "new")])
def test_a_run_killed_during_the_swap_is_recovered_whole(project, tmp_path, phase, survivor):
    out = project / "gen"
    old = tree(out)
    (project / "schema/greeting.json").write_text(json.dumps(NEW))
    process = paused(project, phase, tmp_path / "flag", "generate")
    if phase == "swap":
        # Killed here, the first package is new and the others old ...
        assert b"loud" in (out / "alpha/models.py").read_bytes()
        assert b"loud" not in (out / "beta/models.py").read_bytes()
    kill(process)
    assert (out / JOURNAL_FILE).exists()
    # ... `acpgen check` says so ...
    check = subprocess.run([ACPGEN, "check"], cwd=project, capture_output=True, text=True)
    assert check.returncode == 1 and "interrupted" in check.stdout
    # ... and recovery leaves one whole set and nothing of acpgen's beside it.
    recover(out)
    assert leftovers(out) in ([], [".acpgen.lock"])
    packages = {name: b"loud" in (out / name / "models.py").read_bytes() for name in PACKAGES}
    assert set(packages.values()) == {survivor == "new"}
    if survivor == "old":
        assert tree(out) == old
    # The next run writes the new set.
    run(project, "generate")
    assert leftovers(out) == []
    assert all(b"loud" in (out / name / "models.py").read_bytes() for name in PACKAGES)
    assert run(project, "check").returncode == 0


def test_the_next_generate_recovers_by_itself(project, tmp_path):
    out = project / "gen"
    (project / "schema/greeting.json").write_text(json.dumps(NEW))
    kill(paused(project, "swap", tmp_path / "flag", "generate"))
    (project / "schema/greeting.json").write_text(json.dumps(OLD))
    run(project, "generate")
    assert leftovers(out) == []
    assert not any(b"loud" in (out / name / "models.py").read_bytes() for name in PACKAGES)


def test_schema_update_killed_at_the_swap_keeps_schema_and_packages_together(project, tmp_path):
    out = project / "gen"
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    args = ("schema", "update", "--from", str(new), "--as", "greeting.json")
    # The first swap is schema/: killed there, schema/ is new, the packages old.
    process = paused(project, "swap", tmp_path / "flag", *args)
    assert b"loud" in (project / "schema/greeting.json").read_bytes()
    kill(process)
    # The same command again: it rolls the killed run back before it
    # compares schema/ with the release, then does the whole update.
    result = run(project, *args)
    assert "already up to date" not in result.stdout
    assert b"loud" in (project / "schema/greeting.json").read_bytes()
    assert all(b"loud" in (out / name / "models.py").read_bytes() for name in PACKAGES)
    assert leftovers(project) == [] and leftovers(out) == []
    assert run(project, "check").returncode == 0


def test_generate_after_a_killed_schema_update_builds_from_the_schema_it_restores(project, tmp_path):
    out = project / "gen"
    before = tree(project)
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    kill(paused(project, "swap", tmp_path / "flag", "schema", "update", "--from", str(new), "--as", "greeting.json"))
    assert b"loud" in (project / "schema/greeting.json").read_bytes()  # as the killed run left it
    run(project, "generate")
    assert tree(project) == before  # the old schema/ and the packages built from it
    assert leftovers(project) == [] and leftovers(out) == []
    assert run(project, "check").returncode == 0


def test_schema_update_killed_with_schema_set_aside(project, tmp_path):
    """Killed once schema/ is set aside and before the new one is in place:
    check names the interrupted run (not a missing schema file) and changes
    nothing; generate puts schema/ back and builds from it."""
    out = project / "gen"
    before = tree(project)
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    kill(paused(project, "aside", tmp_path / "flag", "schema", "update", "--from", str(new), "--as", "greeting.json"))
    assert not (project / "schema").exists()
    left = leftovers(project)
    check = subprocess.run([ACPGEN, "check"], cwd=project, capture_output=True, text=True)
    assert check.returncode == 1, check.stderr
    assert "interrupted" in check.stdout and "no such file" not in check.stdout + check.stderr
    assert f"{project / 'schema'} is missing" in check.stdout
    assert leftovers(project) == left and not (project / "schema").exists()  # check wrote nothing
    run(project, "generate")
    assert tree(project) == before
    assert leftovers(project) == [] and leftovers(out) == []
    assert run(project, "check").returncode == 0


def test_a_run_waiting_for_the_lock_reads_schema_only_once_it_holds_it(project, tmp_path):
    """A generate started while a schema update is mid-swap waits before it
    reads schema/; the update is killed and rolled back, and the packages
    are built from the schema/ that is back."""
    out = project / "gen"
    before = tree(project)
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    first = paused(project, "swap", tmp_path / "flag", "schema", "update", "--from", str(new), "--as", "greeting.json")
    second = subprocess.Popen(
        [ACPGEN, "generate"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + HANG
    while not _says_waiting(second):
        assert second.poll() is None, second.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    kill(first)
    assert second.wait(120) == 0, second.communicate()
    assert tree(project) == before
    assert leftovers(project) == [] and leftovers(out) == []
    assert run(project, "check").returncode == 0


def test_messages_name_the_directories_without_dot_dot(project, tmp_path):
    """The journal records schema/ relative to the output directory
    (``../schema``); what acpgen prints names it plainly."""
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    kill(paused(project, "swap", tmp_path / "flag", "schema", "update", "--from", str(new), "--as", "greeting.json"))
    check = subprocess.run([ACPGEN, "check"], cwd=project, capture_output=True, text=True)
    assert f"{project / 'schema'} holds the new version" in check.stdout
    (project / "schema/greeting.json").write_text(json.dumps(OLD))  # edited by hand: no rollback
    result = subprocess.run([ACPGEN, "generate"], cwd=project, capture_output=True, text=True)
    assert result.returncode == 2
    assert f"{project / 'schema'} changed since it was written" in result.stderr
    assert "/../" not in check.stdout + result.stderr


def test_a_second_run_waits_for_the_first(project, tmp_path):
    out = project / "gen"
    old = tree(out)
    (project / "schema/greeting.json").write_text(json.dumps(NEW))
    flag = tmp_path / "flag"
    first = paused(project, "swap", flag, "generate")
    second = subprocess.Popen(
        [ACPGEN, "generate"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + HANG
    while True:
        # The second run waits for the lock, saying so.
        assert second.poll() is None, second.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
        if _says_waiting(second):
            break
    assert b"loud" not in (out / "beta/models.py").read_bytes()  # the first one is still mid-swap
    flag.unlink()  # let the first one finish
    assert first.wait(60) == 0
    assert second.wait(60) == 0
    assert leftovers(out) == []
    assert tree(out) != old
    assert run(project, "check").returncode == 0


def _says_waiting(process: subprocess.Popen) -> bool:
    import select

    ready, _, _ = select.select([process.stderr], [], [], 0)
    if not ready:
        return False
    line = process.stderr.readline()
    return "waiting for another acpgen run" in line


def test_a_package_an_acpgen_without_a_journal_left_set_aside_survives_a_killed_run(project, tmp_path):
    """An acpgen without a journal, killed between its two renames, left
    the package in .alpha.old-XXXXXXXX and no alpha; the next run is killed
    too: the package is back in place, whole."""
    out = project / "gen"
    old = tree(out)
    os.rename(out / "alpha", out / ".alpha.old-ab12cd34")
    (project / "schema/greeting.json").write_text(json.dumps(NEW))
    process = paused(project, "staged", tmp_path / "flag", "generate")
    assert (out / "alpha").is_dir() and not (out / ".alpha.old-ab12cd34").exists()
    kill(process)
    recover(out)
    assert tree(out) == old
    result = run(project, "generate")
    assert all(b"loud" in (out / name / "models.py").read_bytes() for name in PACKAGES)
    assert leftovers(out) == []
    assert "restored" not in result.stderr  # the killed run had put it back already


def test_a_package_restored_by_hand_after_a_killed_run_is_reconciled(project, tmp_path):
    """Killed with alpha set aside and its new version not yet in place; the
    user restores alpha by hand from an older copy: the next run keeps the
    set-aside copy and says where it is and what to do."""
    out = project / "gen"
    older = tmp_path / "alpha-older"
    shutil.copytree(out / "alpha", older)
    (project / "schema/greeting.json").write_text(json.dumps(NEW))
    run(project, "generate")
    (project / "schema/greeting.json").write_text(json.dumps(OLD))
    kill(paused(project, "aside", tmp_path / "flag", "generate"))
    assert not (out / "alpha").exists()
    (aside,) = [p for p in out.iterdir() if p.name.startswith(".acpgen-old-alpha-")]
    shutil.copytree(older, out / "alpha")
    result = run(project, "generate")
    assert f"acpgen: warning: left {aside}" in result.stderr
    assert b"loud" in (aside / "models.py").read_bytes()  # the version the killed run set aside
    assert leftovers(out) == [aside.name]
    assert run(project, "check").returncode == 0


def test_a_dry_run_after_a_killed_update_says_so_and_writes_nothing(project, tmp_path):
    new = tmp_path / "greeting.json"
    new.write_text(json.dumps(NEW))
    args = ("schema", "update", "--from", str(new), "--as", "greeting.json")
    kill(paused(project, "swap", tmp_path / "flag", *args))
    before = tree(project)
    result = subprocess.run([ACPGEN, *args, "--dry-run"], cwd=project, capture_output=True, text=True)
    assert result.returncode == 2
    assert "interrupted acpgen run did not finish" in result.stderr and "already up to date" not in result.stdout
    assert tree(project) == before and (project / "gen" / JOURNAL_FILE).exists()
