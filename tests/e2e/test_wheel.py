"""A plain, non-editable install carries the templates, the runtime module
copied into generated packages, and the rules."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from ..conftest import ROOT


def test_the_wheel_ships_templates_and_rules(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("acpgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.name for p in (ROOT / "templates").glob("*.jinja")}
    assert templates and {f"acpgen/templates/{t}" for t in templates} <= names
    assert "acpgen/rules/patch.toml" in names
    assert "acpgen/runtime/_runtime.py" in names
    modules = {p.name for p in (ROOT / "generator/acpgen").glob("*.py")}
    assert {f"acpgen/{m}" for m in modules} <= names
