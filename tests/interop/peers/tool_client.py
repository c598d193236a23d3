"""A client built on the generated ``acp_v1`` or ``acp_v2`` that sends one
prompt, records every session update, answers the agent's permission
request with its first option (checking it names a tool call it has seen),
waits for the turn to end (v1: the prompt's answer; v2: the first idle
state_update) and prints one JSON report.

    python tool_client.py [--protocol v1|v2] -- AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
from pathlib import Path

PATIENCE = 180 * float(os.environ.get("ACPGEN_TEST_PATIENCE") or 1)
"""The bound on the whole run, which only a hang exceeds (tests/patience.py)."""

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))


def make_client(acp, report: dict):
    v2 = acp.PROTOCOL_VERSION == 2

    class ToolClient(acp.Client):
        def __init__(self, conn) -> None:
            self.conn = conn
            self.idle: asyncio.Future = asyncio.get_running_loop().create_future()
            self.tools: dict[str, dict] = {}

        async def session_update(self, params) -> None:
            wire = acp.encode(params.update)
            report["updates"].append(wire["sessionUpdate"])
            if wire["sessionUpdate"] in ("tool_call", "tool_call_update"):
                self.tools.setdefault(wire["toolCallId"], {}).update(
                    {k: v for k, v in wire.items() if k in ("title", "status", "kind")}
                )
            if wire["sessionUpdate"] == "agent_message_chunk":
                report["text"] += wire["content"].get("text", "")
            if v2 and wire["sessionUpdate"] == "state_update" and wire["state"] == "idle" and not self.idle.done():
                self.idle.set_result(wire.get("stopReason"))

        async def request_permission(self, params):
            wire = acp.encode(params)
            tool = wire["subject"]["toolCall"] if v2 else wire["toolCall"]
            report["permission"] = {
                "toolCallId": tool["toolCallId"],
                "seen": tool["toolCallId"] in self.tools,
                "options": [o["optionId"] for o in wire["options"]],
            }
            if v2:
                report["permission"]["title"] = wire["title"]
            first = params.options[0].option_id
            return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id=first))

    return ToolClient


async def run(protocol: str, program: str, *args: str) -> dict:
    acp = importlib.import_module(f"acp_{protocol}")
    report: dict = {"client": f"tool_client {protocol}", "updates": [], "text": ""}
    async with acp.spawn_agent(make_client(acp, report), program, *args, validate_outgoing=True) as conn:
        info = acp.Implementation(name="tool-client", version="1")
        if acp.PROTOCOL_VERSION == 1:
            init = await conn.initialize(acp.InitializeRequest(protocol_version=1, client_info=info))
            session = await conn.new_session(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        else:
            init = await conn.initialize(acp.InitializeRequest(protocol_version=2, info=info))
            session = await conn.new_session(acp.NewSessionRequest(cwd=acp.AbsolutePath(os.getcwd())))
        report["protocolVersion"] = init.protocol_version
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="read notes.txt")])
        response = await conn.prompt(prompt)
        report["stopReason"] = await conn.handler.idle if acp.PROTOCOL_VERSION == 2 else response.stop_reason
        report["tools"] = conn.handler.tools
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("v1", "v2"), default="v1")
    parser.add_argument("agent", nargs="+", help="the agent command")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(asyncio.wait_for(run(args.protocol, *args.agent), timeout=PATIENCE))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
