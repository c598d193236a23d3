"""``acpgen replay`` and ``acpgen explore``: a recorded session played
against live peers, and one exchange under many delivery schedules.

Library use::

    from acpgen.replay import replay_agent, replay_to_agent, replay_to_client, explore

    # the agent side of a recording, as a connection factory for tests
    replay = replay_agent("session.jsonl")          # acp_v1 or acp_v2, by the recording
    async with replay(MyClient) as conn:             # a ClientSideConnection, joined in memory
        await conn.initialize(...)                   # ... the client's session as recorded
    assert replay.result.ok, [str(f) for f in replay.result.findings]

    # the same with a client process, which starts the replay agent itself
    result, process = replay_to_client("session.jsonl", ["python", "my_client.py", "--", "{agent}"])

    # the client side of a recording, driving an agent process
    result = replay_to_agent("session.jsonl", ["python", "my_agent.py"])

    # the first delivery schedule whose outcome differs, or None
    explore("scenario.acp").divergence

A :class:`~.script.ReplayResult` holds the findings (:class:`~.script.Finding`:
its kind, the recorded line, and each difference with its JSON path), both
session folds (``session_to_json`` snapshots, by session id, the replayed
one with its ids put back to the recorded ones) and ``ok``.

Modules: :mod:`.transcript` reads transcripts and scripts, :mod:`.match`
matches messages up to ids and volatile fields, :mod:`.fold` folds a run
with a generated package, :mod:`.agent` and :mod:`.client` play each side,
:mod:`.runs` runs them against processes, :mod:`.explore` is the explorer,
:mod:`.script` what they share. ``python -m acpgen.replay serve`` is the
replay agent a client under test starts.
"""

from __future__ import annotations

from .client import replay_to_agent
from .explore import ExploreResult, GeneratedClient, PythonSdkClient, Schedule, explore, schedules
from .runs import AgentReplay, replay_agent, replay_to_client
from .script import Finding, ReplayResult
from .transcript import Record, Transcript, load_transcript

__all__ = [
    "AgentReplay",
    "ExploreResult",
    "Finding",
    "GeneratedClient",
    "PythonSdkClient",
    "Record",
    "ReplayResult",
    "Schedule",
    "Transcript",
    "explore",
    "load_transcript",
    "replay_agent",
    "replay_to_agent",
    "replay_to_client",
    "schedules",
]
