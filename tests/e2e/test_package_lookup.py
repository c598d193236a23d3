"""``acpgen validate`` and ``acpgen report`` find a package named by import
name where ``acpgen generate`` writes it: the ``out`` directory of
``[tool.acpgen]`` in the nearest pyproject.toml, not only ``generated/``;
``--package`` still chooses, and a package not found is an error naming
``--package`` and where it was looked for."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT
from ..patience import HANG

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
ACPGEN = str(Path(sys.executable).parent / "acpgen")

PYPROJECT = """\
[project]
name = "my-editor"

[tool.acpgen]
out = "src/vendor"

[[tool.acpgen.packages]]
schema = "schema/v1/schema.json"
package = "acp_v1"
"""


def project(root: Path, *packages: str) -> Path:
    """A project whose packages are generated to src/vendor (copies of the
    committed ones), with a transcript of a v1 session; no generated/."""
    (root / "src/vendor").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    for name in packages:
        shutil.copytree(
            ROOT / "generated" / name, root / "src/vendor" / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(TRANSCRIPTS / "python-sdk-v1.jsonl", root / "session.jsonl")
    (root / "app").mkdir()
    return root


def acpgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ACPGEN, *args], cwd=cwd, capture_output=True, text=True, timeout=HANG)


def test_validate_and_report_find_the_default_package_in_the_configured_out_directory(tmp_path):
    root = project(tmp_path, "acp_v1")
    # From a folder below the project, as generate finds its pyproject.toml.
    done = acpgen(root / "app", "validate", "../session.jsonl")
    assert done.returncode == 0, done.stderr
    assert "checking against acp_v1 (the default; --package or --schema to choose): ../src/vendor/acp_v1" in (
        done.stderr
    )
    assert done.stderr.rstrip().endswith("../session.jsonl: 0 error(s), 0 warning(s)")
    done = acpgen(root, "report", "session.jsonl", "-o", "session.html")
    assert done.returncode == 0, done.stderr
    assert "src/vendor/acp_v1" in done.stderr and (root / "session.html").is_file()
    # An import name given with --package is looked for there too.
    done = acpgen(root, "validate", "session.jsonl", "--package", "acp_v1")
    assert done.returncode == 0, done.stderr


def test_package_still_chooses_and_a_missing_one_names_the_option_and_where_it_looked(tmp_path):
    root = project(tmp_path, "acp_v1")
    done = acpgen(root, "validate", "session.jsonl", "--package", "acp_v2")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    vendor = (root / "src/vendor").resolve()
    assert line.startswith(f"acpgen: error: acp_v2: no such generated package: not in {vendor / 'acp_v2'} ")
    assert f"[tool.acpgen] out = 'src/vendor' of {(root / 'pyproject.toml').resolve()}) nor importable" in line
    assert line.endswith("give its directory or import name with --package")
    # A directory given is used as it is, wherever the configuration points.
    done = acpgen(root, "report", "session.jsonl", "--package", str(ROOT / "generated/acp_v2"), "-o", "v2.html")
    assert done.returncode == 0, done.stderr
    assert "checking against" not in done.stderr
    done = acpgen(root, "validate", "session.jsonl", "--package", "src/vendor/nothing")
    assert done.returncode == 2
    assert "src/vendor/nothing: no such directory; give its directory or import name with --package" in done.stderr


def test_without_a_configuration_the_working_directory_s_generated_is_where_it_looks(tmp_path):
    shutil.copy(TRANSCRIPTS / "python-sdk-v1.jsonl", tmp_path / "session.jsonl")
    done = acpgen(tmp_path, "validate", "session.jsonl")
    assert done.returncode == 2
    assert "not in generated/acp_v1 (the working directory's; no pyproject.toml here or above has a [tool.acpgen]" in (
        done.stderr
    )
    shutil.copytree(ROOT / "generated/acp_v1", tmp_path / "generated/acp_v1")
    done = acpgen(tmp_path, "validate", "session.jsonl")
    assert done.returncode == 0, done.stderr
