"""The newcomer's program, written twice: examples/notes_agent.py and
notes_client.py on acp_v1's helpers (session senders, a tool call handle,
cancellation and the cancelled permission answer by default, the session
fold), and peers/sdk_notes_agent.py and sdk_notes_client.py on the official
Python SDK (0.12.1) with its helpers, for the same behaviour: a plan, a read
tool call and its updates, a permission request, fs/read_text_file, three
turns (allowed, rejected, cancelled while asked).

Each client drives each agent as real processes and prints the same three
lines; the acpgen pair is at most two thirds of the SDK pair's code lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import PEERS, ROOT, TIMEOUT, require_python_sdk

EXAMPLES = ROOT / "examples"
AGENTS = {"acpgen": EXAMPLES / "notes_agent.py", "python-sdk": PEERS / "sdk_notes_agent.py"}
CLIENTS = {"acpgen": EXAMPLES / "notes_client.py", "python-sdk": PEERS / "sdk_notes_client.py"}
WORDS = "one two three four five six seven"


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("client", CLIENTS)
def test_each_notes_client_drives_each_notes_agent(tmp_path: Path, client: str, agent: str) -> None:
    require_python_sdk()
    notes = tmp_path / "notes.txt"
    notes.write_text(WORDS + "\n")
    command = [sys.executable, str(CLIENTS[client]), str(notes), sys.executable, str(AGENTS[agent])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "turn 1: end_turn; tool completed; notes.txt has 7 words.",
        "turn 2: end_turn; tool failed; Not allowed to read notes.txt.",
        "turn 3: cancelled; tool pending; ",
    ], done.stderr


def code_lines(path: Path) -> int:
    """Lines of code: not blank, not a comment, not the module's docstring."""
    source = path.read_text(encoding="utf-8")
    first = ast.parse(source).body[0]
    docstring = (
        range(first.lineno, (first.end_lineno or first.lineno) + 1)
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        else range(0)
    )
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in docstring
    )


def test_the_acpgen_pair_is_at_most_two_thirds_of_the_sdk_pair() -> None:
    ours = sum(code_lines(p) for p in (AGENTS["acpgen"], CLIENTS["acpgen"]))
    theirs = sum(code_lines(p) for p in (AGENTS["python-sdk"], CLIENTS["python-sdk"]))
    assert ours * 3 <= theirs * 2, f"{ours} lines against the SDK's {theirs}"


def test_code_lines_counts_code_only(tmp_path: Path) -> None:
    sample = tmp_path / "s.py"
    sample.write_text('"""Doc\n\nstring."""\n\n# comment\nimport os\n\n\ndef f() -> None:\n    pass  # note\n')
    assert code_lines(sample) == 3
