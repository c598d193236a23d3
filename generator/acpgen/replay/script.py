"""What both directions of replay share: findings, the run's own
transcript, and the comparison of the recorded and replayed folds."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .fold import fold_messages
from .match import Difference, IdMap, child, rename, volatile
from .transcript import Transcript, stamp


@dataclass
class Finding:
    """One thing the replayed run did differently from the recording."""

    kind: str
    """``differs`` (a message matched, with differences), ``unexpected``
    (a live message the recording has nothing for), ``missing`` (a recorded
    message the live peer never sent), ``fold`` (the folds differ),
    ``tolerated`` (updates racing a cancel: said, never a failure)."""
    message: str
    line: int | None = None
    """The recorded message's line in the transcript, if any."""
    differences: list[Difference] = field(default_factory=list)

    @property
    def failure(self) -> bool:
        return self.kind != "tolerated"

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        text = f"{self.kind}: {where}{self.message}"
        return "\n".join([text, *(f"    {d}" for d in self.differences)])

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.line is not None:
            data["line"] = self.line
        if self.differences:
            data["differences"] = [d.to_json() for d in self.differences]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        differences = [
            Difference(
                d["path"],
                d.get("recorded"),
                d.get("live"),
                "live" if "live" not in d else "recorded" if "recorded" not in d else "",
            )
            for d in data.get("differences", [])
        ]
        return cls(data["kind"], data["message"], data.get("line"), differences)


@dataclass
class ReplayResult:
    """The outcome of one replayed run."""

    findings: list[Finding]
    recorded_fold: dict[str, Any]
    """Each recorded session's ``session_to_json`` snapshot."""
    replayed_fold: dict[str, Any]
    """The replayed run's, its ids put back to the recorded ones."""
    exchanged: int
    """Messages of the replayed run, both directions."""

    @property
    def ok(self) -> bool:
        return not any(finding.failure for finding in self.findings)

    @property
    def fold_equal(self) -> bool:
        return self.recorded_fold == self.replayed_fold

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "foldEqual": self.fold_equal,
            "exchanged": self.exchanged,
            "findings": [finding.to_json() for finding in self.findings],
        }


def plain_diff(recorded: Any, live: Any, path: str = "$") -> list[Difference]:
    """The differences of two JSON values, ids compared as values and
    ``_meta`` left out."""
    found: list[Difference] = []
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key, value in recorded.items():
            if volatile("", key):
                continue
            if key not in live:
                found.append(Difference(child(path, key), value, None, "live"))
            else:
                found += plain_diff(value, live[key], child(path, key))
        found += [
            Difference(child(path, key), None, value, "recorded")
            for key, value in live.items()
            if key not in recorded and not volatile("", key)
        ]
    elif isinstance(recorded, list) and isinstance(live, list):
        for n, (r, v) in enumerate(zip(recorded, live, strict=False)):
            found += plain_diff(r, v, child(path, n))
        found += [Difference(child(path, n), recorded[n], None, "live") for n in range(len(live), len(recorded))]
        found += [Difference(child(path, n), None, live[n], "recorded") for n in range(len(recorded), len(live))]
    elif type(recorded) is not type(live) or recorded != live:
        found.append(Difference(path, recorded, live))
    return found


def compare_folds(
    package: ModuleType,
    recorded: list[tuple[str, dict[str, Any]]],
    live: list[tuple[str, dict[str, Any]]],
    ids: IdMap,
) -> tuple[dict[str, Any], dict[str, Any], Finding | None]:
    """Both folds (the live one with its ids renamed to the recorded ones)
    and, when they differ, the finding that says where."""
    recorded_fold = fold_messages(package, recorded)
    live_fold = fold_messages(package, live)
    names = {str(live_id): str(recorded_id) for recorded_id, live_id in ids.pairs() if isinstance(live_id, str)}
    before, after = recorded_fold.snapshot(), rename(live_fold.snapshot(), names)
    differences = plain_diff(before, after)
    problems = [*recorded_fold.errors, *live_fold.errors]
    finding = None
    if differences or problems:
        what = "the replayed session fold differs from the recorded one"
        if problems:
            what += " (" + "; ".join(problems[:3]) + ")"
        finding = Finding("fold", what, None, differences)
    return before, after, finding


class RunLog:
    """The replayed run as a transcript in ``acpgen tap``'s format, written
    line by line as it goes (when given a path), plus finding records
    (``{"finding": {...}}``) and an end record carrying the id pairs."""

    def __init__(self, path: str | None) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if path else None
        self.traffic: list[tuple[str, dict[str, Any]]] = []
        self._line({"start": stamp(_now()), "recorder": "acpgen replay"})

    def _line(self, value: dict[str, Any]) -> None:
        if self.fd is not None:
            data = (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]

    def message(self, direction: str, message: dict[str, Any]) -> None:
        self.traffic.append((direction, message))
        self._line({"direction": direction, "timestamp": stamp(_now()), "message": message})

    def finding(self, finding: Finding) -> None:
        self._line({"finding": finding.to_json()})

    def end(self, ids: IdMap, unplayed: list[int]) -> None:
        pairs = [[recorded, live] for recorded, live in ids.pairs()]
        self._line({"end": stamp(_now()), "ids": pairs, "unplayed": unplayed})
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _now() -> float:
    import time

    return time.time()


def read_run_log(path: str) -> tuple[list[tuple[str, dict[str, Any]]], list[Finding], IdMap, bool]:
    """What a :class:`RunLog` file holds: the traffic, the findings, the id
    pairs and whether it was ended."""
    traffic: list[tuple[str, dict[str, Any]]] = []
    findings: list[Finding] = []
    ids = IdMap()
    ended = False
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return traffic, findings, ids, ended
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a last line cut short by a kill
        if "direction" in value:
            traffic.append((value["direction"], value["message"]))
        elif "finding" in value:
            findings.append(Finding.from_json(value["finding"]))
        elif "end" in value:
            ended = True
            for recorded, live in value.get("ids", []):
                ids.bind(recorded, live)
    return traffic, findings, ids, ended


def recorded_traffic(transcript: Transcript) -> list[tuple[str, dict[str, Any]]]:
    return [(record.direction, record.message) for record in transcript.records]
