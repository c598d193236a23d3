"""``acpgen schema update``: vendor a release of the ACP schemas.

The source is an npm tarball of ``@agentclientprotocol/sdk`` (``.tgz``), an
unpacked package directory (with ``package.json`` and ``schema/``), or one
schema file, which replaces the vendored file of the same name (``--as``
names it when the file name does not tell). The project's ``schema/``
directory (beside the ``pyproject.toml`` with the ``[tool.acpgen]`` table)
then holds the release's schema files and LICENSE, and ``SOURCE.json``
records the package, its version and the sha256 of each file::

    {"package": "@agentclientprotocol/sdk", "version": "2.4.0",
     "license": "Apache-2.0", "files": {"v1/schema.json": "<sha256>", ...}}

A single file has no version: it is recorded under ``"local"`` instead of
``"files"``, so the packages generated from it say SCHEMA_VERSION = "".

Only the files acpgen manages are written or deleted (the release's schema
files, LICENSE, SOURCE.json, and the files of the previous release it
drops); everything else in ``schema/`` is carried over as it is (modes,
symbolic links, empty directories), and a managed file or directory that is
a symbolic link is refused rather than written through.

Everything is staged first: every schema file is checked, and the packages
are generated from the new files in a scratch directory (unless ``generate``
is off); only then are ``schema/`` and the packages replaced, as one
transaction (:mod:`acpgen.write`): on any error, or after a run killed
midway once the next run has recovered, the project has the old ``schema/``
and packages or the new ones, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .config import Config
from .diff import SchemaDiff, diff_schemas, load_cached
from .errors import AcpgenError
from .jsontypes import JsonObject
from .pipeline import build_all, build_ir
from .write import Tree, package_tree, read_tree, replace_trees

PACKAGE_NAME = "@agentclientprotocol/sdk"
SCHEMA_DIR = "schema"
SOURCE_FILE = "SOURCE.json"
LICENSE_FILE = "LICENSE"
NPM_TIMEOUT = 300


@dataclass
class Release:
    """What a source holds: schema files by name relative to ``schema/``."""

    origin: str
    schemas: dict[str, bytes]
    name: str = ""
    version: str = ""
    license_id: str = ""
    license: bytes | None = None
    single: bool = False
    """One schema file, not a whole package."""


@dataclass
class FileChange:
    name: str
    status: str
    """``added``, ``removed``, ``changed`` or ``unchanged``."""
    diff: SchemaDiff | None = None
    note: str = ""
    """Why a changed file has no diff."""


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
    def schema_dir(self) -> Path:
        return self.config.root / SCHEMA_DIR

    @property
    def changed(self) -> bool:
        return bool(self.writes or self.removed)


# ---------------------------------------------------------------- reading a source


def read_source(path: str | Path, *, as_name: str | None = None, known: Sequence[str] = ()) -> Release:
    """A release from a tarball, a package directory or one schema file."""
    source = Path(path)
    if source.is_dir():
        if as_name:
            raise AcpgenError("--as goes with a single schema file, not a directory", file=str(source))
        return read_directory(source)
    if not source.exists():
        raise AcpgenError("no such file or directory", file=str(source))
    if tarfile.is_tarfile(source):
        if as_name:
            raise AcpgenError("--as goes with a single schema file, not a tarball", file=str(source))
        return read_tarball(source)
    if source.name.endswith((".tgz", ".tar.gz", ".tar")):
        raise AcpgenError("not a readable tarball", file=str(source))
    return read_single(source, as_name, known)


MAX_MEMBER_BYTES = 64 * 1024 * 1024
"""The largest file read from a release (the ACP schemas are under 1 MiB)."""
MAX_TOTAL_BYTES = 256 * 1024 * 1024
"""The most bytes a tarball's members may add up to."""
MAX_MEMBERS = 10_000


def read_tarball(path: Path) -> Release:
    """An npm tarball: every member under its top directory (``package/``).

    Read as a stream, in memory, never extracted; refused when a member is a
    link, a device or a FIFO, has an absolute path or ``..``, or when a
    member or the whole would exceed the caps above (checked on each
    header, before its data is read)."""
    files: dict[str, bytes] = {}
    total = 0
    origin = str(path)
    try:
        with tarfile.open(path, "r|*") as archive:
            for count, member in enumerate(archive, 1):
                _check_member(member, origin)
                total += member.size
                if count > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
                    raise AcpgenError(
                        f"the tarball holds more than {MAX_MEMBERS} members or {MAX_TOTAL_BYTES >> 20} MiB", file=origin
                    )
                if not member.isfile():
                    continue
                parts = PurePosixPath(member.name).parts
                if len(parts) < 2:
                    continue
                relative = PurePosixPath(*parts[1:]).as_posix()
                if not _wanted(relative):
                    continue
                handle = archive.extractfile(member)
                if handle is not None:
                    files[relative] = handle.read(MAX_MEMBER_BYTES + 1)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise AcpgenError(f"not a readable tarball: {exc}", file=origin) from None
    return _release(files, origin)


def _check_member(member: tarfile.TarInfo, origin: str) -> None:
    """Refuse a member that is not a plain file or directory inside the
    archive, or too large (tarfile's ``data`` filter where Python has it,
    and the same rules checked here for the Pythons that do not)."""
    name = member.name
    where = f"{origin}: member {name!r}"
    if not (member.isfile() or member.isdir()):
        raise AcpgenError(f"{where} is a link, device or FIFO, which a release of schemas has no use for", file=origin)
    posix = PurePosixPath(name)
    if posix.is_absolute() or name.startswith(("/", "\\")) or ".." in posix.parts or "\0" in name:
        raise AcpgenError(f"{where} has a path that leaves the archive", file=origin)
    if member.size > MAX_MEMBER_BYTES:
        raise AcpgenError(f"{where} is {member.size} bytes, more than the {MAX_MEMBER_BYTES >> 20} MiB cap", file=origin)
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is not None:
        try:
            data_filter(member, "/nonexistent-acpgen-destination")
        except tarfile.FilterError as exc:
            raise AcpgenError(f"{where}: {exc}", file=origin) from None


def read_directory(path: Path) -> Release:
    """An unpacked package: ``package.json``, ``LICENSE`` and ``schema/**.json``.

    Symbolic links are followed only when they stay inside the directory;
    one that leads out of it is refused."""
    files: dict[str, bytes] = {}
    root = path.resolve()
    for name in ("package.json", LICENSE_FILE):
        if (path / name).is_file():
            files[name] = _read_inside(path / name, root, str(path))
    schema_root = path / SCHEMA_DIR
    if schema_root.is_dir():
        _inside(schema_root, root, str(path))
        for current, dirs, names in os.walk(schema_root, followlinks=False):
            base = Path(current)
            for directory in list(dirs):
                if (base / directory).is_symlink():
                    _inside(base / directory, root, str(path))
                    dirs.remove(directory)  # read it through its real place only
            for name in sorted(names):
                item = base / name
                if name.endswith(".json") and item.is_file():
                    relative = item.relative_to(schema_root).as_posix()
                    files[f"{SCHEMA_DIR}/{relative}"] = _read_inside(item, root, str(path))
    if "package.json" not in files:
        raise AcpgenError("not an npm package directory: it has no package.json", file=str(path))
    return _release(files, str(path))


def _inside(item: Path, root: Path, origin: str) -> Path:
    real = item.resolve()
    if real != root and root not in real.parents:
        raise AcpgenError(f"{item} is a symbolic link that leads out of the directory (to {real})", file=origin)
    return real


def _read_inside(item: Path, root: Path, origin: str) -> bytes:
    real = _inside(item, root, origin)
    size = real.stat().st_size
    if size > MAX_MEMBER_BYTES:
        raise AcpgenError(f"{item} is {size} bytes, more than the {MAX_MEMBER_BYTES >> 20} MiB cap", file=origin)
    return real.read_bytes()


def _wanted(relative: str) -> bool:
    return relative in ("package.json", LICENSE_FILE) or (
        relative.startswith(f"{SCHEMA_DIR}/") and relative.endswith(".json")
    )


def _release(files: dict[str, bytes], origin: str) -> Release:
    raw = files.get("package.json")
    if raw is None:
        raise AcpgenError("the package has no package.json", file=origin)
    try:
        meta = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise AcpgenError(f"package.json is not valid JSON: {exc}", file=origin) from None
    if not isinstance(meta, dict) or not isinstance(meta.get("version"), str) or not meta["version"]:
        raise AcpgenError("package.json has no version", file=origin)
    schemas = {}
    for relative, data in files.items():
        if relative.startswith(f"{SCHEMA_DIR}/") and relative.endswith(".json"):
            name = relative[len(SCHEMA_DIR) + 1 :]
            _check_name(name, origin)
            schemas[name] = data
    if not schemas:
        raise AcpgenError(f"the package has no {SCHEMA_DIR}/*.json files", file=origin)
    package_name = meta.get("name")
    license_id = meta.get("license")
    return Release(
        origin=origin,
        schemas=dict(sorted(schemas.items())),
        name=package_name if isinstance(package_name, str) else "",
        version=meta["version"],
        license_id=license_id if isinstance(license_id, str) else "",
        license=files.get(LICENSE_FILE),
    )


def _check_name(name: str, origin: str) -> None:
    parts = PurePosixPath(name).parts
    if (
        not parts
        or PurePosixPath(name).is_absolute()
        or any(p in ("", ".", "..") for p in parts)
        or name in (SOURCE_FILE, LICENSE_FILE)
    ):
        raise AcpgenError(f"unusable schema file name {name!r}", file=origin)


def read_single(path: Path, as_name: str | None, known: Sequence[str]) -> Release:
    """One schema file, replacing ``as_name`` (or the known name it matches)."""
    name = as_name or infer_name(path, known)
    name = PurePosixPath(name.replace("\\", "/")).as_posix()
    if name.startswith(f"{SCHEMA_DIR}/"):
        name = name[len(SCHEMA_DIR) + 1 :]
    if not name.endswith(".json"):
        raise AcpgenError(f"--as {name!r} is not a .json schema file name")
    _check_name(name, str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AcpgenError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return Release(origin=str(path), schemas={name: data}, single=True)


def infer_name(path: Path, known: Sequence[str]) -> str:
    """The vendored schema a file replaces, from its path: the known name
    its path ends with, or whose file name is the same, when only one is."""
    posix = path.resolve().as_posix()
    by_suffix = [k for k in known if posix.endswith("/" + k)]
    if len(by_suffix) == 1:
        return by_suffix[0]
    by_name = [k for k in known if PurePosixPath(k).name == path.name]
    if len(by_name) == 1:
        return by_name[0]
    candidates = by_suffix or by_name
    if candidates:
        raise AcpgenError(
            f"cannot tell which schema this replaces ({', '.join(sorted(candidates))}); name it with --as",
            file=str(path),
        )
    raise AcpgenError(
        f"it matches none of the vendored schemas ({', '.join(sorted(known)) or 'none'}); name it with --as",
        file=str(path),
    )


def npm_pack(version: str, directory: Path, npm: str | None = None) -> Path:
    """``npm pack @agentclientprotocol/sdk@VERSION`` into ``directory``."""
    program = npm or shutil.which("npm")
    if program is None:
        raise AcpgenError("--npm needs npm, which is not on PATH; download the tarball and use --from")
    spec = f"{PACKAGE_NAME}@{version}"
    try:
        result = subprocess.run(
            [program, "pack", spec, "--silent"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AcpgenError(f"npm pack {spec} failed: {exc}") from None
    if result.returncode != 0:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        raise AcpgenError(f"npm pack {spec} failed: {lines[-1] if lines else f'exit status {result.returncode}'}")
    tarballs = sorted(directory.glob("*.tgz"))
    if len(tarballs) != 1:
        raise AcpgenError(f"npm pack {spec} did not leave one tarball in {directory}")
    return tarballs[0]


# ---------------------------------------------------------------- planning


def known_names(config: Config) -> list[str]:
    """The schema files the project vendors: SOURCE.json's, and the
    configured targets under ``schema/``."""
    names = set(_source_record(config.root / SCHEMA_DIR).get("files", {}))
    names |= set(_source_record(config.root / SCHEMA_DIR).get("local", {}))
    for target in config.targets:
        relative = _under_schema(target.schema)
        if relative:
            names.add(relative)
    return sorted(names)


def _under_schema(configured: str) -> str | None:
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


def plan(config: Config, release: Release) -> Plan:
    """Check the release and work out the new ``schema/`` and the diffs.
    Reads only."""
    schema_dir = config.root / SCHEMA_DIR
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
        relative = _under_schema(target.schema)
        if relative and relative not in contents:
            raise AcpgenError(
                f"the new schemas have no {relative}, which [tool.acpgen] generates {target.package} from",
                file=release.origin,
            )
    # Check every new schema file, and diff the ones that changed.
    new_version = "" if release.single else release.version
    changes = []
    for name in sorted(set(release.schemas) | set(removed)):
        if name in removed:
            changes.append(FileChange(name, "removed"))
            continue
        data = release.schemas[name]
        display = f"{release.origin}:{name}" if not release.single else release.origin
        new_schema = load_cached(display, data, display)
        build_ir(new_schema, "acpgen_update_check", "none")
        if name not in current:
            changes.append(FileChange(name, "added"))
            continue
        if current[name] == data:
            changes.append(FileChange(name, "unchanged"))
            continue
        try:
            old_schema = load_cached(f"{SCHEMA_DIR}/{name}", current[name])
            build_ir(old_schema, "acpgen_update_check", "none")
        except AcpgenError as error:
            # A vendored file that does not load any more is simply replaced.
            changes.append(FileChange(name, "changed", note=f"the vendored file does not load ({error})"))
            continue
        previous = old_version if hashlib.sha256(current[name]).hexdigest() in old_files.values() else ""
        diff = diff_schemas(old_schema, new_schema, old_version=previous, new_version=new_version)
        changes.append(FileChange(name, "changed", diff))
    return Plan(
        config=config,
        release=release,
        old_version=old_version,
        files=changes,
        contents=contents,
        removed=removed,
        writes=writes,
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


# ---------------------------------------------------------------- applying


def apply(
    plan_: Plan,
    *,
    generate: bool = True,
    templates: str | Path | None = None,
    warnings: list[str] | None = None,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
) -> dict[str, dict[str, str]]:
    """Write the new ``schema/`` and, with ``generate``, the packages; returns
    the packages written, and adds the generator's warnings (and those about
    leftovers of interrupted runs) to ``warnings``.
    ``schema/`` and the packages are replaced as one transaction of
    :mod:`acpgen.write`, journaled in the output directory."""
    config = plan_.config
    root = config.root
    built: dict[str, dict[str, str]] = {}
    if generate:
        # Generate from the new schemas, staged where the configuration
        # expects them, in a scratch directory outside the project.
        with tempfile.TemporaryDirectory(prefix="acpgen-update-") as scratch:
            stage_root = Path(scratch)
            for relative, data in plan_.contents.items():
                staged = stage_root / SCHEMA_DIR / relative
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_bytes(data)
            for target in config.targets:
                if _under_schema(target.schema) is None:
                    _copy_outside(root, stage_root, target.schema)
            built = build_all(config.targets, stage_root, templates, warnings=warnings)
    trees = []
    if plan_.changed:
        # The files acpgen manages, on a copy of everything else in schema/.
        schema_dir = root / SCHEMA_DIR
        trees.append(Tree(schema_dir, plan_.writes, guarded=False, keep=schema_dir, drop=frozenset(plan_.removed)))
    trees += [package_tree(config.out_dir, name, files) for name, files in built.items()]
    # schema/ and every package, all or nothing.
    replace_trees(
        config.out_dir,
        trees,
        overwrite_foreign=overwrite_foreign,
        overwrite_edited=overwrite_edited,
        on_wait=on_wait,
        warnings=warnings,
    )
    return built


def _copy_outside(root: Path, stage_root: Path, configured: str) -> None:
    """A target's schema outside ``schema/``, with the SOURCE.json files
    ``schema_version`` would look at, copied into the staging root."""
    if ".." in PurePosixPath(configured.replace("\\", "/")).parts:
        raise AcpgenError(
            f"cannot stage the schema {configured!r} of [tool.acpgen] (it climbs out of the project); "
            "update with --no-generate, then run `acpgen generate`"
        )
    source = root / configured
    if not source.is_file() or Path(configured).is_absolute():
        return
    target = stage_root / configured
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    for up in (source.parent, source.parent.parent):
        record = up / SOURCE_FILE
        if record.is_file():
            copy = stage_root / up.relative_to(root) / SOURCE_FILE
            copy.parent.mkdir(parents=True, exist_ok=True)
            if not copy.exists():
                shutil.copyfile(record, copy)
