"""Lenient decoding agrees with the reference: the TypeScript SDK's zod parse,
recorded by tests/reference/record.mjs into tests/fixtures/reference/.

Every recorded case must agree (accepted with the same wire output, or
rejected), except the deliberate departures listed, with their reason, in
departures.json (kept by hand in tests/reference/, beside the cases; record.mjs
writes only tests/fixtures/reference/); those must still differ, so the list
cannot go stale.

The JSON-RPC envelope cases (defs ``ClientRequest``, ``AgentResponse`` ...)
are read as whole messages with ``decode_message``, which types params by
method, and compared with how the SDK's connection dispatches them
(``dispatch/envelopes.json``, recorded by tests/reference/record_dispatch.mjs):
the zod envelope defs parse params with the first union member that matches,
which is not how either SDK reads traffic.
"""

from __future__ import annotations

import json

import pytest

from ..conftest import ROOT, load_generated

FIXTURES = ROOT / "tests/fixtures/reference"
PACKAGES = {
    "v1": "acp_v1",
    "v1_unstable": "acp_v1_unstable",
    "v2": "acp_v2",
    "v2_unstable": "acp_v2_unstable",
}
DEPARTURES = json.loads((ROOT / "tests/reference/departures.json").read_text())
DISPATCH = json.loads((FIXTURES / "dispatch/envelopes.json").read_text())["cases"]
ENVELOPES = {
    "AgentRequest",
    "ClientRequest",
    "AgentResponse",
    "ClientResponse",
    "AgentNotification",
    "ClientNotification",
}
"""The JSON-RPC envelope defs: their cases are checked as whole messages."""


def _recorded():
    for path in sorted(FIXTURES.glob("*.json")):
        yield from json.loads(path.read_text())["cases"]


def _cases():
    for case in _recorded():
        if case["def"] not in ENVELOPES:
            yield pytest.param(case, id=case["name"])


def _decode(case):
    package = load_generated(PACKAGES[case["schema"]])
    data = case["input"] if "input" in case else json.loads(case["input_json"])
    try:
        return True, package.encode(package.decode(case["def"], data))
    except package.ValidationError as error:
        return False, error


def test_the_fixture_directory_holds_only_what_record_mjs_writes():
    """record.mjs writes one fixture per case file and deletes every other
    JSON file there, so nothing kept by hand may live in that directory (the
    departures list lives beside the cases)."""
    recorded = {p.name for p in FIXTURES.glob("*.json")}
    cases = {p.name for p in (ROOT / "tests/reference/cases").glob("*.json")}
    assert recorded == cases
    for name in recorded:
        assert json.loads((FIXTURES / name).read_text())["source"] == f"tests/reference/cases/{name}"


def test_the_recordings_are_there():
    names = [c.values[0]["name"] for c in _cases()]
    assert len(names) > 400
    assert len(set(names)) == len(names)
    assert set(DEPARTURES["cases"]) <= set(names)
    assert set(DEPARTURES["cases"].values()) <= set(DEPARTURES["kinds"])
    envelope_cases = {c["name"] for c in _recorded() if c["def"] in ENVELOPES}
    assert len(envelope_cases) > 40
    assert envelope_cases == {c["name"] for c in DISPATCH}


@pytest.mark.parametrize("case", list(_cases()))
def test_lenient_decode_matches_the_reference(case):
    ok, result = _decode(case)
    agrees = ok == case["ok"] and (not ok or result == case["output"])
    kind = DEPARTURES["cases"].get(case["name"])
    if kind is None:
        if case["ok"]:
            assert ok, f"the reference accepts this ({case['note']}); acpgen says {result}"
            assert result == case["output"], case["note"]
        else:
            assert not ok, f"the reference rejects this at {case.get('path')} ({case['note']})"
    else:
        assert not agrees, f"listed as a departure ({kind}) but acpgen now agrees: remove it"
        if kind == "string-format":
            # acpgen keeps the string as it was: the decode succeeds and the
            # input comes back (minus what the reference semantics drop).
            assert ok, result
        if kind == "integer-precision":
            data = case["input"] if "input" in case else json.loads(case["input_json"])
            assert not ok or result == data


def _envelope_case(name):
    return next(c for c in _recorded() if c["name"] == name)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in DISPATCH])
def test_whole_messages_decode_as_the_reference_dispatches_them(case):
    package = load_generated(PACKAGES[case["schema"]])
    message = case["message"]
    envelope = _envelope_case(case["name"])
    kind = case["kind"]
    # The envelope def the case was written for says which kind of message it
    # is; where zod rejects the envelope itself (an id or error code the
    # schema does not allow), the message is invalid whatever its params.
    def_kind = next(k for k in ("request", "response", "notification") if envelope["def"].lower().endswith(k))
    bad_envelope = (
        not envelope["ok"] and def_kind == ("response" if kind == "response" else kind)
        and not envelope["path"].startswith("$.params")
    )  # fmt: skip
    if kind == "invalid" or bad_envelope:
        with pytest.raises(package.ValidationError) as caught:
            package.decode_message(message)
        assert not isinstance(caught.value, package.ParamsError)
        return
    if kind == "response":
        decoded = package.decode_message(message)
        if "result" in message:
            assert decoded == package.Response(message["id"], message["result"])  # kept as JSON
        else:
            error = message["error"]
            assert isinstance(decoded, package.ErrorResponse) and decoded.id == message["id"]
            assert (decoded.error.code, decoded.error.message) == (error["code"], error["message"])
            assert decoded.error.data == error.get("data", package.UNSET)
        return
    if case["params_def"] is None:  # a method the schema does not have: params stay JSON
        decoded = package.decode_message(message)
        assert (decoded.method, decoded.params) == (message["method"], message.get("params"))
        return
    departure = DEPARTURES.get("dispatch_cases", {}).get(case["name"])
    if departure is not None:
        # Listed with its reason: acpgen decodes what the SDK answers -32602
        # to (a length the Rust crate does not check), and must still.
        assert departure in DEPARTURES["kinds"] and not case["ok"]
        decoded = package.decode_message(message)
        assert package.encode(decoded.params) == message["params"]
        return
    if not case["ok"]:  # the SDK answers -32602
        with pytest.raises(package.ParamsError) as caught:
            package.decode_message(message)
        assert caught.value.path.startswith("$.params"), caught.value.path
        assert caught.value.method == message["method"]
        return
    decoded = package.decode_message(message)
    cls = package.Request if kind == "request" else package.Notification
    assert type(decoded) is cls and decoded.method == message["method"]
    assert package.encode(decoded.params) == case["params"], case["name"]
    assert package.encode_message(decoded)["params"] == case["params"]
