"""The observer's pieces of acpgen tap: lines out of chunks cut anywhere, and
the transcript records they become."""

from __future__ import annotations

import json
import random

import pytest
from acpgen.tap.observer import Splitter, Stamps, record
from acpgen.tap.proxy import exit_status


def split(data: bytes, cuts: list[int], limit: int) -> list[bytes | int]:
    splitter = Splitter(limit)
    lines: list[bytes | int] = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        lines += splitter.feed(data[start:end])
    return lines + splitter.end()


def expected(data: bytes, limit: int) -> list[bytes | int]:
    lines: list[bytes | int] = [line if len(line) <= limit else len(line) for line in data.split(b"\n")]
    if data.endswith(b"\n") or not data:
        lines.pop()
    return lines


@pytest.mark.parametrize("seed", range(40))
def test_lines_are_the_same_wherever_the_chunks_are_cut(seed):
    rng = random.Random(seed)
    pieces = [rng.choice([b"", b"x", b"abc", b"\xff\xfe", b"y" * rng.randrange(1, 40), b"\r"]) for _ in range(30)]
    data = b"".join(piece + (b"\n" if rng.random() < 0.4 else b"") for piece in pieces)
    cuts = sorted(rng.sample(range(1, max(2, len(data))), min(len(data) - 1, rng.randrange(0, 12)))) if data else []
    limit = rng.choice([1, 5, 20, 1000])
    assert split(data, cuts, limit) == expected(data, limit)


def test_a_line_over_the_limit_is_its_length_and_no_more_is_held():
    splitter = Splitter(10)
    assert splitter.feed(b"a" * 8) == []
    assert splitter.feed(b"a" * 1000) == []
    assert len(splitter.part) == 0  # dropped once past the limit
    assert splitter.feed(b"aa\nok\n") == [1010, b"ok"]


def test_records_keep_a_json_line_s_bytes_and_say_what_other_lines_were():
    stamp = Stamps()(1764614102.3116193)
    assert stamp == b"2025-12-01T18:35:02.311619Z"
    line = b'{"jsonrpc":"2.0",  "method":"x"} \r'
    kept = record("client_to_agent", stamp, line)
    assert (
        kept
        == b'{"direction": "client_to_agent", "timestamp": "2025-12-01T18:35:02.311619Z", "message": ' + line + b"}\n"
    )
    assert json.loads(kept)["message"] == {"jsonrpc": "2.0", "method": "x"}
    garbage = json.loads(record("agent_to_client", stamp, b"not \xff json"))
    assert garbage["line"].encode("utf-8", "surrogateescape") == b"not \xff json"
    assert json.loads(record("agent_to_client", stamp, 123))["omitted"] == 123
    # a line that is not one JSON value cannot add members to its record
    forged = record("agent_to_client", stamp, b'1, "message": {"jsonrpc": "2.0", "method": "forged"}')
    assert "line" in json.loads(forged)


def test_the_exit_status_of_a_signalled_agent_is_128_plus_the_signal():
    assert [exit_status(code) for code in (0, 3, -9, -15)] == [0, 3, 137, 143]
