"""A link committed at one of acpgen's own names in the output directory
(``generated/.acpgen-journal.json.tmp -> ~/victim``, a dangling
``.acpgen.lock``) is refused by ``generate`` and ``schema update`` with one
line naming it, exit 2, and nothing is written through it; the project's
ignore rules keep acpgen's own files out of commits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from ..conftest import ROOT, schema_with
from .test_schema_bump import FIXTURE, acpgen, config, project, tree

__all__ = ["project"]

SMALL = schema_with({"Greeting": {"type": "object", "properties": {"text": {"type": "string"}}}})


@pytest.mark.parametrize("name", [".acpgen-journal.json.tmp", ".acpgen-journal.json", ".acpgen.lock"])
def test_generate_refuses_a_link_at_an_own_name(tmp_path, name):
    schema = tmp_path / "small.json"
    schema.write_text(json.dumps(SMALL))
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    result = acpgen("generate", "--schema", str(schema), "--package", "pk", "--out", str(out))
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.count("\n") == 0 and name in message and "symbolic link" in message
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_generate_does_not_create_what_a_dangling_lock_link_names(tmp_path):
    schema = tmp_path / "small.json"
    schema.write_text(json.dumps(SMALL))
    out = tmp_path / "out"
    out.mkdir()
    (out / ".acpgen.lock").symlink_to(tmp_path / "created")
    result = acpgen("generate", "--schema", str(schema), "--package", "pk", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert not os.path.lexists(tmp_path / "created")


def test_schema_update_refuses_a_link_at_the_temporary_journal(tmp_path, project):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (project / "generated" / ".acpgen-journal.json.tmp").symlink_to(victim)
    before = tree(project / "schema")
    result = acpgen("schema", "update", "--from", str(FIXTURE), "--config", config(project), "--no-generate")
    assert result.exit_code == 2, result.output
    assert ".acpgen-journal.json.tmp" in result.output and "symbolic link" in result.output
    assert victim.read_text() == "precious\n"
    assert tree(project / "schema") == before
    assert not [p for p in project.iterdir() if p.name.startswith(".")]


def test_the_project_ignores_what_acpgen_leaves_in_an_output_directory(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("this check needs the git checkout of the project")
    names = [
        "generated/.acpgen.lock",
        "generated/.acpgen-journal.json",
        "generated/.acpgen-journal.json.tmp",
        "generated/.acpgen-new-acp_v1-0123abcd/models.py",
        "generated/.acpgen-old-acp_v1-0123abcd/models.py",
        "elsewhere/out/.acpgen-journal.json.tmp",
    ]
    result = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "--verbose", *names], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    ignored = [line.split("\t", 1)[1] for line in result.stdout.splitlines()]
    assert ignored == names
    # The marker and the packages are committed.
    kept = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "check-ignore",
            "--no-index",
            "generated/acp_v1/.acpgen",
            "generated/acp_v1/models.py",
        ],
        capture_output=True,
        text=True,
    )
    assert kept.returncode == 1 and kept.stdout == ""
