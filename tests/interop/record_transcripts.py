"""Re-record the session transcripts in tests/fixtures/transcripts/.

Each transcript is a real session between two official-SDK peers of
tests/interop (the client runs initialize, session/new, a prompt, and a long
prompt that it cancels on the first streamed chunk), captured on the wire by
tests/interop/peers/relay.py: one JSON object per line, ``{"direction":
"client_to_agent" | "agent_to_client", "message": <JSON-RPC message>}``.
Session ids and the point where the cancel lands differ from one recording
to the next.

    .venv/bin/python tests/interop/record_transcripts.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from tests.interop import harness  # noqa: E402

OUT = harness.ROOT / "tests/fixtures/transcripts"
RELAY = [sys.executable, str(harness.PEERS / "relay.py"), "--log"]

TRANSCRIPTS = {
    # file: (client command, agent command, protocol, agent name)
    "python-sdk-v1.jsonl": (
        harness.python_sdk_client,
        harness.python_sdk_agent,
        "v1",
        "python-sdk-echo-agent",
    ),
    "typescript-sdk-v1.jsonl": (
        lambda: harness.ts_sdk_client("v1"),
        lambda: harness.ts_sdk_agent("v1"),
        "v1",
        "typescript-sdk-echo-agent",
    ),
    "typescript-sdk-v2.jsonl": (
        lambda: harness.ts_sdk_client("v2"),
        lambda: harness.ts_sdk_agent("v2"),
        "v2",
        "typescript-sdk-echo-agent",
    ),
}


def record(name: str, directory: Path) -> Path:
    """Record one transcript into ``directory``; check the session went right."""
    client, agent, protocol, agent_name = TRANSCRIPTS[name]
    path = directory / name
    # run in / so that no path of this machine ends up in the session's cwd
    report = harness.run_session(client(), [*RELAY, str(path), "--", *agent()], cwd=Path("/"))
    harness.check_report(report, protocol, agent_name)
    return path


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in TRANSCRIPTS:
        with tempfile.TemporaryDirectory(dir=OUT) as tmp:
            path = record(name, Path(tmp))
            lines = path.read_text(encoding="utf-8").splitlines()
            os.replace(path, OUT / name)
        print(f"{OUT / name}: {len(lines)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
