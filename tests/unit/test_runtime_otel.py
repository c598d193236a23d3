"""The OpenTelemetry adapter of the runtime (``_otel``): request spans
become OpenTelemetry spans with the ids that went over the wire. Needs
``opentelemetry-sdk`` (the test extras); the runtime itself never imports it
until an adapter is made."""

from __future__ import annotations

import subprocess
import sys

import pytest
from acpgen.runtime._trace import TraceContext, Tracing

pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extras: make install")

from acpgen.runtime._otel import AcpIdGenerator, OpenTelemetryTracer, opentelemetry_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def provider(ids: bool = True) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    made = TracerProvider(id_generator=AcpIdGenerator()) if ids else TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(exporter))
    return made, exporter


def test_spans_keep_the_wire_ids_their_parents_and_errors():
    import asyncio

    from acpgen.runtime._jsonrpc import Request, RequestError, Response

    made, exporter = provider()
    tracing = Tracing(OpenTelemetryTracer(made), "agent")
    received = TraceContext.new()

    async def handler(request):
        span = tracing.client_span("fs/read_text_file", 1)
        tracing.started(span)
        answer = asyncio.get_running_loop().create_future()
        answer.set_result((0, Response(1, {})))
        tracing.answered(span, answer)
        raise RequestError(-32002, "not found")

    async def main():
        with pytest.raises(RequestError):
            await tracing.handle(handler, Request(7, "session/prompt", {"_meta": received.meta()}))

    asyncio.run(main())
    inner, outer = exporter.get_finished_spans()
    assert (outer.name, outer.kind, inner.name, inner.kind) == (
        "session/prompt",
        trace.SpanKind.SERVER,
        "fs/read_text_file",
        trace.SpanKind.CLIENT,
    )
    assert f"{outer.context.trace_id:032x}" == received.trace_id
    assert f"{outer.parent.span_id:016x}" == received.span_id and outer.parent.is_remote
    assert inner.parent.span_id == outer.context.span_id and inner.context.trace_id == outer.context.trace_id
    assert f"{outer.context.span_id:016x}" == outer.attributes["acp.span_id"]
    assert outer.attributes["rpc.system"] == "jsonrpc" and outer.attributes["rpc.jsonrpc.request_id"] == "7"
    assert outer.attributes["rpc.jsonrpc.error_code"] == -32002
    assert outer.status.status_code == trace.StatusCode.ERROR and inner.status.status_code == trace.StatusCode.UNSET
    assert outer.end_time >= outer.start_time


def test_without_the_id_generator_the_wire_ids_are_attributes():
    made, exporter = provider(ids=False)
    tracing = Tracing(OpenTelemetryTracer(made), "client")
    span = tracing.client_span("session/new", 0)
    tracing.started(span)
    import asyncio

    async def end():
        answer = asyncio.get_running_loop().create_future()
        answer.set_result((0, None))
        tracing.answered(span, answer)

    asyncio.run(end())
    [done] = exporter.get_finished_spans()
    assert done.attributes["acp.trace_id"] == span.trace_id and done.attributes["acp.span_id"] == span.span_id


def test_the_current_opentelemetry_span_as_a_trace_context():
    made, _ = provider()
    assert opentelemetry_context() is None
    with made.get_tracer("app").start_as_current_span("work") as current:
        context = opentelemetry_context()
        assert context is not None
        assert context.trace_id == f"{current.get_span_context().trace_id:032x}"
        assert context.span_id == f"{current.get_span_context().span_id:016x}"


def test_the_runtime_does_not_import_opentelemetry_until_used():
    code = "import sys, acpgen.runtime._otel, acpgen.runtime._trace; print('opentelemetry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
