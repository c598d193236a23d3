"""acpgen probe against real agents: every example agent in examples/ (found
by the agent entry point it calls, so a new example is probed too), the
official Python SDK's echo agent and the TypeScript SDK's (v1 and v2). No
example fails a check at all (an example must not teach the mistakes the probe
catches); the SDKs fail no MUST check, and the SHOULD and advisory checks each
fails are pinned, with the reason. One probe run per agent, two at a time."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from acpgen.probe import Report, probe
from acpgen.validate.loader import load_package

from tests.interop import harness

from ..patience import HANG

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT = HANG

AGENT_ENTRY = re.compile(r"\.(run_agent_stdio|serve_versions|serve_agent|asgi_agent_app)\(")
"""What an example agent calls to serve (a client example calls none of these)."""

NOT_PROBED = {
    # acpgen probe starts the agent as a process and speaks to it on stdio: it has no WebSocket or HTTP mode.
    "echo_agent_remote.py": "serves echo_agent.py's EchoAgent over WebSocket and HTTP only (probed as echo_agent.py)",
}

DELAY = "0.002"
"""Two milliseconds between streamed words: session/cancel arrives mid-turn."""


def example_agents() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.py") if AGENT_ENTRY.search(p.read_text()))


def _example_version(name: str) -> int:
    """The version an example negotiates with the probe, which asks for 2: the
    newest of the generated packages the example imports."""
    return max(int(v) for v in re.findall(r"^import acp_v(\d+)\b", (EXAMPLES / name).read_text(), re.MULTILINE))


SDKS: dict[str, tuple[int, set[str]]] = {
    # name: (the version it negotiates, the checks it fails: SHOULD and advisory only)
    # The Python SDK 0.12.1 handles requests before initialize as if initialized.
    "python-sdk": (1, {"before-initialize"}),
    # The TypeScript SDK 2.4.0 refuses a string protocolVersion with -32602 (zod's number): advisory.
    "ts-sdk-v1": (1, {"initialize-string-version"}),
    "ts-sdk-v2": (2, {"initialize-string-version"}),
}

AGENTS: dict[str, tuple[int, set[str]]] = {
    **{f"examples/{name}": (_example_version(name), set()) for name in example_agents() if name not in NOT_PROBED},
    **SDKS,
}


def _command(name: str, scratch: Path) -> list[str]:
    if name == "examples/resumable_agent.py":  # SESSIONS_DIR [DELAY]
        return [sys.executable, str(ROOT / name), str(scratch / "sessions"), DELAY]
    if name.startswith("examples/"):  # [DELAY]
        return [sys.executable, str(ROOT / name), DELAY]
    if name == "python-sdk":
        return harness.python_sdk_agent()
    return harness.ts_sdk_agent(name.rsplit("-", 1)[1])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    packages: dict[int, ModuleType] = {
        1: load_package(str(ROOT / "generated" / "acp_v1")),
        2: load_package(str(ROOT / "generated" / "acp_v2")),
    }
    scratch = tmp_path_factory.mktemp("probe-peers")
    commands = {name: _command(name, scratch) for name in AGENTS}

    async def run() -> dict[str, Report]:
        gate = asyncio.Semaphore(2)

        async def one(name: str) -> tuple[str, Report]:
            async with gate:
                return name, await probe(commands[name], packages, timeout=TIMEOUT)

        return dict(await asyncio.gather(*(one(name) for name in AGENTS)))

    return asyncio.run(run())


def test_every_example_agent_is_found() -> None:
    found = example_agents()
    assert {"echo_agent.py", "echo_agent_v2.py", "echo_agent_any.py", "resumable_agent.py"} <= set(found), found
    assert not {name for name in found if "client" in name}, found
    assert set(NOT_PROBED) <= set(found), "an example left out of the probe no longer exists"
    for name in NOT_PROBED:  # what it serves is probed over stdio as echo_agent.py
        assert "from echo_agent import EchoAgent" in (EXAMPLES / name).read_text()


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_agent_passes_the_probe(reports: dict[str, Report], name: str) -> None:
    report = reports[name]
    version, should_fail = AGENTS[name]
    shown = "\n".join(report.text())
    failed = {r.check.name: r.check.tier for r in report.results if r.status == "fail"}
    must = sorted(check for check, level in failed.items() if level == "MUST")
    assert not report.must_failed, f"{name} fails the MUST check(s) {', '.join(must)}:\n{shown}"
    assert set(failed) == should_fail, shown
    assert {failed[check] for check in should_fail} <= {"SHOULD", "advisory"}, shown
    assert report.version == version, shown
    passed = {r.check.name for r in report.results if r.status == "pass"}
    assert {"initialize", "session-new", "prompt", "cancel", "cancel-request", "unknown-method"} <= passed
