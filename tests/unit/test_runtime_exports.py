"""The runtime's ``_exports``: a package's names read from modules it
imports on first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from acpgen.runtime import SOURCES


def _package(root: Path) -> None:
    package = root / "pkg"
    package.mkdir()
    (package / "_exports.py").write_text(SOURCES["_exports.py"].read_text())
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from ._exports import lazy_exports as _lazy_exports

            EAGER = 1
            __getattr__, __dir__ = _lazy_exports(__name__, {"A": "first", "B": "second", "SHARED": "second"})
            """
        )
    )
    (package / "first.py").write_text("A = 'a'\nSHARED = 'first'\n")
    (package / "second.py").write_text("import sys\nB = 'b'\nSHARED = 'second'\nLOADS = len(sys.argv)\n")


def _run(root: Path, code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-S", "-c", textwrap.dedent(code)], cwd=root, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_name_loads_its_module_on_first_use_only(tmp_path: Path) -> None:
    _package(tmp_path)
    code = """
        import sys
        import pkg
        assert "pkg.first" not in sys.modules and "pkg.second" not in sys.modules
        assert pkg.A == "a" and "pkg.first" in sys.modules and "pkg.second" not in sys.modules
        assert "A" in vars(pkg)  # read once, then the package's own attribute
        from pkg import B, SHARED
        assert (B, SHARED) == ("b", "second")
        assert pkg.second is sys.modules["pkg.second"]
        print(sorted(n for n in dir(pkg) if not n.startswith("_")))
    """
    assert _run(tmp_path, code) == "['A', 'B', 'EAGER', 'SHARED', 'first', 'second']"


def test_a_module_named_is_an_attribute_and_anything_else_is_missing(tmp_path: Path) -> None:
    _package(tmp_path)
    code = """
        import sys
        import pkg
        assert pkg.first is sys.modules["pkg.first"]
        try:
            pkg.Missing
        except AttributeError as error:
            print(error)
    """
    assert _run(tmp_path, code) == "module 'pkg' has no attribute 'Missing'"


def test_a_star_import_loads_every_name(tmp_path: Path) -> None:
    _package(tmp_path)
    (tmp_path / "pkg" / "__init__.py").write_text(
        (tmp_path / "pkg" / "__init__.py").read_text() + '__all__ = ["EAGER", "A", "B", "SHARED"]\n'
    )
    code = """
        from pkg import *
        print(EAGER, A, B, SHARED)
    """
    assert _run(tmp_path, code) == "1 a b second"
