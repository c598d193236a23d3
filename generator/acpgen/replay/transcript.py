"""A recorded transcript, read for replay: its messages in order, each with
its direction and (when ``acpgen tap`` wrote it) its time.

Three formats are read: what ``acpgen tap`` writes (JSON Lines: a start
record, ``{"direction", "timestamp", "message"}`` records, an end record),
the relay format of ``tests/fixtures/transcripts`` (``{"direction",
"message"}``, no times), and a script written by hand, one message a line
after its direction, ``"jsonrpc"`` implied, ``#`` starting a comment::

    # a client loads a session; the agent replays it, then answers
    -> {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    <- {"id": 0, "result": {"protocolVersion": 1}}

Records that hold no message (start and end records, lines that were not
JSON, lines too long to keep) are skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import AcpgenError

CLIENT = "client_to_agent"
AGENT = "agent_to_client"
_DIRECTIONS = {CLIENT: CLIENT, "client->agent": CLIENT, AGENT: AGENT, "agent->client": AGENT}


@dataclass(frozen=True)
class Record:
    """One message of a transcript."""

    index: int
    """Its place among the transcript's messages (0-based)."""
    line: int
    """The transcript's line it is on (1-based)."""
    direction: str
    """:data:`CLIENT` or :data:`AGENT`."""
    message: dict[str, Any]
    time: float | None = None
    """Seconds since the epoch, when the record has a timestamp."""

    @property
    def method(self) -> str | None:
        method = self.message.get("method")
        return method if isinstance(method, str) else None

    @property
    def is_request(self) -> bool:
        return self.method is not None and "id" in self.message

    @property
    def is_notification(self) -> bool:
        return self.method is not None and "id" not in self.message

    @property
    def is_response(self) -> bool:
        return self.method is None and "id" in self.message


@dataclass
class Transcript:
    """The messages of a transcript file."""

    path: str
    records: list[Record] = field(default_factory=list)
    skipped: int = 0
    """Records holding no message (start, end, non-JSON, omitted lines)."""

    @property
    def timed(self) -> bool:
        return any(record.time is not None for record in self.records)

    @property
    def protocol_version(self) -> int:
        """The version ``initialize`` negotiated (its answer's, else the
        request's), 1 when the transcript does not say."""
        for record in self.records:
            if record.direction == AGENT and record.is_response:
                result = record.message.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), int):
                    return int(result["protocolVersion"])
        for record in self.records:
            if record.method == "initialize":
                params = record.message.get("params")
                if isinstance(params, dict) and isinstance(params.get("protocolVersion"), int):
                    return int(params["protocolVersion"])
        return 1


def _time(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def load_transcript(path: str | Path) -> Transcript:
    """The messages of the transcript at ``path``; an :class:`AcpgenError`
    naming the line when a line is not JSON or a record's direction is not
    one of the two."""
    transcript = Transcript(str(path))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AcpgenError(f"cannot read the transcript: {error}", file=str(path)) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        script = line.lstrip()[:2]
        if script in ("->", "<-"):
            side = CLIENT if script == "->" else AGENT
            line = f'{{"direction": "{side}", "message": {line.lstrip()[2:]}}}'
        try:
            value = json.loads(line)
        except ValueError as error:
            raise AcpgenError(f"line {number} is not JSON: {error}", file=str(path)) from None
        if not isinstance(value, dict) or "direction" not in value:
            transcript.skipped += 1
            continue
        direction = _DIRECTIONS.get(str(value["direction"]))
        if direction is None:
            raise AcpgenError(f"line {number}: unknown direction {value['direction']!r}", file=str(path))
        message = value.get("message")
        if not isinstance(message, dict):
            transcript.skipped += 1
            continue
        if script in ("->", "<-"):
            message = {"jsonrpc": "2.0", **message}
        record = Record(len(transcript.records), number, direction, message, _time(value.get("timestamp")))
        transcript.records.append(record)
    if not transcript.records:
        raise AcpgenError("the transcript holds no message", file=str(path))
    return transcript


def stamp(when: float) -> str:
    """An RFC 3339 UTC time with microseconds, as ``acpgen tap`` writes."""
    return datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
