"""acpgen's own files in the output directory (the lock, the journal and its
temporary copy) are never written through a link planted at their names:
such a link stops the run with an error naming it, before anything is
written, and the file it leads to is left as it was."""

from __future__ import annotations

import os

import pytest
from acpgen.errors import AcpgenError
from acpgen.output import manifest
from acpgen.output.journal import JOURNAL_FILE, write_journal
from acpgen.output.lock import LOCK_FILE, locked
from acpgen.output.trees import Tree, read_tree
from acpgen.output.write import replace_trees, write_packages

JOURNAL_TEMP = JOURNAL_FILE + ".tmp"
OWN_NAMES = (LOCK_FILE, JOURNAL_FILE, JOURNAL_TEMP)


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    return victim


def _out(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    return out


@pytest.mark.parametrize("name", OWN_NAMES)
def test_a_link_to_a_file_at_an_own_name_is_refused_and_not_written_through(tmp_path, name):
    victim = _victim(tmp_path)
    out = _out(tmp_path)
    (out / name).symlink_to(victim)
    with pytest.raises(AcpgenError) as caught:
        write_packages(out, {"pk": {"x.py": "1"}})
    assert name in str(caught.value) and "symbolic link" in str(caught.value)
    assert str(caught.value).count("\n") == 0
    assert victim.read_text() == "precious\n"
    assert os.readlink(out / name) == str(victim)  # left for the user to look at
    assert sorted(p.name for p in out.iterdir()) == [name]  # nothing staged, no package


@pytest.mark.parametrize("name", OWN_NAMES)
def test_a_dangling_link_at_an_own_name_is_refused_and_its_target_not_created(tmp_path, name):
    out = _out(tmp_path)
    aim = tmp_path / "created-by-acpgen"
    (out / name).symlink_to(aim)
    with pytest.raises(AcpgenError, match=name.replace(".", r"\.")):
        write_packages(out, {"pk": {"x.py": "1"}})
    assert not os.path.lexists(aim)
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_a_link_planted_at_the_temporary_journal_is_refused_for_a_schema_tree_too(tmp_path):
    # schema update journals schema/ and the packages in the output directory.
    victim = _victim(tmp_path)
    out = _out(tmp_path)
    schema = tmp_path / "schema"
    schema.mkdir()
    (schema / "s.json").write_text("{}")
    (out / JOURNAL_TEMP).symlink_to(victim)
    trees = [Tree(schema, {"s.json": b'{"new": 1}'}, guarded=False, keep=schema)]
    with pytest.raises(AcpgenError, match=r"\.acpgen-journal\.json\.tmp"):
        replace_trees(out, trees)
    assert victim.read_text() == "precious\n"
    assert (schema / "s.json").read_text() == "{}"


def test_a_temporary_journal_a_killed_run_left_is_replaced_not_written_into(tmp_path):
    # A regular file at the temporary name (a run killed before its rename)
    # is deleted first: a hard link there does not carry the journal to the
    # file it shares.
    victim = _victim(tmp_path)
    out = _out(tmp_path)
    os.link(victim, out / JOURNAL_TEMP)
    write_packages(out, {"pk": {"x.py": "1"}})
    assert victim.read_text() == "precious\n"
    assert {k: v for k, v in read_tree(out / "pk").items() if k != manifest.MARKER} == {"x.py": b"1"}
    assert sorted(p.name for p in out.iterdir()) == ["pk"]


def test_the_journal_replaces_a_temporary_copy_a_killed_run_left(tmp_path):
    write_journal(tmp_path, {"phase": "staging"})
    (tmp_path / JOURNAL_TEMP).write_text("left by a killed run, longer than the record")
    write_journal(tmp_path, {"phase": "swapping"})
    assert (tmp_path / JOURNAL_FILE).read_text() == '{\n  "phase": "swapping"\n}'
    assert not os.path.lexists(tmp_path / JOURNAL_TEMP)


def test_something_else_than_a_file_at_an_own_name_is_refused(tmp_path):
    out = _out(tmp_path)
    (out / JOURNAL_TEMP).mkdir()
    with pytest.raises(AcpgenError, match="not a regular file"):
        write_packages(out, {"pk": {"x.py": "1"}})
    (out / JOURNAL_TEMP).rmdir()
    (out / LOCK_FILE).mkdir()
    with pytest.raises(AcpgenError, match="not a regular file"):
        write_packages(out, {"pk": {"x.py": "1"}})
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]


def test_the_lock_refuses_a_link_and_leaves_it(tmp_path):
    victim = _victim(tmp_path)
    (tmp_path / LOCK_FILE).symlink_to(victim)
    with pytest.raises(AcpgenError, match=r"\.acpgen\.lock is a symbolic link"), locked(tmp_path):
        pass
    assert (tmp_path / LOCK_FILE).is_symlink() and victim.read_text() == "precious\n"
