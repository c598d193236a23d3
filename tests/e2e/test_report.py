"""``acpgen report`` and ``acpgen validate --html``: the page they write
holds the fold and the findings (read back from its data), written whole
or not at all."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acpgen.cli import main
from click.testing import CliRunner

from ..conftest import ROOT
from ..report.transcripts import demo

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def data(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="acp-data">([^<]*)</script>', text)
    assert found is not None
    return json.loads(found.group(1))


def test_report_writes_the_page_with_the_findings_pinned_to_their_lines(tmp_path):
    transcript = demo(tmp_path / "demo.jsonl")
    result = run("report", str(transcript), "-o", str(tmp_path / "out.html"), "--package", "acp_v1")
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stderr and "1 error(s), 1 warning(s)" in result.stderr
    page = data(tmp_path / "out.html")
    assert page["findings"] == [
        [10, "repaired", page["findings"][0][2], "/params/update/entries/2/priority", False, "a", "session/update"],
        [20, "not-started", page["findings"][1][2], "/params/update", True, "a", "session/update"],
    ]
    assert page["package"] == "acp_v1" and page["title"] == "demo.jsonl"
    assert {20, 10} <= {line for row in page["rows"] for line in row["l"]}


def test_report_says_its_default_package_and_writes_next_to_the_transcript(tmp_path):
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes((TRANSCRIPTS / "python-sdk-v1.jsonl").read_bytes())
    result = run("report", str(transcript))
    assert result.exit_code == 0, result.output
    assert "checking against acp_v1 (the default" in result.stderr
    assert data(tmp_path / "session.html")["findings"] == []


def test_report_against_v2_and_with_a_title(tmp_path):
    out = tmp_path / "v2.html"
    result = run(
        "report",
        str(TRANSCRIPTS / "typescript-sdk-v2.jsonl"),
        "-o",
        str(out),
        "--package",
        "acp_v2",
        "--title",
        "v2 <echo>",
    )
    assert result.exit_code == 0, result.output
    assert data(out)["findings"] == []
    assert "<title>v2 &lt;echo&gt;</title>" in out.read_text()


def test_report_refuses_to_replace_the_transcript_and_a_missing_directory(tmp_path):
    transcript = tmp_path / "t.html"
    transcript.write_bytes((TRANSCRIPTS / "python-sdk-v1.jsonl").read_bytes())
    result = run("report", str(transcript), "--package", "acp_v1")
    assert result.exit_code == 2 and "would replace the transcript" in result.stderr
    result = run("report", str(transcript), "-o", str(tmp_path / "no" / "t.html"), "--package", "acp_v1")
    assert result.exit_code == 2 and result.stderr.startswith("acpgen: error: ") and "does not exist" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.html"]


def test_validate_html_writes_the_same_page_with_its_findings(tmp_path):
    transcript = demo(tmp_path / "demo.jsonl")
    result = run("validate", str(transcript), "--package", "acp_v1", "--html", str(tmp_path / "v.html"))
    assert result.exit_code == 1  # an error among the findings
    assert "wrote" in result.stderr
    run("report", str(transcript), "-o", str(tmp_path / "r.html"), "--package", "acp_v1")
    assert data(tmp_path / "v.html") == data(tmp_path / "r.html")
    assert (tmp_path / "v.html").read_text() == (tmp_path / "r.html").read_text()


def test_report_help_says_what_the_page_shows():
    result = run("report", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for words in ("self-contained HTML page", "tool calls", "pinned to its line", "session filter", "100,000 lines"):
        assert words in text
