"""Reading a release: an npm tarball (as a stream, within caps), an unpacked
package directory, or one schema file, into a :class:`Release`; and
``npm pack`` to fetch a tarball. Also the names of the files a release and
the vendored ``schema/`` directory hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..compile.load import read_schema_bytes
from ..errors import AcpgenError

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
        raise AcpgenError(
            f"{where} is {member.size} bytes, more than the {MAX_MEMBER_BYTES >> 20} MiB cap", file=origin
        )
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
    data = read_schema_bytes(path)
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
            [program, "pack", spec, "--loglevel=error"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AcpgenError(f"npm pack {spec} failed: {exc}") from None
    if result.returncode != 0:
        raise AcpgenError(
            f"npm pack {spec} failed: {npm_failure(result.stderr or result.stdout, version, result.returncode)}"
        )
    tarballs = sorted(directory.glob("*.tgz"))
    if len(tarballs) != 1:
        raise AcpgenError(f"npm pack {spec} did not leave one tarball in {directory}")
    return tarballs[0]


_NPM_PREFIXES = ("npm error ", "npm ERR! ")
_NPM_NOISE = (
    "code ",
    "A complete log of this run",
    "In most cases you or one of your dependencies",
    "Log files were not written",
)


def npm_failure(output: str, version: str, status: int) -> str:
    """Why ``npm pack`` failed, in one line: what it means (a version or
    package that does not exist) and npm's own reason, the first line of
    its error report that is not a code or a pointer to its log."""
    code = ""
    reasons: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        for prefix in _NPM_PREFIXES:
            if text.startswith(prefix):
                text = text[len(prefix) :].strip()
                break
        if not text:
            continue
        if text.startswith("code ") and not code:
            code = text[len("code ") :].strip()
        if text.startswith(_NPM_NOISE):
            continue
        for tag in ("notarget ", "404 "):
            if text.startswith(tag):
                text = text[len(tag) :].strip()
        if text and text not in reasons:
            reasons.append(text)
    reason = reasons[0] if reasons else f"exit status {status}"
    if code == "ETARGET":
        return f"{PACKAGE_NAME} has no version {version} (npm: {reason})"
    if code == "E404":
        return f"{PACKAGE_NAME} is not in the registry npm uses (npm: {reason})"
    return reason + (f" ({code})" if code else "")
