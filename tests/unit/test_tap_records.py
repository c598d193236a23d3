"""The recording pieces of acpgen tap: lines out of chunks cut anywhere, the
transcript records they become, the transcript the proxy writes and the
observer's reading of it while it grows."""

from __future__ import annotations

import json
import os
import random

import pytest
from acpgen.tap.observer import Reader, direction_of
from acpgen.tap.proxy import exit_status
from acpgen.tap.records import Splitter, Stamps, Transcript, record


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


def test_the_transcript_starts_records_lines_as_they_end_and_ends_with_the_unfinished_lines_and_an_end(tmp_path):
    path = tmp_path / "t.jsonl"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    transcript = Transcript([(fd, str(path))], 100)
    assert json.loads(path.read_bytes())["recorder"] == "acpgen tap"
    assert not transcript.add("client_to_agent", b'{"a"', 1.0)  # nothing ended: nothing written
    assert transcript.add("client_to_agent", b": 1}\nnot json\npart", 2.0)
    assert transcript.add("agent_to_client", b"[1]\n", 3.0)
    assert transcript.end("agent_to_client", 4.0) is False  # ended with its newline
    transcript.finish(7)
    assert not transcript.add("agent_to_client", b"late\n", 5.0)  # nothing after the end
    kept = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [{k: v for k, v in r.items() if k != "timestamp"} for r in kept[1:-1]] == [
        {"direction": "client_to_agent", "message": {"a": 1}},
        {"direction": "client_to_agent", "line": "not json"},
        {"direction": "agent_to_client", "message": [1]},
        {"direction": "client_to_agent", "line": "part"},  # forwarded, its newline never came
    ]
    assert [r["timestamp"][-10:] for r in kept[1:4]] == ["02.000000Z", "02.000000Z", "03.000000Z"]
    assert kept[-1]["status"] == 7 and kept[-1]["end"].endswith("Z")


def test_a_transcript_write_that_fails_is_said_once_and_the_other_file_goes_on(tmp_path, capfd):
    copy = tmp_path / "copy.jsonl"
    full = os.open("/dev/full", os.O_WRONLY)
    fd = os.open(copy, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    transcript = Transcript([(full, "/dev/full"), (fd, "copy")], 100)
    for n in range(3):
        transcript.add("client_to_agent", b"%d\n" % n, 1.0)
    transcript.finish(0)
    assert capfd.readouterr().err.count("cannot write the transcript /dev/full") == 1
    assert len(copy.read_bytes().splitlines()) == 5


def test_the_reader_gives_whole_lines_as_the_file_grows_and_a_cut_last_line_at_the_end(tmp_path):
    path = tmp_path / "t.jsonl"
    writer = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    reader = Reader(os.open(path, os.O_RDONLY))
    assert reader.read() is None
    os.write(writer, b'{"direction": "client_to_agent", "x": 1 \r}\n{"direction": "agent_')
    lines = reader.read()
    assert lines == [b'{"direction": "client_to_agent", "x": 1 \r}'] and reader.read() is None
    os.write(writer, b'to_client"}\n{"end": "x"')
    assert reader.read() == [b'{"direction": "agent_to_client"}']
    assert reader.rest() == [b'{"end": "x"']
    assert reader.lines == 3
    assert [direction_of(line) for line in [*lines, b'{"direction": "agent_to_client"}', b'{"end": "x"}']] == [
        "client_to_agent",
        "agent_to_client",
        None,
    ]
