"""Benchmark acpgen validate against a baseline, in one process.

The transcript: a deterministic, realistic v1 session of N lines (default
1,000,000): initialize and session/new, then prompt turns in which the agent
streams message and thought chunks of varied text, announces tool calls and
updates them (with locations, raw input and content), reads files through the
client (fs/read_text_file, answered), asks for permission (answered), sends
plans, usage and command updates, and ends the turn; now and then a client
cancels. A few lines per ten thousand are broken on purpose (a plan entry of
an unknown priority, which lenient decoding drops: ``repaired``), so the
finding path runs too.

The baselines: each line parsed, and a precompiled ``jsonschema-rs`` validator
of the message's params by method (``is_valid``); nothing stateful. One
baseline parses with ``orjson.loads``, one with ``json.loads``: the engine
(``acpgen.validate.validate_file`` on the same file) with its default backend
(orjson when importable) is compared with the first, and with
``ACPGEN_JSON=stdlib`` with the second, so both sides use the same parser.

The ways run interleaved, ``--rounds`` times each (default 3), each timed in
this process's CPU time (``time.process_time``: what others on a shared
machine run meanwhile is not counted), and the median lines/s of each is
printed with the ratio to its baseline, then the peak RSS
of this process, then the ``acpgen validate`` command run once in a process
of its own (lines/s end to end, its peak RSS: constant memory, it does not
grow with N) and the growth of the Python heap during one run of the engine
(tracemalloc).

Run with ``.venv/bin/python tests/bench_validate.py [N] [--rounds R]``; part of
``make bench``. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "tests"))

import acp_v1  # noqa: E402
import jsonschema_rs  # noqa: E402
from acpgen.validate import checker  # noqa: E402
from bench_summary import record  # noqa: E402

WORDS = [
    "the",
    "agent",
    "reads",
    "file",
    "and",
    "then",
    "writes",
    "a",
    "patch",
    "for",
    "this",
    "module",
    "because",
    "tests",
    "fail",
    "on",
    "line",
    "with",
    "error",
    "value",
    "returned",
    "None",
    "expected",
    "string",
    "parser",
    "config",
    "import",
    "function",
    "class",
    "method",
    "call",
    "stack",
    "trace",
    "update",
    "fixed",
    "works",
    "now",
    "let",
    "me",
    "check",
    "again",
    "which",
    "version",
    "of",
    "python",
    "runs",
    "here",
]
PATHS = [
    f"/work/project/src/{d}/{f}.py" for d in ("core", "api", "cli", "util") for f in ("main", "models", "io", "parse")
]


def write_transcript(path: Path, n: int, seed: int = 1) -> int:
    """Write about ``n`` lines (whole turns); return the number written."""
    rng = random.Random(seed)
    session = "sess_" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    count = 0

    def put(direction: str, message: dict[str, Any]) -> None:
        nonlocal count
        out.write(json.dumps({"direction": direction, "message": {"jsonrpc": "2.0", **message}}) + "\n")
        count += 1

    def words(k: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(k))

    def update(body: dict[str, Any]) -> None:
        put("agent_to_client", {"method": "session/update", "params": {"sessionId": session, "update": body}})

    with open(path, "w", encoding="utf-8") as out:
        put(
            "client_to_agent",
            {
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": 1,
                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                    "clientInfo": {"name": "bench-editor", "version": "1.4.2"},
                },
            },
        )
        put(
            "agent_to_client",
            {
                "id": 0,
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": True,
                        "promptCapabilities": {"image": True, "embeddedContext": True},
                    },
                    "agentInfo": {"name": "bench-agent", "version": "0.9.0"},
                    "authMethods": [],
                },
            },
        )
        put("client_to_agent", {"id": 1, "method": "session/new", "params": {"cwd": "/work/project", "mcpServers": []}})
        put("agent_to_client", {"id": 1, "result": {"sessionId": session}})
        client_id, agent_id, turn = 2, 0, 0
        while count < n:
            turn += 1
            prompt_id = client_id
            client_id += 1
            put(
                "client_to_agent",
                {
                    "id": prompt_id,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": session,
                        "prompt": [{"type": "text", "text": words(rng.randint(5, 40))}],
                    },
                },
            )
            if turn % 7 == 1:
                update(
                    {
                        "sessionUpdate": "available_commands_update",
                        "availableCommands": [
                            {"name": "test", "description": "run the tests"},
                            {"name": "plan", "description": "make a plan", "input": {"hint": "what to plan"}},
                        ],
                    }
                )
            entries = [
                {"content": words(6), "priority": rng.choice(["high", "medium", "low"]), "status": "pending"}
                for _ in range(3)
            ]
            if turn % 400 == 0:  # broken on purpose: lenient decoding drops the entry
                entries.append({"content": words(3), "priority": "urgent", "status": "pending"})
            update({"sessionUpdate": "plan", "entries": entries})
            for _ in range(rng.randint(3, 8)):
                update(
                    {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": words(rng.randint(1, 6)) + " "},
                    }
                )
            for call in range(rng.randint(1, 3)):
                tool = f"call_{turn}_{call}"
                file = rng.choice(PATHS)
                update(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": tool,
                        "title": f"Read {file}",
                        "kind": "read",
                        "status": "pending",
                        "locations": [{"path": file, "line": rng.randint(1, 400)}],
                        "rawInput": {"path": file},
                    }
                )
                if call == 0:
                    put(
                        "agent_to_client",
                        {
                            "id": agent_id,
                            "method": "session/request_permission",
                            "params": {
                                "sessionId": session,
                                "toolCall": {"toolCallId": tool, "title": f"Read {file}", "kind": "read"},
                                "options": [
                                    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                                ],
                            },
                        },
                    )
                    put(
                        "client_to_agent",
                        {"id": agent_id, "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}},
                    )
                    agent_id += 1
                update({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "in_progress"})
                put(
                    "agent_to_client",
                    {
                        "id": agent_id,
                        "method": "fs/read_text_file",
                        "params": {"sessionId": session, "path": file, "line": 1, "limit": 200},
                    },
                )
                put(
                    "client_to_agent",
                    {"id": agent_id, "result": {"content": "\n".join(words(8) for _ in range(rng.randint(2, 12)))}},
                )
                agent_id += 1
                update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": tool,
                        "status": "completed",
                        "content": [{"type": "content", "content": {"type": "text", "text": words(12)}}],
                    }
                )
            for _ in range(rng.randint(20, 90)):
                update(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": words(rng.randint(1, 4)) + " "},
                    }
                )
            update({"sessionUpdate": "usage_update", "used": rng.randint(1000, 90000), "size": 200000})
            if turn % 13 == 0:
                put("client_to_agent", {"method": "session/cancel", "params": {"sessionId": session}})
                put("agent_to_client", {"id": prompt_id, "result": {"stopReason": "cancelled"}})
            else:
                put("agent_to_client", {"id": prompt_id, "result": {"stopReason": "end_turn"}})
    return count


def baseline_validators(package: Any) -> dict[str, Any]:
    """A compiled jsonschema-rs validator of each method's params."""
    definitions = json.loads(importlib.import_module(f"{package.__name__}._schema").SCHEMA_JSON)
    validators = {}
    for method, info in package.METHODS.items():
        kind = info.request or info.notification
        if kind is None:
            continue
        _, pointer = package.codec._DECODERS[kind.params_name]
        validators[method] = jsonschema_rs.validator_for({"$ref": pointer, "$defs": definitions})
    return validators


def baseline(path: Path, validators: dict[str, Any], loads: Callable[[bytes], Any] = json.loads) -> int:
    """Parse each line with ``loads`` and validate the params of its method:
    the number of lines whose params are invalid."""
    invalid = 0
    with open(path, "rb") as lines:
        for line in lines:
            record = loads(line)
            message = record["message"]
            method = message.get("method")
            if method is not None:
                validator = validators.get(method)
                if validator is not None and not validator.is_valid(message.get("params")):
                    invalid += 1
    return invalid


def engine(path: Path, backend: str) -> int:
    os.environ["ACPGEN_JSON"] = backend
    try:
        return sum(1 for _ in checker.validate_file(path, acp_v1))
    finally:
        os.environ.pop("ACPGEN_JSON", None)


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    """(the CPU seconds of this process ``fn`` took, its result)."""
    gc.collect()
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def heap_growth(path: Path) -> int:
    """The peak growth of the Python heap over one engine run, in bytes."""
    import tracemalloc

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    engine(path, "")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def command(path: Path) -> tuple[float, float]:
    """``acpgen validate`` itself on the transcript, in a process of its own:
    (seconds, that process's peak RSS in MiB)."""
    acpgen = Path(sys.executable).parent / "acpgen"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(
        [str(acpgen), "validate", str(path), "--package", str(ROOT / "generated/acp_v1")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lines", type=int, nargs="?", default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-heap", action="store_true", help="skip the tracemalloc run (slow)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "transcript.jsonl"
        lines = write_transcript(path, options.lines)
        size = path.stat().st_size
        validators = baseline_validators(acp_v1)
        orjson = importlib.import_module("orjson") if checker.json_backend() == "orjson" else None
        # Each engine way and the baseline it is compared with: the same parser on both sides.
        ways: dict[str, Callable[[], int]] = {
            "baseline json.loads + jsonschema-rs": lambda: baseline(path, validators, json.loads),
            "acpgen validate (ACPGEN_JSON=stdlib)": lambda: engine(path, "stdlib"),
        }
        against = {"acpgen validate (ACPGEN_JSON=stdlib)": "baseline json.loads + jsonschema-rs"}
        if orjson is not None:
            ways["baseline orjson.loads + jsonschema-rs"] = lambda: baseline(path, validators, orjson.loads)
            ways["acpgen validate (orjson)"] = lambda: engine(path, "")
            against["acpgen validate (orjson)"] = "baseline orjson.loads + jsonschema-rs"
        times: dict[str, list[float]] = {name: [] for name in ways}
        counts: dict[str, int] = {}
        for _ in range(options.rounds):
            for name, way in ways.items():
                seconds, counts[name] = timed(way)
                times[name].append(seconds)
        print(f"transcript: {lines:,} lines, {size / 2**20:.0f} MiB; CPU time, medians of {options.rounds} rounds")
        for name in ways:
            rate = lines / statistics.median(times[name])
            if name.startswith("baseline"):
                print(f"{name:40} {rate:>10,.0f} lines/s  ({counts[name]} invalid params)")
                continue
            base = lines / statistics.median(times[against[name]])
            print(f"{name:40} {rate:>10,.0f} lines/s  x{rate / base:.2f} its baseline  ({counts[name]} findings)")
            # Time ratio: acpgen's time over its baseline's (at most 1.0: as fast).
            parser = name[len("acpgen validate ") :]
            what = f"{parser} time / {against[name][len('baseline ') :]}"
            record("validate", what, base / rate, "x", "<= 1.0", base / rate <= 1.0)
            record("validate", f"{parser} throughput", rate, "lines/s")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS of this process (the transcript built, all ways run): {peak:.0f} MiB")
        seconds, rss = command(path)
        print(f"acpgen validate command: {lines / seconds:,.0f} lines/s end to end, peak RSS {rss:.0f} MiB")
        if not options.no_heap:
            print(f"engine heap growth over one run (tracemalloc peak): {heap_growth(path) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
