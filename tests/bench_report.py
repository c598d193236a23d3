"""Benchmark ``acpgen report`` on a 100,000-line transcript, in one process.

Writing the page: the fold, the validation and the HTML, timed with
``time.process_time`` against a baseline of ``json.loads`` of every line (the
least any reader of the transcript does), interleaved, ``--rounds`` times
(default 3); the medians and their ratio are printed.

Opening the page: headless Debian chromium (Playwright, /usr/bin/chromium)
loads the report and, as the baseline, a static page of the same lines in a
``<pre>`` (what a browser shows of the file with no script at all),
interleaved, each in a new page; printed are the medians of the first rows
drawn (the report's ``data-drawn`` mark), of DOMContentLoaded for both, of
the longest task, of the report's first search and of one after it, of
opening the Sequence view (reading the lines, drawing the arrows in view),
and the sizes. These are the browser's own clocks (wall
time in the renderer), so they move with the machine's load.

Run with ``.venv/bin/python tests/bench_report.py [N] [--rounds R]``; part of
``make bench``. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import html
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))

import acp_v1  # noqa: E402
from acpgen.report import write_report  # noqa: E402

from tests.report.transcripts import long_session  # noqa: E402

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
WATCH = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
}).observe({ type: "longtask", buffered: true });
"""
FIGURES = """() => ({
  drawn: Number(document.documentElement.dataset.drawn || 0),
  loaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
  longest: Math.max(0, ...window.__longTasks),
})"""


SEARCH = """(word) => {
  const box = document.getElementById("search");
  const start = performance.now();
  box.value = word;
  box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
  return performance.now() - start;
}"""


SEQUENCE = """() => {
  const start = performance.now();
  document.getElementById("tab-sequence").click();
  const drawn = document.querySelectorAll("main .seq").length;
  return drawn ? performance.now() - start : -1;
}"""


def cpu(fn: Any) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def baseline(path: Path) -> None:
    with open(path, "rb") as lines:
        for line in lines:
            json.loads(line)


def open_page(browser: Any, path: Path, report: bool) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.add_init_script(WATCH)
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load", timeout=300_000)
    if report:
        page.locator("html[data-ready]").wait_for(state="attached")
    figures: dict[str, float] = page.evaluate(FIGURES)
    if report:
        figures["sequence"] = page.evaluate(SEQUENCE)  # the lines read, the arrows in view drawn
        page.click("#tab-conversation")
        # the first search (it reads every row's text) and one after it
        figures["search"], figures["again"] = (page.evaluate(SEARCH, word) for word in ("word1_7", "word2_7"))
    context.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lines", nargs="?", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        transcript = Path(folder) / "long.jsonl"
        written = long_session(transcript, options.lines)
        page = Path(folder) / "long.html"
        plain = Path(folder) / "plain.html"
        text = transcript.read_text(encoding="utf-8")
        plain.write_text(
            f"<!DOCTYPE html><meta charset=utf-8><pre>{html.escape(text, quote=False)}</pre>", encoding="utf-8"
        )
        writes: list[float] = []
        loads: list[float] = []
        for _ in range(options.rounds):
            loads.append(cpu(lambda: baseline(transcript)))
            writes.append(cpu(lambda: write_report(transcript, page, acp_v1)))
        write, load = statistics.median(writes), statistics.median(loads)
        print(f"{written} lines, {transcript.stat().st_size / 2**20:.1f} MiB of JSON lines")
        print(
            f"writing the report: {write:.2f} s CPU ({written / write:,.0f} lines/s); json.loads of every line "
            f"{load:.2f} s; ratio {write / load:.1f}"
        )
        print(
            f"the report {page.stat().st_size / 2**20:.1f} MiB, the plain page {plain.stat().st_size / 2**20:.1f} MiB"
        )
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            ours: list[dict[str, float]] = []
            theirs: list[dict[str, float]] = []
            for _ in range(options.rounds):
                theirs.append(open_page(browser, plain, report=False))
                ours.append(open_page(browser, page, report=True))
            browser.close()

        def median(runs: list[dict[str, float]], key: str) -> float:
            return statistics.median(run[key] for run in runs)

        print(
            f"opening the report: first rows drawn at {median(ours, 'drawn'):.0f} ms, DOMContentLoaded at "
            f"{median(ours, 'loaded'):.0f} ms, longest task {median(ours, 'longest'):.0f} ms; the first search "
            f"{median(ours, 'search'):.0f} ms, the next {median(ours, 'again'):.0f} ms; the Sequence view opened "
            f"in {median(ours, 'sequence'):.0f} ms (medians of {options.rounds})"
        )
        print(
            f"opening the plain <pre> page: DOMContentLoaded at {median(theirs, 'loaded'):.0f} ms, longest task "
            f"{median(theirs, 'longest'):.0f} ms; the plain page is read in "
            f"{median(theirs, 'loaded') / median(ours, 'drawn'):.1f} times the time the report takes to draw its first rows"
        )


if __name__ == "__main__":
    main()
