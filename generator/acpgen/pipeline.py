"""The pipeline, stage after stage: load -> lower -> naming -> defaults ->
render -> format; and the writers that put the result in place or compare it
with what is there."""

from __future__ import annotations

import keyword
import sys
from dataclasses import replace
from collections.abc import Iterable
from pathlib import Path

from .compile import ruleselect
from .compile.analysis import analyse
from .compile.capabilities import find_capabilities
from .config import Target
from .compile.defaults import resolve_defaults
from .compile.facts import schema_version as schema_version  # re-exported: acpgen.diff reads it here
from .errors import AcpgenError
from .emit.fmt import format_files
from .compile.ir import Package
from .compile.load import Schema, load_schema
from .compile.lower import lower
from .compile.methods import find_methods
from .compile.naming import name_package
from .emit.render import render_package
from .emit.text import fallback_report
from .compile.session import apply_session_rules
from .compile.upserts import apply_rules
from .output.trees import read_tree
from .output.write import package_tree


def build_ir(schema: Schema, package_name: str, rules: str | None = None, *, methods: bool = True) -> Package:
    """The named IR of a loaded schema. ``rules`` names the patch rule set
    (checked against the schema), ``"none"`` for none; without it the set is
    told from the schema (:mod:`acpgen.compile.ruleselect`). ``methods=False`` leaves
    out the JSON-RPC method table (and its checks). Only lowering reads the
    schema: the later passes read the facts it carries in the IR."""
    check_package_name(package_name)
    package = name_package(lower(schema), package_name)
    package = resolve_defaults(package)
    package = find_capabilities(package)
    if methods:
        package = find_methods(package)
    rules = ruleselect.choose(package, rules)
    if rules:
        package = apply_rules(package, rules)
        package = apply_session_rules(package, rules)
    return analyse(replace(package, rule_set=rules))


def check_package_name(name: str) -> None:
    """A generated package's name must be an ASCII identifier that is not a
    keyword and does not shadow a standard-library module."""
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
        raise AcpgenError(f"the package name {name!r} is not a usable Python identifier")
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        raise AcpgenError(
            f"the package name {name!r} is a standard-library module: importing it would shadow or be shadowed by it"
        )


def build_package(
    schema_path: str | Path,
    package_name: str,
    templates: str | Path | None = None,
    *,
    display_path: str | None = None,
    rules: str | None = None,
    warnings: list[str] | None = None,
    fallbacks: dict[str, list[str]] | None = None,
) -> dict[str, str]:
    """``{file name: formatted source}`` of one generated package. What the
    generator noticed but generated anyway is appended to ``warnings``; the
    package's fallback report (:func:`acpgen.emit.text.fallback_report`) is
    stored in ``fallbacks`` under its name."""
    rendered = render_one(
        schema_path,
        package_name,
        templates,
        display_path=display_path,
        rules=rules,
        warnings=warnings,
        fallbacks=fallbacks,
    )
    return format_packages({package_name: rendered})[package_name]


def format_packages(rendered: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Format all packages' files at once (one formatter run)."""
    flat = {f"{package}/{name}": text for package, files in rendered.items() for name, text in files.items()}
    formatted = format_files(flat)
    return {
        package: {name: formatted[f"{package}/{name}"] for name in files}
        for package, files in rendered.items()
    }


def render_one(
    schema_path: str | Path,
    package_name: str,
    templates: str | Path | None = None,
    *,
    display_path: str | None = None,
    rules: str | None = None,
    warnings: list[str] | None = None,
    fallbacks: dict[str, list[str]] | None = None,
) -> dict[str, str]:
    """``{file name: source}`` of one generated package, not yet formatted."""
    schema = load_schema(schema_path)
    if display_path is not None:
        schema = replace(schema, path=display_path)
    package = build_ir(schema, package_name, rules)
    if warnings is not None:
        warnings.extend(f"{package_name}: {w}" for w in package.warnings)
    if fallbacks is not None:
        fallbacks[package_name] = fallback_report(package)
    return render_package(package, templates)


def build_all(
    targets: Iterable[Target],
    root: Path,
    templates: str | Path | None = None,
    warnings: list[str] | None = None,
    fallbacks: dict[str, list[str]] | None = None,
) -> dict[str, dict[str, str]]:
    """Every configured package; the headers record each schema path as
    configured, so the output does not depend on where the project is."""
    built = {}
    for target in targets:
        if target.package in built:
            raise AcpgenError(f"the package {target.package!r} is configured twice")
        built[target.package] = render_one(
            root / target.schema,
            target.package,
            templates,
            display_path=Path(target.schema).as_posix(),
            rules=target.rules,
            warnings=warnings,
            fallbacks=fallbacks,
        )
    return format_packages(built)


def stale_files(built: dict[str, dict[str, str]], out_dir: Path) -> list[str]:
    """The files under ``out_dir`` that differ from ``built``: changed,
    missing or not generated any more."""
    stale = []
    for package, files in built.items():
        wanted = package_tree(out_dir, package, files).files
        existing = read_tree(out_dir / package)
        for name in sorted(set(wanted) | set(existing)):
            if existing.get(name) != wanted.get(name):
                stale.append(f"{package}/{name}")
    return stale
