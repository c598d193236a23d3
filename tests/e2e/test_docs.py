"""The documentation is true of the code: the CLI reference in docs/cli.md is
what ``acpgen COMMAND --help`` prints, and every Python block of the README
and of docs/agent.md, docs/client.md and docs/transports.md runs (and
docs/tracing.md's example prints what it says), agents as
real subprocesses driven by a client (transports.md's servers on a port of
their own choosing, which they print).

Blocks are read by the Markdown comments before them: ``<!-- file: NAME -->``
writes the block that follows to NAME in a scratch directory (an agent or a
client); ``<!-- output -->`` before a ``text`` block says that the Python
block before it prints exactly that. A Python block without a file comment is
run as a script; a file named ``client.py`` is run as one, with the agents
beside it. Re-record docs/cli.md after changing the command line with
``ACPGEN_RECORD_DOCS=1 python -m pytest tests/e2e/test_docs.py`` (or
``python docs/cli_reference.py > docs/cli.md``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from acpgen.cli import main
from click.testing import CliRunner

from ..patience import HANG

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = ROOT / "generated"

_BLOCK = re.compile(r"(?:<!-- (file: \S+|output) -->\n)?```(\w*)\n(.*?)^```", re.S | re.M)


@dataclass
class Block:
    lang: str
    text: str
    file: str | None
    expected: str | None = None


def blocks(path: Path) -> list[Block]:
    """The Python blocks of a page, each with the output the page says it prints."""
    found: list[Block] = []
    for marker, lang, text in _BLOCK.findall(path.read_text(encoding="utf-8")):
        if marker == "output":
            assert found and found[-1].expected is None, f"{path.name}: an output block follows no Python block"
            found[-1].expected = text
        elif lang == "python":
            found.append(Block(lang, text, marker.removeprefix("file: ") if marker else None))
    return found


def _reference():
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_what_help_prints():
    reference = _reference()
    expected = reference.render()
    page = DOCS / "cli.md"
    if os.environ.get("ACPGEN_RECORD_DOCS"):
        page.write_text(expected, encoding="utf-8")
    assert page.read_text(encoding="utf-8") == expected, "docs/cli.md is stale: ACPGEN_RECORD_DOCS=1 re-records it"


def test_cli_reference_covers_every_command_and_subcommand():
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    paths = _reference().commands()
    assert ["schema", "update"] in paths and ["validate"] in paths
    for path in paths:
        result = CliRunner().invoke(main, [*path, "--help"], prog_name="acpgen", terminal_width=80)
        assert result.exit_code == 0, result.output
        assert f"## `{' '.join(['acpgen', *path])}`\n\n```text\n{result.output}```" in text


def _run(script: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, script], cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, f"{script}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _check(pages: list[str], tmp_path: Path) -> None:
    """Write the file blocks of ``pages`` into one directory, then run each
    script block and ``client.py`` (which spawns the agent beside it)."""
    every = [block for page in pages for block in blocks(ROOT / page)]
    assert any(b.file == "client.py" for b in every), pages
    scripts: list[tuple[str, Block]] = []
    for index, block in enumerate(every):
        assert len(block.text.splitlines()) < 60, f"{block.file or 'a block'} of {pages} is 60 lines or more"
        name = block.file or f"block_{index}.py"
        (tmp_path / name).write_text(block.text, encoding="utf-8")
        if block.file is None or block.file == "client.py":
            scripts.append((name, block))
        else:
            assert block.expected is None, f"{name} is run by a client: its output is the client's"
    for name, block in scripts:
        out = _run(name, tmp_path)
        if block.expected is not None:
            assert out == block.expected, name


def test_readme_agent_and_client_run(tmp_path):
    readme = blocks(ROOT / "README.md")
    assert [b.file for b in readme] == ["agent.py", "client.py"]
    assert readme[1].expected is not None
    _check(["README.md"], tmp_path)


def test_the_readme_agent_passes_the_probes_cancel_check(tmp_path):
    """``acpgen probe``'s MUST: session/cancel during a long prompt ends the
    turn with stopReason ``cancelled``."""
    (agent,) = [b for b in blocks(ROOT / "README.md") if b.file == "agent.py"]
    (tmp_path / "agent.py").write_text(agent.text, encoding="utf-8")
    acpgen = Path(sys.executable).with_name("acpgen")
    command = [str(acpgen), "probe", "--packages", str(GENERATED), "--only", "cancel", "--"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [*command, sys.executable, "agent.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  MUST          cancel\n" in done.stdout, done.stdout


def test_the_agent_page_agent_is_probed_with_a_sandboxed_file_system(tmp_path):
    """docs/agent.md's agent needs a file system (it answers a prompt -32000
    without one): ``--client-capabilities fs`` serves one in a temporary
    directory seeded with ``--sandbox-from``, where it shouts notes.txt."""
    (agent,) = [b for b in blocks(DOCS / "agent.md") if b.file == "agent.py"]
    (tmp_path / "agent.py").write_text(agent.text, encoding="utf-8")
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "notes.txt").write_text("hello", encoding="utf-8")
    acpgen = Path(sys.executable).with_name("acpgen")
    only = [arg for check in ("prompt", "permission", "client-capabilities") for arg in ("--only", check)]
    options = ["--packages", str(GENERATED), "--client-capabilities", "fs", "--sandbox-from", str(seed), *only]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [str(acpgen), "probe", *options, "--", sys.executable, "agent.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for check in ("prompt", "permission", "client-capabilities"):
        assert f"PASS  MUST          {check}\n" in done.stdout, done.stdout
    assert (seed / "notes.txt").read_text(encoding="utf-8") == "hello"  # the copy was shouted, not the seed


def test_agent_and_client_pages_run(tmp_path):
    agent = blocks(DOCS / "agent.md")
    assert "agent.py" in [b.file for b in agent]
    assert "spawn_agent" in next(b.text for b in blocks(DOCS / "client.md") if b.file == "client.py")
    _check(["docs/agent.md", "docs/client.md"], tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "HELLO"  # written by the agent through the client


def test_tracing_page_example_prints_what_it_says(tmp_path):
    examples = [block for block in blocks(DOCS / "tracing.md") if block.expected is not None]
    assert examples
    for index, block in enumerate(examples):
        (tmp_path / f"block_{index}.py").write_text(block.text, encoding="utf-8")
        assert _run(f"block_{index}.py", tmp_path) == block.expected


async def _port(stream: asyncio.StreamReader, pattern: str) -> int:
    """The port a server prints once it listens (``pattern``'s group); the
    lines before it are kept for the failure's message."""
    seen: list[bytes] = []
    while line := await stream.readline():
        seen.append(line)
        found = re.search(pattern, line.decode(errors="replace"))
        if found:
            return int(found.group(1))
    raise AssertionError(f"the server ended without saying its port:\n{b''.join(seen).decode(errors='replace')}")


def test_transports_page_blocks_run(tmp_path):
    """docs/transports.md's server.py, and app.py under the uvicorn command
    its comment gives, each serve remote_client.py (WebSocket, then HTTP),
    which prints what the page says; beside the README's agent.py and
    client.py, whose classes they import. The servers listen on port 0 (the
    page's 8000 replaced) and say which port they took."""
    page = blocks(DOCS / "transports.md")
    assert [b.file for b in page] == ["server.py", "app.py", "remote_client.py"]
    for block in [*blocks(ROOT / "README.md"), *page]:
        assert block.file is not None
        assert len(block.text.splitlines()) < 60, f"{block.file} is 60 lines or more"
        (tmp_path / block.file).write_text(block.text, encoding="utf-8")
    server, app, client = page
    assert "port=8000," in server.text and client.expected is not None
    (tmp_path / "server.py").write_text(server.text.replace("port=8000,", "port=0,"), encoding="utf-8")
    (uvicorn,) = [line[2:].split() for line in app.text.splitlines() if line.startswith("# uvicorn ")]
    assert uvicorn[-2:] == ["--port", "8000"], uvicorn
    servers = [
        ([sys.executable, "server.py"], r"serving on port (\d+)"),
        ([sys.executable, "-m", *uvicorn[:-1], "0"], r"Uvicorn running on http://127\.0\.0\.1:(\d+)"),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), os.environ.get("PYTHONPATH", "")])}

    async def serve_and_talk(command: list[str], pattern: str) -> str:
        pipe = asyncio.subprocess.PIPE
        serving = await asyncio.create_subprocess_exec(
            *command, cwd=tmp_path, env=env, stdout=pipe, stderr=asyncio.subprocess.STDOUT
        )
        draining: asyncio.Future[bytes] | None = None
        try:
            assert serving.stdout is not None
            port = await asyncio.wait_for(_port(serving.stdout, pattern), HANG)
            draining = asyncio.ensure_future(serving.stdout.read())  # the server's log, never left to fill the pipe
            (tmp_path / "remote_client.py").write_text(client.text.replace(":8000/", f":{port}/"), encoding="utf-8")
            talking = await asyncio.create_subprocess_exec(
                sys.executable, "remote_client.py", cwd=tmp_path, env=env, stdout=pipe, stderr=pipe
            )
            out, err = await asyncio.wait_for(talking.communicate(), HANG)
            assert talking.returncode == 0, err.decode()
            return out.decode()
        finally:
            if serving.returncode is None:
                serving.terminate()
            await asyncio.wait_for(serving.wait(), HANG)
            if draining is not None:
                await draining

    for command, pattern in servers:
        assert asyncio.run(serve_and_talk(command, pattern)) == client.expected, command


def test_validate_says_which_package_it_uses_by_default(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}\n')
    acpgen = Path(sys.executable).with_name("acpgen")
    done = subprocess.run(
        [str(acpgen), "validate", str(transcript)], cwd=ROOT, capture_output=True, text=True, timeout=HANG
    )
    assert "checking against acp_v1" in done.stderr, done.stderr
    chosen = subprocess.run(
        [str(acpgen), "validate", str(transcript), "--package", "acp_v2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert "checking against" not in chosen.stderr, chosen.stderr


@pytest.mark.parametrize(
    "page",
    ["agent.md", "client.md", "codec.md", "patch.md", "bumps.md", "tools.md", "cli.md", "internals.md", "tracing.md"],
)
def test_readme_links_every_page(page):
    assert (DOCS / page).is_file()
    assert f"(docs/{page})" in (ROOT / "README.md").read_text(encoding="utf-8")
