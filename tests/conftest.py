"""Shared helpers: paths, and generating a package from a small schema."""

from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
SCHEMAS = {
    "acp_v1": ROOT / "schema/v1/schema.json",
    "acp_v1_unstable": ROOT / "schema/v1/schema.unstable.json",
    "acp_v2": ROOT / "schema/v2/schema.json",
    "acp_v2_unstable": ROOT / "schema/v2/schema.unstable.json",
}

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

_counter = itertools.count()


def load_generated(name: str):
    """A committed generated package, imported."""
    return importlib.import_module(name)


@pytest.fixture
def make_package(tmp_path):
    """``make_package(schema_dict) -> module``: generate a package from a
    schema document into a temporary directory and import it."""
    from acpgen.pipeline import build_package
    from acpgen.write import write_packages

    def make(schema: dict, name: str | None = None):
        name = name or f"acpgen_test_pkg_{next(_counter)}"
        path = tmp_path / f"{name}.schema.json"
        path.write_text(json.dumps(schema), encoding="utf-8")
        write_packages(tmp_path / "out", {name: build_package(path, name)})
        sys.path.insert(0, str(tmp_path / "out"))
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(tmp_path / "out"))

    return make


def schema_with(defs: dict) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Test", "$defs": defs}
