"""A plain, non-editable install carries the templates, the runtime module
copied into generated packages, the rules and the hand-written conformance
fixtures; installed, it checks a vendored package outside this checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ..conftest import ROOT
from ..patience import HANG


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of this checkout, built once for the module."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    # Built from the tracked files alone: a build/ directory left in the
    # checkout would supply modules the package list leaves out.
    tree = tmp_path / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True).stdout
    for name in filter(None, archive.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes(source.read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(tree)],
        check=True,
        capture_output=True,
    )
    (built,) = tmp_path.glob("acpgen-*.whl")
    return built


def test_the_wheel_ships_templates_and_rules(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.name for p in (ROOT / "templates").glob("*.jinja")}
    assert templates and {f"acpgen/templates/{t}" for t in templates} <= names
    assert "acpgen/rules/patch.toml" in names
    assert "acpgen/runtime/_runtime.py" in names
    # The report page's style and script, read from the package at run time.
    assert {"acpgen/report/page.js", "acpgen/report/page.css"} <= names
    # Every module of the generator, in every folder (a folder left out of
    # pyproject's package list would be missing from an installed acpgen).
    source = ROOT / "generator/acpgen"
    modules = {p.relative_to(source).as_posix() for p in source.rglob("*.py")}
    assert modules and {f"acpgen/{m}" for m in modules} - names == set()
    # The hand-written conformance fixtures of every vendored schema, with
    # the manifest naming the schema they are for (not the generated ones,
    # which `acpgen conformance` makes from the schema).
    fixtures = ROOT / "tests/fixtures/conformance"
    keys = sorted(p.name for p in fixtures.iterdir() if p.is_dir())
    assert keys
    for key in keys:
        assert f"acpgen/conformance/fixtures/{key}/manifest.json" in names, key
        handwritten = {p.name for p in (fixtures / key / "handwritten").glob("*.json")}
        assert handwritten and {f"acpgen/conformance/fixtures/{key}/handwritten/{h}" for h in handwritten} <= names
    assert not [n for n in names if "/fixtures/" in n and "/generated/" in n]


def test_an_installed_acpgen_checks_a_vendored_package_outside_the_checkout(wheel, tmp_path):
    """A project of someone else's: the schema `acpgen schema update` left in
    schema/, a package generated from it in vendor/, and acpgen installed
    from the wheel (unpacked into site/, the other dependencies those of
    this environment). No fixtures anywhere around: conformance makes them,
    the hand-written patch fixtures included, and the untouched package
    passes every check."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    project = tmp_path / "project"
    (project / "schema/v1").mkdir(parents=True)
    shutil.copyfile(ROOT / "schema/v1/schema.json", project / "schema/v1/schema.json")
    shutil.copytree(ROOT / "generated/acp_v1", project / "vendor/acp_v1", ignore=shutil.ignore_patterns("__pycache__"))
    # A private temporary directory, holding what a killed run left: the
    # fixtures are made in a scratch directory, which goes, and that run's too.
    temp = tmp_path / "temp"
    (temp / "acpgen-fixtures-killed").mkdir(parents=True)
    (temp / "acpgen-fixtures-killed" / "manifest.json").write_text("{}")
    env = dict(os.environ, PYTHONPATH=str(site), TMPDIR=str(temp))
    where = subprocess.run(
        [sys.executable, "-c", "import acpgen; print(acpgen.__file__)"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout  # the installed acpgen, not this checkout
    done = subprocess.run(
        [sys.executable, "-m", "acpgen.conformance", "--package", "vendor/acp_v1"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    final = re.match(r"^(\d+) passed, 0 failed$", done.stdout.splitlines()[-1])
    assert final and int(final.group(1)) > 3000, done.stdout[-2000:]
    assert f"schema:   {project / 'schema/v1/schema.json'}" in done.stdout
    shipped = site / "acpgen/conformance/fixtures/v1/handwritten"
    assert (
        f"fixtures: generated from schema.json (seed acp-conformance), and the hand-written ones of v1 ({shipped})"
        in (done.stdout)
    )
    assert "has a patch fixture" not in done.stdout
    # acp_v1's full run (tests/e2e/test_conformance.py runs the other three):
    # a line per definition, full coverage, no known failure.
    lines = done.stdout.splitlines()
    n = len(json.loads((ROOT / "schema/v1/schema.json").read_text())["$defs"])
    assert sum(1 for line in lines if re.match(r"^  \S+\s+\d+ passed", line)) >= n
    assert re.search(rf"^coverage: def {n}/{n}, variant (\d+)/\1, lenient (\d+)/\2, enum (\d+)/\3$", done.stdout, re.M)
    assert "known failure" not in done.stdout
    assert list(temp.iterdir()) == []
