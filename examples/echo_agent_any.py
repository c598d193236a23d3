"""One echo agent process for ACP v1 and v2 clients: the client's initialize
request chooses (acp_v2.serve_versions), and the v1 agent of echo_agent.py or
the v2 agent of echo_agent_v2.py serves it from then on.

Each version has its own handlers: the two packages' request and update
classes differ (v2 answers session/prompt at once and ends the turn with an
idle state_update), so a handler is written once per version.
Run by a client: python examples/echo_agent_any.py [DELAY]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generated"), str(HERE)]
import acp_v1  # noqa: E402
import acp_v2  # noqa: E402
import echo_agent  # noqa: E402
import echo_agent_v2  # noqa: E402

AGENTS: dict[int, acp_v2.AgentEntry] = {
    1: (acp_v1.AgentSideConnection, echo_agent.EchoAgent),
    2: (acp_v2.AgentSideConnection, echo_agent_v2.EchoAgent),
}

if __name__ == "__main__":
    if len(sys.argv) > 1:  # the delay between streamed words, for both agents
        echo_agent.DELAY = echo_agent_v2.DELAY = float(sys.argv[1])
    asyncio.run(acp_v2.serve_versions(AGENTS))
