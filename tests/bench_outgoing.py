"""Benchmark: what ``validate_outgoing`` costs per message. A connection
sends a message by encoding it (``CODEC.encode_message``, with
``validate=True`` when the option is on: the value is checked against the
schema first) and dumping the wire form (``dump_message``); this times both
steps for typical ACP v1 messages, with the option off and on.

Run with ``make bench`` or ``.venv/bin/python tests/bench_outgoing.py
[--quick] [--rounds R] [--json PATH]``.

Method: three messages, built once as the generated classes: a
``session/update`` notification carrying an ``agent_message_chunk`` (one
text block), one carrying a ``tool_call_update`` (status, a text content
item, a location, raw output), and a ``session/prompt`` request (a text
block, a resource link and an embedded text resource). One timed batch
sends one message N times one way; a round runs every (message, off/on)
batch, the order rotating from one round to the next so that drift on a
busy machine hits all alike. Times are CPU time (``time.process_time``),
the garbage collector is off inside a batch; the median per-message time
over the rounds is reported, and ratio = on / off, both measured in this
process.

Not part of the test suite (no ``test_`` prefix; everything runs under
``__main__``).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_v1 as acp  # noqa: E402
from acp_v1._jsonrpc import dump_message  # noqa: E402
from bench_summary import record  # noqa: E402


def messages() -> dict[str, acp.Message]:
    chunk = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text="Let me look at main.py first. "))
    tool = acp.ToolCallUpdateSessionUpdate(
        tool_call_id="call-7",
        status=acp.ToolCallStatus.COMPLETED,
        content=[acp.ContentToolCallContent(content=acp.TextContentBlock(text="def main():\n    print('hi')\n"))],
        locations=[acp.ToolCallLocation(path="/work/main.py", line=1)],
        raw_output={"exitCode": 0, "stdout": "hi\n"},
    )
    prompt = acp.PromptRequest(
        session_id="sess-1",
        prompt=[
            acp.TextContentBlock(text="What does main.py do, and is it tested?"),
            acp.ResourceLinkContentBlock(name="main.py", uri="file:///work/main.py"),
            acp.ResourceContentBlock(
                resource=acp.TextResourceContents(uri="file:///work/test_main.py", text="def test_main(): ...\n")
            ),
        ],
    )
    return {
        "session/update agent_message_chunk": acp.Notification(
            "session/update", acp.SessionNotification(session_id="sess-1", update=chunk)
        ),
        "session/update tool_call_update": acp.Notification(
            "session/update", acp.SessionNotification(session_id="sess-1", update=tool)
        ),
        "session/prompt request": acp.Request(12, "session/prompt", prompt),
    }


def sender(message: acp.Message, validate: bool) -> Callable[[], bytes]:
    encode = acp.CODEC.encode_message

    def send() -> bytes:
        return dump_message(encode(message, validate=validate))

    return send


def batch(send: Callable[[], bytes], n: int) -> float:
    """CPU seconds per message over ``n`` sends."""
    gc.disable()
    try:
        start = time.process_time()
        for _ in range(n):
            send()
        return (time.process_time() - start) / n
    finally:
        gc.enable()


def calibrate(send: Callable[[], bytes], target: float) -> int:
    n = 64
    while True:
        took = batch(send, n) * n
        if took >= target / 4 or n >= 1 << 22:
            return max(64, int(n * target / max(took, 1e-9)))
        n *= 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--target-ms", type=float, default=40.0, help="about how long one batch lasts")
    parser.add_argument("--quick", action="store_true", help="3 rounds of short batches")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    rounds, target = (3, 0.01) if args.quick else (args.rounds, args.target_ms / 1000)

    found = messages()
    for name, message in found.items():  # the messages are valid: validation passes
        sender(message, True)()
        assert acp.CODEC.encode_message(message) == acp.CODEC.encode_message(message, validate=True), name
    cases = [(name, validate) for name in found for validate in (False, True)]
    sends = {case: sender(found[case[0]], case[1]) for case in cases}
    sizes = {name: calibrate(sends[(name, True)], target) for name in found}
    times: dict[tuple[str, bool], list[float]] = {case: [] for case in cases}
    for r in range(rounds):
        order = cases[r % len(cases) :] + cases[: r % len(cases)]
        for case in order:
            times[case].append(batch(sends[case], sizes[case[0]]))

    print(f"validate_outgoing: encode + dump per message, CPU time, median of {rounds} rounds")
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(f"{'message':40} {'bytes':>6} {'off µs':>9} {'on µs':>9} {'ratio':>6} {'extra µs':>9}")
    report: dict[str, Any] = {"rounds": rounds, "python": platform.python_version(), "messages": {}}
    for name in found:
        off = statistics.median(times[(name, False)])
        on = statistics.median(times[(name, True)])
        size = len(sends[(name, False)]())
        print(f"{name:40} {size:6d} {off * 1e6:9.2f} {on * 1e6:9.2f} {on / off:6.2f} {(on - off) * 1e6:9.2f}")
        report["messages"][name] = {"bytes": size, "off_us": off * 1e6, "on_us": on * 1e6, "ratio": on / off}
        record("outgoing", f"validate_outgoing on / off: {name}", on / off, "x")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
