"""Lenient decoding agrees with the reference: the TypeScript SDK's zod parse,
recorded by tests/reference/record.mjs into tests/fixtures/reference/.

Every recorded case must agree (accepted with the same wire output, or
rejected), except the deliberate departures listed, with their reason, in
tests/reference/departures.json (kept by hand, beside the cases; record.mjs
writes only tests/fixtures/reference/); those must still differ, so the list
cannot go stale.
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


def _cases():
    for path in sorted(FIXTURES.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
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
