"""A hostile ACP agent, for a client under test: it speaks raw JSON lines on
stdin/stdout, sends the lines of a scenario before it answers ``initialize``,
records what the client answers to them, then serves a session whose prompt
streams "ok" and ends the turn.

python hostile_agent.py SCENARIO REPORT_FILE [SEED]

The report (JSON) lists the client's messages read while the scenario ran:
each a message, or ``{"bad_line": ...}`` for a line that is not strict JSON.
Scenarios are in :data:`SCENARIOS`; ``random`` sends random garbage.
"""

from __future__ import annotations

import json
import random
import sys

DEEP = "[" * 1000 + "]" * 1000
SMUGGLED = {
    "jsonrpc": "2.0",
    "id": "smuggled",
    "method": "fs/write_text_file",
    "params": {"sessionId": "s", "path": "/tmp/acp-smuggled", "content": "written"},
}
PROBE = {"jsonrpc": "2.0", "id": "probe", "method": "_hostile/probe", "params": {}}


def _line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _garbage(rng: random.Random) -> bytes:
    """One random hostile line (without its line break)."""
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" ")
    if kind == 1:
        depth = rng.choice([10, 500, 999, 1000, 1001, 5000, 50_000])
        return b"[" * depth + b"]" * depth
    if kind == 2:
        depth = rng.choice([900, 990, 1000, 3000])
        meta = "[" * depth + "]" * depth
        return (f'{{"jsonrpc":"2.0","id":{rng.randrange(10**6)},"method":"_x","params":{{"_meta":{meta}}}}}').encode()
    if kind == 3:
        return _line(
            {
                "jsonrpc": "2.0",
                "id": rng.choice(["\ud800", 1.5, [1], None, True, 10**30]),
                "method": rng.choice(["_x", "\udfff", "fs/read_text_file"]),
            }
        )[:-1]
    if kind == 4:
        return json.dumps({"jsonrpc": rng.choice([2, "x" * 100_000, None, "2.0"]), "id": 1}).encode()
    if kind == 5:
        text = _line(SMUGGLED)[:-1]
        return text[: rng.randrange(len(text))]
    if kind == 6:
        return b'{"jsonrpc":"2.0","id":1,"result":' + b"NaN" + b"}"
    return _line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "\ud800"}},
            },
        }
    )[:-1]


SCENARIOS: dict[str, list[bytes]] = {
    "deep": [
        DEEP.encode() + b"\n",
        (
            f'{{"jsonrpc":"2.0","id":"meta","method":"fs/read_text_file","params":{{"sessionId":"s","path":"/x","_meta":{DEEP}}}}}\n'
        ).encode(),
    ],
    "surrogate": [
        _line({"jsonrpc": "2.0", "id": "\ud800", "method": "_x", "params": {}}),
        _line({"jsonrpc": "2.0", "id": "m", "method": "\ud800", "params": {}}),
    ],
    "envelope": [
        _line({"jsonrpc": "2.0", "id": "env"}),
        _line({"jsonrpc": "x" * 10_000_000, "id": "long", "method": "_x"}),
    ],
    # 70 MB of blanks, then a request on the same line: over the default limit.
    "smuggle": [b" " * (70 * 1024 * 1024) + _line(SMUGGLED)],
}


def _read(stream) -> object:
    line = stream.readline()
    if not line:
        raise SystemExit("the client closed the connection")
    try:
        return json.loads(line.decode("utf-8"), parse_constant=lambda token: (_ for _ in ()).throw(ValueError(token)))
    except ValueError:
        return {"bad_line": line[:200].decode("utf-8", "replace")}


def main() -> None:
    scenario, report_path = sys.argv[1], sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    initialize = _read(stdin)
    assert isinstance(initialize, dict) and initialize.get("method") == "initialize", initialize
    lines = SCENARIOS[scenario] if scenario != "random" else [_garbage(rng) + b"\n" for _ in range(50)]
    for line in lines:
        stdout.write(line)
    # The probe comes last: every reply to the scenario comes before the
    # client's answer to it.
    stdout.write(_line(PROBE))
    stdout.flush()
    seen: list[object] = []
    while True:
        message = _read(stdin)
        seen.append(message)
        if isinstance(message, dict) and message.get("id") == "probe":
            break
    with open(report_path, "w") as report:
        json.dump(seen, report)
    stdout.write(_line({"jsonrpc": "2.0", "id": initialize["id"], "result": {"protocolVersion": 1}}))
    stdout.flush()
    while True:
        message = _read(stdin)
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue
        if message["method"] == "session/new":
            stdout.write(_line({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "s"}}))
        elif message["method"] == "session/prompt":
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
            stdout.write(
                _line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": chunk}})
            )
            stdout.write(_line({"jsonrpc": "2.0", "id": message["id"], "result": {"stopReason": "end_turn"}}))
        else:
            stdout.write(
                _line({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
            )
        stdout.flush()


if __name__ == "__main__":
    main()
