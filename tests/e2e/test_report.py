"""``acpgen report`` and ``acpgen validate --html``: the page they write
holds the fold and the findings (read back from its data), written whole
or not at all."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from acpgen.cli import main
from click.testing import CliRunner

from ..conftest import ROOT, load_generated
from ..patience import HANG
from ..report.transcripts import demo

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def data(page: Path) -> dict[str, Any]:
    return data_of(page.read_text(encoding="utf-8"))


def data_of(text: str) -> dict[str, Any]:
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
    for words in (
        "self-contained HTML page",
        "tool calls",
        "pinned to its line",
        "session filter",
        "100,000 lines",
        "Search (Ctrl+F) looks through every message",
        "p50/p99 round trips by method",
        "--live serves the page",
    ):
        assert words in text


def test_live_serves_the_page_of_the_transcript_as_it_is_and_only_to_its_own_host(tmp_path):
    from acpgen.report.live import LiveReport, serve

    transcript = tmp_path / "t.jsonl"
    lines = (TRANSCRIPTS / "python-sdk-v1.jsonl").read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:3]))
    server = serve(LiveReport(transcript, load_generated("acp_v1"), interval=0.5))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    base = f"http://{host}:{port}"
    try:

        def get(path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
            request = urllib.request.Request(base + path, headers=headers or {})
            try:
                with urllib.request.urlopen(request, timeout=HANG) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        status, page = get("/")
        assert status == 200 and "connect-src 'self'" in page
        shown = data_of(page)
        assert shown["lineCount"] == 3 and shown["live"]["interval"] == 500
        version = get("/version")[1]
        assert version == shown["live"]["version"]
        transcript.write_text("".join(lines))  # tap wrote on
        assert get("/version")[1] != version
        assert data_of(get("/")[1])["lineCount"] == len(lines)
        assert get("/version", {"Host": "attacker.example"})[0] == 403  # a name rebound to 127.0.0.1
        assert get("/", {"Host": f"localhost:{port}"})[0] == 200
        assert get("/elsewhere")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG)


def test_live_writes_no_file_and_refuses_an_output(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes((TRANSCRIPTS / "python-sdk-v1.jsonl").read_bytes())
    result = run("report", str(transcript), "--live", "-o", str(tmp_path / "x.html"), "--package", "acp_v1")
    assert result.exit_code == 2 and "give -o or --live, not both" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
