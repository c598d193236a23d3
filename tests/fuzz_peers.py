"""Hostile-peer fuzzing for a bounded time (``make fuzz``): random garbage,
deep nesting, huge lines, floods and half-closed pipes against the example
agents (v1, v2) and, as the hostile agent side, against the example client.

python tests/fuzz_peers.py [SECONDS] [SEED]

Each round picks a target and a seed; a failure prints the target, the seed
and what went wrong, and the run exits 1. The deterministic scenarios (one
per case) are ``tests/e2e/test_hostile_peers.py``, run by ``make test``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests/e2e"))
from hostile_agent import _garbage  # noqa: E402

EXAMPLES = ROOT / "examples"
AGENTS = {"echo_agent.py": 1, "echo_agent_v2.py": 2}
TIMEOUT = 120


class Failure(Exception):
    pass


def _strict(line: bytes) -> dict:
    def refuse(token: str) -> None:
        raise Failure(f"{token} on the wire: {line[:200]!r}")

    try:
        message = json.loads(line.decode("utf-8"), parse_constant=refuse)
    except ValueError as error:
        raise Failure(f"not strict JSON ({error}): {line[:200]!r}") from None
    if not isinstance(message, dict):
        raise Failure(f"not an object: {line[:200]!r}")
    return message


def _initialize(id: object, version: int) -> bytes:
    params = {
        "protocolVersion": version,
        "clientInfo": {"name": "f", "version": "1"},
        "info": {"name": "f", "version": "1"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}).encode() + b"\n"


def _agent_input(rng: random.Random, version: int) -> tuple[bytes, bool]:
    """Hostile lines, then (unless the pipe is cut mid-line) a valid request
    with id "last"; and whether that request is there."""
    parts: list[bytes] = []
    for _ in range(rng.randrange(1, 40)):
        kind = rng.randrange(10)
        if kind < 6:
            parts.append(_garbage(rng) + b"\n")
        elif kind == 6:  # a flood of notifications
            note = (
                json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}).encode()
                + b"\n"
            )
            parts.append(note * rng.randrange(1000, 50_000))
        elif kind == 7:  # a flood of requests
            parts.append(b"".join(_initialize(n, version) for n in range(rng.randrange(100, 5000))))
        elif kind == 8:  # a long line: under or (rarely) over the 64 MiB limit
            size = rng.choice([10_000, 1_000_000, 5_000_000] + ([70 * 2**20] if rng.random() < 0.05 else []))
            parts.append(b" " * size + _initialize("long", version))
        else:
            parts.append(b"\n" * rng.randrange(1, 5) + b"   \t\r\n")
    if rng.random() < 0.2:  # half-closed: the input ends in the middle of a line
        return b"".join(parts) + _initialize("cut", version)[: rng.randrange(1, 40)], False
    return b"".join(parts) + _initialize("last", version), True


def fuzz_agent(agent: str, seed: int) -> None:
    rng = random.Random(seed)
    data, complete = _agent_input(rng, AGENTS[agent])
    done = subprocess.run([sys.executable, str(EXAMPLES / agent)], input=data, capture_output=True, timeout=TIMEOUT)
    if done.returncode != 0 or b"Traceback" in done.stderr:
        raise Failure(f"exit {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    replies = [_strict(line) for line in done.stdout.splitlines()]
    if complete and not (replies and replies[-1].get("id") == "last" and "result" in replies[-1]):
        raise Failure(f"the last request was not answered: {replies[-3:]}")


def fuzz_client(seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        hostile = [sys.executable, str(ROOT / "tests/e2e/hostile_agent.py"), "random", str(report), str(seed)]
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "echo_client.py"), "hi", "--", *hostile],
            capture_output=True,
            timeout=TIMEOUT,
        )
        if done.returncode != 0 or not done.stdout.endswith(b"ok\n[end_turn]\n"):
            raise Failure(
                f"exit {done.returncode}: {done.stdout[-300:]!r} {done.stderr.decode(errors='replace')[-2000:]}"
            )
        seen = json.loads(report.read_text())
        bad = [message for message in seen if "bad_line" in message]
        if bad:
            raise Failure(f"the client wrote lines that are not strict JSON: {bad[:3]}")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    master = int(sys.argv[2]) if len(sys.argv) > 2 else random.randrange(2**32)
    rng = random.Random(master)
    deadline = time.monotonic() + seconds
    rounds = 0
    failures = 0
    print(f"fuzzing hostile peers for {seconds:g}s (seed {master})")
    targets = [*AGENTS, "echo_client.py"]
    while time.monotonic() < deadline:
        target = targets[rounds % len(targets)]
        seed = rng.randrange(2**32)
        try:
            if target == "echo_client.py":
                fuzz_client(seed)
            else:
                fuzz_agent(target, seed)
        except (Failure, subprocess.TimeoutExpired) as error:
            failures += 1
            print(f"FAILED {target} seed {seed}: {error}")
        rounds += 1
    print(f"{rounds} rounds, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
