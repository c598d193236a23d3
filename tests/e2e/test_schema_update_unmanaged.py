"""``acpgen schema update`` touches only the files it manages in
``schema/``: what else is there (executable files, symbolic links, empty
directories, modes) is carried over as it is, and a managed file that is a
symbolic link is never written through."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from .test_schema_bump import FIXTURE, SCHEMA, acpgen, config, project, tarball, tree

__all__ = ["project"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _unmanaged(schema: Path) -> None:
    """What a user might keep in schema/ beside the vendored files."""
    (schema / "tools").mkdir()
    (schema / "tools/refresh.sh").write_text("#!/bin/sh\necho refresh\n")
    (schema / "tools/refresh.sh").chmod(0o755)
    (schema / "latest.json").symlink_to("v2/schema.json")
    (schema / "stable").symlink_to("v2", target_is_directory=True)
    (schema / "dangling.json").symlink_to("nowhere.json")
    (schema / "drafts").mkdir()
    (schema / "notes/empty").mkdir(parents=True)
    (schema / "v1/schema.json").chmod(0o640)


def test_update_carries_over_what_acpgen_did_not_write(tmp_path, project):
    schema = project / "schema"
    _unmanaged(schema)
    result = acpgen(
        "schema",
        "update",
        "--from",
        str(tarball(tmp_path, FIXTURE, "2.0.0")),
        "--config",
        config(project),
        "--no-generate",
    )
    assert result.exit_code == 0, result.output
    # The managed files are the release's; a rewritten one keeps its mode.
    assert (schema / "v1/schema.json").read_bytes() == (FIXTURE / "v1/schema.json").read_bytes()
    assert _mode(schema / "v1/schema.json") == 0o640
    assert json.loads((schema / "SOURCE.json").read_text())["version"] == "2.0.0"
    # The rest as it was.
    assert _mode(schema / "tools/refresh.sh") == 0o755
    assert (schema / "tools/refresh.sh").read_text() == "#!/bin/sh\necho refresh\n"
    for link, destination in (("latest.json", "v2/schema.json"), ("stable", "v2"), ("dangling.json", "nowhere.json")):
        assert (schema / link).is_symlink() and os.readlink(schema / link) == destination
    assert (schema / "drafts").is_dir() and not any((schema / "drafts").iterdir())
    assert (schema / "notes/empty").is_dir() and not any((schema / "notes/empty").iterdir())
    assert not [p for p in project.iterdir() if p.name.startswith(".")]


def test_a_managed_file_that_is_a_symlink_is_kept_while_its_content_does_not_change(tmp_path, project):
    schema = project / "schema"
    mine = tmp_path / "mine.json"
    shutil.copyfile(schema / "v1/schema.json", mine)
    (schema / "v1/schema.json").unlink()
    (schema / "v1/schema.json").symlink_to(mine)
    name = "v2/schema.unstable.json"
    result = acpgen("schema", "update", "--from", str(FIXTURE / name), "--config", config(project), "--no-generate")
    assert result.exit_code == 0, result.output
    assert (schema / name).read_bytes() == (FIXTURE / name).read_bytes()
    assert (schema / "v1/schema.json").is_symlink() and os.readlink(schema / "v1/schema.json") == str(mine)


def test_a_managed_file_that_is_a_symlink_is_not_written_through(tmp_path, project):
    schema = project / "schema"
    mine = tmp_path / "mine.json"
    shutil.copyfile(schema / "v1/schema.json", mine)
    (schema / "v1/schema.json").unlink()
    (schema / "v1/schema.json").symlink_to(mine)
    before = tree(project)
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 2
    assert str(schema / "v1/schema.json") in result.stderr and "symbolic link" in result.stderr
    assert mine.read_bytes() == (SCHEMA / "v1/schema.json").read_bytes()
    assert (schema / "v1/schema.json").is_symlink() and tree(project) == before


def test_a_managed_directory_that_is_a_symlink_is_not_written_through(tmp_path, project):
    schema = project / "schema"
    elsewhere = tmp_path / "elsewhere-v1"
    shutil.move(str(schema / "v1"), elsewhere)
    (schema / "v1").symlink_to(elsewhere, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 2
    assert str(schema / "v1") in result.stderr and "symbolic link" in result.stderr
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before
    assert (schema / "v1").is_symlink()


def test_a_schema_directory_that_is_a_symlink_is_refused(tmp_path, project):
    schema = project / "schema"
    elsewhere = tmp_path / "elsewhere-schema"
    shutil.move(str(schema), elsewhere)
    schema.symlink_to(elsewhere, target_is_directory=True)
    before = tree(elsewhere)
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 2, result.output
    assert str(schema) in result.stderr and "symbolic link" in result.stderr
    assert schema.is_symlink() and tree(elsewhere) == before
    assert not [p for p in project.iterdir() if p.name.startswith(".acpgen-")]


def test_a_schema_that_is_not_a_directory_is_refused(tmp_path, project):
    schema = project / "schema"
    shutil.rmtree(schema)
    schema.write_text("not a directory\n")
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 2, result.output
    assert str(schema) in result.stderr and "not a directory" in result.stderr
    assert schema.read_text() == "not a directory\n"
