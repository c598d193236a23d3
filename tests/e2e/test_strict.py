"""Strict mode is JSON Schema validation: for every ``$defs`` name of the
four vendored schemas, ``decode(name, x, strict=True)`` accepts exactly the
values jsonschema's Draft 2020-12 validator accepts for
``{"$ref": "#/$defs/<name>"}`` (``format`` not asserted).

Most definitions of a stable schema are, with every definition they refer
to, those of its unstable schema (the unstable one adds to the stable one):
such a shape is explored with the full count of examples once, in the
unstable package, and the stable package's own decoder for it is checked
with a few examples. A definition whose shape differs anywhere (in itself or
in a definition it reaches) gets the full count in every package. Shapes are
compared with their annotations (``description``, ``title``,
``x-docs-ignore``) left out, which neither a validator nor a decoder reads;
everything else (types, keywords, the ``x-deserialize-*`` rules) counts."""

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
_ANNOTATIONS = frozenset({"description", "title", "x-docs-ignore"})


def _shape(node):
    if isinstance(node, dict):
        return {key: _shape(value) for key, value in node.items() if key not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_shape(value) for value in node]
    return node


def _refs(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out.add(value)
            else:
                _refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _refs(value, out)
    return out


def _closure(defs: dict, name: str) -> set[str]:
    """``name`` and every definition it reaches through ``$ref``."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo += [ref.removeprefix("#/$defs/") for ref in _refs(defs[current], set())]
    return seen


def _same_shape_in_unstable(package: str, name: str) -> bool:
    """Whether ``name`` of a stable package has, with everything it reaches,
    the shape it has in the unstable package of its version."""
    if package.endswith("_unstable"):
        return False
    defs, other = _ROOTS[package]["$defs"], _ROOTS[f"{package}_unstable"]["$defs"]
    if name not in other:
        return False
    reached = _closure(defs, name)
    return reached == _closure(other, name) and all(_shape(defs[n]) == _shape(other[n]) for n in reached)


_ALL = [(package, name) for package, root in _ROOTS.items() for name in root["$defs"]]
_SHARED = [(package, name) for package, name in _ALL if _same_shape_in_unstable(package, name)]
_DISTINCT = [(package, name) for package, name in _ALL if not _same_shape_in_unstable(package, name)]


def _params(pairs):
    return [pytest.param(package, name, id=f"{package}:{name}") for package, name in pairs]


@functools.cache
def _validator(package: str, name: str) -> Draft202012Validator:
    schema = dict(_ROOTS[package])
    schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return Draft202012Validator(schema)


def _check(package: str, name: str, data) -> None:
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


def test_the_split_leaves_out_no_definition_and_every_shared_shape_is_explored_in_full():
    assert sorted(_SHARED + _DISTINCT) == sorted(_ALL)
    assert all(
        f"{package}_unstable" in _ROOTS and (f"{package}_unstable", name) in _DISTINCT for package, name in _SHARED
    )
    # the comparison sees a change of shape, not only of annotations
    assert ("acp_v1", "SessionUpdate") in _DISTINCT and ("acp_v1", "ToolKind") in _SHARED


@pytest.mark.parametrize("package, name", _params(_DISTINCT))
@settings(max_examples=examples(12), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_strict_decode_agrees_with_jsonschema(package, name, data):
    _check(package, name, data)


@pytest.mark.parametrize("package, name", _params(_SHARED))
@settings(max_examples=examples(3), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_strict_decode_agrees_with_jsonschema_on_a_shape_shared_with_the_unstable_package(package, name, data):
    _check(package, name, data)
