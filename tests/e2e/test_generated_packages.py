"""The committed generated packages: importable with the standard library
alone, complete, readable names, formatted, with a header that says where
they come from."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys

import pytest
from acpgen import __version__
from acpgen.runtime import MCP_ONLY, SOURCES
from acpgen.views.names import PROXY_SOURCES

from ..conftest import GENERATED, ROOT, SCHEMAS, load_generated


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_imports_under_python_dash_S_and_has_every_def(name):
    defs = list(json.loads(SCHEMAS[name].read_text())["$defs"])
    code = (
        "import sys, json\n"
        f"import {name} as p\n"
        "names = json.loads(sys.stdin.read())\n"
        "missing = [n for n in names if not hasattr(p, n)]\n"
        "assert not missing, missing\n"
        "assert all(m.split('.')[0] not in ('jinja2', 'jsonschema', 'click', 'black') for m in sys.modules)\n"
        "print(len(names))\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], input=json.dumps(defs), cwd=GENERATED, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(defs)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_connection_and_asyncio_load_on_first_use(name):
    """Importing a package does not load asyncio; the connection names are
    there all the same, star imports included, and a missing name is still an
    AttributeError."""
    code = (
        "import sys\n"
        f"import {name} as p\n"
        "assert 'asyncio' not in sys.modules and p.__name__ + '.connection' not in sys.modules\n"
        "assert p.AgentSideConnection.__module__ == p.__name__ + '.connection'\n"
        "assert 'asyncio' in sys.modules\n"
        f"from {name} import *\n"
        "assert spawn_agent is p.connection.spawn_agent\n"
        "assert 'AgentSideConnection' in dir(p) and 'decode' in dir(p)\n"
        "try:\n    p.NoSuchName\nexcept AttributeError:\n    print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=GENERATED, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_what_decoding_does_not_need_loads_on_first_use(name):
    """Importing a package loads the models and the codec, and neither
    orjson nor the modules of the session fold, the patch functions, the
    JSON-RPC messages and the senders: each loads when one of its names is
    first read (as an attribute or by ``from ... import``), and is then an
    attribute of the package; orjson loads with the first message read.
    Neither importing nor decoding loads ``dataclasses`` or ``math``."""
    code = (
        "import sys\n"
        f"import {name} as p\n"
        "lazy = ('patch', 'session', 'protocol', 'senders', 'connection', '_jsonrpc', '_session')\n"
        "loaded = [m for m in ('orjson', *(p.__name__ + '.' + m for m in lazy)) if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "assert p.decode('ContentBlock', {'type': 'text', 'text': 'hi'}).text == 'hi'\n"
        "assert 'orjson' not in sys.modules and p.__name__ + '.session' not in sys.modules\n"
        # dataclasses (and inspect, which it imports) cost about as much as the
        # models; math is not needed at all. json is: a decoding error's
        # message quotes with it, and its first one must not pay the import.
        "unloaded = ('dataclasses', 'inspect', 'math')\n"
        "assert 'json' in sys.modules\n"
        "assert not [m for m in unloaded if m in sys.modules], unloaded\n"
        "repr(p.decode('ContentBlock', {'type': 'text', 'text': 'hi', 'annotations': {'priority': 0.5}}))\n"
        "assert not [m for m in unloaded if m in sys.modules], unloaded\n"
        "fold = p.apply_session_update\n"
        "assert fold is sys.modules[p.__name__ + '.session'].apply_session_update\n"
        "assert 'apply_session_update' in vars(p)\n"
        f"from {name} import Request, merge_meta\n"
        "assert Request is p.protocol.Request and merge_meta is p.patch.merge_meta\n"
        "assert p.senders is sys.modules[p.__name__ + '.senders']\n"
        "assert {'Session', 'Request', 'merge_meta', 'decode'} <= set(dir(p))\n"
        'assert p.protocol.CODEC.decode_message(p._jsonrpc.load_message(b\'{"jsonrpc":"2.0","id":1,"result":{}}\')).id == 1\n'
        "assert ('orjson' in sys.modules) is (p._jsonrpc.json_backend() == 'orjson')\n"
        "missing = [n for n in p.__all__ if not hasattr(p, n)]\n"
        "assert not missing, missing\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_no_class_name_ends_in_a_collision_number(name):
    package = load_generated(name)
    models = sys.modules[f"{name}.models"]
    for attribute in models.__all__:
        assert not re.search(r"\d$", attribute), attribute
    assert set(package.DEFINITIONS) <= set(dir(package))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_header_and_metadata(name):
    package = load_generated(name)
    path = SCHEMAS[name]
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert sha == package.SCHEMA_SHA256
    assert path.relative_to(ROOT).as_posix() == package.SCHEMA_FILE
    assert json.loads((ROOT / "schema/SOURCE.json").read_text())["version"] == package.SCHEMA_VERSION
    assert __version__ == package.GENERATOR_VERSION
    for module in ("__init__.py", "models.py", "codec.py", "_runtime.py", "_schema.py"):
        head = (GENERATED / name / module).read_text().splitlines()[:2]
        assert head[0] == f"# Generated by acpgen {__version__} from {package.SCHEMA_FILE}"
        assert sha in head[1]
    assert (GENERATED / name / "py.typed").exists()


GOLDEN = ROOT / "tests/fixtures/golden/kitchen_sink"


def _formatted_files() -> list[str]:
    """What black checks: each runtime module once, as its source (every
    package holds a copy: a header of comments, then the source, which the
    test below holds them to), and every module the templates print, of the
    golden package: a construct of each kind the lowering distinguishes (the
    ACP packages print the same constructs with other names; black over
    their 100,000 lines cost most of the suite's formatting time)."""
    printed = [path for path in sorted(GOLDEN.glob("*.py")) if path.name not in SOURCES]
    return [str(path) for path in [*(SOURCES[name] for name in sorted(SOURCES)), *printed]]


def test_every_runtime_copy_is_its_source_behind_a_comment_header():
    """What lets black check a runtime module once: each package's copy is
    the source with comment lines before it, nothing else."""
    sources = {name: path.read_text(encoding="utf-8") for name, path in SOURCES.items()}
    assert len(sources) >= 10
    for package in [*(GENERATED / name for name in sorted(SCHEMAS)), GOLDEN]:
        for name, source in sources.items():
            if name in MCP_ONLY and not (package.name.endswith("_unstable") or (package / "proxy.py").is_file()):
                # Only a package whose schema has mcp/message (the unstable ones) or a
                # proxy chain (the golden package: its proxy provides MCP servers) gets it.
                assert not (package / name).exists(), f"{package.name}/{name}"
                continue
            if name in PROXY_SOURCES and not (package / "proxy.py").is_file():
                continue  # a package without a proxy chain holds no proxy modules
            copy = (package / name).read_text(encoding="utf-8")
            assert copy.endswith(source), f"{package.name}/{name} is not its runtime source"
            header = copy[: len(copy) - len(source)]
            assert header and all(line.startswith("#") for line in header.splitlines()), f"{package.name}/{name}"


def test_generated_code_is_black_formatted(tmp_path):
    """ruff writes the packages; black must leave them as they are. This is
    what holds the generated code to black's style: a template construct the
    two format differently fails here (run black on the named file to see
    how). black runs cold (its own cache in a temporary directory), with its
    workers on every core, over each runtime module once and every printed
    module (:func:`_formatted_files`)."""
    files = _formatted_files()
    assert len(files) >= 20
    out = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--target-version", "py310", "--line-length", "88", *files],
        capture_output=True,
        text=True,
        env={**os.environ, "BLACK_CACHE_DIR": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"{len(files)} files would be left unchanged" in out.stderr


def test_unset_is_falsy_distinct_from_none_and_the_optional_default():
    p = load_generated("acp_v2")
    update = p.ToolCallUpdate(tool_call_id="c1", title=None)
    assert update.kind is p.UNSET and update.title is None
    assert not p.UNSET and repr(p.UNSET) == "UNSET" and isinstance(p.UNSET, p.Unset)
    assert list(p.Unset) == [p.UNSET] and p.Unset("UNSET") is p.UNSET
    assert p.encode(update) == {"toolCallId": "c1", "title": None}


def test_unset_survives_copy_and_pickle_inside_values():
    p = load_generated("acp_v2")
    update = p.ToolCallUpdate(tool_call_id="c1")
    for clone in (copy.copy(update), copy.deepcopy(update), pickle.loads(pickle.dumps(update))):
        assert clone == update and clone.kind is p.UNSET


def test_encode_refuses_unset_where_a_value_is_expected():
    p = load_generated("acp_v2")
    with pytest.raises(ValueError, match="UNSET has no wire form"):
        p.encode([p.UNSET])
    with pytest.raises(ValueError, match="UNSET has no wire form"):
        p.encode({"a": p.UNSET})


def test_dataclasses_are_slotted_keyword_only_and_documented():
    p = load_generated("acp_v2")
    with pytest.raises(TypeError):
        p.ToolCallUpdate("c1")  # keyword-only
    with pytest.raises(TypeError):
        p.ToolCallUpdate()  # toolCallId is required
    assert not hasattr(p.ToolCallUpdate(tool_call_id="x"), "__dict__")
    assert "upsert for a tool call" in p.ToolCallUpdate.__doc__


def test_variants_are_named_from_their_tags():
    p = load_generated("acp_v2")
    block = p.decode("ContentBlock", {"type": "text", "text": "hi"})
    assert type(block).__name__ == "TextContentBlock" and block.type == "text"
    other = p.decode("ContentBlock", {"type": "_x", "n": 1})
    assert type(other).__name__ == "OtherContentBlock" and other.type == "_x" and other.extra == {"n": 1}


def test_schema_defaults_are_dataclass_defaults():
    p = load_generated("acp_v1")
    caps = p.ClientCapabilities()
    assert caps.fs == p.FileSystemCapabilities(read_text_file=False, write_text_file=False)
    assert caps.terminal is False
    # A fresh value each time: mutable defaults are not shared.
    assert p.ClientCapabilities().fs is not caps.fs
