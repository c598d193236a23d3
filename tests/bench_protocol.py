"""Benchmark: the round trip of one ACP v1 prompt whose answer streams 100
session/update notifications, through the generated ``acp_v1`` protocol layer
(``ClientSideConnection`` / ``AgentSideConnection``) against the official
Python SDK (PyPI ``agent-client-protocol``), and the two mixed pairs.

Run with ``make bench`` or ``.venv/bin/python tests/bench_protocol.py [--quick]
[--rounds R] [--updates N] [--json PATH]``.

Method: the four pairs (acpgen client <-> acpgen agent, SDK <-> SDK, acpgen
client <-> SDK agent, SDK client <-> acpgen agent) live in one process and one
event loop, each pair on its own socket pair (newline-delimited JSON through
the kernel, as over a pipe), each set up once (initialize, session/new) and
warmed up. One timed batch is N prompts back to back on one pair; a prompt is
timed from sending session/prompt until its response has been received and
every one of its session/update notifications handled by the client (checked:
the client counts them). N is the same for every pair (calibrated on the
slowest, so a batch lasts about ``--target-ms``). R rounds are run, the order
of the pairs rotating from one round to the next so that drift on a busy
machine hits all alike; the median per-prompt time over the rounds is
reported, and ratio = SDK time / acpgen time. The garbage collector is off
inside a batch unless ``--gc`` is given.

Both agents build each update as their library's typed object (acp_v1
dataclasses, the SDK's pydantic models) and both clients receive them typed;
neither side does anything else with them.

Not part of the test suite (no ``test_`` prefix; everything runs under
``__main__``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import socket
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(ROOT / "tests"))

import acp_v1  # noqa: E402
from bench_summary import record  # noqa: E402

try:
    import acp
except ImportError:
    sys.exit("the official SDK is not installed: run `make install` (agent-client-protocol is in the `test` extras)")

SESSION = "bench-session"


def chunks(n: int) -> list[str]:
    return [f"chunk {i} of the streamed answer " for i in range(n)]


# ---------------------------------------------------------------- acpgen peers


class AcpgenAgent:
    """Streams ``texts`` as agent_message_chunk updates, then ends the turn."""

    def __init__(self, conn, texts: list[str]):
        self.conn = conn
        self.texts = texts

    async def initialize(self, params):
        return acp_v1.InitializeResponse(protocol_version=1)

    async def new_session(self, params):
        return acp_v1.NewSessionResponse(session_id=SESSION)

    async def prompt(self, params):
        for text in self.texts:
            await self.conn.session_update(
                acp_v1.SessionNotification(
                    session_id=params.session_id,
                    update=acp_v1.AgentMessageChunkSessionUpdate(content=acp_v1.TextContentBlock(text=text)),
                )
            )
        return acp_v1.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params):
        pass


class AcpgenClient:
    def __init__(self, conn):
        self.updates = 0

    async def session_update(self, params):
        self.updates += 1


async def acpgen_client(reader, writer):
    """An acp_v1 client on the stream pair; returns (prompt, close)."""
    handler = None

    def make_client(conn):
        nonlocal handler
        handler = AcpgenClient(conn)
        return handler

    conn = acp_v1.ClientSideConnection(make_client, reader, writer)
    runner = asyncio.ensure_future(conn.run())
    await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
    session = await conn.new_session(acp_v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    request = acp_v1.PromptRequest(session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text="go")])

    async def prompt() -> int:
        handler.updates = 0
        response = await conn.prompt(request)
        assert response.stop_reason == "end_turn", response
        return handler.updates

    async def close():
        await conn.close()
        runner.cancel()

    return prompt, close


async def acpgen_agent(reader, writer, texts):
    conn = acp_v1.AgentSideConnection(lambda conn: AcpgenAgent(conn, texts), reader, writer)
    runner = asyncio.ensure_future(conn.run())

    async def close():
        await conn.close()
        runner.cancel()

    return close


# ---------------------------------------------------------------- SDK peers


class SdkAgent(acp.Agent):
    def __init__(self, texts: list[str]):
        self.texts = texts

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, **kwargs):
        return acp.InitializeResponse(protocol_version=1)

    async def new_session(self, cwd, **kwargs):
        return acp.NewSessionResponse(session_id=SESSION)

    async def prompt(self, session_id, prompt, **kwargs):
        for text in self.texts:
            await self.conn.session_update(session_id, acp.update_agent_message(acp.text_block(text)))
        return acp.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kwargs):
        pass


class SdkClient(acp.Client):
    def __init__(self):
        self.updates = 0

    async def session_update(self, session_id, update, **kwargs):
        self.updates += 1


async def sdk_client(reader, writer):
    handler = SdkClient()
    conn = acp.connect_to_agent(handler, writer, reader)
    await conn.initialize(protocol_version=1)
    session = await conn.new_session(cwd="/", mcp_servers=[])
    blocks = [acp.text_block("go")]

    async def prompt() -> int:
        handler.updates = 0
        response = await conn.prompt(session_id=session.session_id, prompt=blocks)
        assert response.stop_reason == "end_turn", response
        return handler.updates

    return prompt, conn.close


async def sdk_agent(reader, writer, texts):
    # run_agent serves until the client end closes the socket
    runner = asyncio.ensure_future(acp.run_agent(SdkAgent(texts), writer, reader))

    async def close():
        writer.close()
        await asyncio.gather(runner, return_exceptions=True)

    return close


# ---------------------------------------------------------------- pairs

CLIENTS = {"acpgen": acpgen_client, "sdk": sdk_client}
AGENTS = {"acpgen": acpgen_agent, "sdk": sdk_agent}
PAIRS = [("acpgen", "acpgen"), ("sdk", "sdk"), ("acpgen", "sdk"), ("sdk", "acpgen")]


def label(pair) -> str:
    return f"{pair[0]} client <-> {pair[1]} agent"


async def connect(pair, texts):
    """Start one pair on a fresh socket pair; returns (prompt, close)."""
    client_sock, agent_sock = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=agent_sock)
    close_agent = await AGENTS[pair[1]](agent_reader, agent_writer, texts)
    client_reader, client_writer = await asyncio.open_connection(sock=client_sock)
    prompt, close_client = await CLIENTS[pair[0]](client_reader, client_writer)

    async def close():
        await close_client()
        await close_agent()

    return prompt, close


async def batch(prompt, n: int, expected: int, collect: bool) -> int:
    """Nanoseconds for ``n`` prompts back to back."""
    if not collect:
        gc.collect()
        gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            got = await prompt()
            if got != expected:
                raise AssertionError(
                    f"the client handled {got} session/update notifications, not {expected}, before its prompt returned"
                )
        return time.perf_counter_ns() - t0
    finally:
        gc.enable()


async def run(pairs, rounds: int, updates: int, target_ms: float, warmup: int, collect: bool):
    texts = chunks(updates)
    prompts, closers = {}, []
    for pair in pairs:
        prompt, close = await connect(pair, texts)
        prompts[pair] = prompt
        closers.append(close)
    try:
        for pair in pairs:
            await batch(prompts[pair], warmup, updates, True)
        slowest = max([await batch(prompts[p], 3, updates, collect) / 3 for p in pairs])
        n = max(1, round(target_ms * 1e6 / slowest))
        samples = {pair: [] for pair in pairs}
        for r in range(rounds):
            order = pairs[r % len(pairs) :] + pairs[: r % len(pairs)]
            for pair in order:
                samples[pair].append(await batch(prompts[pair], n, updates, collect) / n)
        return n, samples
    finally:
        for close in closers:
            await close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds (default 15, 3 with --quick)")
    parser.add_argument("--updates", type=int, default=100, help="session/update notifications per prompt")
    parser.add_argument(
        "--target-ms", type=float, default=None, help="length of one batch (default 100, 10 with --quick)"
    )
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    parser.add_argument("--gc", action="store_true", help="leave the garbage collector on while timing")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument(
        "--pairs",
        default=",".join(f"{c}-{a}" for c, a in PAIRS),
        help="CLIENT-AGENT pairs to time, comma-separated (default: all four)",
    )
    args = parser.parse_args(argv)
    pairs = [tuple(p.split("-")) for p in args.pairs.split(",")]
    if not set(pairs) <= set(PAIRS):
        parser.error(f"--pairs: choose from {[f'{c}-{a}' for c, a in PAIRS]}")
    rounds = args.rounds or (3 if args.quick else 15)
    target_ms = args.target_ms or (10.0 if args.quick else 100.0)
    warmup = 3 if args.quick else 20

    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}, {platform.system()}, "
        f"{os.cpu_count()} CPUs); agent-client-protocol {metadata.version('agent-client-protocol')} "
        f"(pydantic {metadata.version('pydantic')}); acp_v1 from {Path(acp_v1.__file__).parent}"
    )
    print(
        f"one prompt = session/prompt -> {args.updates} x session/update (agent_message_chunk) -> response; "
        f"rounds={rounds}, batch≈{target_ms:g} ms, gc {'on' if args.gc else 'off'} while timing; timing..."
    )
    load_before = os.getloadavg()[0]
    n, samples = asyncio.run(run(pairs, rounds, args.updates, target_ms, warmup, args.gc))
    load_after = os.getloadavg()[0]

    medians = {pair: statistics.median(s) for pair, s in samples.items()}
    base = medians.get(("sdk", "sdk"))
    width = max(len(label(p)) for p in pairs)
    print(f"\n{n} prompts per batch; per-prompt median over {rounds} rounds (min in brackets)")
    print(f"{'pair':<{width}}  {'median ms':>9}  {'(min)':>8}  {'per update µs':>13}  SDK<->SDK / pair")
    for pair in pairs:
        m = medians[pair]
        print(
            f"{label(pair):<{width}}  {m / 1e6:9.3f}  ({min(samples[pair]) / 1e6:6.3f})  "
            f"{m / args.updates / 1e3:13.1f}  " + (f"{base / m:8.2f}x" if base else "")
        )
    ratio = None
    if base and ("acpgen", "acpgen") in medians:
        ratio = base / medians[("acpgen", "acpgen")]
        print(f"\nratio SDK<->SDK / acpgen<->acpgen: {ratio:.2f}x ({'acpgen faster' if ratio > 1 else 'SDK faster'})")
        record("protocol", "prompt of 100 updates: SDK time / acpgen time", ratio, "x")
    print(f"load average {load_before:.2f} before, {load_after:.2f} after")
    spread = max(statistics.median(s) / min(s) - 1 for s in samples.values())
    if spread > 0.15:
        print(
            f"WARNING: a median is up to {spread:.0%} above its best round: the machine was busy, "
            "medians may be inflated; rerun on a quiet machine"
        )
    if args.json:
        result = {
            "updates_per_prompt": args.updates,
            "rounds": rounds,
            "prompts_per_batch": n,
            "gc_during_timing": args.gc,
            "load_average_before_after": [load_before, load_after],
            "pairs": {
                label(p): {"median_ns": medians[p], "min_ns": min(samples[p]), "samples_ns": samples[p]} for p in pairs
            },
            "ratio_sdk_over_acpgen": ratio,
        }
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
