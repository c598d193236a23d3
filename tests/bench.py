"""Benchmark: decode/encode of a realistic ACP v1 message mix, the generated
``acp_v1`` package against the official Python SDK (PyPI
``agent-client-protocol``, pydantic models in ``acp.schema``).

Run with ``make bench`` or ``.venv/bin/python tests/bench.py [--quick]
[--rounds R] [--json PATH] [--gc] [--profile decode|encode]``.

Method: the same payloads (tests/bench_payloads.py) go through both
libraries in one process. For every message, operation and library a batch of
N calls is timed in process CPU time (``time.process_time_ns``: what this
process ran, not what others on a shared machine did meanwhile); N is the same for both
libraries (calibrated on the slower one so a batch lasts about
``--target-ms``). R rounds are run, the order of the two libraries alternating
from one batch to the next so that drift on a noisy machine hits both alike,
and the median per-call time over the rounds is reported. Everything is warmed
up first. Like ``timeit``, the garbage collector is off inside a batch (and run
between batches) unless ``--gc`` is given. Nothing is cached: every decode
call gets the parsed-JSON payload, every encode call the decoded object.

decode = ``acp_v1.decode(name, payload)`` vs ``Model.model_validate(payload)``;
encode = ``acp_v1.encode(obj)`` vs
``obj.model_dump(by_alias=True, exclude_none=True)``. Both take and give
parsed JSON (dicts, lists, str...): JSON text parsing/serialising is not
measured.

Then encode per message against the SDK's ``model_dump(mode="json",
by_alias=True, exclude_none=True)``, the JSON-mode dump its connection makes
of what it sends, beside the Python-mode dump of the table, the three
interleaved: acpgen time / SDK time, the median of the per-round ratios
(target: at most 0.35 against JSON mode, each message).

Not part of the test suite: pytest does not collect this file (no ``test_``
prefix, no test functions, everything runs under ``__main__``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from itertools import repeat
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
TESTS = Path(__file__).resolve().parent

LIBS = ("acpgen", "sdk")


def _record(*args: Any) -> None:
    """Record a figure for make bench's summary (tests/bench_summary.py)."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from bench_summary import record

    record(*args)


# ---------------------------------------------------------------- setup


def _import_libraries():
    for p in (str(TESTS), str(GENERATED)):
        if p not in sys.path:
            sys.path.insert(0, p)
    import acp_v1

    if Path(acp_v1.__file__).resolve().parent.parent != GENERATED.resolve():
        sys.exit(f"acp_v1 was imported from {acp_v1.__file__}, not from {GENERATED}")
    try:
        import acp.schema as sdk_schema
    except ImportError:
        sys.exit(f"the official SDK is not installed: {sys.executable} -m pip install agent-client-protocol")
    import bench_payloads

    return acp_v1, sdk_schema, bench_payloads


class Case:
    """One message of the mix, with the four callables the benchmark times."""

    def __init__(self, label: str, def_name: str, payload: dict, acp_v1, sdk_schema, mapping):
        self.label = label
        self.def_name = def_name
        self.payload = payload
        self.size = len(json.dumps(payload, separators=(",", ":")))
        self.sdk_model_name = mapping[def_name]
        model = getattr(sdk_schema, self.sdk_model_name)
        self.sdk_model = model
        # The public entry points, called the way an application calls them.
        self.decode = {
            "acpgen": partial(acp_v1.decode, def_name),
            "sdk": model.model_validate,
        }
        self.encode = {
            "acpgen": acp_v1.encode,
            "sdk": partial(model.model_dump, by_alias=True, exclude_none=True),
        }
        self.decoded: dict[str, Any] = {}

    def op(self, op: str, lib: str) -> tuple[Callable, Any]:
        if op == "decode":
            return self.decode[lib], self.payload
        return self.encode[lib], self.decoded[lib]


# ---------------------------------------------------------------- checks


def _show(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff(a: Any, b: Any, names: tuple[str, str], path: str = "$") -> list[str]:
    """Differences between two JSON-like values (dict key order ignored)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(a.keys() | b.keys()):
            if k not in b:
                out.append(f"{path}.{k} only in {names[0]}: {_show(a[k])}")
            elif k not in a:
                out.append(f"{path}.{k} only in {names[1]}: {_show(b[k])} (a default filled in?)")
            else:
                out += _diff(a[k], b[k], names, f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items in {names[0]}, {len(b)} in {names[1]}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            out += _diff(x, y, names, f"{path}[{i}]")
        return out
    if type(a) is not type(b) or a != b:
        return [
            f"{path}: {names[0]} {_show(a, 40)} ({type(a).__name__}), {names[1]} {_show(b, 40)} ({type(b).__name__})"
        ]
    return []


def check_cases(cases: list[Case], acp_v1) -> list[str]:
    """Both libraries must accept every payload (acpgen also in strict mode,
    i.e. the payload is valid against the schema); their wire forms should
    agree with each other and with the payload. Returns the warnings."""
    warnings = []
    for case in cases:
        try:
            acp_v1.decode(case.def_name, case.payload, strict=True)
        except acp_v1.ValidationError as error:
            sys.exit(f"{case.label}: not valid against schema/v1/schema.json: {error}")
        try:
            case.decoded["acpgen"] = case.decode["acpgen"](case.payload)
        except Exception as error:
            sys.exit(f"{case.label}: acp_v1 refuses the payload: {error}")
        try:
            case.decoded["sdk"] = case.decode["sdk"](case.payload)
        except Exception as error:
            sys.exit(f"{case.label}: the SDK ({case.sdk_model_name}) refuses the payload: {error}")
        wire = {lib: case.encode[lib](case.decoded[lib]) for lib in LIBS}
        for lib in LIBS:
            try:
                json.dumps(wire[lib])
            except (TypeError, ValueError) as error:
                warnings.append(f"{case.label}: {lib} encode is not JSON-serialisable: {error}")
        for d in _diff(wire["acpgen"], wire["sdk"], ("acpgen's encode", "the SDK's model_dump")):
            warnings.append(f"{case.label}: {d}")
        for lib in LIBS:
            for d in _diff(case.payload, wire[lib], ("the payload", f"{lib}'s round trip")):
                warnings.append(f"{case.label}: {d}")
    return warnings


# ---------------------------------------------------------------- timing


def _batch(fn: Callable, arg: Any, n: int, collect: bool) -> int:
    """CPU nanoseconds for ``n`` calls of ``fn(arg)``."""
    gc_was_on = gc.isenabled()
    if not collect:
        gc.collect()
        gc.disable()
    try:
        loop = repeat(None, n)
        t0 = time.process_time_ns()
        for _ in loop:
            fn(arg)
        t1 = time.process_time_ns()
    finally:
        if gc_was_on:
            gc.enable()
    return t1 - t0


def _load() -> float:
    """The 1-minute load average (this process counts for about 1)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def _loop_overhead_ns(n: int = 200_000) -> float:
    def noop(_arg):
        return None

    return min(_batch(noop, None, n, False) for _ in range(5)) / n


def _warm_up(cases: list[Case], seconds: float) -> None:
    deadline = time.perf_counter() + seconds
    while True:
        for case in cases:
            for op in ("decode", "encode"):
                for lib in LIBS:
                    fn, arg = case.op(op, lib)
                    for _ in range(20):
                        fn(arg)
        if time.perf_counter() >= deadline:
            return


def _calibrate(case: Case, op: str, target_ns: float) -> int:
    """Calls per batch: the same for both libraries, sized on the slower."""
    slowest = 0.0
    for lib in LIBS:
        fn, arg = case.op(op, lib)
        n = 10
        while True:
            t = _batch(fn, arg, n, False)
            if t > 2_000_000 or n >= 100_000:
                break
            n *= 4
        slowest = max(slowest, t / n)
    return max(3, int(target_ns / slowest))


def run(cases: list[Case], rounds: int, target_ms: float, warmup_s: float, collect: bool) -> dict:
    _warm_up(cases, warmup_s)
    target_ns = target_ms * 1e6
    calls = {(c.label, op): _calibrate(c, op, target_ns) for c in cases for op in ("decode", "encode")}
    samples: dict[tuple, list[float]] = {
        (c.label, op, lib): [] for c in cases for op in ("decode", "encode") for lib in LIBS
    }
    flip = 0
    for r in range(rounds):
        for case in cases:
            for op in ("decode", "encode"):
                n = calls[(case.label, op)]
                order = LIBS if flip % 2 == 0 else LIBS[::-1]
                flip += 1
                for lib in order:
                    fn, arg = case.op(op, lib)
                    samples[(case.label, op, lib)].append(_batch(fn, arg, n, collect) / n)
        print(f"  round {r + 1}/{rounds} done", flush=True)
    return {"calls": calls, "samples": samples}


ENCODE_TARGET = 0.35
"""Encode's target, per message: at most this share of the SDK's time for
``model_dump(mode="json", by_alias=True, exclude_none=True)``, the JSON-mode
dump its connection makes of what it sends (JSON values out, as ``encode``
gives)."""


def encode_targets(cases: list[Case], rounds: int, calls: dict[tuple[str, str], int], collect: bool) -> dict:
    """Per message, acpgen's ``encode`` against the SDK's ``model_dump`` in
    JSON mode (the target's baseline) and in Python mode (the table's), the
    three interleaved in each round, their order turning from one message to
    the next: the median of the per-round ratios (acpgen time / SDK time).

    For the message of tests/bench_floor.py its hand-written encoder, the
    floor, is timed beside them, the four taking turns in the same way
    (checked first to give what ``encode`` gives): ``floor`` is its time
    over the JSON-mode dump's, ``over floor`` acpgen's time over its."""
    import bench_floor

    out: dict[str, dict[str, float]] = {}
    flip = 0
    samples: dict[tuple[str, str], list[float]] = {}
    for case in cases:
        if case.label == bench_floor.LABEL and bench_floor.encode(case.decoded["acpgen"]) != case.encode["acpgen"](
            case.decoded["acpgen"]
        ):
            raise AssertionError("tests/bench_floor.py encodes its message differently from acp_v1")
    for _ in range(rounds):
        for case in cases:
            ways = {
                "acpgen": (case.encode["acpgen"], case.decoded["acpgen"]),
                "json": (
                    partial(case.sdk_model.model_dump, mode="json", by_alias=True, exclude_none=True),
                    case.decoded["sdk"],
                ),
                "python": (case.encode["sdk"], case.decoded["sdk"]),
            }
            if case.label == bench_floor.LABEL:
                ways["floor"] = (bench_floor.encode, case.decoded["acpgen"])
            names = list(ways)
            flip += 1
            names = names[flip % len(names) :] + names[: flip % len(names)]
            n = calls[(case.label, "encode")]
            for name in names:
                fn, arg = ways[name]
                samples.setdefault((case.label, name), []).append(_batch(fn, arg, n, collect) / n)
    for case in cases:
        ours = samples[(case.label, "acpgen")]
        out[case.label] = {
            mode: statistics.median(a / b for a, b in zip(ours, samples[(case.label, mode)], strict=True))
            for mode in ("json", "python")
        }
        floor = samples.get((case.label, "floor"))
        if floor is not None:
            json_mode = samples[(case.label, "json")]
            out[case.label]["floor"] = statistics.median(a / b for a, b in zip(floor, json_mode, strict=True))
            out[case.label]["over floor"] = statistics.median(a / b for a, b in zip(ours, floor, strict=True))
    return out


# ---------------------------------------------------------------- import time

IMPORT_SNIPPET = "import time\nt = time.perf_counter_ns()\nimport {module}\nprint(time.perf_counter_ns() - t)\n"


def import_time_ms(module: str, runs: int) -> dict:
    """Median import time of ``module`` in fresh interpreters (the first,
    untimed run writes the .pyc files)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(GENERATED)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = IMPORT_SNIPPET.format(module=module)
    times = []
    for i in range(runs + 1):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        if i:
            times.append(int(out.stdout.strip()) / 1e6)
    return {"median_ms": statistics.median(times), "runs_ms": times}


# ---------------------------------------------------------------- baselines


def _median_ns(fn: Callable, arg: Any, loops: int, rounds: int = 7) -> float:
    """Median over ``rounds`` of the mean time of one call, in ns."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter_ns()
        for _ in repeat(None, loops):
            fn(arg)
        times.append((time.perf_counter_ns() - t) / loops)
    return statistics.median(times)


def msgspec_baseline(acp_v1, bench_payloads, loops: int, rounds: int = 9) -> dict:
    """acpgen's lenient decode against hand-written msgspec Structs
    (``msgspec.convert`` of the same JSON-loaded dicts), and for one message
    against a hand-written pure-Python decoder (tests/bench_floor.py): what
    CPython itself costs. The decoders take turns within each round; medians
    over the rounds."""
    try:
        import bench_msgspec
    except ImportError:
        print("\nmsgspec is not installed: skipping the msgspec baseline")
        return {}
    import bench_floor

    payloads = {label: payload for label, _, payload in bench_payloads.build()}
    names = {label: name for label, name, _ in bench_payloads.build()}
    floor_payload = payloads[bench_floor.LABEL]
    if bench_floor.decode(floor_payload) != acp_v1.decode(names[bench_floor.LABEL], floor_payload):
        raise AssertionError("tests/bench_floor.py decodes its message differently from acp_v1")
    print(
        "\nLenient decode against hand-written msgspec Structs (msgspec.convert) and,"
        "\nfor one message, a hand-written pure-Python decoder (the CPython floor):"
    )
    rows = {}
    for label in bench_msgspec.TYPES:
        payload = payloads[label]
        contenders = {
            "acpgen": partial(acp_v1.decode, names[label]),
            "msgspec": bench_msgspec.decoder(label),
        }
        if label == bench_floor.LABEL:
            contenders["python_floor"] = bench_floor.decode
        times: dict[str, list[float]] = {key: [] for key in contenders}
        for _ in range(rounds):
            for key, fn in contenders.items():
                times[key].append(_median_ns(fn, payload, loops, rounds=1))
        row = {f"{key}_ns": statistics.median(ts) for key, ts in times.items()}
        rows[label] = row
        line = (
            f"  {label:<42} acpgen {_us(row['acpgen_ns'])} us  msgspec {_us(row['msgspec_ns'])} us"
            f"  acpgen/msgspec {row['acpgen_ns'] / row['msgspec_ns']:5.2f}x"
        )
        if "python_floor_ns" in row:
            line += (
                f"\n  {'':<42} floor  {_us(row['python_floor_ns'])} us"
                f"  floor/msgspec {row['python_floor_ns'] / row['msgspec_ns']:5.2f}x"
                f"  acpgen/floor {row['acpgen_ns'] / row['python_floor_ns']:5.2f}x"
            )
        print(line)
    total = sum(r["acpgen_ns"] for r in rows.values()) / sum(r["msgspec_ns"] for r in rows.values())
    print(f"  over these messages: acpgen/msgspec {total:.2f}x (target: within 2x)")
    _record("codec", "lenient decode / msgspec over the messages", total, "x")
    return rows


def apply_stream(acp_v1, updates: int) -> dict:
    """Median time of ``patch.apply`` per update over a tool-call update
    stream (one tool_call, then status, content and location updates)."""
    from acp_v1 import patch

    wire = [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_1",
            "title": "Run tests",
            "kind": "execute",
            "status": "pending",
        }
    ]
    for i in range(updates - 1):
        wire.append(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_1",
                "status": "in_progress" if i < updates - 2 else "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": f"{i}"}}],
                "locations": [{"path": "/src/app.py", "line": i}],
            }
        )
    stream = [acp_v1.decode("SessionUpdate", u) for u in wire]

    def fold(items):
        state = None
        for u in items:
            state = patch.apply(state, u)
        return state

    per_update = _median_ns(fold, stream, 200) / len(stream)
    print(f"\napply: tool-call update stream of {len(stream)} updates: {_us(per_update)} us median per update")
    return {"updates": len(stream), "median_ns_per_update": per_update}


# ---------------------------------------------------------------- report


def versions(acp_v1) -> dict:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "?"

    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "pydantic": version("pydantic"),
        "pydantic_core": version("pydantic-core"),
        "agent_client_protocol": version("agent-client-protocol"),
        "acpgen": acp_v1.GENERATOR_VERSION,
        "acp_v1_path": str(Path(acp_v1.__file__).parent),
        "acp_v1_schema_sha256": acp_v1.SCHEMA_SHA256,
    }


def _us(ns: float) -> str:
    return f"{ns / 1000:.2f}"


def _ratio(sdk: float, ours: float) -> str:
    return f"{sdk / ours:.2f}x"


def summarise(cases: list[Case], timing: dict) -> dict:
    samples = timing["samples"]
    rows = []
    totals = {(op, lib): 0.0 for op in ("decode", "encode") for lib in LIBS}
    mins = {(op, lib): 0.0 for op in ("decode", "encode") for lib in LIBS}
    spread = 0.0
    for case in cases:
        row = {
            "label": case.label,
            "def": case.def_name,
            "sdk_model": case.sdk_model_name,
            "bytes": case.size,
        }
        for op in ("decode", "encode"):
            row[op] = {"calls_per_batch": timing["calls"][(case.label, op)]}
            for lib in LIBS:
                s = samples[(case.label, op, lib)]
                med = statistics.median(s)
                spread = max(spread, med / min(s) - 1)
                totals[(op, lib)] += med
                mins[(op, lib)] += min(s)
                row[op][lib] = {"median_ns": med, "min_ns": min(s), "samples_ns": s}
            row[op]["ratio_sdk_over_acpgen"] = row[op]["sdk"]["median_ns"] / row[op]["acpgen"]["median_ns"]
        rows.append(row)
    total = {
        op: {
            "acpgen_ns": totals[(op, "acpgen")],
            "sdk_ns": totals[(op, "sdk")],
            "ratio_sdk_over_acpgen": totals[(op, "sdk")] / totals[(op, "acpgen")],
            "geomean_ratio": statistics.geometric_mean(r[op]["ratio_sdk_over_acpgen"] for r in rows),
            "acpgen_min_ns": mins[(op, "acpgen")],
            "sdk_min_ns": mins[(op, "sdk")],
            "ratio_of_min_sums": mins[(op, "sdk")] / mins[(op, "acpgen")],
        }
        for op in ("decode", "encode")
    }
    return {"rows": rows, "totals": total, "max_median_over_min": spread}


def print_table(summary: dict) -> None:
    head = [
        "message",
        "bytes",
        "acpgen dec µs",
        "SDK dec µs",
        "SDK/acpgen",
        "acpgen enc µs",
        "SDK enc µs",
        "SDK/acpgen",
    ]
    lines = []
    for r in summary["rows"]:
        d, e = r["decode"], r["encode"]
        lines.append(
            [
                r["label"],
                str(r["bytes"]),
                _us(d["acpgen"]["median_ns"]),
                _us(d["sdk"]["median_ns"]),
                _ratio(d["sdk"]["median_ns"], d["acpgen"]["median_ns"]),
                _us(e["acpgen"]["median_ns"]),
                _us(e["sdk"]["median_ns"]),
                _ratio(e["sdk"]["median_ns"], e["acpgen"]["median_ns"]),
            ]
        )
    t = summary["totals"]
    total_bytes = sum(r["bytes"] for r in summary["rows"])
    foot = [
        "TOTAL (sum of medians)",
        str(total_bytes),
        _us(t["decode"]["acpgen_ns"]),
        _us(t["decode"]["sdk_ns"]),
        _ratio(t["decode"]["sdk_ns"], t["decode"]["acpgen_ns"]),
        _us(t["encode"]["acpgen_ns"]),
        _us(t["encode"]["sdk_ns"]),
        _ratio(t["encode"]["sdk_ns"], t["encode"]["acpgen_ns"]),
    ]
    foot_min = [
        "(sum of per-round minima)",
        "",
        _us(t["decode"]["acpgen_min_ns"]),
        _us(t["decode"]["sdk_min_ns"]),
        _ratio(t["decode"]["sdk_min_ns"], t["decode"]["acpgen_min_ns"]),
        _us(t["encode"]["acpgen_min_ns"]),
        _us(t["encode"]["sdk_min_ns"]),
        _ratio(t["encode"]["sdk_min_ns"], t["encode"]["acpgen_min_ns"]),
    ]
    widths = [max(len(row[i]) for row in [head, foot, foot_min, *lines]) for i in range(len(head))]

    def fmt(row):
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))
        )

    rule = "-" * len(fmt(head))
    print(fmt(head))
    print(rule)
    for row in lines:
        print(fmt(row))
    print(rule)
    print(fmt(foot))
    print(fmt(foot_min))
    print(
        f"geometric mean of the per-message ratios: decode {t['decode']['geomean_ratio']:.2f}x, "
        f"encode {t['encode']['geomean_ratio']:.2f}x"
    )


# ---------------------------------------------------------------- profile


def profile(cases: list[Case], op: str, seconds: float, top: int) -> None:
    """cProfile acp_v1 over loops of the mix (``--profile decode|encode``).

    pstats would merge every dataclass-generated ``__init__`` into one row
    (they all are ``<string>:2(__init__)``, and it keeps the last); here the
    raw entries are summed per function, each ``__init__`` named by its class.
    cProfile's per-call overhead inflates small functions: read the shares,
    not the absolute times."""
    import cProfile

    import acp_v1.models as models

    init_owner = {}
    for name in dir(models):
        cls = getattr(models, name)
        init = getattr(getattr(cls, "__init__", None), "__code__", None)
        if isinstance(cls, type) and init is not None and init.co_filename == "<string>":
            # by id: equal code objects (same fields) compare and hash equal
            init_owner[id(init)] = f"{cls.__name__}.__init__ (dataclass)"

    calls = [case.op(op, "acpgen") for case in cases]
    _warm_up(cases, 0.2)
    profiler = cProfile.Profile()
    loops = 0
    deadline = time.perf_counter() + seconds
    profiler.enable()
    while time.perf_counter() < deadline:
        for fn, arg in calls:
            fn(arg)
        loops += 1
    profiler.disable()

    rows: dict[str, list] = {}
    for entry in profiler.getstats():
        code = entry.code
        if isinstance(code, str):
            label = code
        elif id(code) in init_owner:
            label = init_owner[id(code)]
        else:
            label = f"{Path(code.co_filename).name}:{code.co_firstlineno}({code.co_name})"
        if label.startswith("bench.py") or "perf_counter" in label or "_lsprof" in label:
            continue
        row = rows.setdefault(label, [0, 0.0, 0.0])
        row[0] += entry.callcount
        row[1] += entry.inlinetime
        row[2] += entry.totaltime
    total = sum(r[1] for r in rows.values())
    print(
        f"\n== cProfile of acp_v1 {op}: {loops} loops over the mix of {len(calls)} messages; "
        f"top {top} by tottime (own time), {total:.3f} s in all =="
    )
    print(f"{'calls/loop':>10} {'tottime s':>9} {'share':>6} {'cumtime s':>9}  function")
    for label, (n, tot, cum) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{n / loops:10.1f} {tot:9.3f} {tot / total:6.1%} {cum:9.3f}  {label}")


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="timed rounds (default 7, 3 with --quick)",
    )
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    parser.add_argument(
        "--target-ms",
        type=float,
        default=None,
        help="length of one timed batch (default 40, 1 with --quick)",
    )
    parser.add_argument("--gc", action="store_true", help="leave the garbage collector on while timing")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--no-import-time", action="store_true", help="skip the import-time measurement")
    parser.add_argument(
        "--generated",
        metavar="DIR",
        help="benchmark the acp_v1 package in DIR instead of generated/ (to compare a new generator output)",
    )
    parser.add_argument(
        "--profile",
        choices=("decode", "encode"),
        help="instead of the benchmark, cProfile acp_v1 on the mix",
    )
    parser.add_argument("--profile-seconds", type=float, default=5.0)
    parser.add_argument("--profile-top", type=int, default=25)
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 7)
    target_ms = args.target_ms or (1.0 if args.quick else 40.0)
    warmup_s = 0.1 if args.quick else 1.0
    import_runs = 2 if args.quick else 5
    if args.generated:
        global GENERATED
        GENERATED = Path(args.generated).resolve()

    acp_v1, sdk_schema, bench_payloads = _import_libraries()
    cases = [
        Case(label, name, payload, acp_v1, sdk_schema, bench_payloads.SDK_MODEL_FOR_DEF)
        for label, name, payload in bench_payloads.build()
    ]
    warnings = check_cases(cases, acp_v1)

    if args.profile:
        profile(cases, args.profile, args.profile_seconds, args.profile_top)
        return 0

    info = versions(acp_v1)
    print(
        f"Python {info['python']} ({info['implementation']}, {info['platform']}, {info['cpus']} CPUs); "
        f"pydantic {info['pydantic']} (pydantic-core {info['pydantic_core']}); "
        f"agent-client-protocol {info['agent_client_protocol']}; acpgen {info['acpgen']}"
    )
    print(f"acp_v1 from {Path(acp_v1.__file__).parent}")
    print(f"{len(cases)} messages; both libraries accept every payload (acp_v1 also in strict mode).")
    for w in warnings:
        print(f"WARNING: {w}")
    print(
        f"rounds={rounds}, batch≈{target_ms:g} ms, warm-up {warmup_s:g} s, "
        f"gc {'on' if args.gc else 'off'} while timing; timing..."
    )
    load_before = _load()
    overhead = _loop_overhead_ns()
    timing = run(cases, rounds, target_ms, warmup_s, args.gc)
    load_after = _load()
    summary = summarise(cases, timing)
    print()
    print("Per-call median over rounds (µs); ratio = SDK time / acpgen time (>1: acpgen faster)")
    print_table(summary)
    print(
        f"(timing-loop overhead ≈{overhead:.0f} ns/call, included on both sides; "
        f"largest median/min - 1 over the measurements: {summary['max_median_over_min']:.0%}; "
        f"load average {load_before:.2f} before, {load_after:.2f} after)"
    )
    if summary["max_median_over_min"] > 0.15:
        print(
            f"WARNING: the machine was busy (load average {load_before:.2f} before, "
            f"{load_after:.2f} after; a median is up to {summary['max_median_over_min']:.0%} "
            "above its best round): medians may be inflated, rerun on a quiet machine"
        )
    t = summary["totals"]
    for op in ("decode", "encode"):
        ratio = t[op]["ratio_sdk_over_acpgen"]
        verdict = "meets" if ratio >= 2.0 else "MISSES"
        print(f"target {op} >= 2x faster than the SDK over the mix: {ratio:.2f}x -> {verdict} the target")
        _record("codec", f"{op}: SDK time / acpgen time over the mix", ratio, "x", ">= 2", ratio >= 2.0)

    per_message = encode_targets(cases, rounds, timing["calls"], args.gc)
    print(
        "\nEncode per message, acpgen time / SDK time (medians of the per-round ratios, the three interleaved):"
        f' against model_dump(mode="json") (target <= {ENCODE_TARGET}) and, as in the table, in Python mode'
    )
    width = max(len(label) for label in per_message)
    for label, ratios in per_message.items():
        verdict = "meets" if ratios["json"] <= ENCODE_TARGET else "MISSES"
        print(f"  {label:<{width}}  JSON mode {ratios['json']:.2f}x ({verdict})  Python mode {ratios['python']:.2f}x")
        if "floor" in ratios:
            print(
                f"  {'':<{width}}  a hand-written encoder (tests/bench_floor.py, the CPython floor):"
                f" {ratios['floor']:.2f}x JSON mode; acpgen/floor {ratios['over floor']:.2f}x"
            )
            _record("codec", f"hand-written encode / model_dump(mode='json'): {label}", ratios["floor"], "x")
            _record("codec", f"encode / hand-written encode: {label}", ratios["over floor"], "x")
        _record(
            "codec",
            f"encode / model_dump(mode='json'): {label}",
            ratios["json"],
            "x",
            f"<= {ENCODE_TARGET}",
            ratios["json"] <= ENCODE_TARGET,
        )

    imports = {}
    if not args.no_import_time:
        print(f"\nImport time in a fresh interpreter (median of {import_runs} runs):")
        for module in ("acp_v1", "acp.schema", "pydantic"):
            imports[module] = import_time_ms(module, import_runs)
            note = " (baseline: pydantic alone, part of acp.schema's time)" if module == "pydantic" else ""
            if module == "acp.schema":
                note = " (imports the acp package: SDK runtime + pydantic)"
            print(f"  import {module:<11} {imports[module]['median_ms']:8.1f} ms{note}")
        ratio = imports["acp.schema"]["median_ms"] / imports["acp_v1"]["median_ms"]
        print(f"  import acp.schema / import acp_v1: {ratio:.2f}x")

    baselines = msgspec_baseline(acp_v1, bench_payloads, 200 if args.quick else 2000)
    applied = apply_stream(acp_v1, 20)

    if args.json:
        result = {
            "versions": info,
            "config": {
                "rounds": rounds,
                "target_ms": target_ms,
                "warmup_s": warmup_s,
                "gc_during_timing": args.gc,
                "loop_overhead_ns": overhead,
                "load_average_before_after": [load_before, load_after],
                "quick": args.quick,
            },
            "sdk_model_for_def": bench_payloads.SDK_MODEL_FOR_DEF,
            "sdk_model_for_variant": bench_payloads.SDK_MODEL_FOR_VARIANT,
            "warnings": warnings,
            "messages": summary["rows"],
            "totals": summary["totals"],
            "max_median_over_min": summary["max_median_over_min"],
            "encode_per_message": per_message,
            "import_time": imports,
            "msgspec_baseline": baselines,
            "apply_stream": applied,
        }
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
