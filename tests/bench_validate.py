"""Benchmark acpgen validate: a generated v1 transcript of N lines (default
1,000,000: initialize, session/new, then prompts with streamed chunks and tool
calls), validated in process; prints lines/s (median of 3 runs)."""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))

import acp_v1  # noqa: E402

from acpgen.validate import validate_file  # noqa: E402


def transcript(path: Path, n: int) -> None:
    def put(direction, message):
        out.write(json.dumps({"direction": direction, "message": {"jsonrpc": "2.0", **message}}) + "\n")

    with open(path, "w") as out:
        put("client_to_agent", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        put("agent_to_client", {"id": 0, "result": {"protocolVersion": 1}})
        put("client_to_agent", {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
        put("agent_to_client", {"id": 1, "result": {"sessionId": "s"}})
        written, turn = 4, 2
        while written < n:
            put("client_to_agent", {"id": turn, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}})
            for i in range(96):
                update = (
                    {"sessionUpdate": "tool_call", "toolCallId": f"t{turn}", "title": "Read file", "kind": "read"}
                    if i == 40
                    else {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "word "}}
                )
                put("agent_to_client", {"method": "session/update", "params": {"sessionId": "s", "update": update}})
            put("agent_to_client", {"id": turn, "result": {"stopReason": "end_turn"}})
            written += 98
            turn += 1


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "transcript.jsonl"
        transcript(path, n)
        lines = sum(1 for _ in open(path))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            findings = sum(1 for _ in validate_file(path, acp_v1))
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(f"acpgen validate: {lines} lines, {findings} findings, median {median:.2f} s, {lines / median:,.0f} lines/s")


if __name__ == "__main__":
    main()
