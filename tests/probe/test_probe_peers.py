"""acpgen probe against real agents: the examples (v1 and v2), the official
Python SDK's echo agent and the TypeScript SDK's (v1 and v2). None fails a
MUST check, the examples none at all; the SHOULD checks each SDK fails are
pinned, with the reason."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import ModuleType

import pytest
from acpgen.probe import Report, probe
from acpgen.validate.loader import load_package

from tests.interop import harness

from ..patience import HANG

ROOT = Path(__file__).resolve().parent.parent.parent
TIMEOUT = HANG

AGENTS: dict[str, tuple[int, set[str]]] = {
    # name: (the version it negotiates, the checks it fails: SHOULD only)
    "examples/echo_agent.py": (1, set()),
    "examples/echo_agent_v2.py": (2, set()),
    # The Python SDK 0.12.1 handles requests before initialize as if initialized.
    "python-sdk": (1, {"before-initialize"}),
    # The TypeScript SDK 2.4.0 refuses a string protocolVersion with -32602 (zod's number).
    "ts-sdk-v1": (1, {"initialize-string-version"}),
    "ts-sdk-v2": (2, {"initialize-string-version"}),
}


def _command(name: str) -> list[str]:
    if name.startswith("examples/"):  # 2 ms between words: session/cancel arrives mid-turn
        return [sys.executable, str(ROOT / name), "0.002"]
    if name == "python-sdk":
        return harness.python_sdk_agent()
    return harness.ts_sdk_agent(name.rsplit("-", 1)[1])


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    packages: dict[int, ModuleType] = {
        1: load_package(str(ROOT / "generated" / "acp_v1")),
        2: load_package(str(ROOT / "generated" / "acp_v2")),
    }
    commands = {name: _command(name) for name in AGENTS}

    async def run() -> dict[str, Report]:
        gate = asyncio.Semaphore(2)

        async def one(name: str) -> tuple[str, Report]:
            async with gate:
                return name, await probe(commands[name], packages, timeout=TIMEOUT)

        return dict(await asyncio.gather(*(one(name) for name in AGENTS)))

    return asyncio.run(run())


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_agent_passes_the_probe(reports: dict[str, Report], name: str) -> None:
    report = reports[name]
    version, should_fail = AGENTS[name]
    shown = "\n".join(report.text())
    assert report.version == version, shown
    assert not report.must_failed, shown
    assert {r.check.name for r in report.results if r.status == "fail"} == should_fail, shown
    passed = {r.check.name for r in report.results if r.status == "pass"}
    assert {"initialize", "session-new", "prompt", "cancel", "cancel-request", "unknown-method"} <= passed
