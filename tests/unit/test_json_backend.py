"""The JSON text of messages through orjson (when importable) gives what
``json`` gives: the same values read, the same refusals, text that reads
back to the same value (orjson is in the test extra: ``pip install -e
'.[test]'``)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from acpgen.runtime import _jsonrpc as rpc
from hypothesis import example, given
from hypothesis import strategies as st


@pytest.fixture
def backend() -> Iterator[None]:
    yield
    rpc.use_json_backend()


def _outcome(call: Any, *args: Any) -> tuple[Any, Any]:
    """``("ok", value)``, or the exception's type and text."""
    try:
        return ("ok", call(*args))
    except Exception as error:  # compared, not hidden
        return (type(error), str(error))


def _both(call: Any, *args: Any) -> tuple[Any, Any]:
    """``call(*args)`` with orjson, then with json: (value or exception type
    and text) of each."""
    out = []
    for name in ("orjson", "stdlib"):
        assert rpc.use_json_backend(name) == name
        out.append(_outcome(call, *args))
    rpc.use_json_backend()
    return out[0], out[1]


def _same_value(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down (1 is not 1.0), NaN equal to
    NaN. A loop, not recursion: the values nest thousands deep, past the
    recursion limit of some Pythons (3.13 counts the frames of a nested
    generator expression too)."""
    pending = [(a, b)]
    while pending:
        a, b = pending.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if list(a) != list(b):
                return False
            pending.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, float) and math.isnan(a):
            if not math.isnan(b):
                return False
        elif a != b:
            return False
    return True


NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, -(2**64)]),
    st.floats(allow_nan=False, allow_infinity=False),
)
JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def test_orjson_is_the_default_backend_when_importable(backend: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACPGEN_JSON", raising=False)
    assert rpc.use_json_backend() == "orjson"
    monkeypatch.setenv("ACPGEN_JSON", "stdlib")
    assert rpc.use_json_backend() == "stdlib"
    assert rpc.json_backend() == "stdlib"
    with pytest.raises(ValueError, match="orjson"):
        rpc.use_json_backend("ujson")


@given(JSON)
def test_a_message_reads_the_same_with_either_backend(value: Any) -> None:
    text = json.dumps({"jsonrpc": "2.0", "method": "m", "params": value}).encode()
    (kind_a, a), (kind_b, b) = _both(rpc.load_message, text)
    assert kind_a == kind_b == "ok"
    assert _same_value(a, b), (a, b)


@given(JSON)
def test_a_message_writes_the_same_value_with_either_backend(value: Any) -> None:
    wire = {"jsonrpc": "2.0", "id": 1, "result": value}
    (kind_a, a), (kind_b, b) = _both(rpc.dump_message, wire)
    assert kind_a == kind_b == "ok"
    assert b"\n" not in a
    assert _same_value(json.loads(a), json.loads(b))


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": 18446744073709551616}',
        b'{"a": -9223372036854775809}',
        b'{"a": 123456789012345678901234567890}',
        b'{"a": NaN, "b": Infinity, "c": -Infinity}',
        b'{"a": 1e400}',
        b'{"a": "\\ud800"}',
        b'{"a": 1, "a": 2}',
        b'{"a": "\xed\xa0\x80"}',
        b'\xef\xbb\xbf{"a": 1}',
        '{"a": 1}'.encode("utf-16"),
        b'{"a": "\xff"}',
        b'{"a": 1} x',
        b"[" * 1000 + b"]" * 1000,
        b"[" * 5000 + b"]" * 5000,
        b"",
        b" ",
    ],
)
def test_what_orjson_reads_otherwise_or_refuses_is_read_by_json(text: bytes) -> None:
    (kind_a, a), (kind_b, b) = _both(rpc.load_message, text)
    assert kind_a == kind_b
    if kind_a == "ok":
        assert _same_value(a, b), (a, b)
    else:
        assert a == b


class _Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        [1, {"x": -math.inf}],
        2**64,
        -(2**64) - 1,
        {1: "a"},
        "\ud800",
        _Str("s"),
        object(),
        None,
        [None, 1.5],
    ],
)
def test_what_orjson_writes_otherwise_or_refuses_is_written_by_json(value: Any) -> None:
    (kind_a, a), (kind_b, b) = _both(rpc.dump_message, {"jsonrpc": "2.0", "id": 1, "result": value})
    assert kind_a == kind_b
    if kind_a == "ok":
        assert a == b
    else:
        assert kind_a is ValueError and a == b


def test_a_reference_cycle_is_refused_with_either_backend() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    (kind_a, _), (kind_b, _) = _both(rpc.dump_message, {"jsonrpc": "2.0", "id": 1, "result": cycle})
    assert kind_a is kind_b is ValueError


def test_orjson_is_what_reads_and_writes_by_default(backend: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast backend is used (not only tolerated): orjson's text is written."""
    monkeypatch.delenv("ACPGEN_JSON", raising=False)
    rpc.use_json_backend()
    wire = {"jsonrpc": "2.0", "id": 1, "result": {"x": 1e-7}}
    assert rpc.dump_message(wire) == orjson.dumps(wire)


def test_a_short_message_holds_only_its_text(backend: None) -> None:
    # orjson's output keeps its 4 KiB buffer however short the text: queues
    # count a message's bytes, so what dump_message returns holds only them
    import tracemalloc

    assert rpc.use_json_backend("orjson") == "orjson"
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"n": 1}}
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [rpc.dump_message(message) for _ in range(500)]
        per_message = (tracemalloc.get_traced_memory()[0] - before) / len(kept)
    finally:
        tracemalloc.stop()
    assert kept[0] == orjson.dumps(message)
    assert per_message < 4 * len(kept[0]) + 64, per_message


def _long(value: str) -> str:
    """A message's text holding ``value`` (JSON text) and a string long
    enough that load_message checks what orjson read rather than the text."""
    return '{"jsonrpc":"2.0","method":"m","params":{"text":"' + "x" * 8192 + '","v":' + value + "}}"


@pytest.mark.parametrize(
    "value",
    [
        "[" * 499 + "]" * 499,
        "[" * 500 + "]" * 500,
        '{"a":' * 600 + "1" + "}" * 600,
        "[" * 1000 + "]" * 1000,
        "[" * 1100 + "]" * 1100,
        "[" * 5000 + "]" * 5000,
        "18446744073709551616",
        "-9223372036854775809",
        "[1, 123456789012345678901234567890]",
        "1e19",
        "-1e300",
        "9223372036854775807",
        "1.5",
    ],
)
def test_a_long_text_reads_the_same_or_is_refused_the_same_with_either_backend(value: str) -> None:
    (kind_a, a), (kind_b, b) = _both(rpc.load_message, _long(value).encode())
    assert kind_a == kind_b
    if kind_a == "ok":
        assert _same_value(a, b), value[:40]
    else:
        assert kind_a is ValueError and a == b == "the message is nested too deeply"


def test_a_message_nested_too_deeply_is_refused_with_either_backend() -> None:
    # Where json refuses the nesting (it reads deeper on Python 3.13 than on
    # 3.11: test_jsonrpc's rule, what json reads load_message reads), both
    # backends refuse it alike; where json reads it, both read the same.
    for text in ("[" * 5000 + "]" * 5000, _long("[" * 5000 + "]" * 5000), _long("[" * 1100 + "]" * 1100)):
        (kind_a, a), (kind_b, b) = _both(rpc.load_message, text.encode())
        try:
            json.loads(text)
        except RecursionError:
            assert (kind_a, a) == (kind_b, b) == (ValueError, "the message is nested too deeply")
        else:
            assert kind_a == kind_b == "ok" and a == b


def test_a_long_text_with_many_brackets_in_its_strings_is_read_by_orjson(
    backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool call whose content is a source file (brackets by the
    thousand, in a string) nests four levels: orjson reads it, json is not
    called; nor for 500 levels of nesting. Deeper, json decides."""
    assert rpc.use_json_backend("orjson") == "orjson"
    source = "".join(f"def f{i}(a: list[int]) -> dict[str, int]:\n    return {{'k': a[{i}]}}\n" for i in range(300))
    tool_call = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "Read",
                "content": [{"type": "content", "content": {"type": "text", "text": source}}],
            },
        },
    }
    text = json.dumps(tool_call).encode()
    assert text.count(b"[") + text.count(b"{") > 1000
    nested = _long("[" * 498 + "]" * 498).encode()  # in two objects: 500 levels
    called: list[object] = []

    stdlib_loads = rpc._stdlib_loads

    def loads(text: bytes | str) -> object:
        called.append(text)
        return stdlib_loads(text)

    monkeypatch.setattr(rpc, "_stdlib_loads", loads)
    assert rpc.load_message(text) == tool_call
    assert _same_value(rpc.load_message(nested), orjson.loads(nested))
    assert called == []
    deeper = _long("[" * 499 + "]" * 499).encode()
    assert _same_value(rpc.load_message(deeper), json.loads(deeper))
    assert called == [deeper]


def test_orjson_is_imported_when_the_first_message_is_read_not_with_the_package() -> None:
    """Importing the runtime's JSON-RPC module (what a package imports)
    leaves orjson out; reading a message brings it in, unless
    ``ACPGEN_JSON=stdlib`` says otherwise, read then."""
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from acpgen.runtime import _jsonrpc as rpc\n"
        "assert 'orjson' not in sys.modules\n"
        "os.environ['ACPGEN_JSON'] = sys.argv[1]\n"
        "assert rpc.load_message(b'{\"a\": [1]}') == {'a': [1]}\n"
        "print(rpc.json_backend(), 'orjson' in sys.modules)\n"
    )
    for wanted, expected in (("orjson", "orjson True"), ("stdlib", "stdlib False")):
        out = subprocess.run([sys.executable, "-c", code, wanted], capture_output=True, text=True, check=False)
        assert out.stdout.strip() == expected, out.stderr


def test_a_short_text_with_many_brackets_or_digits_in_its_strings_is_read_by_orjson(
    backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short message (under 4 KiB) whose strings hold more than 500
    brackets (a snippet of minified JSON or code) or 19 digits in a row is
    read by orjson, checked by what it read; json is not called. Nested
    over 500 levels, or holding an integer beyond 64 bits, json decides."""
    assert rpc.use_json_backend("orjson") == "orjson"
    snippet = "f(a[i]){g[0]}\n" * 180  # 540 opening brackets, in a string
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": snippet}}
    chunk = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    text = json.dumps(chunk).encode()
    assert 2 * 500 + 2 <= len(text) < 4096 and text.count(b"[") + text.count(b"{") > 500
    digits = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"token": "1234567890123456789012345"}}).encode()
    called: list[object] = []

    stdlib_loads = rpc._stdlib_loads

    def loads(text: bytes | str) -> object:
        called.append(text)
        return stdlib_loads(text)

    # Many values for their bytes (checked by a scan, then in full): 600
    # empty arrays, and integers with a long number in a string.
    rows = json.dumps([[]] * 600).encode()
    numbers = json.dumps([*range(300), "18446744073709551616"]).encode()
    assert all(2 * 500 + 2 <= len(read) < 4096 for read in (rows, numbers))

    monkeypatch.setattr(rpc, "_stdlib_loads", loads)
    for read in (text, digits, rows, numbers):
        assert _same_value(rpc.load_message(read), json.loads(read))
    assert called == []
    deep = ("[" * 501 + "]" * 501).encode()
    large = b'{"a": 18446744073709551616}'
    long_number = json.dumps([*range(300), 2**64]).encode()
    for read in (deep, large, long_number):
        assert _same_value(rpc.load_message(read), json.loads(read))
    assert rpc.load_message(long_number)[-1] == 2**64
    assert called == [deep, large, long_number, long_number]


_OBJECT = '{"a": [1, "\u00e9\U0001f600", null]}'


@pytest.mark.parametrize(
    "text",
    [
        _OBJECT.encode(),
        _OBJECT,
        b"\xef\xbb\xbf" + _OBJECT.encode(),
        "\ufeff" + _OBJECT,
        _OBJECT.encode("utf-16"),
        _OBJECT.encode("utf-16-le"),
        _OBJECT.encode("utf-16-be"),
        _OBJECT.encode("utf-32"),
        _OBJECT.encode("utf-32-le"),
        _OBJECT.encode("utf-32-be"),
        b'{"a": "\xed\xa0\x80"}',
        b'{"a": "\xff"}',
        b'{"a": 1} x',
        b'{"a": 1} \n',
        b' {"a": 1}',
        b'{"a": NaN}',
        b"{",
        b"{}",
        b"{\x00",
        b"[1]",
        "{",
        "[1]",
        bytearray(_OBJECT.encode()),
    ],
)
def test_the_stdlib_backend_reads_what_json_loads_reads(text: bytes | str) -> None:
    ours, theirs = _outcome(rpc._stdlib_loads, text), _outcome(json.loads, text)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert _same_value(ours[1], theirs[1]), (ours, theirs)
    else:
        assert ours[1] == theirs[1]


@given(
    st.dictionaries(st.text(max_size=5), JSON, max_size=4),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]),
)
def test_a_message_in_any_encoding_json_reads_reads_the_same_with_the_stdlib_backend(
    value: dict[str, Any], encoding: str
) -> None:
    text = json.dumps(value, ensure_ascii=False).encode(encoding, "surrogatepass")
    ours, theirs = _outcome(rpc._stdlib_loads, text), _outcome(json.loads, text)
    assert ours[0] == theirs[0] == "ok"
    assert _same_value(ours[1], theirs[1])


@given(JSON)
@example("\ud800")
@example(float("nan"))
def test_the_stdlib_backend_writes_the_text_json_dumps_writes(value: Any) -> None:
    wire = {"jsonrpc": "2.0", "id": 1, "result": value}
    expected = _outcome(
        lambda: json.dumps(wire, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    )
    rpc.use_json_backend("stdlib")
    try:
        ours = _outcome(rpc.dump_message, wire)
    finally:
        rpc.use_json_backend()
    if expected[0] == "ok":
        assert ours == expected
    else:  # json has no text for it (NaN), or the text no UTF-8 (a lone surrogate)
        assert expected[0] in (ValueError, UnicodeEncodeError)
        assert ours[0] is ValueError
