"""A plain, non-editable install carries the templates, the runtime module
copied into generated packages, and the rules."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from ..conftest import ROOT


def test_the_wheel_ships_templates_and_rules(tmp_path):
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
    (wheel,) = tmp_path.glob("acpgen-*.whl")
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
