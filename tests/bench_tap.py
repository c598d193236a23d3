"""Benchmark: what ``acpgen tap`` adds to a session, against a direct pipe to
the same program.

Run with ``make bench`` or ``.venv/bin/python tests/bench_tap.py [--quick]
[--rounds R] [--json PATH]``.

Latency: a small JSON-RPC request (an extension request, ~70 bytes) written,
its response (~40 bytes) read back, one at a time, to a responder (a few
lines of Python answering each line) started directly and, in the same
process, behind ``acpgen tap --out T.jsonl -- RESPONDER`` (recording and
validating live) and behind ``acpgen tap --no-checks`` (forwarding alone).
All stay up; the rounds go round them (the order rotating each round),
each round ``--trips`` round trips, timed with
``time.perf_counter`` (latency is time waited, which no CPU clock sees).
Reported: the median and the 99th percentile over every round trip of the
direct pipe and through tap, and what tap adds (tap - direct); the CPU
time the proxy (which writes the transcript) and the observer (which
checks it) spent per message (a request or a response), from
/proc/PID/task/*/schedstat; and, at the end, how long each took to exit
once its stdin was closed (tap does not wait for its checks).

Throughput: a producer writes ``--megabytes`` MB of v1 ``session/update``
notifications (agent_message_chunk, ~200 bytes each) as fast as the pipe
takes them; the bench reads until the end and times from the first byte to
the last. Direct, through ``acpgen tap --out`` and through ``acpgen tap
--no-checks`` (forwarding alone), interleaved over the rounds; the median
MB/s of each and the ratios to direct. A flood this size makes validation
fall behind and stop (said on tap's stderr, counted here): forwarding and
recording are what is measured.

Not part of the test suite (no ``test_`` prefix; everything runs under
``__main__``). Figures on a shared machine are noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACPGEN = str(Path(sys.executable).with_name("acpgen"))

RESPONDER = r"""
import os, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    start = line.index(b'"id": ') + 6
    end = line.index(b",", start)
    result = b'{"protocolVersion": 1}' if line[start:end] == b"0" else b"{}"  # initialize, then pings
    out.write(b'{"jsonrpc": "2.0", "id": ' + line[start:end] + b', "result": ' + result + b'}\n')
    out.flush()
"""

PRODUCER = r"""
import json, sys
size = int(sys.argv[1])
lines = []
total = n = 0
while total < size:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"word{n} " * 12}}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}})
    lines.append(line)
    total += len(line) + 1
    n += 1
sys.stdout.buffer.write(("\n".join(lines) + "\n").encode())
"""

INIT = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}\n'


def request(n: int) -> bytes:
    return b'{"jsonrpc": "2.0", "id": %d, "method": "_bench/ping", "params": {"n": %d}}\n' % (n, n)


class Peer:
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.next_id = 1
        self.stdin.write(INIT)
        self.stdin.flush()
        self.stdout.readline()

    def trips(self, count: int) -> list[float]:
        times = []
        write, flush, readline, clock = self.stdin.write, self.stdin.flush, self.stdout.readline, time.perf_counter
        for _ in range(count):
            line = request(self.next_id)
            self.next_id += 1
            start = clock()
            write(line)
            flush()
            answer = readline()
            times.append(clock() - start)
            assert answer.startswith(b'{"jsonrpc": "2.0", "id": '), answer
        return times

    def close(self) -> tuple[float, bytes]:
        """Seconds from closing stdin to the exit, and stderr (to its end:
        tap's observer shares it and may run on)."""
        start = time.perf_counter()
        self.stdin.close()
        self.process.wait(60)
        elapsed = time.perf_counter() - start
        assert self.process.stderr is not None
        return elapsed, self.process.stderr.read()


def cpu_seconds(pid: int) -> float:
    """The CPU time of ``pid``'s threads, at nanoseconds' resolution
    (/proc/PID/task/TID/schedstat: the time on a CPU)."""
    total = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def tap_cpu_seconds(tap_pid: int) -> tuple[float, float]:
    """The proxy's CPU time and the observer's (not the agent's)."""
    observer = 0.0
    for child in Path(f"/proc/{tap_pid}/task/{tap_pid}/children").read_text().split():
        if b"acpgen.tap.observer" in Path(f"/proc/{child}/cmdline").read_bytes():
            observer += cpu_seconds(int(child))
    return cpu_seconds(tap_pid), observer


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(rounds: int, trips: int, transcript: Path) -> dict[str, float]:
    responder = [sys.executable, "-c", RESPONDER]
    peers = {
        "direct": Peer(responder),
        "tap": Peer([ACPGEN, "tap", "--out", str(transcript), "--package", "acp_v1", "--", *responder]),
        "no_checks": Peer([ACPGEN, "tap", "--no-checks", "--", *responder]),
    }
    tapped = peers["tap"]
    time.sleep(1.0)  # the observer's start-up (imports), off the clock
    for peer in peers.values():
        peer.trips(trips)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in peers}
    cpu_before, messages = tap_cpu_seconds(tapped.process.pid), 0
    names = list(peers)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name] += peers[name].trips(trips)
        messages += 2 * trips
    cpu_after = tap_cpu_seconds(tapped.process.pid)
    proxy_cpu, observer_cpu = (after - before for after, before in zip(cpu_after, cpu_before, strict=True))
    direct_exit, _ = peers["direct"].close()
    no_checks_exit, _ = peers["no_checks"].close()
    tap_exit, stderr = tapped.close()
    medians = {name: statistics.median(values) for name, values in times.items()}
    p99 = {name: percentile(values, 0.99) for name, values in times.items()}
    return {
        "direct_median_us": medians["direct"] * 1e6,
        "direct_p99_us": p99["direct"] * 1e6,
        "tap_median_us": medians["tap"] * 1e6,
        "tap_p99_us": p99["tap"] * 1e6,
        "added_median_us": (medians["tap"] - medians["direct"]) * 1e6,
        "added_p99_us": (p99["tap"] - p99["direct"]) * 1e6,
        "no_checks_median_us": medians["no_checks"] * 1e6,
        "no_checks_p99_us": p99["no_checks"] * 1e6,
        "proxy_cpu_us_per_message": proxy_cpu / messages * 1e6,
        "observer_cpu_us_per_message": observer_cpu / messages * 1e6,
        "validation_fell_behind": b"validation fell behind" in stderr,
        "findings": stderr.count(b": error: ") + stderr.count(b": warning: "),
        "direct_exit_ms": direct_exit * 1e3,
        "tap_exit_ms": tap_exit * 1e3,
        "no_checks_exit_ms": no_checks_exit * 1e3,
    }


def stream(command: list[str]) -> tuple[float, int, bytes]:
    """Seconds from the first byte to the end, bytes read, stderr."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    fd = process.stdout.fileno()
    first = os.read(fd, 1 << 20)
    start, size = time.perf_counter(), len(first)
    while data := os.read(fd, 1 << 20):
        size += len(data)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read()
    process.wait(60)
    return elapsed, size, stderr


def throughput(rounds: int, megabytes: int, transcript: Path) -> dict[str, float]:
    producer = [sys.executable, "-c", PRODUCER, str(megabytes << 20)]
    commands = {
        "direct": producer,
        "tap": [ACPGEN, "tap", "--out", str(transcript), "--package", "acp_v1", "--", *producer],
        "tap_no_checks": [ACPGEN, "tap", "--no-checks", "--", *producer],
    }
    rates: dict[str, list[float]] = {name: [] for name in commands}
    behind = 0
    names = list(commands)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            elapsed, size, stderr = stream(commands[name])
            assert size >= megabytes << 20, (name, size)
            rates[name].append(size / elapsed / 1e6)
            behind += b"validation fell behind" in stderr
    medians = {name: statistics.median(values) for name, values in rates.items()}
    return {
        "direct_mb_s": medians["direct"],
        "tap_mb_s": medians["tap"],
        "tap_no_checks_mb_s": medians["tap_no_checks"],
        "tap_ratio": medians["tap"] / medians["direct"],
        "tap_no_checks_ratio": medians["tap_no_checks"] / medians["direct"],
        "validation_fell_behind_rounds": behind,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--trips", type=int, default=200)
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 10)
    megabytes = 8 if args.quick else args.megabytes
    with tempfile.TemporaryDirectory() as tmp:
        lat = latency(rounds, args.trips, Path(tmp) / "latency.jsonl")
        put = throughput(max(3, rounds // 2), megabytes, Path(tmp) / "stream.jsonl")
    print(f"acpgen tap, {platform.python_implementation()} {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    print(f"latency, {rounds} rounds x {args.trips} round trips of a small request:")
    print(f"  direct pipe   median {lat['direct_median_us']:8.1f} us   p99 {lat['direct_p99_us']:8.1f} us")
    print(f"  through tap   median {lat['tap_median_us']:8.1f} us   p99 {lat['tap_p99_us']:8.1f} us")
    print(f"  tap adds      median {lat['added_median_us']:8.1f} us   p99 {lat['added_p99_us']:8.1f} us")
    print(f"  tap --no-checks median {lat['no_checks_median_us']:6.1f} us   p99 {lat['no_checks_p99_us']:8.1f} us")
    print(
        f"  tap's CPU time per message: proxy {lat['proxy_cpu_us_per_message']:.1f} us, "
        f"observer {lat['observer_cpu_us_per_message']:.1f} us "
        f"(validation {'fell behind' if lat['validation_fell_behind'] else 'kept up'}, {lat['findings']} findings)"
    )
    print(
        f"  exit after stdin closes: direct {lat['direct_exit_ms']:.1f} ms, tap {lat['tap_exit_ms']:.1f} ms, "
        f"tap --no-checks {lat['no_checks_exit_ms']:.1f} ms"
    )
    print(f"throughput, {megabytes} MB of session/update notifications, median of {max(3, rounds // 2)} rounds:")
    print(f"  direct pipe          {put['direct_mb_s']:8.1f} MB/s")
    print(f"  tap (record, check)  {put['tap_mb_s']:8.1f} MB/s   {put['tap_ratio']:.2f} x direct")
    print(f"  tap --no-checks      {put['tap_no_checks_mb_s']:8.1f} MB/s   {put['tap_no_checks_ratio']:.2f} x direct")
    print(f"  of the tap rounds, validation fell behind (and stopped) in {put['validation_fell_behind_rounds']}")
    if args.json is not None:
        args.json.write_text(json.dumps({"latency": lat, "throughput": put}, indent=2))


if __name__ == "__main__":
    main()
