"""Schema names are kept exactly as the schema spells them, whatever the
generated code binds itself: a schema defining every public name of every
runtime module, every builtin and every fixed name the generated modules
export generates without a rename (keywords aside), imports and
round-trips (it is type-checked with the ACP packages, in one mypy and one
pyright run: tests/e2e/test_typecheck.py); the fixed names stay reachable
from their modules. A
method whose handler would replace an attribute of the runtime's
connection is still renamed (class attributes are reserved) and served."""

from __future__ import annotations

import ast
import asyncio
import builtins
import keyword
import sys

import pytest
from acpgen.compile.passes.attributes import runtime_attributes
from acpgen.compile.passes.identifiers import pascal
from acpgen.runtime import SOURCES
from acpgen.views import names as fixed

from ..conftest import schema_with
from ..patience import HANG


def _public_module_names(source: str) -> set[str]:
    """The public names a module binds at its top level (in ``if`` and
    ``try`` blocks too), read from its source."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).partition(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                    visit(block)

    visit(ast.parse(source).body)
    return {n for n in found if not n.startswith("_")}


RUNTIME_NAMES = set().union(*(_public_module_names(p.read_text(encoding="utf-8")) for p in SOURCES.values()))
BUILTIN_NAMES = {n for n in dir(builtins) if not n.startswith("_")}
FIXED_NAMES = {
    *fixed.CODEC_NAMES,
    *fixed.PATCH_NAMES,
    *fixed.PROTOCOL_NAMES,
    *(n for _, n in fixed.CONNECTION_FROM_RUNTIME),
    *fixed.CONNECTION_DEFINED,
    *fixed.PACKAGE_METADATA,
    *fixed.PACKAGE_FROM_RUNTIME,
}
DEF_NAMES = sorted(RUNTIME_NAMES | BUILTIN_NAMES | FIXED_NAMES)
KEYWORDS = sorted(n for n in DEF_NAMES if keyword.iskeyword(n) or n == "annotations")
"""``None``, ``True``, ``False`` and ``annotations`` (which ``from __future__
import annotations`` binds in every module): the one rename, a trailing
underscore."""

# The connection's attributes, and the extension handlers every interface
# has besides the schema's methods.
HANDLER_NAMES = sorted({n for n in runtime_attributes() if not n.startswith("_")} | {"ext_method", "ext_notification"})
OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

# Shapes whose generated code names builtins (an enum on str, annotations
# of str, int, list, dict and Any, a union), each under a builtin's name.
SHAPED: dict[str, tuple[dict, object, object]] = {
    # name: (schema, a valid wire value, a value strict mode refuses)
    "str": ({"type": "string", "enum": ["a", "b"]}, "a", "c"),
    "int": ({"type": "integer", "minimum": 0}, 5, -1),
    "list": ({"type": "array", "items": {"$ref": "#/$defs/str"}}, ["a", "b"], ["c"]),
    "dict": (
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"$ref": "#/$defs/int"},
                "kinds": {"$ref": "#/$defs/list"},
                "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
                "extra": {},
                "maybe": {"type": ["number", "null"]},
                "flag": {"type": "boolean", "default": False},
                "other": {"$ref": "#/$defs/type"},
            },
            "required": ["name", "count"],
        },
        {
            "name": "x",
            "count": 1,
            "kinds": ["a"],
            "tags": {"t": 1},
            "extra": [1, {"a": None}],
            "maybe": 1.5,
            "flag": True,
        },
        {"name": 1, "count": 1},
    ),
    # Fields named like the builtins their neighbours' annotations use.
    "bytes": (
        {
            "type": "object",
            "properties": {
                "str": {"type": "string"},
                "int": {"type": "integer"},
                "list": {"type": "array", "items": {"type": "string"}},
                "dict": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "float": {"type": "number"},
                "bool": {"type": "boolean"},
                "name": {"type": "string"},
            },
            "required": ["str", "int", "name"],
        },
        {"str": "s", "int": 1, "list": ["a"], "dict": {"k": True}, "float": 0.5, "bool": False, "name": "n"},
        {"str": "s", "int": 1, "name": 2},
    ),
    "Any": ({"type": "object", "properties": {"value": {}}, "required": ["value"]}, {"value": {"x": 1}}, {}),
    "tuple": (
        {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"type": {"const": "a"}, "s": {"$ref": "#/$defs/str"}},
                    "required": ["type", "s"],
                },
                {
                    "type": "object",
                    "properties": {"type": {"const": "b"}, "d": {"$ref": "#/$defs/dict"}},
                    "required": ["type", "d"],
                },
            ],
            "discriminator": {"propertyName": "type"},
        },
        {"type": "b", "d": {"name": "y", "count": 2, "flag": False}},
        {"type": "a", "s": "z"},
    ),
}


def _schema() -> dict:
    defs: dict = {name: OBJECT for name in DEF_NAMES}
    defs.update({name: shape for name, (shape, _, _) in SHAPED.items()})
    # A value the lenient decoder salvages (the default of a bad field)
    # calls the runtime's salvage helper, which a $defs "salvage" shares a name with.
    defs["Holder"] = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "x-deserialize-default-on-error": True,
            },
        },
        "required": ["n"],
    }
    for name in HANDLER_NAMES:
        stem = pascal(name)
        for suffix in ("Request", "Response"):
            defs[stem + suffix] = {**OBJECT, "x-method": f"x/{name}", "x-side": "agent"}
    return schema_with(defs)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    import json

    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    tmp = tmp_path_factory.mktemp("collisions")
    path = tmp / "schema.json"
    path.write_text(json.dumps(_schema()), encoding="utf-8")
    write_packages(tmp / "out", {"clash_pkg": build_package(path, "clash_pkg")})
    return tmp / "out"


@pytest.fixture(scope="module")
def package(generated):
    import importlib

    sys.path.insert(0, str(generated))
    try:
        yield importlib.import_module("clash_pkg")
    finally:
        sys.path.remove(str(generated))


def test_the_test_covers_the_names_that_were_renamed_before():
    assert {"salvage", "NotPlainJson", "ValidationError", "furthest", "check_variants", "FLOAT_MAX"} <= set(DEF_NAMES)
    assert {"UNSET", "Connection", "spawn_agent", "decode", "Agent", "METHODS", "DEFINITIONS"} <= set(DEF_NAMES)
    assert {"str", "list", "dict", "object", "type", "isinstance", "getattr", "globals", "TypeError"} <= set(DEF_NAMES)
    assert KEYWORDS == ["False", "None", "True", "annotations"]
    assert {"start", "run", "close", "request", "notify", "grace", "handler", "process", "ext_method"} <= set(
        HANDLER_NAMES
    )


def test_every_name_is_a_class_of_its_own_spelling_in_models_and_the_package(package):
    models = _module(package, "models")
    renamed = []
    for name in DEF_NAMES:
        expected = name + "_" if name in KEYWORDS else name
        cls = getattr(models, expected, None)
        if cls is None or (isinstance(cls, type) and cls.__name__ != expected):
            renamed.append(name)
            continue
        assert expected in models.__all__, name
        # The schema wins at the package level.
        assert getattr(package, name) is cls, name
    assert renamed == []


def _module(package, name):
    # The schema defines `codec`, `models` ... too: the package's attribute
    # is the schema's class, the module is imported by its full name.
    import importlib

    return importlib.import_module(f"{package.__name__}.{name}")


def test_every_name_decodes_and_encodes_and_strict_mode_refuses_a_bad_value(package):
    codec = _module(package, "codec")
    decode, encode = codec.decode, codec.encode
    error = _module(package, "_runtime").ValidationError
    for name in DEF_NAMES:
        if name in SHAPED:
            continue
        value = decode(name, {"n": 1})
        assert type(value).__name__ == (name + "_" if name in KEYWORDS else name), name
        assert encode(value) == {"n": 1}, name
        with pytest.raises(error):
            decode(name, {"n": "bad"}, strict=True)
    for name, (_, good, bad) in SHAPED.items():
        assert encode(decode(name, good, strict=True)) == good, name
        with pytest.raises(error):
            decode(name, bad, strict=True)


def test_the_shapes_named_like_builtins_are_what_they_say(package):
    m = _module(package, "models")
    assert issubclass(m.str, str) and m.str("a") is m.str.A
    d = _module(package, "codec").decode("dict", SHAPED["dict"][1])
    assert type(d) is m.dict and d.kinds == [m.str.A] and d.count == 5 - 4 and d.tags == {"t": 1}
    assert m.dict(name="x", count=1).flag is False
    variant = _module(package, "codec").decode("tuple", SHAPED["tuple"][1])
    assert type(variant.d) is m.dict and variant.d.name == "y"
    # Lenient mode keeps the unknown shape as a salvage of the field's default.
    assert _module(package, "codec").decode("Holder", {"n": 1, "tags": 7}).tags == []
    with pytest.raises(_module(package, "_runtime").ValidationError):
        _module(package, "codec").decode("Holder", {"n": 1, "tags": [1]}, strict=True)


def test_the_fixed_names_stay_reachable_from_their_modules(package):
    assert package.UNSET is _module(package, "models").UNSET and _module(package, "_runtime").UNSET is not package.UNSET
    assert issubclass(_module(package, "_runtime").ValidationError, ValueError)
    assert _module(package, "connection").Connection is _module(package, "_connection").Connection
    assert issubclass(_module(package, "connection").ClientSideConnection, _module(package, "connection").Connection)
    assert (
        callable(_module(package, "connection").spawn_agent)
        and package.spawn_agent is _module(package, "models").spawn_agent
    )
    assert isinstance(_module(package, "protocol").METHODS, dict) and "x/run" in _module(package, "protocol").METHODS
    assert callable(_module(package, "codec").decode) and package.decode is _module(package, "models").decode
    assert package.DEFINITIONS is _module(package, "models").DEFINITIONS
    # What the package's __all__ lists, it has.
    assert all(hasattr(package, name) for name in package.__all__)


def test_a_handler_named_like_a_connection_attribute_is_renamed_and_served(package):
    protocol, connection = _module(package, "protocol"), _module(package, "connection")
    handlers = {name: protocol.METHODS[f"x/{name}"].request.handler for name in HANDLER_NAMES}
    assert all(handler != name for name, handler in handlers.items())
    params_classes = {name: protocol.METHODS[f"x/{name}"].request.params for name in HANDLER_NAMES}
    result_classes = {name: protocol.METHODS[f"x/{name}"].request.result for name in HANDLER_NAMES}

    def make_handler(name):
        async def handle(self, params):
            return result_classes[name](n=params.n + 1)

        return handle

    Agent = type("Agent", (protocol.Agent,), {handlers[n]: make_handler(n) for n in HANDLER_NAMES})

    async def main():
        agent, client = connection.connect_in_memory(
            lambda conn: Agent(), lambda conn: type("Client", (protocol.Client,), {})()
        )
        try:
            for i, name in enumerate(HANDLER_NAMES):
                call = getattr(client, handlers[name])
                result = await asyncio.wait_for(call(params_classes[name](n=i)), HANG)
                assert result == result_classes[name](n=i + 1), name
        finally:
            await client.close()
            await agent.close()

    asyncio.run(main())
