"""Run the steps of ``make test`` one after the other, every one of them even
when an earlier one fails, and say how each went.

Usage: ``python tests/steps.py NAME=COMMAND [NAME=COMMAND ...]``. Each
COMMAND runs in a shell. A line is printed as each step starts and ends (its
status, wall time and the CPU time of its processes), a table of all of them
at the end, and the exit status is 0 only if every step passed. Standard
library only: it runs before and beside any venv.

``ACPGEN_STEPS_SUMMARY=PATH`` also writes the table as JSON Lines to PATH
(one object per step: name, status, wall and cpu seconds).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_step(name: str, command: str) -> dict[str, object]:
    """Run one step; its record: name, status (``passed``, ``failed (exit
    N)``), wall and CPU seconds."""
    print(f"make test: step {name}: {command}", flush=True)
    wall, cpu = time.monotonic(), _children_cpu()
    code = subprocess.call(command, shell=True)
    wall, cpu = time.monotonic() - wall, _children_cpu() - cpu
    status = "passed" if code == 0 else f"failed (exit {code})"
    print(f"make test: step {name}: {status} in {wall:.1f} s (CPU {cpu:.1f} s)", flush=True)
    return {"name": name, "status": status, "wall": round(wall, 1), "cpu": round(cpu, 1)}


def table(records: list[dict[str, object]]) -> str:
    width = max(len(str(r["name"])) for r in records)
    lines = [f"{'step':<{width}}  {'wall s':>8}  {'CPU s':>8}  status"]
    for r in records:
        lines.append(f"{r['name']!s:<{width}}  {r['wall']:>8}  {r['cpu']:>8}  {r['status']}")
    total_wall = sum(float(str(r["wall"])) for r in records)
    total_cpu = sum(float(str(r["cpu"])) for r in records)
    lines.append(f"{'total':<{width}}  {total_wall:>8.1f}  {total_cpu:>8.1f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    steps: list[tuple[str, str]] = []
    for arg in argv:
        name, sep, command = arg.partition("=")
        if not sep or not name or not command:
            print(f"steps.py: expected NAME=COMMAND, got {arg!r}", file=sys.stderr)
            return 2
        steps.append((name, command))
    if not steps:
        print("steps.py: no steps given", file=sys.stderr)
        return 2
    records = [run_step(name, command) for name, command in steps]
    print("make test: summary\n" + table(records), flush=True)
    summary = os.environ.get("ACPGEN_STEPS_SUMMARY")
    if summary:
        with open(summary, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(r) + "\n" for r in records)
    failed = [str(r["name"]) for r in records if r["status"] != "passed"]
    if failed:
        print(f"make test: {len(failed)} of {len(records)} steps failed: {', '.join(failed)}", flush=True)
        return 1
    print(f"make test: all {len(records)} steps passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
