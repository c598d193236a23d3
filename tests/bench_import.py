"""Benchmark what importing a generated package costs: the CPU time of a
fresh interpreter that imports it (``python -c "import acp_v1"``) against
one that does nothing (``python -c pass``), the difference being the
package's own cost net of the interpreter's start-up (target: at most
50 ms for ``acp_v1``).

Each run is a child process; its CPU time (user + system) is read with
``resource.getrusage(RUSAGE_CHILDREN)`` around it. Runs interleave the
commands (pass, import, pass, import ...); each figure is the median over
the runs. The children read compiled bytecode: ``PYTHONDONTWRITEBYTECODE``
is dropped from their environment and their caches go to a temporary
directory (``PYTHONPYCACHEPREFIX``), filled by one run of each command
before the timed ones, so that nothing is written next to the packages.

Beside the figures: whether ``import acp_v1`` imported orjson, asyncio or
dataclasses (none is needed before the first message or connection), and with
``--breakdown`` the modules that cost most under ``python -X importtime``
(the median of each module's own time over the runs).

Usage: ``python tests/bench_import.py [--runs N] [--package acp_v1]
[--breakdown] [--generated DIR]``; part of ``make bench``. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
TESTS = Path(__file__).resolve().parent


def _environment(cache: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    return env


def child_cpu(code: str, env: dict[str, str], where: Path) -> float:
    """CPU seconds (user + system) of ``python -c code`` run in ``where``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], cwd=where, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def breakdown(package: str, env: dict[str, str], where: Path, runs: int, top: int) -> list[tuple[str, float, float]]:
    """The ``top`` modules by their own import time (median us over
    ``runs``) under ``-X importtime``: (module, self, cumulative)."""
    own: dict[str, list[int]] = collections.defaultdict(list)
    total: dict[str, list[int]] = collections.defaultdict(list)
    for _ in range(runs):
        found = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {package}"],
            cwd=where,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stderr
        after_site = False
        for line in found.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            fields = line[len("import time:") :].split("|")
            name = fields[2].strip()
            if name == "site":  # what the interpreter imports first
                after_site = True
                continue
            if after_site:
                own[name].append(int(fields[0]))
                total[name].append(int(fields[1]))
    rows = [(name, statistics.median(own[name]), statistics.median(total[name])) for name in own]
    rows.sort(key=lambda row: -row[1])
    return rows[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--package", default="acp_v1")
    parser.add_argument(
        "--generated", type=Path, default=GENERATED, help="the directory of the packages (default: generated/)"
    )
    parser.add_argument("--breakdown", action="store_true", help="the top modules under -X importtime")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acpgen-bench-import-") as cache:
        env = _environment(cache)
        ways = {"pass": "pass", "import": f"import {args.package}"}
        for code in ways.values():  # fills the bytecode cache
            child_cpu(code, env, args.generated)
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.runs):
            for name, code in ways.items():
                times[name].append(child_cpu(code, env, args.generated))
        start = statistics.median(times["pass"])
        whole = statistics.median(times["import"])
        net = statistics.median(b - a for a, b in zip(times["pass"], times["import"], strict=True))
        print(f"CPU of a fresh interpreter, median of {args.runs} interleaved runs:")
        print(f"  python -c pass            {start * 1e3:7.1f} ms")
        print(f"  python -c 'import {args.package}' {whole * 1e3:7.1f} ms")
        print(f"  import {args.package}, net       {net * 1e3:7.1f} ms (target: at most 50 ms)")
        loaded = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys, {args.package}; print(sorted({{'orjson', 'asyncio', 'dataclasses'}} & set(sys.modules)))",
            ],
            cwd=args.generated,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"  imported by import {args.package} among orjson, asyncio, dataclasses: {loaded}")
        if args.breakdown:
            print(f"\nTop modules by their own time under -X importtime (median of {args.runs} runs, us):")
            for name, own, total in breakdown(args.package, env, args.generated, args.runs, 20):
                print(f"  {own:8.0f} self {total:8.0f} cumulative  {name}")
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from bench_summary import record

    record("import", f"import {args.package}, net of python -c pass (CPU)", net * 1e3, "ms", "<= 50 ms", net <= 0.050)


if __name__ == "__main__":
    main()
