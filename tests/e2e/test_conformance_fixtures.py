"""The committed conformance fixtures (tests/fixtures/conformance), as
files: current (regenerating them changes nothing) and each generated case
well formed. These read the committed files and regenerate all
four sets, so they run once, on the main Python; the fixture generator's own
unit tests (tests/unit/test_fixturegen.py) run on every Python."""

from __future__ import annotations

import json

import pytest
from acpgen.conformance import fixturegen

from ..conftest import ROOT

SCHEMAS = {
    "v1": ROOT / "schema/v1/schema.json",
    "v1_unstable": ROOT / "schema/v1/schema.unstable.json",
    "v2": ROOT / "schema/v2/schema.json",
    "v2_unstable": ROOT / "schema/v2/schema.unstable.json",
}
FIXTURES = ROOT / "tests/fixtures/conformance"


def _generated_cases(key: str):
    for path in sorted((FIXTURES / key / "generated").glob("*.json")):
        yield from json.loads(path.read_text())["cases"]


def test_the_committed_fixtures_are_what_the_generator_writes():
    """`make fixtures` has been run: regenerating changes nothing (so a
    schema bump or a generator change shows up as a fixture diff)."""
    jobs = [
        (str(path), fixturegen.committed_seed(FIXTURES / key), f"schema/{path.parent.name}/{path.name}")
        for key, path in SCHEMAS.items()
    ]
    stale = []
    for (key, _), files in zip(SCHEMAS.items(), fixturegen.generate_many(jobs), strict=False):
        stale += fixturegen.stale(FIXTURES / key, files)
    assert not stale, f"run `make fixtures`: {stale[:5]}"


@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_each_generated_case_says_what_each_mode_gives(key):
    """A lenient outcome (an output or an error), and a strict error exactly
    when the case is invalid. Whether it is valid is jsonschema's verdict:
    the generator asks jsonschema, and every conformance run asks again for
    every case, jsonschema-rs first and jsonschema where that one differs
    ("the fixture is stale" when both do); the full runs of
    tests/e2e/test_conformance.py and test_wheel.py cover the four schemas."""
    cases = list(_generated_cases(key))
    assert len(cases) > 1000
    for case in cases:
        assert isinstance(case["valid"], bool), case["name"]
        assert ("output" in case) != ("error" in case), case["name"]
        assert ("strict_error" in case) == (not case["valid"]), case["name"]
