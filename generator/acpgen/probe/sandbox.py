"""The client side the probe can advertise with ``--client-capabilities``: a
file system and a terminal confined to a temporary directory the probe
makes (and removes), for agents that need them to work at all.

``fs/read_text_file`` and ``fs/write_text_file`` reach files under the
directory only: a path outside it (after symbolic links are followed) is
refused -32602, a file that is not there -32002. A relative path is read
from the directory (the schema asks for absolute paths; clients differ).
``terminal/create`` runs the command (no shell) with its working directory
in the directory, else refuses it; ``terminal/output``,
``wait_for_exit``, ``kill`` and ``release`` work on the terminals it made.
Every terminal still running when the probe ends is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..scratch import claim
from .peer import Refusal

PREFIX = "acpgen-probe-sandbox-"
"""The name of a sandbox directory: locked while a run uses it, deleted by the
next run once that run is gone (see :mod:`acpgen.scratch`)."""

CAPABILITIES = ("fs", "terminal")
"""What ``--client-capabilities`` may name."""

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
"""Bytes of a terminal's output kept when the agent sets no outputByteLimit."""


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Future[None] | None = None

    def keep(self, chunk: bytes) -> None:
        self.output += chunk
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # Truncated from the beginning, at a character boundary.
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": _signal_name(-code)}
        return {"exitCode": code, "signal": None}


class Sandbox:
    """A temporary directory and the fs/* and terminal/* methods served in it."""

    def __init__(self, fs: bool, terminal: bool, seed: str | None = None) -> None:
        """``seed``: a directory whose files the sandbox starts with (copied)."""
        self.fs = fs
        self.terminal = terminal
        self._claim = claim(PREFIX)
        self.root = Path(self._claim.path).resolve()
        if seed is not None:
            try:
                shutil.copytree(seed, self.root, symlinks=True, dirs_exist_ok=True)
            except BaseException:
                self._claim.release()
                raise
        self.terminals: dict[str, Terminal] = {}
        self.next_id = 0

    def methods(self) -> set[str]:
        """The client methods advertised (served)."""
        served: set[str] = set()
        if self.fs:
            served |= {"fs/read_text_file", "fs/write_text_file"}
        if self.terminal:
            served |= {f"terminal/{name}" for name in ("create", "output", "wait_for_exit", "kill", "release")}
        return served

    async def answer(self, method: str, params: Any) -> dict[str, Any]:
        if method not in self.methods():
            raise Refusal(-32601, "Method not found")
        if not isinstance(params, dict):
            raise Refusal(-32602, "Invalid params: not an object")
        if method == "fs/read_text_file":
            return self.read(params)
        if method == "fs/write_text_file":
            return self.write(params)
        if method == "terminal/create":
            return await self.create(params)
        terminal = self.terminals.get(params.get("terminalId"))  # type: ignore[arg-type]
        if terminal is None:
            raise Refusal(-32002, f"Resource not found: no terminal {params.get('terminalId')!r}")
        if method == "terminal/output":
            status = terminal.exit_status()
            if status is not None and terminal.reader is not None:
                await terminal.reader  # all the output, once it has exited
            result: dict[str, Any] = {"output": _text(terminal.output), "truncated": terminal.truncated}
            if status is not None:
                result["exitStatus"] = status
            return result
        if method == "terminal/wait_for_exit":
            await terminal.process.wait()
            status = terminal.exit_status()
            assert status is not None
            return status
        if method == "terminal/kill":
            _kill(terminal)
            return {}
        # terminal/release
        _kill(terminal)
        del self.terminals[params["terminalId"]]
        return {}

    # ------------------------------------------------------------ fs

    def inside(self, path: Any, what: str = "path") -> Path:
        """``path`` resolved (relative to the directory), refused unless it is in it."""
        if not isinstance(path, str) or not path:
            raise Refusal(-32602, f"Invalid params: {what} is not a path")
        resolved = (self.root / path).resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise Refusal(-32602, f"Invalid params: {path} is outside the probe's sandbox {self.root}")
        return resolved

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        path = self.inside(params.get("path"))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise Refusal(-32002, f"Resource not found: {params.get('path')}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise Refusal(-32603, f"Internal error: {exc}") from None
        line, limit = params.get("line"), params.get("limit")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max(0, line - 1) if type(line) is int else 0
            end = start + limit if type(limit) is int and limit >= 0 else len(lines)
            text = "".join(lines[start:end])
        return {"content": text}

    def write(self, params: dict[str, Any]) -> dict[str, Any]:
        path = self.inside(params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise Refusal(-32602, "Invalid params: content is not a string")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise Refusal(-32603, f"Internal error: {exc}") from None
        return {}

    # ------------------------------------------------------------ terminal

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        command, args = params.get("command"), params.get("args") or []
        if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise Refusal(-32602, "Invalid params: command and args")
        cwd = self.inside(params.get("cwd") or str(self.root), "cwd")
        env = dict(os.environ)
        for variable in params.get("env") or []:
            if isinstance(variable, dict) and isinstance(variable.get("name"), str):
                env[variable["name"]] = str(variable.get("value", ""))
        limit = params.get("outputByteLimit")
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *args,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            raise Refusal(-32603, f"Internal error: cannot run {command!r}: {exc}") from None
        terminal = Terminal(process, limit if type(limit) is int and limit >= 0 else DEFAULT_OUTPUT_LIMIT)
        terminal.reader = asyncio.ensure_future(_read(terminal))
        self.next_id += 1
        terminal_id = f"probe-terminal-{self.next_id}"
        self.terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    async def close(self) -> None:
        """Kill every terminal still running and remove the directory."""
        for terminal in self.terminals.values():
            _kill(terminal)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(terminal.process.wait(), 5.0)
            if terminal.reader is not None:
                terminal.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await terminal.reader
        self.terminals.clear()
        self._claim.release()


async def _read(terminal: Terminal) -> None:
    stream = terminal.process.stdout
    assert stream is not None
    while chunk := await stream.read(65536):
        terminal.keep(chunk)


def _kill(terminal: Terminal) -> None:
    if terminal.process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            terminal.process.kill()


def _text(output: bytearray) -> str:
    return bytes(output).decode("utf-8", "replace")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
