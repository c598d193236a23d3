"""Strict mode is JSON Schema validation: for every ``$defs`` name of the
four vendored schemas, ``decode(name, x, strict=True)`` accepts exactly the
values jsonschema's Draft 2020-12 validator accepts for
``{"$ref": "#/$defs/<name>"}`` (``format`` not asserted)."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ..conftest import SCHEMAS, examples, load_generated
from ..strategies import values

_ROOTS = {name: json.loads(path.read_text()) for name, path in SCHEMAS.items()}
_PARAMS = [
    pytest.param(package, name, id=f"{package}:{name}") for package, root in _ROOTS.items() for name in root["$defs"]
]


@functools.cache
def _validator(package: str, name: str) -> Draft202012Validator:
    schema = dict(_ROOTS[package])
    schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return Draft202012Validator(schema)


@pytest.mark.parametrize("package, name", _PARAMS)
@settings(max_examples=examples(12), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_strict_decode_agrees_with_jsonschema(package, name, data):
    module = load_generated(package)
    root = _ROOTS[package]
    value = data.draw(values(root, root["$defs"][name]), label="value")
    expected = _validator(package, name).is_valid(value)
    before = json.dumps(value, sort_keys=True)
    try:
        decoded = module.decode(name, value, strict=True)
        accepted = True
    except module.ValidationError as error:
        accepted, decoded = False, error
    assert json.dumps(value, sort_keys=True) == before, "decode changed its input"
    assert accepted == expected, f"jsonschema says {expected}; strict decode says {decoded}"
    if accepted:
        # decode(encode(v)) == v, and what strict mode produced stays valid.
        # (Not in lenient mode: that one also bounds integers by their format,
        # which a JSON Schema validator does not assert.)
        encoded = module.encode(decoded)
        assert module.decode(name, encoded, strict=True) == decoded
