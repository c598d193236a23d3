"""No schema name can shadow a name the package's own code binds: for every
name the runtime modules define, a ``$defs`` entry of that name and a method
whose handler takes it; the package still decodes, encodes and connects."""

from __future__ import annotations

import asyncio
import keyword

import pytest
from acpgen.compile.naming import pascal
from acpgen.compile.reserved import runtime_attributes, runtime_names

from ..conftest import schema_with

DEF_NAMES = sorted(
    n for n in runtime_names() if n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("_")
)
# The connection's attributes, and the extension handlers every interface
# has besides the schema's methods.
HANDLER_NAMES = sorted({n for n in runtime_attributes() if not n.startswith("_")} | {"ext_method", "ext_notification"})
OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _schema() -> dict:
    defs: dict = {name: OBJECT for name in DEF_NAMES}
    # A value the lenient decoder salvages (the default of a bad field)
    # calls the runtime's salvage helper, which a $defs "salvage" replaced.
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
def package(tmp_path_factory):
    import importlib
    import json
    import sys

    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    tmp = tmp_path_factory.mktemp("collisions")
    path = tmp / "schema.json"
    path.write_text(json.dumps(_schema()), encoding="utf-8")
    write_packages(tmp / "out", {"clash_pkg": build_package(path, "clash_pkg")})
    sys.path.insert(0, str(tmp / "out"))
    try:
        yield importlib.import_module("clash_pkg")
    finally:
        sys.path.remove(str(tmp / "out"))


def test_the_test_covers_the_names_the_reports_named():
    assert {"salvage", "NotPlainJson", "ValidationError", "furthest", "check_variants", "FLOAT_MAX"} <= set(DEF_NAMES)
    assert {"start", "run", "close", "request", "notify", "grace", "handler", "process", "ext_method"} <= set(
        HANDLER_NAMES
    )


def test_every_runtime_name_as_a_definition_decodes_and_encodes(package):
    for name in DEF_NAMES:
        cls = package.DEFINITIONS[name]
        value = package.decode(name, {"n": 1})
        assert type(value) is cls, name
        assert package.encode(value) == {"n": 1}, name
        with pytest.raises(package.ValidationError):
            package.decode(name, {"n": "bad"})


def test_the_runtime_helpers_are_still_the_runtime_s(package):
    # The package's own names are the runtime's, the schema's classes were renamed.
    assert issubclass(package.ValidationError, ValueError)
    assert package.DEFINITIONS["ValidationError"] is not package.ValidationError
    assert package.UNSET is not package.DEFINITIONS["UNSET"]
    with pytest.raises(package.ValidationError):
        package.decode("Holder", {"n": "bad"})
    with pytest.raises(package.ValidationError):
        package.decode("Holder", {"n": 1, "tags": [1]}, strict=True)
    assert package.decode("Holder", {"n": 1, "tags": 7}).tags == []


def test_a_handler_named_like_a_connection_attribute_is_renamed_and_served(package):
    handlers = {name: package.METHODS[f"x/{name}"].request.handler for name in HANDLER_NAMES}
    assert all(handler != name for name, handler in handlers.items())
    params_classes = {name: package.METHODS[f"x/{name}"].request.params for name in HANDLER_NAMES}
    result_classes = {name: package.METHODS[f"x/{name}"].request.result for name in HANDLER_NAMES}

    def make_handler(name):
        async def handle(self, params):
            return result_classes[name](n=params.n + 1)

        return handle

    Agent = type("Agent", (package.Agent,), {handlers[n]: make_handler(n) for n in HANDLER_NAMES})

    async def main():
        agent, client = package.connect_in_memory(
            lambda conn: Agent(), lambda conn: type("Client", (package.Client,), {})()
        )
        try:
            for i, name in enumerate(HANDLER_NAMES):
                call = getattr(client, handlers[name])
                result = await asyncio.wait_for(call(params_classes[name](n=i)), 10)
                assert result == result_classes[name](n=i + 1), name
        finally:
            await client.close()
            await agent.close()

    asyncio.run(main())
