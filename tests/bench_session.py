"""Benchmark the v1 session fold against a naive plain-dict fold.

Two streams of a realistic v1 transcript's updates, turn after turn. The
chat stream: the user's prompt echoed as a chunk, 12 thought chunks, 40 agent
message chunks, a tool call with two updates (in progress, then completed
with content), 40 more message chunks, a usage update, and a plan every
fourth turn. The tool-heavy stream (a third of its updates are tool calls
and their updates): the prompt's chunk, 4 thought chunks, then six times 5
message chunks and a tool call (with a location) with its two updates (in
progress, then completed with text content or, every other call, a diff), a
usage update, and a plan of three entries every other turn.

Both folds take the same updates decoded once beforehand (the lenient decoder
of ``acp_v1``), so decoding is measured by neither. ``apply_session_update``
folds the notifications, each call returning a new ``Session``. The baseline
folds the same update objects into plain dicts and lists, mutating them in
place, to the same information: ``history`` a list of ``(field, key)``
pairs; each message a ``{"id", "content"}`` dict grouped as the session rules
group v1 chunks (a chunk extends the last history entry when that is a message
of its kind whose id does not differ, else starts one); a tool call a dict of
its fields, ``tool_call`` replacing it and ``tool_call_update`` overwriting
the fields it sets (not UNSET, not None); plan, commands and mode replaced;
usage fields overwritten. It keeps no old versions and builds no state
objects.

Rounds interleave the two folds (and the sizes); each measurement is the
process CPU time (``time.process_time``) of one whole fold, and the figures
are medians over the rounds (the ratio: the median of the per-round
ratios, each fold measured right beside its baseline). Prints, per size, the median microseconds per
update of each fold and their ratio, then the log-log slope of the session
fold's total time from the smallest to the largest size (1.0 is linear), and
the memory the folded session holds per update (tracemalloc, the decoded
stream allocated beforehand and kept by the caller, as a client keeps nothing
else); each stream in turn.

Then, at the smallest size, where the gap between the folds comes from: the
ratio with the garbage collector off during both folds (the folds' own work),
and the objects the collector tracks that each fold's result keeps per update
(``gc.get_objects()`` before and after). Each such object kept brings the next
full collection nearer, and a full collection walks every object of the
process, the caller's decoded stream included: with the collector on, the fold
that keeps more of them pays for it.

Usage: ``python tests/bench_session.py [SIZES...]`` (default 10000 1000000).
"""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "tests"))

import acp_v1 as acp  # noqa: E402
from bench_summary import record  # noqa: E402

UNSET = acp.UNSET


def wire_stream(n: int) -> list[dict[str, Any]]:
    """``n`` session/update params (wire JSON) of a multi-turn v1 session."""
    out: list[dict[str, Any]] = []
    turn = 0

    def put(update: dict[str, Any]) -> None:
        out.append({"sessionId": "s", "update": update})

    def chunk(kind: str, text: str) -> None:
        put({"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    put({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web", "description": "Search"}]})
    while len(out) < n:
        chunk("user_message_chunk", f"question {turn}")
        for i in range(12):
            chunk("agent_thought_chunk", f"hmm {i} ")
        for i in range(40):
            chunk("agent_message_chunk", f"word{i} ")
        call = f"call{turn}"
        put(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": "Read file",
                "kind": "read",
                "status": "pending",
            }
        )
        put({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "in_progress"})
        put(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "file text"}}],
            }
        )
        for i in range(40):
            chunk("agent_message_chunk", f"more{i} ")
        put({"sessionUpdate": "usage_update", "used": 1000 + turn, "size": 200000})
        if turn % 4 == 0:
            entry = {"content": f"step {turn}", "priority": "medium", "status": "in_progress"}
            put({"sessionUpdate": "plan", "entries": [entry]})
        turn += 1
    return out[:n]


def tool_heavy_wire_stream(n: int) -> list[dict[str, Any]]:
    """``n`` session/update params of a v1 session that mostly runs tools."""
    out: list[dict[str, Any]] = []
    turn = 0

    def put(update: dict[str, Any]) -> None:
        out.append({"sessionId": "s", "update": update})

    def chunk(kind: str, text: str) -> None:
        put({"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    put({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web", "description": "Search"}]})
    while len(out) < n:
        chunk("user_message_chunk", f"task {turn}")
        for i in range(4):
            chunk("agent_thought_chunk", f"plan {i} ")
        for step in range(6):
            for i in range(5):
                chunk("agent_message_chunk", f"doing{i} ")
            call = f"call{turn}.{step}"
            edit = step % 2 == 1
            put(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call,
                    "title": "Edit file" if edit else "Read file",
                    "kind": "edit" if edit else "read",
                    "status": "pending",
                    "locations": [{"path": f"/src/f{step}.py"}],
                }
            )
            put({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "in_progress"})
            if edit:
                content = {"type": "diff", "path": f"/src/f{step}.py", "oldText": "a = 1", "newText": f"a = {turn}"}
            else:
                content = {"type": "content", "content": {"type": "text", "text": "file text"}}
            put({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed", "content": [content]})
        put({"sessionUpdate": "usage_update", "used": 1000 + turn, "size": 200000})
        if turn % 2 == 0:
            entries = [
                {"content": f"step {turn}.{i}", "priority": "medium", "status": "completed" if i else "in_progress"}
                for i in range(3)
            ]
            put({"sessionUpdate": "plan", "entries": entries})
        turn += 1
    return out[:n]


STREAMS = {"chat": wire_stream, "tool-heavy": tool_heavy_wire_stream}
"""The streams measured, by name."""


def decoded_stream(n: int, stream: str = "chat") -> list[Any]:
    return [acp.decode("SessionNotification", params) for params in STREAMS[stream](n)]


_MESSAGE_FIELDS = {
    acp.UserMessageChunkSessionUpdate: "user_messages",
    acp.AgentMessageChunkSessionUpdate: "agent_messages",
    acp.AgentThoughtChunkSessionUpdate: "agent_thoughts",
}
_TOOL_FIELDS = ("kind", "status", "title", "content", "locations", "raw_input", "raw_output")


def naive_fold(notifications: list[Any]) -> dict[str, Any]:
    """The baseline: see the module docstring."""
    state: dict[str, Any] = {
        "history": [],
        "user_messages": {},
        "agent_messages": {},
        "agent_thoughts": {},
        "tool_calls": {},
        "plan": [],
        "available_commands": [],
        "current_mode_id": None,
        "usage": {},
    }
    history: list[tuple[str, str]] = state["history"]
    calls: dict[str, dict[str, Any]] = state["tool_calls"]
    for notification in notifications:
        update = notification.update
        kind = type(update)
        field = _MESSAGE_FIELDS.get(kind)
        if field is not None:
            messages = state[field]
            wire_id = update.message_id if isinstance(update.message_id, str) else None
            if history and history[-1][0] == field:
                current = messages[history[-1][1]]
                if wire_id is None or current["id"] is None or current["id"] == wire_id:
                    current["content"].append(update.content)
                    if current["id"] is None:
                        current["id"] = wire_id
                    continue
            key = f"#{len(history)}"
            messages[key] = {"id": wire_id, "content": [update.content]}
            history.append((field, key))
        elif kind is acp.ToolCallSessionUpdate or kind is acp.ToolCallUpdateSessionUpdate:
            key = update.tool_call_id
            call = calls.get(key)
            if call is None:
                history.append(("tool_calls", key))
            if call is None or kind is acp.ToolCallSessionUpdate:
                call = calls[key] = {"tool_call_id": key}
            for name in _TOOL_FIELDS:
                value = getattr(update, name)
                if value is not UNSET and value is not None:
                    call[name] = value
        elif kind is acp.UsageUpdateSessionUpdate:
            usage = state["usage"]
            for name in ("used", "size", "cost"):
                value = getattr(update, name)
                if value is not UNSET and value is not None:
                    usage[name] = value
        elif kind is acp.PlanSessionUpdate:
            state["plan"] = list(update.entries)
        elif kind is acp.AvailableCommandsUpdateSessionUpdate:
            state["available_commands"] = list(update.available_commands)
        elif kind is acp.CurrentModeUpdateSessionUpdate:
            state["current_mode_id"] = update.current_mode_id
        else:
            raise TypeError(f"the bench stream has no {kind.__name__}")
    return state


def session_fold(notifications: list[Any]) -> Any:
    session = None
    for notification in notifications:
        session = acp.apply_session_update(session, notification)
    return session


def check_same_information(notifications: list[Any]) -> None:
    """Both folds agree on what the stream says (so the baseline does the same work)."""
    naive = naive_fold(notifications)
    session = session_fold(notifications)
    assert [(e.field, e.key) for e in session.history] == naive["history"]
    for field in _MESSAGE_FIELDS.values():
        folded = {k: (m.message_id, m.content) for k, m in getattr(session, field).items()}
        assert folded == {k: (m["id"], m["content"]) for k, m in naive[field].items()}, field
    assert {k: (c.status, c.content) for k, c in session.tool_calls.items()} == {
        k: (c["status"], c.get("content", [])) for k, c in naive["tool_calls"].items()
    }
    assert session.plan == naive["plan"] and session.usage.used == naive["usage"]["used"]


def cpu(fold: Any, notifications: list[Any], collector: bool = True) -> float:
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.process_time()
        fold(notifications)
        return time.process_time() - start
    finally:
        gc.enable()


def tracked_per_update(fold: Any, notifications: list[Any]) -> float:
    """The objects the garbage collector tracks that ``fold``'s result keeps,
    per update."""
    gc.collect()
    before = len(gc.get_objects())
    result = fold(notifications)
    gc.collect()
    kept = len(gc.get_objects()) - before
    del result
    return kept / len(notifications)


def held_bytes_per_update(notifications: list[Any]) -> float:
    gc.collect()
    tracemalloc.start()
    session = session_fold(notifications)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del session
    return held / len(notifications)


def measure(stream: str, sizes: list[int]) -> None:
    """Print (and record) the figures of ``stream`` at ``sizes``."""
    streams = {n: decoded_stream(n, stream) for n in sizes}
    check_same_information(streams[sizes[0]])
    tools = sum(
        type(x.update) in (acp.ToolCallSessionUpdate, acp.ToolCallUpdateSessionUpdate) for x in streams[sizes[0]]
    )
    rounds = 7 if max(sizes) <= 100_000 else 5
    times: dict[tuple[int, str], list[float]] = {}
    folds = (("naive", naive_fold), ("session", session_fold))
    for index in range(rounds):
        for n in sizes:
            # Each goes first in every other round: what ran before (the
            # larger size's fold freeing its state) weighs on both alike.
            for name, fold in folds if index % 2 == 0 else folds[::-1]:
                times.setdefault((n, name), []).append(cpu(fold, streams[n]))
    medians = {key: statistics.median(values) for key, values in times.items()}
    print(
        f"{stream} stream ({tools / len(streams[sizes[0]]):.0%} tool calls and their updates):"
        f" session fold vs naive dict fold, CPU time, medians of {rounds} interleaved rounds"
        " (the ratio: the median of the per-round ratios, each fold beside its baseline)"
    )
    for n in sizes:
        naive, session = medians[(n, "naive")], medians[(n, "session")]
        ratio = statistics.median(a / b for a, b in zip(times[(n, "session")], times[(n, "naive")], strict=True))
        print(
            f"  {n:>9,} updates: naive {naive / n * 1e6:.3f} us/update, session {session / n * 1e6:.3f} us/update,"
            f" ratio {ratio:.2f}x"
        )
        record("session", f"{stream} fold / naive dict fold at {n:,} updates", ratio, "x", "<= 1.2", ratio <= 1.2)
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        slope = math.log(medians[(hi, "session")] / medians[(lo, "session")]) / math.log(hi / lo)
        naive_slope = math.log(medians[(hi, "naive")] / medians[(lo, "naive")]) / math.log(hi / lo)
        print(f"  log-log slope {lo:,} -> {hi:,}: session {slope:.2f}, naive {naive_slope:.2f} (1.0 is linear)")
        record("session", f"{stream} fold's log-log slope {lo:,} -> {hi:,}", slope, "", "1.0 (linear)", slope <= 1.1)
    n = min(sizes)
    ratios = []
    for index in range(rounds):
        pair = {
            name: cpu(fold, streams[n], collector=False) for name, fold in (folds if index % 2 == 0 else folds[::-1])
        }
        ratios.append(pair["session"] / pair["naive"])
    off = statistics.median(ratios)
    kept = {name: tracked_per_update(fold, streams[n]) for name, fold in folds}
    print(
        f"  at {n:,} updates, the collector off during both folds: ratio {off:.2f}x;"
        f" objects the collector tracks, kept per update: session {kept['session']:.2f},"
        f" naive {kept['naive']:.2f}"
    )
    record("session", f"{stream} fold / naive dict fold at {n:,} updates, collector off", off, "x")
    record("session", f"{stream} fold: tracked objects kept per update at {n:,}", kept["session"], "")
    record("session", f"{stream} naive fold: tracked objects kept per update at {n:,}", kept["naive"], "")
    for n in sizes:
        held = held_bytes_per_update(streams[n])
        print(f"  memory held by the folded session: {held:.0f} B/update at {n:,}")
        limit = MEMORY[stream]
        record("session", f"{stream} memory held per update at {n:,}", held, "B", f"<= {limit}", held <= limit)


MEMORY = {"chat": 193, "tool-heavy": 90}
"""The memory held per update each stream is measured against (what the
fold held before the tool-heavy stream was measured)."""


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 1_000_000]
    for stream in STREAMS:
        measure(stream, sizes)


if __name__ == "__main__":
    main()
