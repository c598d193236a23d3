"""The summary table of ``make bench``: each benchmark records its figures
with :func:`record` into the file ``ACPGEN_BENCH_SUMMARY`` names (JSON
lines; nothing is recorded when it is unset), and ``python
tests/bench_summary.py FILE`` prints them as one table at the end.

Not collected by pytest."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def record(bench: str, what: str, value: float, unit: str, target: str = "", met: bool | None = None) -> None:
    """Record one figure of ``bench``: ``value`` in ``unit`` (``x`` for a
    ratio against the baseline ``what`` names), and the target it has, if
    any, and whether it is met."""
    path = os.environ.get("ACPGEN_BENCH_SUMMARY")
    if not path:
        return
    row = {"bench": bench, "what": what, "value": value, "unit": unit, "target": target, "met": met}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def main() -> None:
    path = Path(sys.argv[1])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    print("\n==== make bench: summary (CPU-time medians on this machine; noisy when it is loaded)")
    width = max((len(r["what"]) for r in rows), default=10)
    bench_width = max((len(r["bench"]) for r in rows), default=5)
    for r in rows:
        value = f"{r['value']:.2f}{r['unit']}" if r["unit"] == "x" else f"{r['value']:,.3g} {r['unit']}"
        verdict = "" if r["met"] is None else ("  met" if r["met"] else "  NOT met")
        target = f"  target {r['target']}" if r["target"] else ""
        print(f"  {r['bench']:<{bench_width}}  {r['what']:<{width}}  {value:>14}{target}{verdict}")


if __name__ == "__main__":
    main()
