"""Planning an update: the new ``schema/`` directory, its ``SOURCE.json``
and the diffs against the vendored schemas, worked out from a
:class:`~acpgen.update.release.Release` without writing anything."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import Config
from ..diff import SchemaDiff, diff_schemas, load_cached
from ..errors import AcpgenError
from ..jsontypes import JsonObject
from ..output.trees import read_tree
from ..pipeline import build_ir
from .release import LICENSE_FILE, PACKAGE_NAME, SCHEMA_DIR, SOURCE_FILE, Release


@dataclass
class FileChange:
    name: str
    status: str
    """``added``, ``removed``, ``changed`` or ``unchanged``."""
    diff: SchemaDiff | None = None
    note: str = ""
    """Why a changed file has no diff."""
    generated: bool = True
    """Whether ``[tool.acpgen]`` generates a package from it; the changes
    of the others are worked out only when asked for."""


@dataclass
class Plan:
    """The new ``schema/`` directory, ready to be written."""

    config: Config
    release: Release
    old_version: str
    files: list[FileChange]
    contents: dict[str, bytes] = field(default_factory=dict)
    """Every file of the new ``schema/`` directory, by relative path."""
    removed: list[str] = field(default_factory=list)
    """The managed files the release no longer has: deleted."""
    writes: dict[str, bytes] = field(default_factory=dict)
    """The managed files to write (new, or with new content); everything
    else in ``schema/`` is carried over as it is."""

    @property
    def changed(self) -> bool:
        return bool(self.writes or self.removed)


def known_names(config: Config) -> list[str]:
    """The schema files the project vendors: SOURCE.json's, and the
    configured targets under ``schema/``."""
    names = set(_source_record(config.root / SCHEMA_DIR).get("files", {}))
    names |= set(_source_record(config.root / SCHEMA_DIR).get("local", {}))
    for target in config.targets:
        relative = under_schema(target.schema)
        if relative:
            names.add(relative)
    return sorted(names)


def under_schema(configured: str) -> str | None:
    """A target's configured schema path relative to ``schema/``, or None
    when it is not under ``schema/``."""
    parts = PurePosixPath(configured.replace("\\", "/")).parts
    if len(parts) > 1 and parts[0] == SCHEMA_DIR:
        return PurePosixPath(*parts[1:]).as_posix()
    return None


def _source_record(schema_dir: Path) -> JsonObject:
    path = schema_dir / SOURCE_FILE
    if not path.is_file():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AcpgenError(f"invalid JSON: {exc}", file=str(path)) from None
    return record if isinstance(record, dict) else {}


def source_json(record: JsonObject) -> bytes:
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def generated_names(config: Config) -> set[str]:
    """The schema files under ``schema/`` that ``[tool.acpgen]`` generates
    packages from, relative to ``schema/``."""
    return {relative for target in config.targets if (relative := under_schema(target.schema))}


def plan(config: Config, release: Release, *, every_diff: bool = False) -> Plan:
    """Check the release and work out the new ``schema/`` and the diffs of
    the schema files the project generates from (of every file with
    ``every_diff``). Reads only."""
    schema_dir = config.root / SCHEMA_DIR
    _check_schema_dir(schema_dir)
    current = read_tree(schema_dir)
    record = _source_record(schema_dir)
    old_version = record.get("version", "") if isinstance(record.get("version"), str) else ""
    old_files = record.get("files", {}) if isinstance(record.get("files"), dict) else {}
    old_local = record.get("local", {}) if isinstance(record.get("local"), dict) else {}
    contents = dict(current)
    removed: list[str] = []
    if release.single:
        # A file that differs from the vendored one has no version: it
        # moves from "files" to "local".
        new_record = dict(record)
        differing = {name for name, data in release.schemas.items() if current.get(name) != data}
        if differing:
            local = dict(old_local)
            for name in differing:
                local[name] = hashlib.sha256(release.schemas[name]).hexdigest()
            new_record["files"] = {k: v for k, v in old_files.items() if k not in differing}
            new_record["local"] = dict(sorted(local.items()))
    else:
        # The package replaces every schema it or the old record lists.
        for name in list(old_files) + list(old_local):
            if name not in release.schemas and name in contents and _plain_file(schema_dir, name):
                del contents[name]
                removed.append(name)
        new_record = {"package": release.name or PACKAGE_NAME, "version": release.version}
        if release.license_id:
            new_record["license"] = release.license_id
        new_record["files"] = {name: hashlib.sha256(data).hexdigest() for name, data in release.schemas.items()}
        if release.license is not None:
            contents[LICENSE_FILE] = release.license
    for name, data in release.schemas.items():
        contents[name] = data
    if new_record != record or SOURCE_FILE not in contents:
        contents[SOURCE_FILE] = source_json(new_record)
    writes = {name: data for name, data in contents.items() if current.get(name) != data}
    for name in writes:
        _check_writable(schema_dir, name)
    # Every configured target under schema/ must still have its schema.
    for target in config.targets:
        relative = under_schema(target.schema)
        if relative and relative not in contents:
            raise AcpgenError(
                f"the new schemas have no {relative}, which [tool.acpgen] generates {target.package} from",
                file=release.origin,
            )
    # Check every new schema file, and diff the ones that changed.
    new_version = "" if release.single else release.version
    generated = generated_names(config)
    changes = []
    for name in sorted(set(release.schemas) | set(removed)):
        if name in removed:
            changes.append(FileChange(name, "removed", generated=name in generated))
            continue
        data = release.schemas[name]
        display = f"{release.origin}:{name}" if not release.single else release.origin
        new_schema = load_cached(display, data, display)
        build_ir(new_schema, "acpgen_update_check", "none")
        if name not in current:
            changes.append(FileChange(name, "added", generated=name in generated))
            continue
        if current[name] == data:
            changes.append(FileChange(name, "unchanged", generated=name in generated))
            continue
        if name not in generated and not every_diff:
            changes.append(FileChange(name, "changed", generated=False))
            continue
        try:
            old_schema = load_cached(f"{SCHEMA_DIR}/{name}", current[name])
            build_ir(old_schema, "acpgen_update_check", "none")
        except AcpgenError as error:
            # A vendored file that does not load any more is simply replaced.
            changes.append(
                FileChange(
                    name, "changed", note=f"the vendored file does not load ({error})", generated=name in generated
                )
            )
            continue
        previous = old_version if hashlib.sha256(current[name]).hexdigest() in old_files.values() else ""
        diff = diff_schemas(old_schema, new_schema, old_version=previous, new_version=new_version)
        changes.append(FileChange(name, "changed", diff, generated=name in generated))
    return Plan(
        config=config,
        release=release,
        old_version=old_version,
        files=changes,
        contents=contents,
        removed=removed,
        writes=writes,
    )


def _check_schema_dir(schema_dir: Path) -> None:
    """Refuse a ``schema/`` that is a symbolic link or not a directory: the
    update replaces the directory as a whole, so it would put a plain
    directory in the link's place and leave what it points to stale."""
    shown = os.path.normpath(schema_dir)
    if schema_dir.is_symlink():
        raise AcpgenError(
            f"{shown} is a symbolic link (to {os.readlink(schema_dir)}), and acpgen replaces {SCHEMA_DIR}/ as a whole: "
            "it would put a plain directory in the link's place and leave the directory it points to stale; make "
            f"{SCHEMA_DIR}/ a plain directory (move the directory it points to in its place), then run again",
            file=shown,
        )
    if os.path.lexists(schema_dir) and not schema_dir.is_dir():
        raise AcpgenError(
            f"{shown} is not a directory, and the update writes the schemas in it; move it out, then run again",
            file=shown,
        )


def _plain_file(schema_dir: Path, name: str) -> bool:
    """``schema/NAME`` is a regular file reached through plain directories."""
    path = schema_dir
    for part in PurePosixPath(name).parts:
        path = path / part
        if path.is_symlink():
            return False
    return path.is_file()


def _check_writable(schema_dir: Path, name: str) -> None:
    """Refuse to write ``schema/NAME`` through, or over, what acpgen did not
    make: a symbolic link (to a file or a directory), or another kind of
    entry where a file or directory goes."""
    path = schema_dir
    parts = PurePosixPath(name).parts
    for part in parts[:-1]:
        path = path / part
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            raise AcpgenError(
                f"{path} is a symbolic link or not a directory, and the update writes {name} under it; acpgen does "
                "not write through what it did not make: make it a plain directory, or move it out, then run again",
                file=str(path),
            )
    path = path / parts[-1]
    if path.is_symlink() or (os.path.lexists(path) and not path.is_file()):
        raise AcpgenError(
            f"{path} is a symbolic link or not a regular file, and the update would replace it with the new {name}; "
            "acpgen does not overwrite what it did not make: replace it with a plain file, or move it out, then run again",
            file=str(path),
        )
