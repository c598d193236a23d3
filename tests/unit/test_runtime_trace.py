"""W3C trace context of the runtime (``_trace``): the traceparent, tracestate
and baggage values, carrying a context in ``_meta``, and the current
context flowing through asyncio tasks."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from acpgen.runtime._jsonrpc import ErrorResponse, Notification, Request, RequestError, Response, RpcError
from acpgen.runtime._trace import (
    RecordingTracer,
    TraceContext,
    Tracing,
    carry,
    current_trace,
    format_baggage,
    parse_baggage,
    parse_traceparent,
    trace_of,
    use_trace,
    valid_tracestate,
    without_trace,
)

from tests.patience import HANG

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
VALID = f"00-{TRACE}-{PARENT}-01"


def test_a_version_00_traceparent_is_read():
    assert parse_traceparent(VALID) == (TRACE, PARENT, 1)
    assert parse_traceparent(f"00-{TRACE}-{PARENT}-00") == (TRACE, PARENT, 0)
    context = TraceContext.parse(VALID)
    assert context is not None and context.traceparent == VALID and context.sampled


@pytest.mark.parametrize(
    "value",
    [
        None,
        1,
        "",
        f"00-{'0' * 32}-{PARENT}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero parent id
        VALID.upper(),
        f"00-{TRACE.upper()}-{PARENT}-01",
        f"ff-{TRACE}-{PARENT}-01",  # version 255 is invalid
        f"00-{TRACE}-{PARENT}-01-extra",  # version 00 is exactly 55 characters
        f"00-{TRACE}-{PARENT}-1",
        f"00-{TRACE[:-1]}-{PARENT}-01",
        f" {VALID}",
        f"{VALID} ",
        f"{VALID}\n",
        f"00_{TRACE}-{PARENT}-01",
        f"0-{TRACE}-{PARENT}-01",
        f"00-{TRACE}-{PARENT}-0g",
        f"01-{TRACE}-{PARENT}-01x",  # a later version: the flags end or a dash follows
        f"01-{TRACE}-{PARENT}",
    ],
)
def test_an_invalid_traceparent_is_none_never_an_error(value: Any):
    assert parse_traceparent(value) is None
    assert TraceContext.parse(value) is None


def test_a_later_version_is_read_by_its_first_fields_and_goes_on_as_00():
    assert parse_traceparent(f"cc-{TRACE}-{PARENT}-01") == (TRACE, PARENT, 1)
    assert parse_traceparent(f"01-{TRACE}-{PARENT}-01-what-comes-later") == (TRACE, PARENT, 1)
    context = TraceContext.parse(f"01-{TRACE}-{PARENT}-03-more")
    assert context is not None
    # Only the sampled flag of version 00 goes on; the others go out as zero.
    assert context.traceparent == f"00-{TRACE}-{PARENT}-01"


def test_new_ids_are_random_lowercase_hex_and_a_child_keeps_the_trace():
    root = TraceContext.new()
    assert re.fullmatch(r"[0-9a-f]{32}", root.trace_id) and re.fullmatch(r"[0-9a-f]{16}", root.span_id)
    assert TraceContext.new().trace_id != root.trace_id
    child = root.with_baggage({"user": "a b"}).child()
    assert child.trace_id == root.trace_id and child.span_id != root.span_id
    assert child.baggage_items == {"user": "a b"}
    assert parse_traceparent(child.traceparent) == (root.trace_id, child.span_id, 1)


def test_tracestate_and_baggage_are_kept_only_when_valid():
    assert valid_tracestate("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7") is not None
    assert valid_tracestate("tenant@vendor=x, other=y") is not None
    assert valid_tracestate("Congo=x") is None  # keys are lowercase
    assert valid_tracestate("a=1,a=2") is None
    assert valid_tracestate(",".join(f"k{i}=v" for i in range(33))) is None
    context = TraceContext.parse(VALID, "congo=t61rcWkgMzE", "k=v")
    assert context is not None and context.tracestate == "congo=t61rcWkgMzE" and context.baggage == "k=v"
    context = TraceContext.parse(VALID, "Bad State", "not baggage")
    assert context is not None and context.tracestate is None and context.baggage is None

    assert parse_baggage("userId=alice, serverNode = DF%2028;prop, isProduction=false") == {
        "userId": "alice",
        "serverNode": "DF 28",
        "isProduction": "false",
    }
    assert parse_baggage("no-equals") is None
    assert parse_baggage("k=a b") is None
    assert parse_baggage(",".join(f"k{i}=v" for i in range(65))) is None
    assert parse_baggage("k=" + "v" * 9000) is None
    assert parse_baggage(format_baggage({"k": "é, ;="})) == {"k": "é, ;="}
    with pytest.raises(ValueError):
        format_baggage({"a key": "v"})


def test_carry_merges_into_meta_without_replacing_what_the_caller_set():
    context = TraceContext(TRACE, PARENT, 1, "congo=x", "k=v")
    caller = {"sessionId": "s", "_meta": {"custom": 1}}
    wire = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": caller}
    carried = carry(wire, context)
    assert carried["params"]["_meta"] == {"custom": 1, "traceparent": VALID, "tracestate": "congo=x", "baggage": "k=v"}
    assert caller == {"sessionId": "s", "_meta": {"custom": 1}}  # not changed

    own = "00-" + "1" * 32 + "-" + "2" * 16 + "-00"
    wire["params"] = {"_meta": {"traceparent": own}}
    # The caller's traceparent goes out as it is, without this end's tracestate.
    assert carry(wire, context)["params"]["_meta"] == {"traceparent": own, "baggage": "k=v"}
    wire["params"] = {"_meta": None}
    assert carry(wire, context)["params"]["_meta"]["traceparent"] == VALID
    for params in (None, [1, 2], {"_meta": "text"}):
        wire["params"] = params
        assert carry(wire, context) is wire
    del wire["params"]
    assert carry(wire, context) is wire


class Model:
    def __init__(self, meta: Any) -> None:
        self.meta = meta


def test_trace_of_reads_json_and_models_and_without_trace_drops_the_keys():
    assert trace_of({"_meta": {"traceparent": VALID}}) == TraceContext(TRACE, PARENT, 1)
    assert trace_of(Model({"traceparent": VALID})) == TraceContext(TRACE, PARENT, 1)
    assert trace_of({"_meta": {"traceparent": "00-bad"}}) is None
    assert trace_of(None) is None and trace_of(Model(None)) is None

    params = {"a": 1, "_meta": {"traceparent": VALID, "tracestate": "x=y", "custom": 2}}
    assert without_trace(params) == {"a": 1, "_meta": {"custom": 2}}
    assert params["_meta"]["traceparent"] == VALID  # a copy
    assert without_trace({"a": 1, "_meta": {"traceparent": VALID}}) == {"a": 1}
    model = Model({"traceparent": VALID})
    stripped = without_trace(model)
    assert stripped is not model and stripped.meta is None and model.meta == {"traceparent": VALID}
    untouched = {"a": 1}
    assert without_trace(untouched) is untouched


def test_the_current_context_flows_into_tasks_and_ends_with_the_block():
    context = TraceContext.new()

    async def main() -> None:
        seen: list[TraceContext | None] = []

        async def child() -> None:
            seen.append(current_trace())

        with use_trace(context):
            task = asyncio.get_running_loop().create_task(child())
            with use_trace(None):
                seen.append(current_trace())
            seen.append(current_trace())
        await task
        seen.append(current_trace())
        assert seen == [None, context, context, None]

    asyncio.run(main())


def test_a_server_span_continues_the_received_trace_and_what_it_sends_is_its_child():
    recorder = RecordingTracer()
    tracing = Tracing(recorder, "agent")

    async def handler(request: Request[Any]) -> str:
        inner = current_trace()
        assert inner is not None
        client = tracing.client_span("fs/read_text_file", 7)
        assert client.parent_id == inner.span_id and client.trace_id == inner.trace_id
        return inner.span_id

    async def main() -> None:
        request = Request(1, "session/prompt", {"_meta": {"traceparent": VALID}})
        span_id = await tracing.handle(handler, request)
        span = recorder.spans[-1]
        assert (span.kind, span.trace_id, span.span_id, span.parent_id) == ("server", TRACE, span_id, PARENT)
        assert span.error_code is None and span.duration is not None and span.duration >= 0
        assert current_trace() is None

        # Without a traceparent, or with an invalid one: a new trace.
        for params in ({}, {"_meta": {"traceparent": VALID.upper()}}):
            await tracing.handle(handler, Request(2, "session/prompt", params))
            assert recorder.spans[-1].parent_id is None and recorder.spans[-1].trace_id != TRACE

        async def failing(request: Request[Any]) -> None:
            raise RequestError(-32002, "not found")

        with pytest.raises(RequestError):
            await tracing.handle(failing, Request(3, "x", None))
        assert (recorder.spans[-1].error_code, recorder.spans[-1].error) == (-32002, "not found")

        async def broken(request: Request[Any]) -> None:
            raise ValueError("boom")

        with pytest.raises(ValueError):
            await tracing.handle(broken, Request(4, "x", None))
        assert recorder.spans[-1].error_code == -32603

    asyncio.run(main())


def test_a_client_span_ends_with_the_answer_and_the_tracer_cannot_break_it():
    class Broken:
        def on_message(self, message: Any) -> None:
            raise RuntimeError("tracer bug")

        on_span_start = on_span_end = on_message

    async def main() -> None:
        recorder = RecordingTracer()
        tracing = Tracing(recorder, "client")
        loop = asyncio.get_running_loop()
        span = tracing.client_span("session/prompt", 5)
        tracing.started(span)
        answer: asyncio.Future[tuple[int, Any]] = loop.create_future()
        answer.set_result((0, ErrorResponse(5, RpcError(-32601, "Method not found"))))
        tracing.answered(span, answer)
        assert recorder.spans == [span] and span.error_code == -32601
        assert recorder.messages[0].context == span.context and span.parent_id is None
        ok = tracing.client_span("session/new", 6)
        done: asyncio.Future[tuple[int, Any]] = loop.create_future()
        done.set_result((0, Response(6, {})))
        tracing.answered(ok, done)
        assert ok.error_code is None and ok.end is not None

        quiet = Tracing(Broken(), "client")  # logged, never raised
        quiet.started(quiet.client_span("m", 1))
        quiet.received(Notification("session/update", {}))

        seen: list[Any] = []

        async def handler(*arguments: Any) -> None:
            seen.append(current_trace())

        await tracing.notified({"_meta": {"traceparent": VALID}}, handler)
        await tracing.notified({}, handler)
        assert seen[0] == TraceContext(TRACE, PARENT, 1) and seen[1] is not None and seen[1].trace_id != TRACE

    asyncio.run(main())


def test_a_baggage_escape_that_is_no_utf8_is_no_baggage() -> None:
    # "%ff" is in the grammar of a baggage value, but decodes to no UTF-8.
    assert parse_baggage("k=%ff") is None
    assert parse_baggage("k=%C3%A9") == {"k": "é"}


def test_a_traced_connection_answers_a_request_whose_baggage_is_no_utf8() -> None:
    import json

    import acp_v1
    from acp_v1._transport import memory_pair

    class Agent(acp_v1.Agent):
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
            return acp_v1.InitializeResponse(protocol_version=acp_v1.PROTOCOL_VERSION)

    async def main() -> None:
        mine, theirs = memory_pair()
        tracer = acp_v1.RecordingTracer()
        conn = acp_v1.AgentSideConnection(Agent, theirs, tracer=tracer)
        conn.start()
        params = {"protocolVersion": 1, "_meta": {"baggage": "k=%ff"}}
        await mine.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode())
        data = await mine.receive()
        assert data is not None
        answer = json.loads(data)
        assert answer["id"] == 1 and "result" in answer, answer
        # Served in a new trace: the bad baggage is ignored, not an error.
        assert [span.parent_id for span in tracer.spans if span.method == "initialize"] == [None]
        await conn.close()

    asyncio.run(asyncio.wait_for(main(), HANG))
