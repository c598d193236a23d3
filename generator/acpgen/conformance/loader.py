"""Find and import the package under test, its schema and its fixtures.

The package is imported by path under a private module name, so that it
cannot pick up (or clobber) another copy of itself that happens to be
importable, and a package generated with custom templates or an older
generator is checked exactly as it is on disk. Only its public API is used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..jsontypes import JsonObject


_counter = itertools.count()


def _project_root() -> Path:
    """The project whose ``schema/`` and ``tests/fixtures/conformance/`` are
    the defaults: the nearest one around the working directory, else the
    checkout acpgen runs from (never an installed package's directory)."""
    here = Path.cwd().resolve()
    for directory in (here, *here.parents):
        if (directory / "tests" / "fixtures" / "conformance").is_dir() and (directory / "schema").is_dir():
            return directory
    checkout = Path(__file__).resolve().parents[3]
    return checkout if (checkout / "tests" / "fixtures" / "conformance").is_dir() else here


PROJECT_ROOT = _project_root()
"""The project the default schemas and fixtures come from."""
FIXTURES_ROOT = PROJECT_ROOT / "tests" / "fixtures" / "conformance"
SCHEMA_ROOT = PROJECT_ROOT / "schema"


class ConformanceError(Exception):
    """Bad arguments: the package, schema or fixtures cannot be found."""


def package_dir(spec: str) -> Path:
    """The directory of the package named by ``spec``: a package directory,
    a directory holding exactly one package, or an importable name."""
    path = Path(spec)
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return path.resolve()
        children = sorted(p for p in path.iterdir() if (p / "__init__.py").is_file())
        if len(children) == 1:
            return children[0].resolve()
        if not children:
            raise ConformanceError(f"{spec}: no Python package (a directory with __init__.py) here")
        names = ", ".join(p.name for p in children)
        raise ConformanceError(f"{spec}: holds several packages ({names}); name one of them")
    if path.suffix or "/" in spec or "\\" in spec:
        raise ConformanceError(f"{spec}: no such directory")
    try:
        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError) as exc:
        raise ConformanceError(f"{spec}: cannot be imported: {exc}") from None
    if found is None or not found.submodule_search_locations:
        raise ConformanceError(f"{spec}: not an importable package (and not a directory)")
    return Path(next(iter(found.submodule_search_locations))).resolve()


def import_package(directory: Path) -> ModuleType:
    """Import the package in ``directory`` under a private, unique name."""
    name = f"_acpgen_conformance_{next(_counter)}_{directory.name}"
    spec = importlib.util.spec_from_file_location(
        name, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    if spec is None or spec.loader is None:  # pragma: no cover - defensive
        raise ConformanceError(f"{directory}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConformanceError(f"{directory}: importing it failed: {type(exc).__name__}: {exc}") from None
    for attribute in ("decode", "encode", "ValidationError"):
        if not hasattr(module, attribute):
            raise ConformanceError(f"{directory}: has no {attribute!r}; not a generated ACP package")
    return module


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vendored_schemas() -> dict[str, Path]:
    """``{sha256: path}`` of the schemas under ``schema/``."""
    if not SCHEMA_ROOT.is_dir():
        return {}
    return {sha256(p): p for p in sorted(SCHEMA_ROOT.rglob("*.json")) if p.name.startswith("schema")}


def schema_for(package: ModuleType, explicit: str | None) -> Path:
    """The schema to check against: ``--schema``, else the file the package
    records (``SCHEMA_FILE``, relative to the project) when its sha256 is
    ``SCHEMA_SHA256``, else the vendored schema with that sha256."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConformanceError(f"--schema {explicit}: no such file")
        return path.resolve()
    recorded = getattr(package, "SCHEMA_SHA256", None)
    relative = getattr(package, "SCHEMA_FILE", None)
    if isinstance(relative, str):
        for base in (Path.cwd(), PROJECT_ROOT):
            candidate = base / relative
            if candidate.is_file() and (recorded is None or sha256(candidate) == recorded):
                return candidate.resolve()
    if isinstance(recorded, str):
        match = vendored_schemas().get(recorded)
        if match is not None:
            return match.resolve()
    raise ConformanceError(
        f"cannot tell which schema the package was generated from (SCHEMA_FILE={relative!r}, "
        f"SCHEMA_SHA256={recorded!r}); pass --schema"
    )


def schema_key(schema: Path) -> str:
    """The fixtures directory name of a schema: ``schema/v2/schema.unstable.json``
    -> ``v2_unstable``."""
    from .fixturegen import schema_key as key

    return key(schema)


SHIPPED_ROOTS = (
    Path(__file__).resolve().parent / "fixtures",
    Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "conformance",
)
"""Where the hand-written fixtures of the schemas acpgen vendors are: in an
installed acpgen, package data beside this module (``manifest.json`` and
``handwritten/*.json`` of each schema, from ``tests/fixtures/conformance``);
in a checkout, that directory itself."""


def fixtures_for(schema: Path, explicit: str | None) -> Path | None:
    """The fixtures directory: ``--fixtures``, else the project's
    ``tests/fixtures/conformance/<schema key>``; None when there is none, and
    :func:`fixtures_on_the_fly` makes them."""
    if explicit:
        path = Path(explicit)
        if not path.is_dir():
            raise ConformanceError(f"--fixtures {explicit}: no such directory")
        return path.resolve()
    path = FIXTURES_ROOT / schema_key(schema)
    return path if path.is_dir() else None


def shipped_handwritten(schema: Path) -> Path | None:
    """The hand-written fixtures acpgen ships for ``schema`` (matched by its
    sha256 against the manifest they were written with), or None."""
    wanted = sha256(schema)
    for root in SHIPPED_ROOTS:
        if not root.is_dir():
            continue
        for manifest in sorted(root.glob("*/manifest.json")):
            try:
                recorded = json.loads(manifest.read_text(encoding="utf-8")).get("schema_sha256")
            except (OSError, ValueError):
                continue
            handwritten = manifest.parent / "handwritten"
            if recorded == wanted and handwritten.is_dir():
                return handwritten
    return None


def fixtures_on_the_fly(schema: Path, into: Path) -> str:
    """Make the fixtures of ``schema`` in the empty directory ``into``, as
    ``acpgen conformance-fixtures`` does (the committed seed), with the
    hand-written ones acpgen ships for it (the patch fixtures among them);
    returns how to show where they came from."""
    from . import fixturegen

    fixturegen.write(into, fixturegen.generate(schema, display=schema.name))
    handwritten = shipped_handwritten(schema)
    if handwritten is None:
        return (
            f"generated from {schema.name} (seed {fixturegen.DEFAULT_SEED}); acpgen has no hand-written fixtures "
            "for this schema (pass --fixtures with yours)"
        )
    shutil.copytree(handwritten, into / "handwritten")
    return (
        f"generated from {schema.name} (seed {fixturegen.DEFAULT_SEED}), and the hand-written ones of "
        f"{handwritten.parent.name} ({handwritten})"
    )


@dataclass
class FixtureFile:
    path: Path
    cases: list[JsonObject]
    patches: list[JsonObject]
    known_failures: dict[str, str]
    """``{fixture name: reason}``."""
    schema_sha256: str | None
    messages: list[JsonObject] = field(default_factory=list)
    """Whole JSON-RPC messages (``messages.json``)."""

    def known_failure(self, case: JsonObject) -> str | None:
        """Why the case (or message, or patch) is known to fail, or None."""
        name = case.get("name")
        return self.known_failures.get(name) if isinstance(name, str) else None


def load_fixtures(directory: Path) -> tuple[JsonObject, list[FixtureFile]]:
    """The manifest (or ``{}``) and every fixture file under ``directory``."""
    manifest_path = directory / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    files = []
    for path in sorted(directory.rglob("*.json")):
        if path == manifest_path:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ConformanceError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConformanceError(f"{path}: a fixture file is a JSON object")
        known = data.get("known_failures", {})
        if isinstance(known, list):
            known = {entry["name"]: entry.get("reason", "") for entry in known}
        files.append(
            FixtureFile(
                path=path,
                cases=list(data.get("cases", ())),
                patches=list(data.get("patches", ())),
                known_failures=dict(known),
                schema_sha256=data.get("schema_sha256"),
                messages=list(data.get("messages", ())),
            )
        )
    return manifest, files
