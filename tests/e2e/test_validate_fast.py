"""acpgen validate's fast path and its JSON backends change no finding.

The fast path takes a message the compiled validator (jsonschema-rs) finds
valid for its method as it is, reading its ids straight from the JSON; the
slow way decodes every message with the package. Property tests draw
transcripts of mostly valid, sometimes broken messages of every method of
each package and check that the two report the same findings, with orjson
and with ``json``; and that orjson (behind its guards) reads every line as
``json`` does.
"""

from __future__ import annotations

import importlib.util
import json
import math

import pytest
from acpgen.validate import checker, validate_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import SCHEMAS, examples, load_generated
from ..session_strategies import update as valid_update
from ..strategies import ANY_JSON, INTERESTING_INTS, valid_values, values

HAS_ORJSON = importlib.util.find_spec("orjson") is not None
BACKENDS = ["orjson", "stdlib"] if HAS_ORJSON else ["stdlib"]
ROOTS = {name: json.loads(path.read_text()) for name, path in SCHEMAS.items()}
SESSIONS = ["s1", "s2", "nobody"]


def slow_findings(lines, package, strict, monkeypatch):
    """The findings with the fast path off: every message decoded by the package."""
    with monkeypatch.context() as patch:
        patch.setattr(checker, "_plan", lambda package: None)
        patch.setenv("ACPGEN_JSON", "stdlib")
        return list(validate_lines(lines, package, strict=strict))


def findings(lines, package, strict, backend, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setenv("ACPGEN_JSON", backend)
        return list(validate_lines(lines, package, strict=strict))


@st.composite
def transcripts(draw, name: str):
    """Lines of a transcript for package ``name``: an opening (initialize,
    session/new answered with a session id), then requests, notifications
    and responses of its methods with params and results drawn from the
    schema (mostly valid, sometimes not), session ids from a small pool,
    replies to ids in flight or not, and now and then garbage."""
    package = load_generated(name)
    root = ROOTS[name]
    v2 = name.startswith("acp_v2")
    requests = sorted(m for m, info in package.METHODS.items() if info.request is not None)
    notifications = sorted(m for m, info in package.METHODS.items() if info.notification is not None)
    tags = sorted({rule.tag for rule in getattr(package, "UPDATE_RULES", {}).values() if rule.tag})
    lines: list = []
    flight: list = []
    bare = draw(st.booleans())

    def put(direction, message):
        lines.append(json.dumps(message if bare else {"direction": direction, "message": message}))

    def params_of(method, kind):
        info = package.METHODS[method]
        definition = (info.request if kind == "request" else info.notification).params_name
        if draw(st.booleans()):
            params = draw(valid_values(root, definition))
        else:
            params = draw(values(root, root["$defs"][definition]))
        if isinstance(params, dict) and "sessionId" in params and draw(st.integers(0, 3)):
            params["sessionId"] = draw(st.sampled_from(SESSIONS))
        return params

    if draw(st.booleans()):
        put(
            "client_to_agent",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": draw(st.sampled_from([1, 2]))},
            },
        )
        put(
            "agent_to_client", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": draw(st.sampled_from([1, 2]))}}
        )
    put(
        "client_to_agent",
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
    )
    put("agent_to_client", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})
    for _ in range(draw(st.integers(1, 10))):
        what = draw(
            st.sampled_from(["request", "notification", "update", "update", "reply", "reply", "error", "garbage"])
        )
        direction = draw(st.sampled_from(["client_to_agent", "agent_to_client"]))
        if what == "request":
            method = draw(st.sampled_from(requests))
            request_id = draw(
                st.one_of(st.integers(2, 6), st.sampled_from(["a", "b"]), st.sampled_from(INTERESTING_INTS))
            )
            message = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if draw(st.integers(0, 5)):
                message["params"] = params_of(method, "request")
            put(direction, message)
            flight.append((direction, request_id, method))
        elif what == "notification" and notifications:
            method = draw(st.sampled_from(notifications))
            put(direction, {"jsonrpc": "2.0", "method": method, "params": params_of(method, "notification")})
        elif what == "update" and tags:
            body = (
                draw(valid_update(draw(st.sampled_from(tags)), v2))
                if draw(st.integers(0, 2))
                else draw(values(root, {"$ref": "#/$defs/SessionUpdate"}))
            )
            params = {"sessionId": draw(st.sampled_from(SESSIONS)), "update": body}
            put("agent_to_client", {"jsonrpc": "2.0", "method": "session/update", "params": params})
        elif what in ("reply", "error") and flight:
            asked, request_id, method = flight.pop(draw(st.integers(0, len(flight) - 1)))
            other = "agent_to_client" if asked == "client_to_agent" else "client_to_agent"
            if draw(st.integers(0, 5)) == 0:
                other, request_id = asked, request_id  # the wrong direction
            if what == "error":
                put(other, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Invalid params"}})
            else:
                info = package.METHODS[method]
                result_name = info.request.result_name
                result = (
                    draw(valid_values(root, result_name))
                    if draw(st.booleans())
                    else draw(values(root, root["$defs"][result_name]))
                )
                put(other, {"jsonrpc": "2.0", "id": request_id, "result": result})
        else:
            lines.append(json.dumps(draw(ANY_JSON)))
    return lines


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_the_fast_path_reports_what_the_slow_way_does(name, data, monkeypatch):
    package = load_generated(name)
    lines = data.draw(transcripts(name), label="transcript")
    strict = data.draw(st.booleans(), label="strict")
    expected = slow_findings(lines, package, strict, monkeypatch)
    for backend in BACKENDS:
        assert findings(lines, package, strict, backend, monkeypatch) == expected, backend


def test_the_fast_path_is_planned_for_the_common_methods():
    """The plan covers what transcripts are made of, in all four packages:
    a plan that fell back for them would pass the tests above, slowly."""
    for name in SCHEMAS:
        plan = checker._plan(load_generated(name))
        assert plan is not None, name
        assert {"session/prompt", "session/request_permission"} <= set(plan.requests), name
        assert {"session/update", "session/cancel"} <= set(plan.notifications), name
        assert plan.update is not None and plan.numbers_exact, name
        session, update, tag, kinds, _ = plan.update
        assert (session, update, tag) == ("sessionId", "update", "sessionUpdate")
        assert kinds["tool_call_update"][1] == "toolCallId"


# ---------------------------------------------------------------- JSON backends

TRICKY = [
    b'{"a": 1, "b": 2, "a": 3}',  # duplicate keys: the last value, the first place
    b"18446744073709551616",  # 2**64: orjson would read a float
    b"-9223372036854775809",
    b"[1, 123456789012345678901234567890, 2]",
    b'{"id": 18446744073709551615}',  # u64 max: both exact
    b"NaN",
    b"[Infinity, -Infinity]",
    b"1e400",
    b"-0",
    b"-0.0",
    b"2.2250738585072011e-308",
    b"0.1",
    b"1E+2",
    b'"\\ud800"',  # a lone surrogate
    b'"\\udc00\\ud800"',
    b'"\\ud83d\\ude00"',  # a pair
    b'"\\u0000"',
    b"\xef\xbb\xbf{}",  # a byte order mark
    b'"a\x01"',  # a raw control character
    b"[1,]",
    b" {} ",
    b"{}\r",
    b"\x0c{}",
    b"{} x",
    b"\xff",
    b"",
    b"   ",
    b"[" * 2000 + b"]" * 2000,
    b"[" * 500 + b"]" * 500,
]


def parsed(raw, backend, monkeypatch):
    """What the checker parses ``raw`` to: its value, or a bad-line message."""
    seen = []

    class Spy(checker._Checker):
        def line(self, n, data):
            seen.append(data)
            return []

    with monkeypatch.context() as patch:
        patch.setenv("ACPGEN_JSON", backend)
        patch.setattr(checker, "_plan", lambda package: None)  # every line reaches line()
        patch.setattr(checker, "_Checker", Spy)
        out = list(checker.validate_lines([raw], load_generated("acp_v1")))
    if seen:
        return ("value", _canonical(seen[0]))
    return ("finding", [f.message for f in out])


def _canonical(value):
    """A comparable form, walked without recursion: NaN equal to itself,
    types and key order kept."""
    out = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            out.append(("float", "nan" if math.isnan(item) else repr(item)))
        elif isinstance(item, dict):
            out.append(("dict", len(item)))
            for key, member in reversed(list(item.items())):
                stack.append(member)
                stack.append(("key", key))
        elif isinstance(item, list):
            out.append(("list", len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, tuple):
            out.append(item)
        else:
            out.append((type(item).__name__, item))
    return out


def _stdlib(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        return ("value", _canonical(json.loads(text)))
    except (ValueError, RecursionError):
        return None


@pytest.mark.skipif(not HAS_ORJSON, reason="orjson is not installed")
@pytest.mark.parametrize("raw", TRICKY, ids=range(len(TRICKY)))
def test_orjson_reads_a_tricky_line_as_json_does(raw, monkeypatch):
    fast, slow = parsed(raw, "orjson", monkeypatch), parsed(raw, "stdlib", monkeypatch)
    assert fast == slow
    expected = _stdlib(raw)
    if expected is not None:
        assert slow == expected


NUMBER_VALUES = st.one_of(
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
NUMBERS = st.one_of(
    NUMBER_VALUES,
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?\Z"),
)


@st.composite
def json_texts(draw):
    """JSON text: dumped values with numbers of every size and strings of
    any code points (lone surrogates escaped), and now and then a number
    literal spliced in as it was drawn."""
    value = draw(
        st.recursive(
            st.one_of(st.none(), st.booleans(), NUMBER_VALUES, st.text()),
            lambda inner: st.one_of(
                st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)
            ),
            max_leaves=12,
        )
    )
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        literal = draw(NUMBERS)
        text = f"[{literal if isinstance(literal, str) else json.dumps(literal)}, {text}]"
    return text.encode("utf-8", "surrogatepass")


@pytest.mark.skipif(not HAS_ORJSON, reason="orjson is not installed")
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=json_texts())
def test_orjson_reads_what_json_reads(raw, monkeypatch):
    assert parsed(raw, "orjson", monkeypatch) == parsed(raw, "stdlib", monkeypatch)


def test_json_backend_follows_the_environment(monkeypatch):
    monkeypatch.setenv("ACPGEN_JSON", "stdlib")
    assert checker.json_backend() == "stdlib"
    monkeypatch.delenv("ACPGEN_JSON")
    assert checker.json_backend() == ("orjson" if HAS_ORJSON else "stdlib")


def test_a_schema_with_big_bounds_makes_orjson_lines_with_long_numbers_go_to_json():
    assert checker._numbers_exact({"a": {"type": "integer", "maximum": 65535}})
    assert not checker._numbers_exact({"a": {"type": "integer", "maximum": 2**63}})
    assert not checker._numbers_exact({"a": {"type": "integer", "multipleOf": 3}})
    assert not checker._numbers_exact({"a": {"enum": [1, 2**64]}})


def test_a_schema_with_regular_expressions_has_no_fast_path():
    """jsonschema-rs reads ECMA-262, strict decoding Python's re: they may disagree."""
    assert checker._has_patterns({"a": {"type": "string", "pattern": "^[a-z]+$"}})
    assert checker._has_patterns({"a": {"type": "object", "patternProperties": {"^x": {}}}})
    assert not checker._has_patterns({"a": {"type": "object", "properties": {"pattern": {"type": "string"}}}})
    for name in SCHEMAS:
        assert not checker._has_patterns(json.loads(importlib.import_module(f"{name}._schema").SCHEMA_JSON)), name
