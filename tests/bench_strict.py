"""Strict against lenient decoding, per message: medians of the per-call
time of ``decode(name, payload)``, ``decode(name, payload, strict=True)`` and,
as the baseline in the same process, what strict mode did before it ran in
the generated decoders: the run-time schema interpreter
(``_validator.validate``) followed by the strict decode.

Run with ``.venv/bin/python tests/bench_strict.py [--rounds R]``; part of
``make bench``. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_v1  # noqa: E402
from acp_v1 import _schema, codec  # noqa: E402
from acp_v1._validator import schema_root, validate  # noqa: E402
from bench_payloads import build  # noqa: E402
from bench_summary import record  # noqa: E402


def _interpreted(name: str, payload: object) -> object:
    decoder, pointer = codec._DECODERS[name]
    validate(schema_root(_schema.SCHEMA_JSON), pointer, payload)
    return decoder(payload, True)


def _per_call(fn, args, n: int) -> float:
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(n):
            fn(*args)
        return (time.perf_counter_ns() - start) / n
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    options = parser.parse_args()
    ways = {
        "lenient": lambda name, payload: acp_v1.decode(name, payload),
        "strict": lambda name, payload: acp_v1.decode(name, payload, strict=True),
        "interpreted": _interpreted,
    }
    print(f"{'message':44} {'lenient us':>11} {'strict us':>10} {'x lenient':>9} {'interp. us':>11} {'x lenient':>9}")
    ratios, baseline = [], []
    for label, name, payload in build():
        for way in ways.values():
            way(name, payload)  # warm up (and fail loudly on a bad payload)
        times = {key: [] for key in ways}
        for _ in range(options.rounds):
            for key, way in ways.items():
                times[key].append(_per_call(way, (name, payload), options.calls))
        med = {key: statistics.median(values) / 1000 for key, values in times.items()}
        ratios.append(med["strict"] / med["lenient"])
        baseline.append(med["interpreted"] / med["lenient"])
        print(
            f"{label[:44]:44} {med['lenient']:11.1f} {med['strict']:10.1f} {ratios[-1]:9.2f}"
            f" {med['interpreted']:11.1f} {baseline[-1]:9.1f}"
        )
    print(
        f"strict/lenient: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
        f"interpreted/lenient: median {statistics.median(baseline):.1f}, max {max(baseline):.1f}"
    )
    record("strict", "strict decode / lenient decode (median message)", statistics.median(ratios), "x")


if __name__ == "__main__":
    main()
