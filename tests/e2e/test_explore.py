"""acpgen explore: the interleaving explorer finds the ordering bug of the
official Python SDK's client connection (python-sdk PR #129, "preserve
notification response ordering": an answer returned before the handlers of
the updates that preceded it ran) in the release before the fix, and finds
nothing in the generated packages' client connection, in scenarios where
the agent also sends requests (a permission request, a file read) whose
handler must see the updates before them.

The release before the fix is the pinned test peer, agent-client-protocol
0.12.1 (the newest release on PyPI, whose ``Connection`` resolves a response
in its receive loop while each notification runs in a task of its own; its
``prompt`` alone waits for the session's update handlers). A missing or
differently versioned SDK fails the test with the command that installs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from acpgen.replay import PythonSdkClient, explore, load_transcript, schedules
from acpgen.replay.explore import Answer, GeneratedClient

from ..conftest import ROOT
from ..interop import harness
from ..patience import HANG

LOAD_SCENARIO = ROOT / "tests/fixtures/explore/load-session-v1.acp"
PERMISSION_SCENARIO = ROOT / "tests/fixtures/explore/permission-v1.acp"
SDK_TRANSCRIPT = ROOT / "tests/fixtures/transcripts/python-sdk-v1.jsonl"
ACPGEN = str(Path(sys.executable).with_name("acpgen"))


def test_the_schedules_of_the_load_scenario() -> None:
    """Counted by hand from the script: five agent messages follow another
    agent message (each handed over with it, then all at once); no two
    neighbours may swap (replayed updates precede the session/load answer,
    a turn's updates its prompt's answer, and two updates keep their
    order); the one turn has two updates, so a cancel after 0, 1 or 2 of
    them, each paced and all at once."""
    names = [s.name for s in schedules(load_transcript(LOAD_SCENARIO))]
    assert names == [
        "baseline",
        "together line 9",
        "together line 10",
        "together line 11",
        "together line 14",
        "together line 15",
        "together all",
        "cancel line 12 after 0",
        "cancel line 12 after 0 together",
        "cancel line 12 after 1",
        "cancel line 12 after 1 together",
        "cancel line 12 after 2",
        "cancel line 12 after 2 together",
    ]


def test_the_schedules_of_the_permission_scenario() -> None:
    """Six agent messages follow another agent message, the two requests
    (lines 13 and 16) among them; nothing may swap (a request is never
    swapped, and the rest are a turn's updates and its answer); only the
    second turn, in which the agent sends no request, is cancelled, after
    0, 1 or 2 of its updates."""
    names = [s.name for s in schedules(load_transcript(PERMISSION_SCENARIO))]
    assert names == [
        "baseline",
        "together line 13",
        "together line 16",
        "together line 19",
        "together line 20",
        "together line 23",
        "together line 24",
        "together all",
        "cancel line 21 after 0",
        "cancel line 21 after 0 together",
        "cancel line 21 after 1",
        "cancel line 21 after 1 together",
        "cancel line 21 after 2",
        "cancel line 21 after 2 together",
    ]


def test_our_connection_passes_every_schedule() -> None:
    for scenario in (LOAD_SCENARIO, SDK_TRANSCRIPT, PERMISSION_SCENARIO):
        result = explore(scenario, patience=HANG)
        assert result.divergence is None, str(result.divergence)
        assert result.runs == result.total == len(schedules(load_transcript(scenario)))
        assert result.client == "acp_v1 ClientSideConnection"


def test_the_python_sdk_before_the_fix_answers_before_its_updates_ran() -> None:
    """The SDK's load_session returns while the handler of the last replayed
    update has not run, when that update and the answer arrive together:
    the application's fold at the answer lacks the update's text."""
    harness.require_python_sdk()
    result = explore(LOAD_SCENARIO, PythonSdkClient, patience=HANG)
    assert result.client == "agent-client-protocol 0.12.1 ClientSideConnection"
    divergence = result.divergence
    assert divergence is not None, "the explorer found nothing in the pre-fix SDK"
    # the baseline (the client idle before each message) is right; handing
    # over the last replayed update (line 11) with the answer is not
    assert divergence.schedule.name == "together line 11"
    assert divergence.against == "the wire"
    [difference] = divergence.differences
    # answers[1] is the session/load answer; the wire had delivered "4." before it
    assert difference.path == "$.answers[1].fold['sess-1'].agentMessages['#1'].content[1]"
    assert difference.recorded == {"type": "text", "text": "4."}
    assert difference.missing == "live"


def test_the_python_sdk_prompt_waits_for_its_updates() -> None:
    """Its prompt is guarded by a wait of its own: the recorded SDK session
    (prompts and a cancel, no session/load) passes every schedule."""
    harness.require_python_sdk()
    result = explore(SDK_TRANSCRIPT, PythonSdkClient, patience=HANG)
    assert result.divergence is None, str(result.divergence)


def test_the_command() -> None:
    ours = subprocess.run([ACPGEN, "explore", str(LOAD_SCENARIO)], capture_output=True, text=True, timeout=HANG)
    assert ours.returncode == 0, ours.stdout + ours.stderr
    assert "13 of 13 schedules run" in ours.stdout and "no schedule differs" in ours.stdout
    harness.require_python_sdk()
    sdk = subprocess.run(
        [ACPGEN, "explore", str(LOAD_SCENARIO), "--client", "python-sdk"], capture_output=True, text=True, timeout=HANG
    )
    assert sdk.returncode == 1, sdk.stdout + sdk.stderr
    assert "schedule 'together line 11' differs from the wire:" in sdk.stdout
    assert '"text": "4."}, the application none' in sdk.stdout
    listing = subprocess.run(
        [ACPGEN, "explore", str(LOAD_SCENARIO), "--list"], capture_output=True, text=True, timeout=HANG
    )
    assert listing.stdout.splitlines()[0] == "baseline" and len(listing.stdout.splitlines()) == 13


SET_MODE = """\
# the agent reports the new mode, then answers session/set_mode: the two may come in either order
-> {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
<- {"id": 0, "result": {"protocolVersion": 1}}
-> {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
<- {"id": 1, "result": {"sessionId": "s1", "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}}}
-> {"id": 2, "method": "session/set_mode", "params": {"sessionId": "s1", "modeId": "code"}}
<- {"method": "session/update", "params": {"sessionId": "s1", "update": {"sessionUpdate": "current_mode_update", "currentModeId": "code"}}}
<- {"id": 2, "result": {}}
"""


def test_a_swap_where_either_order_is_allowed(tmp_path: Path) -> None:
    """An update and the answer to session/set_mode may come in either
    order: the swapped schedule runs, and our connection gives the
    baseline's answers and final fold under it; the SDK's set_session_mode
    returns before the mode update's handler ran when both come together."""
    scenario = tmp_path / "set-mode.acp"
    scenario.write_text(SET_MODE)
    names = [s.name for s in schedules(load_transcript(scenario))]
    assert names == ["baseline", "together line 8", "together all", "swap lines 7-8"]
    ours = explore(scenario, patience=HANG)
    assert ours.divergence is None and ours.runs == 4, str(ours.divergence)
    harness.require_python_sdk()
    sdk = explore(scenario, PythonSdkClient, patience=HANG)
    assert sdk.divergence is not None and sdk.divergence.schedule.name == "together line 8"
    [difference] = sdk.divergence.differences
    assert difference.path == "$.answers[2].fold.s1.currentModeId"
    assert (difference.recorded, difference.live) == ("code", None)


def test_the_python_sdk_asks_the_application_before_its_updates_ran() -> None:
    """The SDK's handler of the permission request runs while the handler
    of the tool call it names, delivered with it, has not: the application
    is asked about a tool call it has not shown."""
    harness.require_python_sdk()
    result = explore(PERMISSION_SCENARIO, PythonSdkClient, patience=HANG)
    divergence = result.divergence
    assert divergence is not None, "the explorer found nothing in the pre-fix SDK"
    assert divergence.schedule.name == "together line 13"
    assert divergence.against == "the wire"
    paths = [d.path for d in divergence.differences]
    assert "$.requests[0].fold['sess-1'].toolCalls['call-1']" in paths
    [tool] = [d for d in divergence.differences if d.path.endswith(".toolCalls['call-1']")]
    assert tool.recorded["title"] == "Read notes.txt" and tool.missing == "live"


class ChangingClient(GeneratedClient):
    """Our connection, whose application answers the permission request
    as recorded in the first run only, ``cancelled`` in every run after."""

    runs = 0

    def __init__(self, package: Any) -> None:
        super().__init__(package)
        ChangingClient.runs += 1
        self.run = ChangingClient.runs

    async def start(self, receive: Any, send: Any, render: Any, answer: Answer) -> None:
        async def changed(method: str, params: Any) -> tuple[str, Any]:
            kind, value = await answer(method, params)
            if self.run > 1 and method == "session/request_permission":
                value = {"outcome": {"outcome": "cancelled"}}
            return kind, value

        await super().start(receive, send, render, changed)


def test_the_clients_answers_to_the_agent_are_compared_with_the_baseline() -> None:
    """The client's answer to a request of the agent, as it went out, is
    part of the outcome: another answer than the baseline's differs."""
    ChangingClient.runs = 0
    result = explore(PERMISSION_SCENARIO, ChangingClient, patience=HANG)
    divergence = result.divergence
    assert divergence is not None and divergence.schedule.name == "together line 13"
    assert divergence.against == "the baseline"
    found = {d.path: (d.recorded, d.live) for d in divergence.differences}
    assert found["$.replies[0][2].outcome.outcome"] == ("selected", "cancelled")
