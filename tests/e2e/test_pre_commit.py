"""The pre-commit hook of ``.pre-commit-hooks.yaml``, set up as docs/bumps.md
says and run by ``git commit`` in a user's repository: pre-commit installs
acpgen from a repository holding this checkout's files at a commit, and
``acpgen-check`` passes on freshly generated packages, is skipped by a commit
touching nothing it reads, then fails on a hand edit of a generated file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT, schema_with
from ..patience import HANG

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


GIT_CONFIG = [
    "-c",
    "user.name=acpgen tests",
    "-c",
    "user.email=tests@acpgen.invalid",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "commit.gpgsign=false",
]


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *GIT_CONFIG, *args],
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
    # The conformance fixtures acpgen ships (pyproject.toml's package data):
    # each schema's manifest and hand-written fixtures.
    fixtures = ROOT / "tests/fixtures/conformance"
    for manifest in fixtures.glob("*/manifest.json"):
        target = repo / manifest.relative_to(ROOT)
        target.parent.mkdir(parents=True)
        shutil.copy2(manifest, target)
        shutil.copytree(manifest.parent / "handwritten", target.parent / "handwritten")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "acpgen")
    return repo, git(repo, "rev-parse", "HEAD")


def _section(page: str, title: str) -> str:
    text = page.split(f"\n## {title}\n", 1)[1]
    return text.split("\n## ", 1)[0]


def documented() -> tuple[str, list[list[str]]]:
    """docs/bumps.md's pre-commit setup: the ``.pre-commit-config.yaml``
    block, and the ``pre-commit`` commands of the shell block after it."""
    section = _section((ROOT / "docs/bumps.md").read_text(encoding="utf-8"), "A pre-commit hook")
    (config,) = re.findall(r"^```yaml\n(.*?)^```", section, re.S | re.M)
    (shell,) = re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M)
    commands = [line.split("#")[0].split() for line in shell.splitlines() if line.startswith("pre-commit ")]
    return config, commands


def test_the_documented_rev_is_a_commit_of_this_repository():
    config, _ = documented()
    (rev,) = re.findall(r"^\s*rev:\s*(\S+)", config, re.M)
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev {rev!r} is not a full commit sha (acpgen has no tags)"
    if (ROOT / ".git").exists():  # a checkout: the commit is in its history
        assert git(ROOT, "cat-file", "-t", rev) == "commit"


def test_the_hooks_own_filter_is_what_acpgen_check_reads():
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    files = re.compile(hook["files"])
    read = ["pyproject.toml", "schema/v1/schema.json", "generated/acp_v1/models.py", "vendor/a/.acpgen"]
    read += ["vendor/a/py.typed", "schema/SOURCE.json", "sub/pyproject.toml"]
    for path in read:
        assert files.search(path), path
    for path in ["README.md", "docs/bumps.md", "schema/LICENSE", ".gitignore", "pyproject.toml.bak"]:
        assert not files.search(path), path


def test_the_documented_hook_passes_skips_unrelated_commits_and_fails_a_hand_edit(tmp_path):
    """docs/bumps.md's block as ``.pre-commit-config.yaml`` (its ``repo``
    and ``rev`` pointing at a repository of this checkout's files) and its
    ``pre-commit install``; then commits, as a user makes them."""
    hooks, rev = hook_repository(tmp_path)
    config, commands = documented()
    assert ["pre-commit", "install"] in commands
    config = re.sub(r"^(\s*- repo:).*$", rf"\1 {hooks}", config, count=1, flags=re.M)
    config = re.sub(r"^(\s*rev:).*$", rf"\1 {rev}", config, count=1, flags=re.M)
    user = tmp_path / "project"
    (user / "schema").mkdir(parents=True)
    (user / "schema/greeting.json").write_text(json.dumps(SCHEMA))
    (user / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "vendor"\n\n[[tool.acpgen.packages]]\nschema = "schema/greeting.json"\npackage = "greeting"\n'
    )
    (user / ".pre-commit-config.yaml").write_text(config)
    (user / "vendor").mkdir()
    generated = subprocess.run([str(ACPGEN), "generate"], cwd=user, capture_output=True, text=True)
    assert generated.returncode == 0, generated.stderr
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("VIRTUAL_ENV", None)
    git(user, "init", "-q")
    for command in commands:
        done = subprocess.run([str(PRE_COMMIT), *command[1:]], cwd=user, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stdout + done.stderr

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        git(user, "add", "-A")
        return subprocess.run(
            ["git", *GIT_CONFIG, "commit", "-q", "-m", message],
            cwd=user,
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG,
        )

    vendored = commit("vendor the package")
    assert vendored.returncode == 0, vendored.stdout + vendored.stderr
    assert re.search(r"acpgen check\.+Passed", vendored.stdout + vendored.stderr), vendored.stdout + vendored.stderr
    # The hook's acpgen is the one pre-commit installed, not this venv's.
    assert list((tmp_path / "pre-commit-home").glob("repo*/py_env-*/bin/acpgen"))
    (user / "notes.md").write_text("unrelated\n")
    (user / "app.py").write_text("print('unrelated')\n")
    unrelated = commit("notes and app code")
    shown = unrelated.stdout + unrelated.stderr
    assert unrelated.returncode == 0, shown
    assert re.search(r"acpgen check\.+\(no files to check\)Skipped", shown), shown
    models = user / "vendor/greeting/models.py"
    models.write_text(models.read_text() + "# a hand fix\n")
    failed = commit("a hand fix")
    shown = failed.stdout + failed.stderr
    assert failed.returncode == 1, shown
    assert re.search(r"acpgen check\.+Failed", shown), shown
    assert "stale: vendor/greeting/models.py" in shown
    assert "edited: vendor/greeting: files changed since acpgen wrote them (models.py (changed))" in shown
