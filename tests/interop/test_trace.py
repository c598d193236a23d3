"""W3C trace context between real processes: acpgen's client (``--trace``)
against acpgen's echo agent (``--trace``) and against the official Python
SDK's echo agent, with the relay recording what went over the wire between
them."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from acpgen.report import report_data

from .harness import PEERS, acpgen_agent, acpgen_client, check_report, python_sdk_agent, run_session


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _relay(log: Path) -> list[str]:
    return [sys.executable, str(PEERS / "relay.py"), "--log", str(log), "--"]


def _ids(traceparent: str) -> tuple[str, str]:
    version, trace_id, parent_id, flags = traceparent.split("-")
    assert (version, flags) == ("00", "01")
    return trace_id, parent_id


def _first_turn(wire: list[dict]) -> tuple[dict, list[dict], dict]:
    """The first prompt on the wire, the updates sent while it ran, its answer."""
    messages = [record["message"] for record in wire]
    start = next(i for i, m in enumerate(messages) if m.get("method") == "session/prompt")
    prompt = messages[start]
    end = next(i for i, m in enumerate(messages) if i > start and m.get("id") == prompt["id"] and "method" not in m)
    updates = [m for m in messages[start:end] if m.get("method") == "session/update"]
    return prompt, updates, messages[end]


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_one_trace_across_the_processes_of_a_prompt(protocol, tmp_path):
    client_log, agent_log, wire_log = tmp_path / "client.jsonl", tmp_path / "agent.jsonl", tmp_path / "wire.jsonl"
    client = [*acpgen_client(protocol)[:-1], "--trace", str(client_log), "--"]
    agent = [*acpgen_agent(protocol), "--trace", str(agent_log)]
    report = run_session(client, [*_relay(wire_log), *agent])
    check_report(report, protocol, "acpgen-echo-agent")

    client_spans = [r for r in _lines(client_log) if r["event"] == "span"]
    agent_spans = [r for r in _lines(agent_log) if r["event"] == "span"]
    prompt, updates, answer = _first_turn(_lines(wire_log))
    trace_id, parent_id = _ids(prompt["params"]["_meta"]["traceparent"])

    # The client's span of the first prompt is the one on the wire; the
    # agent's span of it is its child, in the same trace.
    [sent] = [s for s in client_spans if s["method"] == "session/prompt" and s["id"] == prompt["id"]]
    assert (sent["traceId"], sent["spanId"], sent["parentId"], sent["kind"]) == (trace_id, parent_id, None, "client")
    [served] = [s for s in agent_spans if s["method"] == "session/prompt" and s["id"] == prompt["id"]]
    assert (served["traceId"], served["parentId"], served["kind"]) == (trace_id, parent_id, "server")
    assert served["errorCode"] is None and sent["errorCode"] is None
    # Its updates carry the agent's span (v2: also after the answer, which
    # comes at once: the updates of a v2 turn are after it on the wire).
    if protocol == "v2":
        turn = [r["message"] for r in _lines(tmp_path / "wire.jsonl")]
        after = turn.index(answer)
        nxt = next(i for i, m in enumerate(turn) if i > after and m.get("method") == "session/prompt")
        updates += [m for m in turn[after:nxt] if m.get("method") == "session/update"]
    assert updates
    assert {_ids(u["params"]["_meta"]["traceparent"]) for u in updates} == {(trace_id, served["spanId"])}
    # As the client read them, and the answer ended its span.
    received = [
        r
        for r in _lines(client_log)
        if r["event"] == "message" and r["direction"] == "received" and r["method"] == "session/update"
    ]
    assert f"00-{trace_id}-{served['spanId']}-01" in {r["traceparent"] for r in received}
    assert "result" in answer
    # acpgen report's Traces view of the relay's transcript: the prompt, and
    # its updates from the agent's span serving the prompt's line.
    lines = {json.dumps(r["message"]): n for n, r in enumerate(_lines(wire_log), 1)}
    hops = {trace_id: rest for trace_id, rest, _ in report_data(wire_log, None)["traces"]["list"]}[trace_id]
    prompt_line = lines[json.dumps(prompt)]
    assert hops[0] == [prompt_line, "c", "q", "session/prompt", parent_id, 0]
    assert {(hop[3], hop[4], hop[5]) for hop in hops[1:] if hop[1] == "a"} == {
        ("session/update", served["spanId"], prompt_line)
    }
    # Every request the client sent names its own span; every span the agent
    # served continues one of them.
    assert {(s["traceId"], s["spanId"]) for s in client_spans if s["kind"] == "client"} >= {
        (s["traceId"], s["parentId"]) for s in agent_spans if s["kind"] == "server"
    }


def test_the_sdk_agent_gets_the_traceparent_unharmed(tmp_path):
    """The official Python SDK's echo agent ignores ``_meta`` (its prompt
    takes it among ``**kwargs``): the prompt carrying a traceparent is
    served as any other, and its updates carry none of their own."""
    client_log, wire_log = tmp_path / "client.jsonl", tmp_path / "wire.jsonl"
    client = [*acpgen_client("v1")[:-1], "--trace", str(client_log), "--"]
    report = run_session(client, [*_relay(wire_log), *python_sdk_agent()])
    check_report(report, "v1", "python-sdk-echo-agent")

    prompt, updates, answer = _first_turn(_lines(wire_log))
    [sent] = [
        r
        for r in _lines(client_log)
        if r["event"] == "span" and r["method"] == "session/prompt" and r["id"] == prompt["id"]
    ]
    assert prompt["params"]["_meta"] == {"traceparent": f"00-{sent['traceId']}-{sent['spanId']}-01"}
    assert answer["result"]["stopReason"] == "end_turn" and sent["errorCode"] is None
    assert updates and all("traceparent" not in (u["params"].get("_meta") or {}) for u in updates)


def test_one_trace_through_a_conductor_and_two_proxies(tmp_path):
    """A prompt from acpgen's client through ``acpgen conduct`` and two
    traced proxies to acpgen's echo agent: one trace; each hop's server span
    is the child of the span that sent the request to it, and the
    traceparent on each wire names that span (the conductor changes
    nothing; each proxy puts its own client span there)."""
    from .test_proxy_chain import CONDUCT

    logs = {name: tmp_path / f"{name}.jsonl" for name in ("client", "first", "second", "agent")}
    wire_in, wire_out = tmp_path / "wire-in.jsonl", tmp_path / "wire-out.jsonl"

    def proxy(name: str, prefix: str) -> list[str]:
        return [sys.executable, str(PEERS / "acpgen_proxy.py"), "--prefix", prefix, "--trace", str(logs[name])]

    chain = [
        *_relay(wire_in),
        *CONDUCT,
        "--",
        *proxy("first", "<1> "),
        "--",
        *proxy("second", "<2> "),
        "--",
        # One argument: a lone "--" would end the conductor's last component.
        "sh",
        "-c",
        "exec " + shlex.join([*_relay(wire_out), *acpgen_agent("v1"), "--trace", str(logs["agent"])]),
    ]
    client = [*acpgen_client("v1")[:-1], "--trace", str(logs["client"]), "--"]
    report = run_session(client, chain)
    assert report["prompt"]["stopReason"] == "end_turn"
    # Both proxies rewrote it, in order: the second's prefix before the first's.
    assert report["prompt"]["text"].startswith("<2> <1> ")

    def prompt_span(name: str, kind: str) -> dict:
        spans = [r for r in _lines(logs[name]) if r["event"] == "span" and r["method"] == "session/prompt"]
        return next(s for s in spans if s["kind"] == kind)  # the first prompt's

    sent = prompt_span("client", "client")
    first_in, first_out = prompt_span("first", "server"), prompt_span("first", "client")
    second_in, second_out = prompt_span("second", "server"), prompt_span("second", "client")
    served = prompt_span("agent", "server")
    trace_id = sent["traceId"]
    hops = [sent, first_in, first_out, second_in, second_out, served]
    assert {span["traceId"] for span in hops} == {trace_id}
    assert len({span["spanId"] for span in hops}) == len(hops)
    # The parent links: client -> first proxy -> second proxy -> agent.
    assert sent["parentId"] is None
    assert [span["parentId"] for span in hops[1:]] == [span["spanId"] for span in hops[:-1]]
    # On the wires: the client's span where the client wrote it, the second
    # proxy's where the agent read it (the conductor passed it on as it came).
    prompt_in, _, _ = _first_turn(_lines(wire_in))
    prompt_out, updates, _ = _first_turn(_lines(wire_out))
    assert _ids(prompt_in["params"]["_meta"]["traceparent"]) == (trace_id, sent["spanId"])
    assert _ids(prompt_out["params"]["_meta"]["traceparent"]) == (trace_id, second_out["spanId"])
    # The agent's updates carry its span back through the chain unchanged.
    assert updates
    assert {_ids(u["params"]["_meta"]["traceparent"]) for u in updates} == {(trace_id, served["spanId"])}
