"""The handshake and versions runtime (``_handshake``, ``_versions``) on
their own: reading a version, choosing a package, naming the sibling
package, the typed errors, and a connection with a tiny method table that
has ``initialize``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acpgen.runtime import _connection as connection
from acpgen.runtime import _handshake as handshake
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime import _transport as transport
from acpgen.runtime import _versions as versions
from acpgen.runtime._runtime import ValidationError

from ..patience import HANG

TIMEOUT = HANG


@pytest.mark.parametrize(
    ("value", "version"),
    [(1, 1), (0, 0), (65535, 65535), ("1", 0), ("0.1.0", 0), (-1, None), (65536, None), (True, None), (None, None)],
)
def test_a_version_reads_as_the_rust_crate_read_it(value, version):
    assert handshake.read_protocol_version(value) == version


@pytest.mark.parametrize(("requested", "chosen"), [(1, 1), (2, 2), (3, 2), (0, 1), (None, 2)])
def test_the_newest_version_at_or_below_the_request_is_chosen(requested, chosen):
    assert versions.choose_version({1: "a", 2: "b"}, requested) == chosen


def test_no_version_to_choose_from_is_an_error():
    with pytest.raises(ValueError, match="no protocol version"):
        versions.choose_version([], 1)


@pytest.mark.parametrize(
    ("package", "own", "version", "sibling"),
    [
        ("acp_v2", 2, 1, "acp_v1"),
        ("acp_v2_unstable", 2, 1, "acp_v1_unstable"),
        ("vendor.acp_v1", 1, 2, "vendor.acp_v2"),
        ("v1", 1, 2, "v2"),
        # Renamed: its own version is not in its name, or not once.
        ("mypkg", 1, 2, None),
        ("old_acp", 1, 2, None),
        ("acp_v12", 1, 2, None),
        ("lv1", 1, 2, None),
        ("acp_v1_v1", 1, 2, None),
        # A name with another version in it names nothing (``acp_v3`` is no
        # package of version 1, whatever its name says).
        ("acp_v3", 1, 2, None),
        ("acp_v2", None, 1, None),
    ],
)
def test_the_sibling_package_is_named_after_this_packages_own_name_and_version(package, own, version, sibling):
    assert handshake.sibling_package(version, own, package=package) == sibling


def test_given_siblings_come_first():
    given = {1: "vendor.legacy"}
    assert handshake.sibling_package(1, 2, given, package="acp_v2") == "vendor.legacy"
    assert handshake.sibling_package(3, 2, given, package="acp_v2") == "acp_v3"


def test_the_own_name_is_the_package_the_handshake_module_is_in():
    assert handshake.PACKAGE == "acpgen.runtime"


def test_a_missing_sibling_decodes_nothing():
    assert handshake.decode_with_sibling("no_such_v2", {"protocolVersion": 1}) == (None, None)
    assert handshake.decode_with_sibling(None, {"protocolVersion": 1}) == (None, None)


def test_only_a_string_version_of_an_initialize_is_replaced():
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1", "x": 1}}
    assert handshake.lenient_initialize(message)["params"] == {"protocolVersion": 0, "x": 1}
    assert message["params"]["protocolVersion"] == "1"  # a copy
    other = {"jsonrpc": "2.0", "id": 1, "method": "other", "params": {"protocolVersion": "1"}}
    assert handshake.lenient_initialize(other) is other
    assert handshake.requested_version(message, strict=True) is None
    assert handshake.requested_version(message) == 0


def test_a_minus_32022_becomes_unsupported_protocol_version_and_nothing_else_does():
    error = handshake.UnsupportedProtocolVersion.from_error(
        rpc.RequestError(-32022, "Unsupported protocol version", {"requested": 1, "supported": [2, "x", 3]})
    )
    assert isinstance(error, handshake.UnsupportedProtocolVersion)
    assert (error.requested, error.supported) == (1, [2, 0, 3])
    assert str(error) == "Unsupported protocol version (-32022): asked for version 1, the agent supports 2, 0, 3"
    other = rpc.RequestError(-32602, "Invalid params")
    assert handshake.UnsupportedProtocolVersion.from_error(other) is other
    bare = handshake.UnsupportedProtocolVersion.from_error(rpc.RequestError(-32022, "no"))
    assert isinstance(bare, handshake.UnsupportedProtocolVersion) and bare.supported == []


def test_a_version_mismatch_says_what_was_chosen():
    mismatch = handshake.VersionMismatch(2, 1, {"protocolVersion": 1})
    assert str(mismatch) == "the agent chose protocol version 1, not 2"
    assert mismatch.answer is None and mismatch.package is None


# ------------------------------------------------------------ a connection


def _decode(name: str, value: Any, strict: bool = False) -> Any:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object for {name}")
    if name == "Init" and ("info" not in value or not isinstance(value.get("protocolVersion"), int)):
        raise ValidationError('missing required property "info"', ("info",))
    return dict(value)


def _encode(value: Any, validate: bool = False) -> Any:
    return value


METHODS = {
    "initialize": rpc.MethodInfo(
        "initialize", request=rpc.RequestInfo("agent", dict, dict, "initialize", "Init", "InitResult")
    ),
    "work": rpc.MethodInfo("work", request=rpc.RequestInfo("agent", dict, dict, "work", "P", "R")),
    "note": rpc.MethodInfo("note", notification=rpc.NotificationInfo("agent", dict, "note", "P")),
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


class Interface:
    async def initialize(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("initialize")

    async def work(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("work")

    async def note(self, params: Any) -> None:
        pass


class AgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = CODEC
    interface = Interface
    protocol_version = 2


class Agent(Interface):
    def __init__(self, conn: Any) -> None:
        self.seen: list[Any] = []
        self.version = conn.protocol_version

    async def initialize(self, params: Any) -> Any:
        self.seen.append(("initialize", params["protocolVersion"]))
        return {"protocolVersion": self.version}

    async def work(self, params: Any) -> Any:
        return "done"

    async def note(self, params: Any) -> None:
        self.seen.append(("note", params))


async def _talk(make: Any, *messages: dict[str, Any], **options: Any) -> tuple[Any, list[dict[str, Any]]]:
    agent_end, peer = transport.memory_pair()
    agent = AgentEnd(make, agent_end, **options)
    agent.start()
    answers = []
    for message in messages:
        await peer.send(json.dumps(message).encode())
        if "id" in message:
            data = await peer.receive()
            assert data is not None
            answers.append(json.loads(data))
    await agent.close()
    return agent.handler, answers


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


INIT_V1 = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
WORK = {"jsonrpc": "2.0", "id": 2, "method": "work", "params": {}}
NOTE = {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}}


def test_an_older_request_that_does_not_decode_is_answered_minus_32022():
    handler, answers = _run(_talk(Agent, INIT_V1, WORK))
    assert answers[0]["error"] == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"requested": 1, "supported": [2]},
    }
    assert answers[1]["error"] == {
        "code": -32600,
        "message": "Invalid request",
        "data": "ACP v2 connection must be initialized before 'work'",
    }
    assert handler.seen == []


def test_the_unsupported_version_handler_answers_instead():
    class Answering(Agent):
        async def unsupported_version(self, requested: int, params: Any) -> Any:
            self.seen.append(("older", requested, params))
            return {"protocolVersion": 2}

    handler, answers = _run(_talk(Answering, INIT_V1, WORK))
    assert answers[0]["result"] == {"protocolVersion": 2}
    assert answers[1]["result"] == "done"  # answered with a result: initialized
    assert handler.seen == [("older", 1, {"protocolVersion": 1})]


def test_a_newer_request_that_does_not_decode_is_invalid_params():
    newer = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 3}}
    _, answers = _run(_talk(Agent, newer))
    assert answers[0]["error"]["code"] == -32602


def test_notifications_before_initialize_are_dropped_and_after_handled():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2, "info": {}}}
    handler, answers = _run(_talk(Agent, NOTE, init, {**NOTE, "params": {"n": 2}}, WORK))
    assert handler.seen == [("initialize", 2), ("note", {"n": 2})]
    assert answers[-1]["result"] == "done"


def test_without_require_initialize_everything_is_served():
    handler, answers = _run(_talk(Agent, NOTE, WORK, require_initialize=False))
    assert answers[0]["result"] == "done" and handler.seen == [("note", {"n": 1})]


def test_serve_versions_refuses_what_comes_before_initialize_and_replays_it():
    class V1End(AgentEnd):
        protocol_version = 1

    async def main() -> list[Any]:
        agent_end, peer = transport.memory_pair()
        agents = {1: (V1End, Agent), 2: (AgentEnd, Agent)}
        serving = asyncio.ensure_future(versions.serve_versions(agents, agent_end))
        init = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "1", "info": {}}}
        answers = []
        for message in (WORK, NOTE, init):
            await peer.send(json.dumps(message).encode())
            if "id" in message:
                data = await peer.receive()
                assert data is not None
                answers.append(json.loads(data))
        await peer.close()
        await asyncio.wait_for(serving, TIMEOUT)
        return answers

    refused, answered = _run(main())
    assert refused["error"]["code"] == -32600
    # A string version reads as 0 and goes to the oldest (V1End, whose
    # handler saw the message replayed to it).
    assert answered == {"jsonrpc": "2.0", "id": 3, "result": {"protocolVersion": 1}}


def test_serve_versions_refuses_a_lone_surrogate_method_or_id_and_goes_on():
    async def main() -> list[Any]:
        agent_end, peer = transport.memory_pair()
        agents = {2: (AgentEnd, Agent)}
        serving = asyncio.ensure_future(versions.serve_versions(agents, agent_end))
        init = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 2, "info": {}}}
        answers = []
        for message in (
            {**WORK, "method": "\ud800"},
            {**WORK, "id": "\udc00"},
            {**WORK, "id": "\udc00", "method": "\ud800"},
            init,
        ):
            # json.dumps writes each surrogate escaped: valid JSON text.
            await peer.send(json.dumps(message).encode())
            data = await peer.receive()
            assert data is not None
            answers.append(json.loads(data.decode("utf-8", errors="strict")))
        await peer.close()
        await asyncio.wait_for(serving, TIMEOUT)
        return answers

    *refused, answered = _run(main())
    assert [(answer["id"], answer["error"]["code"]) for answer in refused] == [
        (2, -32600),
        ("\udc00", -32600),
        ("\udc00", -32600),
    ]
    assert "before '\\ud800'" in refused[0]["error"]["data"]
    assert answered["id"] == 3 and "result" in answered
