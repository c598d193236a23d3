"""The transcript checker: one pass over the lines, constant memory apart
from the ids it must remember (requests in flight, sessions, started tool
calls).

Each line is read as bytes up to a limit (a longer line is a ``bad-line``
finding, skipped to its end unread), parsed (with orjson when it is
importable, else ``json``; ``ACPGEN_JSON=stdlib`` picks ``json``), and
checked. A message that a compiled JSON Schema validator (jsonschema-rs)
finds valid for its method is taken as it is, its session and tool call ids
read straight from the JSON: such a message has no finding, however the
package's decoders would read it. Any other message goes the slow way, the
package's lenient and strict decoders, which say what is wrong and where.

One cohesive thing, longer than the other modules: the one stateful engine,
its fast and slow paths sharing the state they check against.
"""

from __future__ import annotations

import importlib
import json
import json.scanner
import os
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any, cast

try:  # the fast JSON backend, optional
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None  # type: ignore[assignment]

try:  # a dependency of acpgen; without it every message goes the slow way
    import jsonschema_rs as _jsonschema_rs
except ImportError:  # pragma: no cover - depends on the environment
    _jsonschema_rs = None  # type: ignore[assignment]

KINDS = {
    "bad-line": "the line is not JSON (or not UTF-8, nested too deeply, over the length limit), or not a message in the transcript format",
    "invalid": "the message breaks the schema even for lenient decoding",
    "repaired": "strict validation fails; lenient decoding drops or repairs what the pointer names",
    "unknown-response": "a response to an id no request in flight has",
    "duplicate-id": "a request reuses the id of a request still in flight (same direction)",
    "unknown-session": "a message names a session no session/new, load or resume opened",
    "not-started": "an update for an entity its kind must have started first (v1 tool_call)",
    "protocol-version": "initialize answered a protocol version the client did not ask for or this schema does not speak",
    "unanswered": "a request never answered by the end of the transcript",
    "cut-short": "a transcript acpgen tap started has no end record: the recording was cut short (tap was killed), "
    "what came after its last line is missing",
}
"""Every finding kind and what it means."""

WARNINGS = frozenset({"repaired", "unanswered"})
"""Kinds that are not errors unless ``strict``."""

MAX_LINE_BYTES = 64 << 20
"""The default limit on a line's length (64 MiB, its newline not counted)."""

DIRECTIONS = {
    "client_to_agent": "client_to_agent",
    "client->agent": "client_to_agent",
    "agent_to_client": "agent_to_client",
    "agent->client": "agent_to_client",
}
OPPOSITE = {"client_to_agent": "agent_to_client", "agent_to_client": "client_to_agent"}


@dataclass(frozen=True)
class Finding:
    line: int
    kind: str
    """One of :data:`KINDS`."""
    message: str
    pointer: str = ""
    """RFC 6901 pointer into the line's JSON-RPC message, or ``""``."""
    error: bool = True
    """False for a warning (``repaired``, ``unanswered`` without ``strict``)."""
    direction: str | None = field(default=None, compare=False)
    """``client_to_agent`` or ``agent_to_client``: the direction the line was
    sent in (an ``unanswered`` finding: its request's), None where the
    transcript does not say (a bare message, a line that is not JSON, the
    end of the transcript). Not part of equality."""
    method: str | None = field(default=None, compare=False)
    """The method of the line's message (a response: of the request it
    answers), None where there is none to tell. Not part of equality."""

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "direction": self.direction,
            "method": self.method,
            "kind": self.kind,
            "message": self.message,
            "pointer": self.pointer,
            "error": self.error,
        }

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        label = "error" if self.error else "warning"
        sent = f" ({self.direction})" if self.direction else ""
        return f"line {self.line}{sent}: {label}: {self.kind}{where}: {self.message}"


@dataclass
class Summary:
    """What a whole check saw, filled in when its findings are all read
    (``validate_file(..., summary=Summary())``)."""

    lines: int = 0
    """Lines read, blank ones included."""
    messages: int = 0
    """Lines that hold a JSON value meant as a message: not blank, not a
    ``bad-line`` that is not JSON, not a recorder's start, end or
    unparsed-line record."""
    findings: dict[str, int] = field(default_factory=dict)
    """kind -> how many (the caller counts them; see :meth:`count`)."""
    errors: int = 0
    warnings: int = 0

    def count(self, finding: Finding) -> None:
        self.findings[finding.kind] = self.findings.get(finding.kind, 0) + 1
        if finding.error:
            self.errors += 1
        else:
            self.warnings += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": {
                "lines": self.lines,
                "messages": self.messages,
                "findings": dict(sorted(self.findings.items())),
                "errors": self.errors,
                "warnings": self.warnings,
                "clean": self.errors == 0,
            }
        }


def pointer(segments: Iterable[str | int]) -> str:
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def json_backend() -> str:
    """``"orjson"`` when orjson is importable and ``ACPGEN_JSON`` is not
    ``stdlib``, else ``"stdlib"``: the parser validation uses (both give the
    same values and findings; orjson is faster)."""
    if _orjson is None or os.environ.get("ACPGEN_JSON", "").strip().lower() == "stdlib":
        return "stdlib"
    return "orjson"


def validate_file(
    path: str | Path,
    package: ModuleType,
    *,
    strict: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    summary: Summary | None = None,
) -> Iterator[Finding]:
    """The findings of a transcript file, read line by line as bytes: a line
    that is not UTF-8, is nested too deeply to parse, or is longer than
    ``max_line_bytes`` (read no further than that, then skipped to its
    newline) is a ``bad-line`` finding, and checking goes on. Lines end at
    ``\\n`` (a ``\\r`` before it is JSON whitespace).

    A file that is one JSON array (its first line that is not blank starts
    with ``[`` and is not a JSON value by itself, as when the array is
    written over many lines) is one ``bad-line`` finding saying that JSON
    Lines is expected, not one a line. ``summary``, when given, is filled in
    (lines, messages, each finding counted) once the findings are all read."""
    _check_limit(max_line_bytes)
    with open(path, "rb", buffering=1 << 20) as lines:
        array = _json_array(lines, max_line_bytes)
        if array is not None:
            found = Finding(array, "bad-line", JSON_ARRAY)
            if summary is not None:
                summary.lines = sum(1 for _ in _file_lines(lines, max_line_bytes)) + array
                summary.count(found)
            yield found
            return
        checker = _Checker(package, strict)
        for finding in checker.run(_file_lines(lines, max_line_bytes), max_line_bytes):
            if summary is not None:
                summary.count(finding)
            yield finding
        if summary is not None:
            summary.lines, summary.messages = checker.lines, checker.parsed - checker.records


JSON_ARRAY = "expected JSON Lines (one message per line); this file is a JSON array"
"""The finding of a file that is one JSON array."""


def _json_array(stream: IO[bytes], limit: int) -> int | None:
    """The line number of the first line that is not blank when it starts a
    JSON array that goes on over more lines (``[`` alone, or ``[`` and the
    first items, which is no JSON value by itself); else None, and
    ``stream`` is back at its start. Otherwise ``stream`` is left after
    that line. A stream that cannot seek (a pipe) is not looked at."""
    if not stream.seekable():
        return None
    number = 0
    for line in _file_lines(stream, limit):
        number += 1
        if isinstance(line, _TooLong):
            break
        text = line.strip()
        if not text:
            continue
        if text[:1] == b"[" and type(_parse(line)) is str:
            return number
        break
    stream.seek(0)
    return None


def validate_lines(
    lines: Iterable[str | bytes], package: ModuleType, *, strict: bool = False, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[Finding]:
    """The findings of a transcript: one JSON value per line, either a bare
    JSON-RPC message or ``{"direction": "client_to_agent" | "agent_to_client",
    "message": {...}}`` (``client->agent`` and ``agent->client`` also read).
    Blank lines are skipped. ``strict`` makes warnings errors. A line (str
    or bytes) longer than ``max_line_bytes`` in UTF-8 is a ``bad-line``
    finding and is not parsed."""
    _check_limit(max_line_bytes)
    yield from _validate(_limited(lines, max_line_bytes), package, strict, max_line_bytes)


def _check_limit(max_line_bytes: int) -> None:
    if type(max_line_bytes) is not int or max_line_bytes < 1:
        raise ValueError(f"max_line_bytes must be a positive integer, not {max_line_bytes!r}")


class _TooLong:
    """What a reader yields for a line over the limit."""


_TOO_LONG = _TooLong()
_Line = str | bytes | _TooLong


def within(line: str | bytes, limit: int) -> _Line:
    """``line``, or ``_TOO_LONG`` when it is longer than ``limit`` bytes of
    UTF-8 (its line ending not counted)."""
    size = len(line)
    if size > limit // 4 and type(line) is str:  # a character is at most 4 bytes of UTF-8
        size = len(line.encode("utf-8", "surrogatepass"))
    if size > limit and size - _newline(line) > limit:
        return _TOO_LONG
    return line


def _file_lines(stream: IO[bytes], limit: int) -> Iterator[bytes | _TooLong]:
    """The lines of ``stream``, each read with at most ``limit`` bytes of
    content held: a longer line yields ``_TOO_LONG`` (before the rest of it
    is read), and is then read through to its newline in bounded chunks."""
    readline = stream.readline
    size = limit + 1  # the content, and its newline
    while True:
        line = readline(size)
        if len(line) < size or line[-1] == 10:  # 10: "\n"; a whole line, or the last
            if not line:
                return
            yield line
            continue
        yield _TOO_LONG
        while True:
            rest = readline(1 << 16)
            if not rest or rest[-1] == 10:
                break


def _limited(lines: Iterable[str | bytes], limit: int) -> Iterator[_Line]:
    for line in lines:
        yield within(line, limit)


def _newline(line: str | bytes) -> int:
    """The length of ``line``'s line ending."""
    if isinstance(line, str):
        return 2 if line.endswith("\r\n") else 1 if line.endswith("\n") else 0
    return 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0


_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
"""A ``bytes.translate`` table: digits stay, everything else is a space."""
_LONG_NUMBER = b"0" * 19
"""19 digits in a row: orjson reads an integer outside the 64-bit ranges as a
float where ``json`` keeps it exact, so such a line is parsed by ``json``."""


class _Unparsed:
    """What a line that is not a JSON value parses to (see ``_parse``)."""


_BLANK = _Unparsed()


def _validate(lines: Iterable[_Line], package: ModuleType, strict: bool, limit: int) -> Iterator[Finding]:
    return _Checker(package, strict).run(lines, limit)


class _Pause:
    """What a fed source (``Validator``) gives when it holds no line: the
    engine then yields :data:`PAUSED` and waits for the next line."""


PAUSE = _Pause()
PAUSED = Finding(0, "", "")
"""What the engine yields when its source paused (``PAUSE``): not a finding."""


def _parse(raw: str | bytes | _TooLong) -> Any:
    """``json.loads`` of a line: its value (wrapped in a 1-tuple, so that a
    JSON string is not taken for an explanation), ``_BLANK`` for a blank
    line, or a str saying why the line is not JSON."""
    assert not isinstance(raw, _TooLong)
    if type(raw) is bytes:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} ({exc.reason})"
    else:
        text = raw  # type: ignore[assignment]
    try:
        return _Value(json.loads(text))
    except RecursionError:
        return "nested too deeply to parse"
    except ValueError as exc:
        if not text.strip():
            return _BLANK
        return f"not JSON: {exc}"


_SCAN: Any = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
"""What ``json.loads`` runs once it has skipped leading whitespace:
``(value, end)`` of the JSON value at an index (C, where ``_json`` is)."""


class _Value:
    """A value ``_parse`` read (``_Checker.line`` unwraps it)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_PLANS: weakref.WeakKeyDictionary[ModuleType, _Plan] = weakref.WeakKeyDictionary()
_UNMAPPED = object()
"""A field whose wire name the plan could not tell."""


def _plan(package: ModuleType) -> _Plan | None:
    if _jsonschema_rs is None or not hasattr(package, "codec"):
        return None
    try:
        return _PLANS[package]
    except KeyError:
        pass
    try:
        plan: _Plan | None = _Plan(package)
    except Exception:  # a package of another shape: every message goes the slow way
        plan = None
    if plan is not None and _has_patterns(plan.defs):
        plan = None
    if plan is not None:
        _PLANS[package] = plan
    return plan


def _has_patterns(schema: Any) -> bool:
    """Whether the schema has a ``pattern`` or ``patternProperties``: a
    regular expression jsonschema-rs reads as ECMA-262 and strict decoding as
    Python's ``re``, which can disagree (``\\d`` and ``\\w`` on non-ASCII, say).
    Then there is no fast path. (The ACP schemas have none.)"""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str) or isinstance(node.get("patternProperties"), dict):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


class _Plan:
    """What the fast path needs of one package: for each method whose
    messages it may take as they are, the definition its params (and its
    result) are validated against, and the wire names of the members the
    stateful checks read (``sessionId``; for session/update the update, its
    tag and the key of each kind). Methods that change the checker's state
    in other ways (initialize, the session sources) are left out: the slow
    way checks them, as it checks every message the validator refuses."""

    def __init__(self, package: ModuleType) -> None:
        from ..compile.passes.naming import field_name

        self._field_name = field_name
        # By module name: a schema type may take the package's ``codec``
        # attribute, and the codec holds the schema under a private name.
        codec = importlib.import_module(f"{package.__name__}.codec")
        schema = importlib.import_module(f"{package.__name__}._schema")
        self.defs: dict[str, Any] = json.loads(schema.SCHEMA_JSON)
        self.pointers: dict[str, str] = {name: entry[1] for name, entry in codec._DECODERS.items()}
        self.classes: dict[str, type] = {entry[1]: cls for cls, entry in codec._CLASS_DECODERS.items()}
        self.class_pointers: dict[type, str] = dict(codec._POINTERS)
        self.numbers_exact = _numbers_exact(self.defs)
        """Whether no keyword of the schema can tell an integer beyond 64 bits
        from the float orjson reads it as (see ``_numbers_exact``)."""
        sources = {method for method, _ in getattr(package, "SESSION_SOURCES", ())}
        skip = sources | {"initialize", "session/new"}
        self.requests: dict[str, list[Any]] = {}
        """method -> [the params validator's ``is_valid`` (None until compiled),
        the params definition, the wire name of its session id or None]"""
        self.notifications: dict[str, list[Any]] = {}
        self.results: dict[str, list[Any]] = {}
        """method -> [the result validator's ``is_valid`` or None, the result definition]"""
        for method, info in package.METHODS.items():
            if method in skip:
                continue
            for kind, table in ((info.request, self.requests), (info.notification, self.notifications)):
                if kind is None:
                    continue
                session = self.wire(self.pointers[kind.params_name], "session_id")
                if session is _UNMAPPED:
                    continue
                table[method] = [None, kind.params_name, session]
                if kind is info.request:
                    self.results[method] = [None, info.request.result_name]
        self.update = self._update_plan(package)
        """For session/update: (the wire names of the session id, of the update
        and of its tag; {tag: (the entity's Session field, the wire name of its
        key, the tag, whether it starts entities, the kinds that must have
        started it joined by " or ", or None) or None for a kind without a
        key}; the same for a tag of none of them), or None: session/update
        goes the slow way."""
        if self.update is None:
            self.notifications.pop("session/update", None)

    def compile(self, entry: list[Any]) -> Any:
        """The ``is_valid`` of ``entry``'s definition, compiled once."""
        if entry[0] is None:
            schema = {"$ref": self.pointers[entry[1]], "$defs": self.defs}
            entry[0] = _jsonschema_rs.validator_for(schema).is_valid
        return entry[0]

    def node(self, pointer: str) -> Any:
        node: Any = {"$defs": self.defs}
        for part in pointer.lstrip("#").split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def properties(self, pointer: str, seen: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The members an object schema names, through ``allOf`` and ``$ref``."""
        if pointer in seen:
            return {}
        node = self.node(pointer)
        members: dict[str, Any] = {}
        if not isinstance(node, dict):
            return members
        inner: list[str] = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        inner += [
            part["$ref"]
            for part in node.get("allOf", [])
            if isinstance(part, dict) and isinstance(part.get("$ref"), str)
        ]
        for index, part in enumerate(node.get("allOf", [])):
            if isinstance(part, dict) and "$ref" not in part:
                members.update(self.properties(f"{pointer}/allOf/{index}", seen | {pointer}))
        for ref in inner:
            members.update(self.properties(ref, seen | {pointer}))
        members.update(node.get("properties", {}))
        return members

    def wire(self, pointer: str, attribute: str, cls: type | None = None) -> str | object | None:
        """The wire name of ``attribute`` of the class decoded at ``pointer``;
        None when the class has no such attribute (``getattr`` gives None);
        ``_UNMAPPED`` when that cannot be told for sure."""
        cls = cls or self.classes.get(pointer)
        fields = getattr(cls, "__dataclass_fields__", None)
        if cls is None or fields is None:
            return _UNMAPPED
        if attribute not in fields:
            return _UNMAPPED if hasattr(cls, attribute) else None
        names = [wire for wire in self.properties(pointer) if self._field_name(wire) == attribute]
        return names[0] if len(names) == 1 else _UNMAPPED

    def _update_plan(self, package: ModuleType) -> Any:
        info = package.METHODS.get("session/update")
        rules = getattr(package, "UPDATE_RULES", {})
        if info is None or info.notification is None or not rules:
            return None
        params = self.pointers[info.notification.params_name]
        update, session = self.wire(params, "update"), self.wire(params, "session_id")
        if not isinstance(update, str) or not isinstance(session, str):
            return None
        starters = {tag for rule in rules.values() for tag in rule.started_by}
        tags: dict[str, Any] = {}
        tag_name: str | None = None
        other: Any = None
        for cls, rule in rules.items():
            pointer = self.class_pointers.get(cls)
            if pointer is None:
                return None
            key = self.wire(pointer, rule.key, cls) if rule.key else None
            if key is _UNMAPPED:
                return None
            kind = (
                None
                if key is None
                else (rule.field, key, rule.tag, rule.tag in starters, " or ".join(rule.started_by) or None)
            )
            if rule.tag is None:
                other = kind
                continue
            named = [
                name
                for name, schema in self.node(pointer).get("properties", {}).items()
                if isinstance(schema, dict) and schema.get("const") == rule.tag
            ]
            if len(named) != 1 or tag_name not in (None, named[0]):
                return None
            tag_name = named[0]
            tags[rule.tag] = kind
        if tag_name is None:
            return None
        return session, update, tag_name, tags, other


def _numbers_exact(schema: Any) -> bool:
    """Whether validating a float that orjson read from an integer literal
    beyond 64 bits (``18446744073709551616`` -> ``1.8446744073709552e19``)
    gives what validating the exact integer gives: the float is integral and
    as far beyond 2**53 as the integer, so types and small bounds see no
    difference; ``multipleOf``, and a bound, ``const`` or ``enum`` number
    of 2**53 or more could. Then orjson's value is as good as ``json``'s for
    the fast path (the slow way parses the line again with ``json``); else
    a line with 19 digits in a row is parsed with ``json``."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "multipleOf" in node:
                return False
            for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const"):
                if _big(node.get(keyword)):
                    return False
            if isinstance(node.get("enum"), list) and any(_big(value) for value in node["enum"]):
                return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def _big(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 2**53


_MISSING = object()


class _Checker:
    def __init__(self, package: ModuleType, strict: bool) -> None:
        self.p = package
        self.strict = strict
        self.pending: dict[tuple[str | None, Any], tuple[str, int, bool]] = {}
        """(direction, id) -> (method, line, whether the request was invalid)"""
        self.sessions: set[str] = set()
        self.started: set[tuple[Any, str, str]] = set()
        self.requested_version: Any = None
        self.rules = getattr(package, "UPDATE_RULES", {})
        self.starters = {tag for rule in self.rules.values() for tag in rule.started_by}
        self.sources: dict[tuple[str, str], bool] = {s: True for s in getattr(package, "SESSION_SOURCES", ())}
        self.version = getattr(package, "PROTOCOL_VERSION", None)
        self.track_sessions = bool(self.sources)
        self.plan = _plan(package)
        """The fast path's plan, or None: every message goes the slow way."""
        self.recording: int | None = None
        """The line of the recorder's start record (``acpgen tap``), if any."""
        self.ended = False
        """Whether the recorder's end record came after it."""
        self.current: Any = None
        """The value of the line being checked (None: not JSON), which a
        finding's direction and method are read from."""
        self.lines = 0
        """The lines read, once the run is over."""
        self.parsed = 0
        """The lines that held a JSON value."""
        self.records = 0
        """Of those, the recorder's records that are no message."""

    def finding(
        self,
        line: int,
        kind: str,
        message: str,
        at: str = "",
        *,
        method: str | None = None,
        direction: str | None = None,
    ) -> Finding:
        """A finding of ``line``, the line being checked: its direction and
        method read from the line (a response's method: the request's in
        flight) unless given."""
        data = self.current
        if direction is None and type(data) is dict and "jsonrpc" not in data:
            named = data.get("direction")
            direction = DIRECTIONS.get(named) if type(named) is str else None
            data = data.get("message")
        if method is None and type(data) is dict:
            named = data.get("method")
            if type(named) is str:
                method = named
            elif "method" not in data and direction is not None:
                request_id = data.get("id")
                if type(request_id) is int or type(request_id) is str:
                    waiting = self.pending.get((OPPOSITE[direction], request_id))
                    method = waiting[0] if waiting is not None else None
        return Finding(
            line, kind, message, at, error=self.strict or kind not in WARNINGS, direction=direction, method=method
        )

    def run(self, lines: Iterable[_Line | _Pause], limit: int, first: int = 1) -> Iterator[Finding]:
        """The findings of the lines (numbered from ``first``), then of the
        end of the transcript. A source that gives ``PAUSE`` (``Validator``)
        gets ``PAUSED`` back, and the next line is read when the engine is
        resumed: the state it checks against lives in the checker, so a new
        run picks up where a failed one stopped.

        The loop holds the fast path: a line orjson (or json) parses into a
        message with a well-formed envelope, of a method the plan has, whose
        params (or result, by the method of the request it answers) the
        compiled validator finds valid, is checked here with the ids read
        straight from the JSON. Anything else goes to :meth:`line`, the slow
        way (parsed again with ``json`` if orjson read it), which says what
        is wrong and where."""
        plan = self.plan
        loads = _orjson.loads if _orjson is not None and json_backend() == "orjson" else None
        refused: type[Exception] = _orjson.JSONDecodeError if loads is not None else ValueError
        exact = plan is not None and plan.numbers_exact
        scan = _SCAN
        requests = plan.requests if plan is not None else {}
        notifications = plan.notifications if plan is not None else {}
        results = plan.results if plan is not None else {}
        update_plan = plan.update if plan is not None and self.rules else None
        session_name = update_name = tag_name = None
        tags: dict[str, Any] = {}
        other = None
        if update_plan is not None:
            session_name, update_name, tag_name, tags, other = update_plan
        compile_ = plan.compile if plan is not None else None
        pending, sessions, started = self.pending, self.sessions, self.started
        track = self.track_sessions
        finding = self.finding
        too_long = f"line too long: over {limit} bytes (the limit, --max-line-bytes); skipped unread"
        number = first - 1
        held = 0  # the lines that held a JSON value
        for item in lines:
            if isinstance(item, _Pause):
                yield PAUSED
                continue
            raw: _Line = item
            number += 1
            if raw is _TOO_LONG:
                self.current = None  # (set here, not each line: only a finding reads it)
                yield finding(number, "bad-line", too_long)
                continue
            data: Any = _BLANK
            if loads is not None:
                if type(raw) is str:
                    # try/except, not contextlib.suppress: this runs once a line.
                    try:  # noqa: SIM105
                        raw = raw.encode("utf-8")
                    except UnicodeEncodeError:  # a lone surrogate: json reads it
                        pass
                if type(raw) is bytes and (exact or _LONG_NUMBER not in raw.translate(_DIGITS)):
                    try:  # noqa: SIM105 (once a line)
                        data = loads(raw)
                    except refused:  # json decides, and explains
                        pass
            if data is not _BLANK:
                again = True
            else:
                again = False
                try:  # json.loads, less its Python layers
                    text = raw.decode("utf-8") if isinstance(raw, bytes) else cast(str, raw)
                    data, end = scan(text, 0)
                    if end != len(text) and text[end:].strip(" \t\n\r"):  # json's whitespace
                        data = _BLANK
                except Exception:  # json.loads explains it
                    data = _BLANK
                if data is _BLANK:
                    data = _parse(raw)
                    if type(data) is str:  # why the line is not JSON
                        self.current = None
                        yield finding(number, "bad-line", data)
                        continue
                    if data is _BLANK:
                        continue
                    data = data.value
            held += 1
            self.current = data
            # ---- the fast path
            message, direction = data, None
            if type(data) is dict and "message" in data and "jsonrpc" not in data:
                named = data.get("direction")
                direction = DIRECTIONS.get(named) if type(named) is str else None
                message = data["message"] if direction is not None or "direction" not in data else None
            if type(message) is dict and message.get("jsonrpc") == "2.0":
                method = message.get("method", _MISSING)
                if method is _MISSING:  # a response
                    request_id = message.get("id")
                    if (
                        "result" in message
                        and "error" not in message
                        and (type(request_id) is int or type(request_id) is str)
                    ):
                        key = (None if direction is None else OPPOSITE[direction], request_id)
                        waiting = pending.get(key)
                        entry = results.get(waiting[0]) if waiting is not None and not waiting[2] else None
                        if entry is not None:
                            try:
                                valid = (entry[0] or compile_(entry))(message["result"])  # type: ignore[misc]
                            except Exception:  # a value it cannot take: the slow way decides
                                valid = False
                            if valid:
                                del pending[key]
                                continue
                elif type(method) is str and "result" not in message and "error" not in message:
                    params = message.get("params")
                    if "id" in message:
                        request_id = message["id"]
                        entry = requests.get(method)
                        if entry is not None and (type(request_id) is int or type(request_id) is str):
                            if params is None:  # a request's absent params read as {}
                                params = {}
                            try:
                                valid = (entry[0] or compile_(entry))(params)  # type: ignore[misc]
                            except Exception:
                                valid = False
                            if valid:
                                key = (direction, request_id)
                                if key in pending:
                                    first_method, first, _ = pending[key]
                                    yield finding(
                                        number,
                                        "duplicate-id",
                                        f"id {request_id!r} is still in flight ({first_method}, line {first})",
                                        "/id",
                                    )
                                pending[key] = (method, number, False)
                                if track and entry[2] is not None and type(params) is dict:
                                    session = params.get(entry[2])
                                    if type(session) is str and session not in sessions:
                                        yield self._unknown_session(number, method, session)
                                continue
                    else:
                        entry = notifications.get(method)
                        if entry is not None:
                            try:
                                valid = (entry[0] or compile_(entry))(params)  # type: ignore[misc]
                            except Exception:
                                valid = False
                            if valid:
                                if track and entry[2] is not None and type(params) is dict:
                                    session = params.get(entry[2])
                                    if type(session) is str and session not in sessions:
                                        yield self._unknown_session(number, method, session)
                                if update_plan is not None and method == "session/update" and type(params) is dict:
                                    update = params.get(update_name)
                                    if type(update) is dict:
                                        tag = update.get(tag_name)
                                        kind = tags.get(tag, other) if type(tag) is str else other
                                        if kind is not None:
                                            field, key_name, label, starts, needs = kind
                                            name = update.get(key_name)
                                            if type(name) is str:
                                                entity = (params.get(session_name), field, name)
                                                if starts:
                                                    started.add(entity)
                                                if needs is not None and entity not in started:
                                                    yield finding(
                                                        number,
                                                        "not-started",
                                                        f"{label} for {name!r}, which no {needs} started",
                                                        "/params/update",
                                                    )
                                continue
            # ---- the slow way
            if again:
                parsed = _parse(raw)
                if type(parsed) is str:  # cannot be: json reads what orjson reads
                    yield finding(number, "bad-line", parsed)
                    continue
                data = parsed.value
            try:
                found = self.line(number, data)
            except RecursionError:
                found = [finding(number, "bad-line", "the message is nested too deeply to check")]
            if found:
                yield from found
        self.lines, self.parsed = number, self.parsed + held
        self.current = None
        yield from self.end(number)

    def line(self, n: int, data: Any) -> list[Finding]:
        """The findings of one parsed line, the slow way."""
        direction = None
        if isinstance(data, dict) and "message" not in data and "jsonrpc" not in data and "direction" in data:
            return self.unparsed(n, data)
        if isinstance(data, dict) and "jsonrpc" not in data and "message" not in data:
            if isinstance(data.get("start"), str):  # the recorder's start record
                self.recording, self.ended = n, False
                self.records += 1
                return []
            if isinstance(data.get("end"), str):  # and its end record
                self.ended = True
                self.records += 1
                return []
        if isinstance(data, dict) and "message" in data and "jsonrpc" not in data:
            named = data.get("direction")
            direction = DIRECTIONS.get(named) if isinstance(named, str) else None
            if "direction" in data and direction is None:
                return [self.finding(n, "bad-line", f"unknown direction {data.get('direction')!r}", "")]
            data = data["message"]
        return list(self.slow(n, direction, data))

    def unparsed(self, n: int, data: dict[str, Any]) -> list[Finding]:
        """A record of a line that was not a JSON value (``acpgen tap``
        writes them): ``{"direction": ..., "line": TEXT}``, its text (bytes
        that were not UTF-8 as the surrogates of Python's
        ``surrogateescape``), checked as the line itself; or ``{"direction":
        ..., "omitted": N}``, a line of N bytes over the recorder's limit."""
        self.records += 1
        named = data.get("direction")
        direction = DIRECTIONS.get(named) if isinstance(named, str) else None
        if direction is None:
            return [self.finding(n, "bad-line", f"unknown direction {named!r}", "")]
        text, omitted = data.get("line"), data.get("omitted")
        if type(omitted) is int and text is None:
            return [
                self.finding(n, "bad-line", f"line too long: {omitted} bytes, over the recording's limit; not recorded")
            ]
        if type(text) is not str:
            return [self.finding(n, "bad-line", "a record with neither a message nor a line", "")]
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate surrogateescape did not make
            raw = text.encode("utf-8", "surrogatepass")
        parsed = _parse(raw)
        if type(parsed) is str:
            return [self.finding(n, "bad-line", parsed)]
        if parsed is _BLANK:
            return []
        return list(self.slow(n, direction, parsed.value))

    def _entity(self, n: int, rule: Any, key: str, entity: tuple[Any, str, str], found: list[Finding]) -> None:
        if rule.tag in self.starters:
            self.started.add(entity)
        if rule.started_by and entity not in self.started:
            starters = " or ".join(rule.started_by)
            found.append(
                self.finding(n, "not-started", f"{rule.tag} for {key!r}, which no {starters} started", "/params/update")
            )

    def _unknown_session(self, n: int, method: str, session_id: str) -> Finding:
        return self.finding(
            n, "unknown-session", f"{method} for session {session_id!r}, never opened", "/params/sessionId"
        )

    def slow(self, n: int, direction: str | None, data: Any) -> Iterator[Finding]:
        p = self.p
        try:
            message = self.fast(data)
            if message is None:
                message = p.decode_message(data, strict=True)
        except p.ValidationError as exc:
            try:
                message = p.decode_message(data, strict=False)
            except p.ValidationError as lenient:
                yield self.finding(n, "invalid", lenient.message, _pointer_of(lenient))
                yield from self.invalid_request(n, direction, data)
                return
            yield self.finding(n, "repaired", _repair_note(exc, message, data), _pointer_of(exc))
        if isinstance(message, p.Request):
            yield from self.request(n, direction, message)
        elif isinstance(message, p.Notification):
            yield from self.session_check(n, message.method, message.params)
            if message.method == "session/update" and self.rules:
                yield from self.update(n, message.params)
        else:
            yield from self.response(n, direction, message)

    def fast(self, data: Any) -> Any:
        """The message, when lenient decoding keeps every member of it as it
        is (its re-encoding holds the input unchanged): then no member was
        dropped or repaired, and the slow strict validation is skipped unless
        ``strict``. None: validate strictly."""
        if self.strict:
            return None
        try:
            message = self.p.decode_message(data)
        except self.p.ValidationError:
            return None
        try:
            kept = self.p.encode_message(message)
        except (ValueError, RecursionError):  # nested too deeply to encode
            return None
        if _same(data, kept):
            return message
        return None

    def fast_result(self, method: str, data: Any) -> Any:
        if self.strict:
            return None
        try:
            result = self.p.decode_result(method, data)
        except self.p.ValidationError:
            return None
        try:
            kept = self.p.encode(result)
        except (ValueError, RecursionError):
            return None
        if _same(data, kept):
            return result
        return None

    def invalid_request(self, n: int, direction: str | None, data: Any) -> Iterator[Finding]:
        """An invalid message with a method and a usable id is a request in
        flight all the same, so that the peer's (error) reply closes it."""
        if type(data) is not dict or "method" not in data or "id" not in data:
            return
        request_id = data["id"]
        if type(request_id) is float and request_id.is_integer():
            request_id = int(request_id)
        if type(request_id) is not int and type(request_id) is not str:
            return
        method = data["method"]
        label = method if type(method) is str else "a request with no method name"
        key = (direction, request_id)
        if key in self.pending:
            first_method, first, _ = self.pending[key]
            yield self.finding(
                n, "duplicate-id", f"id {request_id!r} is still in flight ({first_method}, line {first})", "/id"
            )
        self.pending[key] = (label, n, True)

    def request(self, n: int, direction: str | None, message: Any) -> Iterator[Finding]:
        key = (direction, message.id)
        if key in self.pending:
            method, first, _ = self.pending[key]
            yield self.finding(
                n, "duplicate-id", f"id {message.id!r} is still in flight ({method}, line {first})", "/id"
            )
        self.pending[key] = (message.method, n, False)
        if message.method == "initialize":
            self.requested_version = getattr(message.params, "protocol_version", None)
        if (message.method, "params") in self.sources:
            session_id = getattr(message.params, "session_id", None)
            if isinstance(session_id, str):
                self.sessions.add(session_id)
        elif message.method != "session/new":
            yield from self.session_check(n, message.method, message.params)

    def session_check(self, n: int, method: str, params: Any) -> Iterator[Finding]:
        session_id = getattr(params, "session_id", None)
        if (
            self.track_sessions
            and isinstance(session_id, str)
            and session_id not in self.sessions
            and (method, "params") not in self.sources
        ):
            yield self._unknown_session(n, method, session_id)

    def update(self, n: int, params: Any) -> Iterator[Finding]:
        update = params.update
        rule = self.rules.get(type(update))
        if rule is None or not rule.key:
            return
        key = getattr(update, rule.key)
        if not isinstance(key, str):
            return
        found: list[Finding] = []
        self._entity(n, rule, key, (params.session_id, rule.field, key), found)
        yield from found

    def response(self, n: int, direction: str | None, message: Any) -> Iterator[Finding]:
        found = (OPPOSITE[direction] if direction is not None else None, message.id)
        if found not in self.pending:
            if message.id is not None:
                yield self.finding(n, "unknown-response", f"no request with id {message.id!r} is in flight", "/id")
            return
        method, _, invalid = self.pending.pop(found)
        if not isinstance(message, self.p.Response) or invalid:
            return
        p = self.p
        try:
            result = self.fast_result(method, message.result)
            if result is None:
                result = p.decode_result(method, message.result, strict=True)
        except p.ValidationError as exc:
            try:
                result = p.decode_result(method, message.result, strict=False)
            except p.ValidationError as lenient:
                yield self.finding(
                    n,
                    "invalid",
                    f"{method} result: {lenient.message}",
                    "/result" + _pointer_of(lenient),
                    method=method,
                )
                return
            yield self.finding(
                n, "repaired", f"{method} result: {exc.message}", "/result" + _pointer_of(exc), method=method
            )
        if (method, "result") in self.sources:
            session_id = getattr(result, "session_id", None)
            if isinstance(session_id, str):
                self.sessions.add(session_id)
        if method == "initialize":
            yield from self.initialized(n, getattr(result, "protocol_version", None))

    def initialized(self, n: int, answered: Any) -> Iterator[Finding]:
        if not isinstance(answered, int):
            return
        if isinstance(self.requested_version, int) and answered > self.requested_version:
            yield self.finding(
                n,
                "protocol-version",
                f"the agent answered version {answered}, newer than the {self.requested_version} asked for",
                "/result/protocolVersion",
                method="initialize",
            )
        elif self.version is not None and answered != self.version:
            yield self.finding(
                n,
                "protocol-version",
                f"the agent answered version {answered}; this schema speaks {self.version}",
                "/result/protocolVersion",
                method="initialize",
            )

    def end(self, last: int) -> Iterator[Finding]:
        if self.recording is not None and not self.ended:
            turns = sorted(line for (method, line, _invalid) in self.pending.values() if method == "session/prompt")
            if turns:
                what = f"the transcript ends mid-turn (the session/prompt of line {turns[-1]} has no response)"
            else:
                what = "the transcript ends"
            yield self.finding(
                last,
                "cut-short",
                f"{what} with no end record after line {last}: the recording (started at line {self.recording}) "
                "was cut short, and what came after is missing",
            )
        for (direction, request_id), (method, line, invalid) in self.pending.items():
            what = f"the invalid {method} request" if invalid else method
            yield self.finding(
                line,
                "unanswered",
                f"{what} (id {request_id!r}) has no response by line {last}",
                "/id",
                method=method if not invalid or method != "a request with no method name" else None,
                direction=direction,
            )


def _pointer_of(error: Any) -> str:
    inner = getattr(error, "error", None)
    if inner is not None:  # params that do not decode: the path is inside params
        return "/params" + pointer(inner.segments)
    return pointer(error.segments)


def _repair_note(error: Any, message: Any, data: Any) -> str:
    """What lenient decoding did, by comparing its re-encoding with the input."""
    params = getattr(message, "params", None)
    encode = getattr(message, "params", None) is not None and hasattr(params, "__dataclass_fields__")
    if not encode or not isinstance(data, dict):
        return f"{error.message} (lenient decoding accepts it)"
    try:
        kept = _encode(params)
    except (ValueError, RecursionError):
        return f"{error.message} (lenient decoding accepts it)"
    changed = list(_differences(data.get("params"), kept, ("params",)))
    what = ", ".join(changed[:5]) or "nothing visible"
    return f"{error.message}; lenient decoding dropped or changed: {what}"


def _encode(value: Any) -> Any:
    from importlib import import_module

    return import_module(type(value).__module__.rsplit(".", 1)[0]).encode(value)


def _same(original: Any, kept: Any) -> bool:
    """Whether ``_differences`` finds none: equal values first (one C-level
    comparison), the walk only when they are not."""
    try:
        if original == kept:
            return True
    except RecursionError:
        pass
    return next(_differences(original, kept, ()), None) is None


def _differences(original: Any, kept: Any, at: tuple[str | int, ...]) -> Iterator[str]:
    """Pointers to the members of ``original`` that ``kept`` drops or changes
    (members ``kept`` adds, such as defaults, are not differences). The
    pointer of a member is built only when it differs."""
    if isinstance(original, dict) and isinstance(kept, dict):
        for key, value in original.items():
            if key not in kept:
                yield pointer((*at, key))
            else:
                other = kept[key]
                if value is other or (type(value) is type(other) and type(value) in _SCALARS and value == other):
                    continue
                yield from _differences(value, other, (*at, key))
    elif isinstance(original, list) and isinstance(kept, list):
        if len(original) != len(kept):
            yield pointer(at)
        else:
            for index, (a, b) in enumerate(zip(original, kept, strict=False)):
                yield from _differences(a, b, (*at, index))
    elif original != kept:
        yield pointer(at)


_SCALARS = frozenset({str, int, bool, type(None)})
