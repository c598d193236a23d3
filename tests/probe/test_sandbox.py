"""The probe's sandboxed client side (--client-capabilities): files and
commands confined to the directory it makes, which is gone afterwards."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acpgen.probe.peer import Refusal
from acpgen.probe.sandbox import Sandbox

from ..patience import HANG


def _in(sandbox: Sandbox, scenario: Callable[[], Awaitable[None]]) -> None:
    """Run ``scenario`` in one event loop, then close the sandbox."""

    async def run() -> None:
        try:
            await asyncio.wait_for(scenario(), HANG)
        finally:
            await sandbox.close()

    asyncio.run(run())
    assert not sandbox.root.exists()


async def _refused(sandbox: Sandbox, method: str, params: dict[str, Any]) -> Refusal:
    try:
        answer = await sandbox.answer(method, {"sessionId": "s", **params})
    except Refusal as refusal:
        return refusal
    raise AssertionError(f"{method} {params} was answered {answer}")


def test_files_are_read_and_written_inside_and_refused_outside(tmp_path: Path) -> None:
    sandbox = Sandbox(fs=True, terminal=False)
    root = sandbox.root

    async def scenario() -> None:
        assert await sandbox.answer("fs/write_text_file", {"path": str(root / "a/b.txt"), "content": "1\n2\n3\n"}) == {}
        assert (root / "a/b.txt").read_text() == "1\n2\n3\n"
        assert await sandbox.answer("fs/read_text_file", {"path": "a/b.txt", "line": 2, "limit": 1}) == {
            "content": "2\n"
        }
        secret = tmp_path / "secret.txt"
        secret.write_text("no")
        (root / "link").symlink_to(tmp_path)
        for path in (str(secret), "../" + secret.name, "link/secret.txt"):
            refusal = await _refused(sandbox, "fs/read_text_file", {"path": path})
            assert refusal.code == -32602 and "outside the probe's sandbox" in refusal.message, path
        refusal = await _refused(sandbox, "fs/write_text_file", {"path": str(tmp_path / "new.txt"), "content": "x"})
        assert refusal.code == -32602 and not (tmp_path / "new.txt").exists()
        assert (await _refused(sandbox, "fs/read_text_file", {"path": "missing.txt"})).code == -32002
        assert (await _refused(sandbox, "terminal/create", {"command": "true"})).code == -32601  # not advertised

    _in(sandbox, scenario)


def test_commands_run_inside_and_are_refused_elsewhere() -> None:
    sandbox = Sandbox(fs=False, terminal=True)
    root = sandbox.root
    script = "import os, sys; print(os.getcwd()); sys.stdout.write('x' * 100); sys.exit(3)"

    async def scenario() -> None:
        made = await sandbox.answer("terminal/create", {"command": sys.executable, "args": ["-S", "-c", script]})
        ids = {"terminalId": made["terminalId"]}
        assert await sandbox.answer("terminal/wait_for_exit", ids) == {"exitCode": 3, "signal": None}
        output = await sandbox.answer("terminal/output", ids)
        assert output["output"].splitlines()[0] == str(root) and output["exitStatus"]["exitCode"] == 3
        limited = {"command": sys.executable, "args": ["-S", "-c", script], "outputByteLimit": 10}
        made = await sandbox.answer("terminal/create", limited)
        await sandbox.answer("terminal/wait_for_exit", {"terminalId": made["terminalId"]})
        output = await sandbox.answer("terminal/output", {"terminalId": made["terminalId"]})
        assert output["output"] == "x" * 10 and output["truncated"] is True
        sleeper = {"command": sys.executable, "args": ["-S", "-c", "import time; time.sleep(600)"]}
        made = await sandbox.answer("terminal/create", sleeper)
        ids = {"terminalId": made["terminalId"]}
        assert await sandbox.answer("terminal/kill", ids) == {}
        assert (await sandbox.answer("terminal/wait_for_exit", ids))["signal"] == "SIGKILL"
        assert await sandbox.answer("terminal/release", ids) == {}
        assert (await _refused(sandbox, "terminal/output", ids)).code == -32002
        refusal = await _refused(sandbox, "terminal/create", {"command": "true", "cwd": "/"})
        assert refusal.code == -32602 and "outside the probe's sandbox" in refusal.message
        assert (await _refused(sandbox, "fs/read_text_file", {"path": "x"})).code == -32601  # not advertised
        # A terminal still running when the probe ends is killed.
        await sandbox.answer("terminal/create", sleeper)

    _in(sandbox, scenario)


def test_the_sandbox_starts_as_a_copy_of_sandbox_from(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / "docs").mkdir(parents=True)
    (seed / "docs/notes.txt").write_text("seeded")
    sandbox = Sandbox(fs=True, terminal=False, seed=str(seed))

    async def scenario() -> None:
        assert await sandbox.answer("fs/read_text_file", {"path": "docs/notes.txt"}) == {"content": "seeded"}
        await sandbox.answer("fs/write_text_file", {"path": "docs/notes.txt", "content": "SEEDED"})
        assert (sandbox.root / "docs/notes.txt").read_text() == "SEEDED"

    _in(sandbox, scenario)
    assert (seed / "docs/notes.txt").read_text() == "seeded"  # the copy was written, not the seed
