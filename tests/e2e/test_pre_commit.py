"""The pre-commit hook of ``.pre-commit-hooks.yaml``, as a user's repository
runs it: pre-commit installs acpgen from a repository holding this
checkout's files at a commit, and ``acpgen-check`` passes on freshly
generated packages, then fails on a hand edit of a generated file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT, schema_with

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
ACPGEN = Path(sys.executable).parent / "acpgen"

SCHEMA = schema_with(
    {
        "Greeting": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }
    }
)


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [
            "git",
            "-c",
            "user.name=acpgen tests",
            "-c",
            "user.email=tests@acpgen.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def hook_repository(tmp_path: Path) -> tuple[Path, str]:
    """A git repository with this checkout's files as they are now (what
    ``pip install`` of acpgen needs, and the hooks file), committed."""
    repo = tmp_path / "acpgen"
    repo.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    for name in ("generator", "templates"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "acpgen")
    return repo, git(repo, "rev-parse", "HEAD")


def test_the_hook_passes_on_generated_packages_and_fails_on_a_hand_edit(tmp_path):
    hooks, rev = hook_repository(tmp_path)
    user = tmp_path / "project"
    (user / "schema").mkdir(parents=True)
    (user / "schema/greeting.json").write_text(json.dumps(SCHEMA))
    (user / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "vendor"\n\n[[tool.acpgen.packages]]\nschema = "schema/greeting.json"\npackage = "greeting"\n'
    )
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: acpgen-check\n"
    )
    (user / "vendor").mkdir()
    generated = subprocess.run([str(ACPGEN), "generate"], cwd=user, capture_output=True, text=True)
    assert generated.returncode == 0, generated.stderr
    git(user, "init", "-q")
    git(user, "add", "-A")
    git(user, "commit", "-q", "-m", "vendor the package")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("VIRTUAL_ENV", None)

    def run_hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PRE_COMMIT), "run", "--all-files", "--color", "never"],
            cwd=user,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )

    passed = run_hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "acpgen check" in passed.stdout and "Passed" in passed.stdout
    # The hook's acpgen is the one pre-commit installed, not this venv's.
    assert list((tmp_path / "pre-commit-home").glob("repo*/py_env-*/bin/acpgen"))
    models = user / "vendor/greeting/models.py"
    models.write_text(models.read_text() + "# a hand fix\n")
    failed = run_hook()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout
    assert "stale: vendor/greeting/models.py" in failed.stdout
    assert "edited: vendor/greeting: files changed since acpgen wrote them (models.py (changed))" in failed.stdout
