"""Client built on acpgen's generated protocol layer (``acp_v1`` or ``acp_v2``,
``spawn_agent``): the same session and JSON report as the SDK clients of
tests/interop.

Spawns an agent command, then runs initialize, session/new, a prompt whose
streamed session/update notifications it collects, and a second, long prompt
that it cancels (session/cancel) as soon as the first chunk of the answer
arrives. A v1 turn ends with the session/prompt response, a v2 turn with the
first idle state_update after the prompt was accepted.

``--protocol any`` offers v2 and goes on in v1 when the agent chooses it
(``acp_v2.spawn_agent_versions``). A refused ``initialize`` is reported as
``initializeError`` (code, requested, supported), an answer in a version the
package does not speak as ``versionMismatch`` (the version chosen and the
class the sibling package decoded it to), and nothing else then.

``--trace FILE``: the connection carries W3C trace context in ``_meta`` and
writes its messages and request spans to FILE (JSON Lines).

    python acpgen_client.py [--protocol v1|v2|any] [--trace FILE] -- AGENT_PROGRAM [ARGS...]
    python acpgen_client.py [--protocol v1|v2] -- ws://HOST:PORT/acp | http://HOST:PORT/acp
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import sys
from pathlib import Path

PATIENCE = 180 * float(os.environ.get("ACPGEN_TEST_PATIENCE") or 1)
"""The bound on the whole run, which only a hang exceeds (tests/patience.py)."""

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

OPTIONS: dict = {"validate_outgoing": True}
"""The connection's options (``--trace`` adds a tracer)."""

PROMPT = "Hello agent, please echo this back"
LONG_PROMPT = " ".join(f"word{i}" for i in range(300))


class RecordingClient:
    """Collects the session updates of the current turn; cancels on request;
    (v2) resolves ``idle`` with the stop reason of an idle state_update."""

    def __init__(self, acp, conn) -> None:
        self.acp, self.conn = acp, conn
        self.updates: list = []
        self.cancel_on_first_chunk = False
        self.idle: asyncio.Future | None = None

    async def session_update(self, params) -> None:
        acp, update = self.acp, params.update
        self.updates.append(update)
        if self.cancel_on_first_chunk and isinstance(update, acp.AgentMessageChunkSessionUpdate):
            self.cancel_on_first_chunk = False
            # session/cancel's params: v1 CancelNotification, v2 CancelSessionNotification
            cancel = getattr(acp, "CancelNotification", None) or acp.CancelSessionNotification
            await self.conn.cancel(cancel(session_id=params.session_id))
        state = getattr(update, "value", None)
        if isinstance(state, getattr(acp, "StateUpdateIdle", ())) and self.idle and not self.idle.done():
            self.idle.set_result(state.value.stop_reason)


async def run_turn(acp, conn, client: RecordingClient, session_id: str, text: str, cancel: bool) -> dict:
    client.updates, client.cancel_on_first_chunk = [], cancel
    client.idle = asyncio.get_running_loop().create_future()
    request = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text=text)])
    response = await conn.prompt(request)
    v2 = hasattr(response, "message_id")
    stop_reason = await client.idle if v2 else response.stop_reason
    chunks = [u for u in client.updates if isinstance(u, acp.AgentMessageChunkSessionUpdate)]
    report = {
        "sent": text,
        "stopReason": stop_reason,
        "updates": [acp.encode(u)["sessionUpdate"] for u in client.updates],
        "text": "".join(getattr(c.content, "text", "") for c in chunks),
    }
    if v2:
        report["messageId"] = response.message_id
    return report


def init_request(acp):
    info = acp.Implementation(name="acpgen-client", version="1")
    if acp.PROTOCOL_VERSION == 1:
        return acp.InitializeRequest(protocol_version=1, client_info=info)
    return acp.InitializeRequest(protocol_version=2, info=info)


@contextlib.asynccontextmanager
async def initialized(protocol: str, make_client, program: str, *args: str):
    """The connection and the agent's answer to initialize."""
    if protocol == "any":
        packages = {version: importlib.import_module(f"acp_v{version}") for version in (1, 2)}
        clients = {
            version: (acp.ClientSideConnection, lambda conn, acp=acp: make_client(acp, conn), init_request(acp))
            for version, acp in packages.items()
        }
        async with packages[2].spawn_agent_versions(clients, program, *args, **OPTIONS) as (conn, init):
            yield conn, init
        return
    acp = importlib.import_module(f"acp_{protocol}")

    def make(conn):
        return make_client(acp, conn)

    if program.startswith(("ws://", "wss://")):
        connecting = acp.connect_agent_ws(make, program, **OPTIONS)
    elif program.startswith(("http://", "https://")):
        connecting = acp.connect_agent_http(make, program, **OPTIONS)
    else:
        connecting = acp.spawn_agent(make, program, *args, **OPTIONS)
    async with connecting as conn:
        yield conn, await conn.initialize(init_request(acp))


async def run(protocol: str, program: str, *args: str) -> dict:
    client = None

    def make_client(acp, conn):
        nonlocal client
        client = RecordingClient(acp, conn)
        return client

    # Each package has its own exception classes.
    packages = [importlib.import_module(f"acp_v{version}") for version in (1, 2)]
    try:
        async with initialized(protocol, make_client, program, *args) as (conn, init):
            return await session(client.acp, conn, client, init)
    except tuple(acp.UnsupportedProtocolVersion for acp in packages) as error:
        outcome = {"code": error.code, "requested": error.requested, "supported": error.supported}
        return {"client": f"acpgen {protocol}", "initializeError": outcome}
    except tuple(acp.VersionMismatch for acp in packages) as error:
        decoded = f"{type(error.answer).__module__}.{type(error.answer).__name__}" if error.answer else None
        outcome = {"requested": error.requested, "chosen": error.chosen, "decoded": decoded}
        return {"client": f"acpgen {protocol}", "versionMismatch": outcome}


async def session(acp, conn, client, init) -> dict:
    protocol = f"v{acp.PROTOCOL_VERSION}"
    session = await conn.new_session(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
    turns = {}
    for name, text in (("prompt", PROMPT), ("cancel", LONG_PROMPT)):
        turns[name] = await run_turn(acp, conn, client, session.session_id, text, name == "cancel")
    try:
        await conn.request("_interop/unknown", {})
        unknown = {"result": "answered"}
    except acp.RequestError as error:
        unknown = {"code": error.code}
    agent_info = init.agent_info if protocol == "v1" else init.info
    return {
        "client": f"acpgen acp_{protocol}",
        "protocolVersion": init.protocol_version,
        "agentInfo": acp.encode(agent_info) if isinstance(agent_info, acp.Implementation) else None,
        "agentCapabilities": acp.encode(init.agent_capabilities if protocol == "v1" else init.capabilities),
        "sessionId": session.session_id,
        **turns,
        "unknownMethod": unknown,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("v1", "v2", "any"), default="v1")
    parser.add_argument("--trace", metavar="FILE", help="carry trace context; write messages and spans to FILE")
    parser.add_argument("agent", nargs="+", help="the agent command")
    args = parser.parse_args()
    if args.trace:
        from trace_log import JsonLinesTracer

        OPTIONS["tracer"] = JsonLinesTracer(args.trace)
    report = asyncio.run(asyncio.wait_for(run(args.protocol, *args.agent), timeout=PATIENCE))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
