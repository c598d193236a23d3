"""``acpgen report``'s page in a real browser: Debian's chromium, headless,
driven by Playwright (launched at /usr/bin/chromium, never a browser of its
own), one launch for the module.

What is shown is asserted: the messages (chunks joined), a tool call's
status and a diff line, the plan, the permission's answer, a finding's
pointer in the conversation and in the lines, the session filter, that
transcript markup never runs, that the page asks for nothing beyond
itself; and a 100,000-line transcript: it opens with only the rows in view
in the DOM, and scrolling to the end shows the last lines. Its load time is
printed (``-s`` shows it), not asserted. Search finds a message far off
screen and goes to it; a recording with timestamps shows its round trips,
turn and tool call durations, permission waits and the latency table; what
cannot be drawn shows its raw payload and direction. The Sequence view draws
an arrow a message, in order, with its direction; choosing a request or its
response (click or keyboard) highlights the pair with its round trip; an
unanswered request is marked; the session filter and search apply; the long
transcript's last arrow is reached with End. The Traces view groups the
messages carrying a traceparent by trace, with the span each came from.

``ACPGEN_RECORD_DOCS=1`` also writes the demo's screenshot to
``docs/report.png``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT
from ..patience import HANG
from ..report.transcripts import (
    SESSION_A,
    SESSION_B,
    SPAN_C,
    SPAN_S,
    SPAN_Z,
    TRACE_A,
    TRACE_B,
    XSS,
    demo,
    long_session,
    timed,
    traced,
)

CHROMIUM = "/usr/bin/chromium"
INSTALL = "apt-get install -y --no-install-recommends chromium (as root; make install does it)"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ACPGEN = str(Path(sys.executable).parent / "acpgen")
LONG_LINES = 100_000
TIMEOUT = HANG * 1000  # milliseconds, as Playwright counts
"""Milliseconds any wait may take: a generous "it finishes", nothing more."""

# Before the page's own script: every long task (the main thread busy over
# 50 ms), for the figures printed about the long transcript.
WATCH_LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
}).observe({ type: "longtask", buffered: true });
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: the report's browser test needs Debian's chromium: {INSTALL}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is missing: .venv/bin/pip install -e '.[test]' (make install)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


class Page:
    """A page of the report, with what it requested and complained of."""

    def __init__(self, browser: Any, path: Path, url: str | None = None) -> None:
        self.path = path
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.context.add_init_script(WATCH_LONG_TASKS)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        started = time.perf_counter()
        # Back as soon as the page starts coming in: the first rows are drawn
        # before the browser has read all of it.
        self.page.goto(url or path.as_uri(), wait_until="commit")
        # (A locator: a predicate of wait_for_function is evaluated in a way
        # the page's Content-Security-Policy refuses.)
        self.page.locator("html[data-ready]").wait_for(state="attached")
        self.seconds = time.perf_counter() - started

    def rows(self, selector: str = ".row") -> Any:
        return self.page.locator(f"main {selector}")

    def close(self) -> None:
        self.context.close()


def report(transcript: Path, out: Path, *extra: str) -> Path:
    subprocess.run(
        [str(Path(sys.executable).parent / "acpgen"), "report", str(transcript), "-o", str(out), *extra],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return out


@pytest.fixture(scope="module")
def demo_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    folder = tmp_path_factory.mktemp("report")
    page = Page(browser, report(demo(folder / "demo.jsonl"), folder / "demo.html"))
    yield page
    page.close()


def test_messages_and_thoughts_are_shown_with_their_chunks_joined(demo_page: Page) -> None:
    users = demo_page.rows(".k-user .text")
    assert users.first.inner_text() == "Add type hints to greet"
    assert demo_page.rows(".k-thought .text").inner_text() == "Let me look at greet first."
    agent = demo_page.rows(".k-agent").filter(has_text="Done:")
    assert agent.locator(".text").inner_text() == "Done: greet now has type hints."
    assert "3 lines" in agent.locator(".meta").inner_text()


def test_a_tool_call_shows_its_final_status_its_history_and_its_diff(demo_page: Page) -> None:
    tool = demo_page.rows(".k-tool").filter(has_text="Edit src/app.py")
    assert tool.locator(".tool-head .status").inner_text() == "completed"
    assert tool.locator(".badge.kind").inner_text() == "edit"
    history = tool.locator(".history").inner_text()
    assert "pending (line 11) \u2192 in_progress (line 14) \u2192 completed (line 15)" in history
    assert tool.locator(".dl.del .code").all_inner_texts() == ["def greet(name):", "    print('hi', name)"]
    assert tool.locator(".dl.add .code").all_inner_texts() == [
        "def greet(name: str) -> None:",
        "    print('hello', name)",
    ]
    assert tool.locator(".dl.hunk").inner_text().strip() == "@@ -1,5 +1,5 @@"


def test_a_terminal_shows_its_command_output_and_exit_status(demo_page: Page) -> None:
    tool = demo_page.rows(".k-tool").filter(has_text="pytest")
    assert tool.locator(".terminal .diff-path").inner_text() == "terminal term_1: pytest -q (exit code 0)"
    assert tool.locator(".terminal pre").inner_text() == "...\n3 passed in 0.02s\n"


def test_the_plan_permission_usage_and_turn_end_are_shown(demo_page: Page) -> None:
    plan = demo_page.rows(".k-plan")
    assert plan.locator(".entry-text").all_inner_texts() == ["Read src/app.py", "Annotate greet", "Run the tests"]
    assert plan.locator(".status").all_inner_texts() == ["completed", "in_progress", "pending"]
    permission = demo_page.rows(".k-permission")
    assert permission.locator(".option.chosen").inner_text().startswith("Allow once (allow_once)")
    assert permission.locator(".answer").inner_text() == "answer: Allow once (line 13)"
    assert demo_page.rows(".k-usage .usage").inner_text() == "Context: 5230 of 200000 tokens (3%)"
    assert demo_page.rows(".k-turn .turn-end").first.inner_text() == "Turn ended: end_turn"


def test_findings_are_pinned_to_their_rows_and_lines_with_their_pointer(demo_page: Page) -> None:
    warning = demo_page.rows(".k-plan .finding")
    assert warning.locator(".pointer").inner_text() == "/params/update/entries/2/priority"
    assert "warning repaired" in warning.inner_text()
    error = demo_page.rows(".k-tool").filter(has_text="call_9").locator(".finding.error")
    assert error.locator(".pointer").inner_text() == "/params/update"
    assert "not-started" in error.inner_text()
    # Its line button opens the line, pinned with the same finding.
    warning.locator(".ln").click()
    line = demo_page.page.locator("main .line.target")
    assert line.locator(".ln").inner_text() == "10"
    assert "flag-warning" in (line.get_attribute("class") or "")
    assert line.locator(".pointer").inner_text() == "/params/update/entries/2/priority"
    assert '"priority": "urgent"' in line.locator(".raw").inner_text()
    demo_page.page.click("#tab-findings")
    assert demo_page.page.locator("#tab-findings").inner_text() == "Findings (2)"
    assert demo_page.rows(".finding .pointer").all_inner_texts() == [
        "/params/update/entries/2/priority",
        "/params/update",
    ]
    demo_page.page.click("#tab-conversation")


def test_the_lines_view_shows_each_line_as_recorded_and_expands_it(demo_page: Page) -> None:
    demo_page.page.click("#tab-lines")
    first = demo_page.rows(".line").first
    recorded = demo_page.path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert first.locator(".raw").inner_text() == recorded
    first.locator(".line-head").click()
    assert '"method": "initialize"' in demo_page.rows(".line").first.locator(".pretty").inner_text()
    assert demo_page.rows(".line").count() == len(demo_page.path.with_suffix(".jsonl").read_text().splitlines())
    demo_page.page.click("#tab-conversation")


def test_the_session_filter_hides_the_other_sessions_rows(demo_page: Page) -> None:
    page = demo_page.page
    assert demo_page.rows().filter(has_text="Add type hints to greet").count() == 1
    page.select_option("#session", label=f"{SESSION_B} (/work/{SESSION_B})")
    assert demo_page.rows().filter(has_text="Add type hints to greet").count() == 0
    assert demo_page.rows(".k-user").count() == 1
    assert set(demo_page.rows(".stag").all_inner_texts()) == {SESSION_B[:12]}
    page.click("#tab-lines")
    assert demo_page.rows(".line").count() == 5  # session/new and its answer, the prompt, a chunk, the end
    page.select_option("#session", label=f"{SESSION_A} (/work/{SESSION_A})")
    page.click("#tab-conversation")
    assert demo_page.rows().filter(has_text=XSS[:10]).count() == 0
    assert demo_page.rows(".k-plan").count() == 1
    page.select_option("#session", value="-2")


def test_transcript_markup_is_shown_as_text_and_never_runs(demo_page: Page) -> None:
    page = demo_page.page
    page.select_option("#session", label=f"{SESSION_B} (/work/{SESSION_B})")
    assert demo_page.rows(".k-user .text").inner_text() == XSS
    assert demo_page.rows(".k-agent .text").inner_text() == "Echo: " + XSS
    assert page.evaluate("window.__xss") is None
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 3  # the data, the page's own, the lines
    page.select_option("#session", value="-2")


def test_the_page_loads_nothing_and_breaks_no_policy(demo_page: Page) -> None:
    # Every script ran under the page's Content-Security-Policy (a hash that
    # did not match would leave the page blank, never ready) and nothing was
    # fetched but the page itself.
    assert demo_page.requests == [demo_page.path.as_uri()]
    assert demo_page.errors == []
    policy = demo_page.page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert policy is not None and "default-src 'none'" in policy and "unsafe" not in policy


def test_the_screenshot(demo_page: Page) -> None:
    demo_page.page.select_option("#session", value="-2")
    demo_page.page.click("#tab-conversation")
    assert (
        demo_page.page.locator("#summary")
        .inner_text()
        .startswith("32 lines \u00b7 2 sessions \u00b7 1 error, 1 warning")
    )
    shot = demo_page.page.screenshot(full_page=False)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("ACPGEN_RECORD_DOCS"):
        (ROOT / "docs" / "report.png").write_bytes(shot)


def test_a_100000_line_transcript_opens_and_scrolls_to_its_end(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("long")
    written = long_session(folder / "long.jsonl", LONG_LINES)
    assert written >= LONG_LINES
    out = report(folder / "long.jsonl", folder / "long.html")
    page = Page(browser, out)
    try:
        rows = page.page.locator("main .row").count()
        assert 0 < rows < 200  # only the rows in view are in the DOM
        # The lines as they were recorded, asked for at once (maybe before
        # the browser has read them: the view says so, then shows them).
        page.page.click("#tab-lines")
        first = page.page.locator("main .line").first
        first.wait_for()
        assert first.locator(".raw").inner_text() == (folder / "long.jsonl").open().readline().rstrip("\n")
        figures = page.page.evaluate(
            """() => ({
              drawn: Number(document.documentElement.dataset.drawn),
              ready: Number(document.documentElement.dataset.ready),
              loaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
              fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
              longest: Math.max(0, ...window.__longTasks),
            })"""
        )
        print(
            f"\nreport of {written} lines, {out.stat().st_size / 2**20:.1f} MiB: first rows in the DOM at "
            f"{figures['drawn']:.0f} ms, the next frame at {figures['ready']:.0f} ms, first contentful paint "
            f"{figures['fcp']:.0f} ms, the whole page read (DOMContentLoaded) at {figures['loaded']:.0f} ms, "
            f"longest task {figures['longest']:.0f} ms; {page.seconds:.2f} s to the first rows as Playwright saw it"
        )
        page.page.click("#tab-conversation")
        assert page.errors == []
        last = written
        page.page.focus("main")
        page.page.keyboard.press("End")
        end = page.rows().filter(has_text=f"line {last}").filter(has_text="Turn ended: end_turn")
        end.wait_for()
        assert end.is_visible() and end.bounding_box()["y"] < 900
        assert page.page.locator("main .row").count() < 200
        page.page.click("#tab-lines")
        page.page.focus("main")
        page.page.keyboard.press("End")
        final = page.page.locator("main .line").filter(has=page.page.locator(".ln", has_text=str(last)))
        final.wait_for()
        assert '"stopReason": "end_turn"' in final.locator(".raw").inner_text()
        assert final.bounding_box()["y"] < 900
        assert page.page.locator("main .line").count() < 400
        # The sequence view: its last arrow, the last turn's end, reached with End.
        page.page.click("#tab-sequence")
        assert 0 < page.page.locator("main .seq").count() < 200
        page.page.focus("main")
        page.page.keyboard.press("End")
        arrow = page.page.locator(f'main .seq[data-line="{last}"]')
        arrow.wait_for()
        assert arrow.locator(".label").inner_text() == "session/prompt result"
        assert "seq-r" in (arrow.get_attribute("class") or "") and "d-a" in (arrow.get_attribute("class") or "")
        assert 0 < arrow.bounding_box()["y"] < 900
        assert page.page.locator("main .seq").count() < 400
        assert page.errors == []
    finally:
        page.close()


def test_sessions_ids_name_the_demo(demo_page: Page) -> None:
    options = demo_page.page.locator("#session option").all_inner_texts()
    assert options == ["all sessions (2)", f"{SESSION_A} (/work/{SESSION_A})", f"{SESSION_B} (/work/{SESSION_B})"]


@pytest.fixture(scope="module")
def timed_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    folder = tmp_path_factory.mktemp("timed")
    page = Page(browser, report(timed(folder / "timed.jsonl"), folder / "timed.html"))
    yield page
    page.close()


def test_a_recording_shows_round_trips_turn_times_and_the_tool_calls_history(timed_page: Page) -> None:
    rows = timed_page.rows
    initialize = rows(".k-rpc").filter(has_text="initialize")
    assert initialize.locator(".took").inner_text() == "round trip 10 ms"
    assert rows(".k-user").first.locator(".meta .when").inner_text() == "+1.000 s"
    first_turn = rows(".k-turn").first
    assert first_turn.locator(".took").all_inner_texts() == ["turn 3.50 s", "first chunk after 250 ms"]
    assert rows(".k-turn").nth(1).locator(".took").all_inner_texts() == ["turn 500 ms", "first chunk after 100 ms"]
    tool = rows(".k-tool")
    assert tool.locator(".body > .took").inner_text() == "took 3.00 s"
    steps = tool.locator(".timeline .step")
    assert steps.count() == 4  # the tool call, the permission asked between its updates, two updates
    assert steps.nth(0).locator(".when").inner_text() == "+1.300 s"
    assert "permission requested answered Allow once (line 10), waited 2.00 s" in steps.nth(1).inner_text()
    assert [steps.nth(i).locator(".status").inner_text() for i in (0, 2, 3)] == ["pending", "in_progress", "completed"]
    permission = rows(".k-permission")
    assert permission.locator(".took").inner_text() == "waited 2.00 s"
    assert permission.locator(".perm-tool").inner_text() == "for tool call call_1 (line 8)"
    # The links go both ways: the permission's to its tool call, the step to the permission.
    permission.locator(".perm-tool .jump").click()
    assert timed_page.page.locator("main .row.target .tool-title").inner_text() == "Edit a.py"
    timed_page.page.locator("main .row.target .timeline .jump").click()
    assert timed_page.page.locator("main .row.target .who").inner_text().lower() == "permission requested"


def test_the_timings_view_has_the_latency_by_method_and_each_wait(timed_page: Page) -> None:
    page = timed_page.page
    page.click("#tab-timings")
    tables = page.locator("main table.timing")
    by_method = [row.split("\t") for row in tables.nth(0).inner_text().splitlines()]
    assert by_method == [
        ["method", "requests", "p50", "p99", "max"],
        ["session/prompt", "2", "500 ms", "3.50 s", "3.50 s"],
        ["session/request_permission", "1", "2.00 s", "2.00 s", "2.00 s"],
        ["session/new", "1", "30 ms", "30 ms", "30 ms"],
        ["initialize", "1", "10 ms", "10 ms", "10 ms"],
    ]
    assert tables.nth(1).locator("tr").nth(1).inner_text().split("\t") == ["line 14", "end_turn", "3.50 s", "250 ms"]
    assert tables.nth(2).locator("tr").nth(1).inner_text().split("\t") == ["line 8", "Edit a.py", "completed", "3.00 s"]
    assert tables.nth(3).locator("tr").nth(1).inner_text().split("\t") == [
        "line 9",
        "Edit a.py",
        "Allow once",
        "2.00 s",
    ]
    tables.nth(2).locator(".jump").click()  # back to the conversation, at the tool call
    assert page.locator("#tab-conversation").get_attribute("aria-selected") == "true"
    assert page.locator("main .row.target .tool-title").inner_text() == "Edit a.py"
    assert timed_page.errors == []


def arrows(page: Page) -> list[tuple[int, str, str, str, str]]:
    """The arrows drawn, in order: (line, kind, direction, label, note)."""
    drawn: list[tuple[int, str, str, str, str]] = []
    for node in page.rows(".seq").all():
        classes = (node.get_attribute("class") or "").split()
        kind = next(c[4:] for c in classes if c.startswith("seq-"))
        direction = next(c[2:] for c in classes if c.startswith("d-"))
        line = int(node.get_attribute("data-line") or 0)
        drawn.append((line, kind, direction, node.locator(".label").inner_text(), node.locator(".note").inner_text()))
    return drawn


def test_the_sequence_view_draws_an_arrow_a_message_in_order_with_its_direction(timed_page: Page) -> None:
    timed_page.page.click("#tab-sequence")
    update = "session/update "
    assert arrows(timed_page) == [
        (2, "q", "c", "initialize", ""),
        (3, "r", "a", "initialize result", "10 ms"),
        (4, "q", "c", "session/new", ""),
        (5, "r", "a", "session/new result", "30 ms"),
        (6, "q", "c", "session/prompt", ""),
        (7, "n", "a", update + "agent_thought_chunk", "notification"),
        (8, "n", "a", update + "tool_call", "notification"),
        (9, "q", "a", "session/request_permission", ""),
        (10, "r", "c", "session/request_permission result", "2.00 s"),
        (11, "n", "a", update + "tool_call_update", "notification"),
        (12, "n", "a", update + "tool_call_update", "notification"),
        (13, "n", "a", update + "agent_message_chunk", "notification"),
        (14, "r", "a", "session/prompt result", "3.50 s"),
        (15, "q", "c", "session/prompt", ""),
        (16, "n", "a", update + "agent_message_chunk", "notification"),
        (17, "r", "a", "session/prompt result", "500 ms"),
    ]  # lines 1 and 18, tap's start and end records, are no messages
    # The arrowhead points at the lifeline the message goes to.
    lane = timed_page.rows('.seq[data-line="2"] .lane').bounding_box()
    for line, toward in ((2, "right"), (3, "left")):
        side = timed_page.page.evaluate(
            """(line) => {
              const shaft = document.querySelector('main .seq[data-line="' + line + '"] .shaft');
              const head = getComputedStyle(shaft, "::after");
              return head.borderLeftWidth === "10px" ? "right" : head.borderRightWidth === "10px" ? "left" : "";
            }""",
            line,
        )
        assert side == toward
    assert lane is not None and lane["width"] > 300
    assert timed_page.page.locator("#seq-head .life").all_inner_texts() == ["CLIENT", "AGENT"]
    assert timed_page.errors == []


def test_choosing_a_request_or_its_response_highlights_the_pair_with_its_round_trip(timed_page: Page) -> None:
    page = timed_page.page
    page.click("#tab-sequence")
    page.click('main .seq[data-line="10"] .arrow')  # the response: its request is highlighted too
    assert [int(n.get_attribute("data-line") or 0) for n in timed_page.rows(".seq.paired").all()] == [9, 10]
    info = page.locator("#seq-info")
    assert info.inner_text().startswith("session/request_permission: request at line 9, response at line 10")
    assert info.locator(".rtt").inner_text() == "round trip 2.00 s"
    # By keyboard: from an arrow to the next with the arrow keys, chosen with Enter.
    page.focus('main .seq[data-line="2"] .arrow')
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.closest('.seq').dataset.line") == "3"
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "line 3, response, initialize, agent to client, to the request at line 2"
    )
    page.keyboard.press("Enter")
    assert [int(n.get_attribute("data-line") or 0) for n in timed_page.rows(".seq.paired").all()] == [2, 3]
    assert info.locator(".rtt").inner_text() == "round trip 10 ms"
    assert page.locator('main .seq[data-line="3"] .arrow').get_attribute("aria-pressed") == "true"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.closest('.seq').dataset.line") == "2"  # the first: it stays
    page.click('main .seq[data-line="15"] .arrow')
    info.locator(".ln").click()  # to the response, focused
    assert page.evaluate("document.activeElement.closest('.seq').dataset.line") == "17"
    assert info.locator(".rtt").inner_text() == "round trip 500 ms"
    assert timed_page.errors == []


def test_the_sequence_view_marks_an_unanswered_request_an_error_and_an_orphan_response(
    browser: Any, tmp_path: Path
) -> None:
    w = [
        ("client_to_agent", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("agent_to_client", {"id": 0, "result": {"protocolVersion": 1}}),
        ("client_to_agent", {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        ("agent_to_client", {"id": 1, "error": {"code": -32603, "message": "boom"}}),
        ("agent_to_client", {"id": 7, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/a"}}),
        ("agent_to_client", {"id": 99, "result": {}}),
    ]
    transcript = tmp_path / "unanswered.jsonl"
    transcript.write_text(
        "".join(json.dumps({"direction": d, "message": {"jsonrpc": "2.0", **m}}) + "\n" for d, m in w)
    )
    page = Page(browser, report(transcript, tmp_path / "unanswered.html"))
    try:
        page.page.click("#tab-sequence")
        assert arrows(page) == [
            (1, "q", "c", "initialize", ""),
            (2, "r", "a", "initialize result", ""),  # no times: no round trip
            (3, "q", "c", "session/new", ""),
            (4, "e", "a", "session/new error", ""),
            (5, "q", "a", "fs/read_text_file", "no answer"),
            (6, "r", "a", "no request result", "no request"),
        ]
        assert [int(n.get_attribute("data-line") or 0) for n in page.rows(".seq.unanswered").all()] == [5]
        unanswered = page.page.locator('main .seq[data-line="5"] .arrow')
        assert (unanswered.get_attribute("aria-label") or "").endswith("agent to client, never answered")
        unanswered.click()
        info = page.page.locator("#seq-info")
        assert info.inner_text() == "fs/read_text_file: request at line 5, never answered in the transcript"
        assert [int(n.get_attribute("data-line") or 0) for n in page.rows(".seq.paired").all()] == [5]
        page.page.click('main .seq[data-line="4"] .arrow')
        assert info.inner_text().startswith("session/new: request at line 3, error at line 4")
        assert info.locator(".rtt").inner_text() == "no times in the transcript"
        assert page.errors == []
    finally:
        page.close()


def test_the_sequence_view_keeps_to_the_session_chosen(demo_page: Page) -> None:
    page = demo_page.page
    page.select_option("#session", label=f"{SESSION_B} (/work/{SESSION_B})")
    page.click("#tab-sequence")
    assert [(a[0], a[3]) for a in arrows(demo_page)] == [
        (5, "session/new"),
        (6, "session/new result"),
        (22, "session/prompt"),
        (23, "session/update agent_message_chunk"),
        (24, "session/prompt result"),
    ]
    page.select_option("#session", value="-2")
    assert len(arrows(demo_page)) == 32  # every line of the demo is a message
    page.click("#tab-conversation")


@pytest.fixture(scope="module")
def medium_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Page, int]]:
    folder = tmp_path_factory.mktemp("medium")
    written = long_session(folder / "medium.jsonl", 3000)
    page = Page(browser, report(folder / "medium.jsonl", folder / "medium.html"))
    yield page, written
    page.close()


def test_search_finds_a_message_off_screen_goes_to_it_and_marks_it(medium_page: tuple[Page, int]) -> None:
    page, _written = medium_page
    turns = page.page.evaluate(
        "JSON.parse(document.getElementById('acp-data').textContent).rows.filter(r => r.k === 'user').length"
    )
    needle = f"word{turns}_7"  # a word of the last turn only: its prompt and the agent's echo
    assert page.rows().filter(has_text=needle).count() == 0  # not drawn: far below
    page.page.keyboard.press("Control+f")  # the page's search, not the browser's
    assert page.page.evaluate("document.activeElement.id") == "search"
    page.page.keyboard.type(needle)
    page.page.keyboard.press("Enter")
    count = page.page.locator("#search-count")
    assert count.inner_text() == "1 of 2"
    current = page.page.locator("main mark.hit.current")
    assert current.inner_text() == needle
    box = current.bounding_box()
    assert box is not None and 0 < box["y"] < 900
    assert page.rows(".hit-current.k-user").count() == 1
    page.page.click("#search-next")
    assert count.inner_text() == "2 of 2"
    assert page.rows(".hit-current.k-agent mark.current").inner_text() == needle
    page.page.locator("#search").press("Shift+Enter")  # back, from the box
    assert count.inner_text() == "1 of 2"
    # The same search over the lines as recorded.
    page.page.click("#tab-lines")
    page.page.locator("#search").press("Enter")
    assert count.inner_text() == "1 of 2"
    line = page.page.locator("main .line.hit-current")
    assert needle in line.locator("mark.current").inner_text()
    page.page.fill("#search", "no such text anywhere")
    page.page.locator("#search").press("Enter")
    assert count.inner_text() == "not found"
    page.page.fill("#search", "")
    page.page.locator("#search").press("Enter")
    page.page.click("#tab-conversation")
    assert page.errors == []


def test_search_in_the_sequence_view_goes_to_the_arrow_of_the_line_found(medium_page: tuple[Page, int]) -> None:
    page, _written = medium_page
    recorded = page.path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()
    needle = "word40_7"  # in the 40th turn's prompt and one chunk of its answer, far below the first screen
    found = [n for n, line in enumerate(recorded, 1) if needle in line]
    assert len(found) == 2
    page.page.click("#tab-sequence")
    page.page.locator("main .seq").first.wait_for()
    assert page.page.locator(f'main .seq[data-line="{found[0]}"]').count() == 0  # not drawn
    page.page.fill("#search", needle)
    page.page.locator("#search").press("Enter")
    assert page.page.locator("#search-count").inner_text() == "1 of 2"
    for at, line in enumerate(found):
        hit = page.page.locator("main .seq.hit-current")
        assert hit.get_attribute("data-line") == str(line)
        box = hit.bounding_box()
        assert box is not None and 0 < box["y"] < 900
        if at == 0:
            assert hit.locator(".label").inner_text() == "session/prompt"
            page.page.click("#search-next")
    assert page.page.locator("main .seq.hit-current .label").inner_text() == "session/update agent_message_chunk"
    page.page.fill("#search", "")
    page.page.locator("#search").press("Enter")
    page.page.click("#tab-conversation")
    assert page.errors == []


def test_what_cannot_be_drawn_shows_its_raw_payload_and_direction(browser: Any, tmp_path: Path) -> None:
    def record(direction: str, **members: Any) -> str:
        return json.dumps({"direction": direction, "timestamp": "2027-01-01T00:00:00.000000Z", **members})

    prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": None}}
    transcript = tmp_path / "broken.jsonl"
    transcript.write_text(
        "\n".join(
            [
                record(
                    "client_to_agent",
                    message={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "session/new",
                        "params": {"cwd": "/", "mcpServers": []},
                    },
                ),
                record("agent_to_client", message={"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
                record("agent_to_client", line="Traceback (most recent call last):"),
                "plain garbage",
                record("client_to_agent", message=prompt),
            ]
        )
        + "\n"
    )
    page = Page(browser, report(transcript, tmp_path / "broken.html"))
    try:
        traceback = page.rows(".k-bad").filter(has_text="Traceback")
        assert traceback.locator(".meta .dir").inner_text() == "agent \u2192 client"
        assert traceback.locator(".payload pre").inner_text() == "Traceback (most recent call last):"
        assert "agent \u2192 client" in traceback.locator(".finding").inner_text()
        garbage = page.rows(".k-bad").filter(has_text="plain garbage")
        assert "direction not recorded" in garbage.inner_text()
        assert garbage.locator(".payload pre").inner_text() == "plain garbage"
        user = page.rows(".k-user")
        assert "no content to show" in user.inner_text()
        assert json.loads(user.locator(".payload pre").inner_text()) == prompt
        finding = user.locator(".finding.error").filter(has_text="invalid")
        assert finding.locator(".fdir").inner_text() == "client \u2192 agent"
        assert finding.locator(".fmethod").inner_text() == "session/prompt"
        assert "expected an array, found null" in finding.inner_text()
        assert page.errors == []
    finally:
        page.close()


def test_live_draws_the_transcript_again_as_it_grows_and_keeps_the_search(browser: Any, tmp_path: Path) -> None:
    whole = timed(tmp_path / "whole.jsonl").read_text().splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_text("".join(whole[:10]))  # up to the permission request: no end record yet
    server = subprocess.Popen(
        [ACPGEN, "report", "--live", str(growing), "--package", "acp_v1", "--interval", "0.1"],
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert server.stderr is not None
        waiting = selectors.DefaultSelector()
        waiting.register(server.stderr, selectors.EVENT_READ)
        assert waiting.select(timeout=HANG), "acpgen report --live said nothing"
        said = server.stderr.readline().decode()
        assert said.startswith(f"acpgen report: serving {growing} at http://127.0.0.1:"), said
        url = said.split(" at ", 1)[1].split()[0]
        page = Page(browser, growing, url)
        try:
            assert page.rows(".k-user").count() == 1 and page.rows(".k-turn").count() == 0
            page.page.fill("#search", "Fix the bug")
            page.page.locator("#search").press("Enter")
            assert page.page.locator("#search-count").inner_text() == "1 of 1"
            before = page.page.locator("html").get_attribute("data-live")
            with growing.open("a") as out:  # what tap writes next, the rest of the session
                out.write("".join(whole[10:]))
            page.rows(".k-user").filter(has_text="Thanks").wait_for()
            assert page.page.locator("html").get_attribute("data-live") != before
            assert page.rows(".k-turn").count() == 2
            assert page.page.input_value("#search") == "Fix the bug"  # kept across the reload
            assert page.errors == []
        finally:
            page.close()
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=HANG) == 0
        assert server.stderr is not None and b"acpgen report: stopped" in server.stderr.read()


def test_the_traces_view_groups_the_messages_by_trace(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(traced(tmp_path / "traced.jsonl"), tmp_path / "traced.html"))
    try:
        page.page.click("#tab-traces")
        heads = page.page.locator("main .traces h2").all_inner_texts()
        assert heads == [f"Trace {TRACE_A} \u2014 4 messages, 3 spans", f"Trace {TRACE_B} \u2014 1 message, 1 span"]
        first = [row.split("\t") for row in page.page.locator("main table.timing").nth(0).inner_text().splitlines()]
        assert first == [
            ["line", "direction", "message", "from span", "serving"],
            ["line 5", "client \u2192 agent", "\u2192 session/prompt", SPAN_C, ""],
            ["line 6", "agent \u2192 client", "session/update", SPAN_S, "line 5"],
            ["line 7", "agent \u2192 client", "\u2192 session/request_permission", SPAN_Z, "line 5"],
            ["line 9", "client \u2192 agent", "session/cancel", SPAN_S, "line 5"],
        ]
        page.page.locator("main table.timing").nth(0).locator("tr").nth(2).locator("button").nth(1).click()
        assert page.page.locator("main .target").count() == 1  # the Lines view, at line 5
        assert page.errors == []
    finally:
        page.close()
