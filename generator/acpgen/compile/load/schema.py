"""Stage 1, load: read a schema file, check it against the metaschema and
resolve its ``$ref``s.

The result is a :class:`Schema`: the parsed document, its ``$defs`` and where
it came from. Every problem is an :class:`~acpgen.errors.AcpgenError` naming
the file and the JSON pointer of the offending node.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ...errors import AcpgenError, pointer
from ...jsontypes import JsonPath
from ...records import dataclass
from . import jsontext

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


def _compiled_validator_module() -> ModuleType | None:
    """``jsonschema_rs``: compiled, a thousand times faster on a valid
    schema; None on a platform without its wheel."""
    try:
        return importlib.import_module("jsonschema_rs")
    except ImportError:  # pragma: no cover - a platform without its wheel
        return None


jsonschema_rs = _compiled_validator_module()

DEFS_PREFIX = "#/$defs/"
_QUICK_DEPTH = 64
"""Documents nested deeper than this are checked only by jsonschema, which
reports one nested too deeply to check."""


@dataclass(frozen=True)
class Schema:
    """A loaded, checked schema document."""

    path: str
    """The file name shown in messages and the generated header."""
    location: str
    """Where the file was read from."""
    sha256: str
    document: Mapping[str, Any]
    defs: Mapping[str, Any]

    @property
    def title(self) -> str:
        return str(self.document.get("title", ""))


def ref_target(ref: str) -> str | None:
    """The ``$defs`` name of ``#/$defs/<name>``, or None for any other
    reference. The fragment is a URI fragment holding a JSON pointer: it is
    percent-decoded first (RFC 3986: ``%20`` is a space), then read as a
    pointer (RFC 6901: ``~1`` is ``/``, ``~0`` is ``~``)."""
    if not ref.startswith("#"):
        return None
    try:
        fragment = unquote(ref[1:], errors="strict")
    except UnicodeDecodeError:
        return None
    prefix = DEFS_PREFIX[1:]
    if not fragment.startswith(prefix) or "/" in fragment[len(prefix) :]:
        return None
    return fragment[len(prefix) :].replace("~1", "/").replace("~0", "~")


def canonical_ref(name: str) -> str:
    """The plain form of a reference to ``$defs/<name>``, as the generated
    validator resolves it (a JSON pointer, not percent-encoded)."""
    return "#" + pointer(("$defs", name))


MAX_SCHEMA_BYTES = 64 * 1024 * 1024
"""The most acpgen reads of a schema file: 64 MiB (the ACP schemas are under
half a MiB); a longer file is refused, naming it, before it is read whole."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_schema_bytes(path: str | Path, name: str | None = None) -> bytes:
    """The bytes of a schema file, which must be a regular file of at most
    :data:`MAX_SCHEMA_BYTES`: a FIFO, a device (``/dev/zero``), a directory
    or a longer file is an :class:`AcpgenError` naming the file (``name``,
    else ``path``), raised without waiting for a writer or reading on. A
    regular file that says it is empty (as those of ``/proc`` do) is read
    up to the cap."""
    name = str(path) if name is None else name
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        # Non-blocking: opening a FIFO for reading waits for a writer.
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise AcpgenError("no such file", file=name) from None
    except OSError as exc:
        raise AcpgenError(f"cannot read: {exc.strerror}", file=name) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((what for test, what in _KINDS if test(info.st_mode)), "not a file")
            raise AcpgenError(f"is {kind}, not a regular file: a schema is read from a file", file=name)
        if info.st_size > MAX_SCHEMA_BYTES:
            raise _too_large(name)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, MAX_SCHEMA_BYTES + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_SCHEMA_BYTES:
                raise _too_large(name)
    except OSError as exc:
        raise AcpgenError(f"cannot read: {exc.strerror}", file=name) from None
    finally:
        os.close(fd)


def _too_large(name: str) -> AcpgenError:
    return AcpgenError(
        f"is larger than {MAX_SCHEMA_BYTES >> 20} MiB, the most acpgen reads of a schema file", file=name
    )


def load_schema(path: str | Path) -> Schema:
    """Read and check one schema file (see :func:`read_schema_bytes`)."""
    name = str(path)
    return parse_schema(read_schema_bytes(path, name), name)


def parse_schema(raw: bytes, name: str) -> Schema:
    """Check schema bytes; ``name`` is used in messages."""
    try:
        text = raw.decode(json.detect_encoding(raw))
    except UnicodeDecodeError as exc:
        raise AcpgenError(f"not UTF-8 text: {exc.reason}", file=name) from None
    try:
        document, depth = jsontext.loads(text, name)
    except json.JSONDecodeError as exc:
        raise AcpgenError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            file=name,
        ) from None
    if not isinstance(document, dict):
        raise AcpgenError("a schema document must be a JSON object", file=name, pointer="")
    try:
        error = None if _quickly_valid(document, depth) else _metaschema_error(document)
    except RecursionError:
        raise AcpgenError("the schema is nested too deeply to check", file=name) from None
    if error is not None:
        raise AcpgenError(
            f"does not conform to the JSON Schema 2020-12 metaschema: {error.message}",
            file=name,
            pointer=pointer(error.absolute_path),
        )
    defs = document.get("$defs")
    if not isinstance(defs, dict) or not defs:
        raise AcpgenError("the schema has no $defs to generate from", file=name, pointer="")
    if not _references_resolve(document, defs):
        _refuse_references(document, defs, name)
    return Schema(
        path=name,
        location=name,
        sha256=hashlib.sha256(raw).hexdigest(),
        document=document,
        defs=defs,
    )


_NOT_SCHEMAS = ("const", "enum", "default", "examples")
"""Keywords whose values are data, not schemas: a ``$ref`` or ``$id`` key
in them is no reference (:func:`iter_refs` does not look there)."""


def _references_resolve(document: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether every ``$ref`` of ``document`` resolves to one of ``defs`` and
    no ``$id`` is nested below the root: what :func:`_refuse_references`
    checks, in one walk that builds no JSON pointers (the walk with
    pointers, three times slower, runs only to name what is wrong)."""
    refs: set[str] = set()
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str):
                    if key == "$ref":
                        refs.add(value)
                    elif key == "$id" and node is not document:
                        return False
                elif key not in _NOT_SCHEMAS and isinstance(value, (dict, list)):
                    stack.append(value)
        else:
            stack.extend(item for item in node if isinstance(item, (dict, list)))
    return all(ref_target(ref) in defs for ref in refs)


def _refuse_references(document: dict[str, Any], defs: dict[str, Any], name: str) -> None:
    """Raise the error for the first ``$ref`` that does not resolve to one
    of ``defs``, or else for a nested ``$id`` (the walk of
    :func:`_references_resolve` found one of them)."""
    for where, ref in iter_refs(document):
        target = ref_target(ref)
        if target is None and not ref.startswith(DEFS_PREFIX):
            raise AcpgenError(
                f"unsupported $ref {ref!r}: only local references to #/$defs/<name> are resolved",
                file=name,
                pointer=where,
            )
        if target is None or target not in defs:
            raise AcpgenError(f"unresolvable $ref {ref!r}", file=name, pointer=where)
    for where, _ in iter_refs(document, keyword="$id"):
        # JSON Schema 2020-12 resolves the references below a nested $id
        # against it; acpgen resolves every reference against the document
        # and so refuses such a schema rather than read it differently.
        if where != "/$id":
            raise AcpgenError(
                "a nested $id is not supported: references are resolved against the document's root only",
                file=name,
                pointer=where,
            )
    raise AssertionError("_references_resolve refused a reference that _refuse_references accepts")


def _quickly_valid(document: dict[str, Any], depth: int) -> bool:
    """True when the compiled validator accepts ``document`` (whose arrays
    and objects nest ``depth`` deep) against the 2020-12 metaschema; False
    means: let jsonschema check it and say what is wrong."""
    if jsonschema_rs is None or depth > _QUICK_DEPTH:
        return False
    if "$schema" in document:
        # The 2020-12 metaschema whatever the document names (as jsonschema
        # checks it below): the compiled one goes by "$schema", 2020-12 without.
        document = {key: value for key, value in document.items() if key != "$schema"}
    try:
        return bool(jsonschema_rs.meta.is_valid(document))
    except Exception:  # a value it cannot take (a huge integer ...)
        return False


def _metaschema_error(document: dict[str, Any]) -> ValidationError | None:
    """jsonschema's best account of what in ``document`` the 2020-12
    metaschema refuses (imported here: a valid schema never needs it)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error: ValidationError | None = best_match(
        Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(document)
    )
    return error


def iter_objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``node``, itself included, in no set order."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def iter_refs(node: Any, parts: JsonPath = (), keyword: str = "$ref") -> Iterator[tuple[str, str]]:
    """Every ``$ref`` (or other string ``keyword``) in a document, with the
    JSON pointer of its node.

    Iterative, so a deeply nested document cannot exhaust the stack.
    """
    stack = [(node, parts)]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == keyword and isinstance(value, str):
                    yield pointer((*parts, key)), value
                elif key not in _NOT_SCHEMAS:
                    stack.append((value, (*parts, key)))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                stack.append((value, (*parts, index)))
