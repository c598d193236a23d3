"""The fallback report of the four ACP schemas, pinned: every place lowering
keeps a value as JSON (``Any``) or makes a definition an alias because no
recogniser took it, with its pointer and reason. A new silent fallback (or a
shape that stops falling back) shows as a diff of
``tests/fixtures/fallbacks/<package>.txt``.

To re-record after an intended change, run::

    ACPGEN_RECORD_FALLBACKS=1 .venv/bin/python -m pytest tests/unit/test_fallbacks.py

and review the diff of the fixtures before committing it.
"""

from __future__ import annotations

import os

import pytest
from acpgen.cli import main
from acpgen.compile.load import load_schema
from acpgen.pipeline import build_ir
from acpgen.views.text import fallback_report
from click.testing import CliRunner

from ..conftest import ROOT, SCHEMAS

FIXTURES = ROOT / "tests" / "fixtures" / "fallbacks"


def _report(package: str) -> str:
    return "".join(line + "\n" for line in fallback_report(build_ir(load_schema(SCHEMAS[package]), package)))


@pytest.mark.parametrize("package", sorted(SCHEMAS))
def test_the_fallbacks_of_each_acp_schema_are_the_recorded_ones(package):
    path = FIXTURES / f"{package}.txt"
    report = _report(package)
    if os.environ.get("ACPGEN_RECORD_FALLBACKS"):
        FIXTURES.mkdir(parents=True, exist_ok=True)
        path.write_text(report, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == report


def test_generate_explain_prints_the_report_of_each_package(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(
        '{"$defs": {"Odd": {"type": "string", "maxLength": 2}, "Id": {"type": "string"}}}', encoding="utf-8"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["generate", "--schema", str(schema), "--package", "odd", "--out", str(out), "--explain"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "odd: fallbacks\n"
        "  /$defs/Odd\n"
        "    became: Any (kept as JSON, checked against the schema)\n"
        "    why: maxLength on a string\n"
    ) in result.output
    assert (out / "odd" / "models.py").is_file()


def test_explain_says_when_a_package_has_no_fallbacks(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text('{"$defs": {"Id": {"type": "string"}}}', encoding="utf-8")
    result = CliRunner().invoke(
        main, ["generate", "--schema", str(schema), "--package", "plain", "--out", str(tmp_path / "out"), "--explain"]
    )
    assert result.exit_code == 0, result.output
    assert "plain: no fallbacks\n" in result.output
