"""The pipe from the proxy to the observer: frames of a header (kind, the
time the chunk was read as seconds since the epoch, payload length) and
the payload, the bytes as read."""

from __future__ import annotations

import struct

HEADER = struct.Struct("<BdI")
"""kind (one byte), time (a double), payload length (four bytes)."""

CLIENT_TO_AGENT = 0
"""A chunk the editor wrote to the agent."""
AGENT_TO_CLIENT = 1
"""A chunk the agent wrote to the editor."""
END_CLIENT_TO_AGENT = 2
"""The editor closed its side (no payload)."""
END_AGENT_TO_CLIENT = 3
"""The agent closed its stdout (no payload)."""
DROPPED = 4
"""The proxy's backlog overflowed: what follows this frame is not the
whole traffic, so recording and validation stop (no payload)."""

DIRECTIONS = {CLIENT_TO_AGENT: "client_to_agent", AGENT_TO_CLIENT: "agent_to_client"}
ENDS = {END_CLIENT_TO_AGENT: CLIENT_TO_AGENT, END_AGENT_TO_CLIENT: AGENT_TO_CLIENT}
