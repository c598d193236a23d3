"""The pipeline: the one description of acpgen's stages, and the code that
strings them together. Data flows one way, one folder per stage:

1. **load** (``compile/load/``: ``schema.py``, ``jsontext.py``): read the
   schema, refuse what is not JSON, check it against the 2020-12 metaschema,
   resolve every ``$ref``.
2. **lower** (``compile/lower/``: ``definitions.py`` with ``types``,
   ``objects`` and ``unions``; the IR in ``compile/ir/``): the schema as the
   typed IR, small immutable dataclasses that say what to generate and
   nothing of how it is printed. The facts later passes need of the document
   (``lower/facts.py``) are read here, once; every fallback to ``Any`` or an
   alias is recorded with its reason (``lower/fallbacks.py``, ``generate
   --explain``). What JSON Schema keywords mean (annotations, integer
   formats, a union's tag) is ``vocabulary.py``, shared with ``conformance/``
   and ``diff/``.
3. **IR passes** (``compile/passes/``), in the one order of
   ``passes.PASSES``: ``naming`` (Python identifiers: a ``$defs`` name that
   is a usable identifier is kept exactly; only keywords and the attributes
   of the runtime's base classes, ``passes/attributes.py``, are reserved),
   ``defaults``, ``capabilities``, ``methods`` (the JSON-RPC method table),
   ``gates`` (the capability each gated method needs, from the capability
   descriptions and ``rules/capabilities.toml``), ``ruleselect`` (the patch
   rule set), ``upserts`` and ``session`` (the rules of ``rules/*.toml``,
   read by ``passes/rules.py``), ``resumption`` (how the SessionKeeper takes
   a session up again, from ``rules/resumption.toml``), ``senders`` (the
   agent's session senders, named from the ``session/update`` union, with
   ``rules/senders.toml``), then ``analysis``
   (alias order, referenced definitions). A pass reads the IR and shares
   only helpers with the others (``identifiers``, ``values``, ``rules``,
   ``attributes``), never another pass's code; no stage imports a later one
   (``tests/unit/test_import_graph.py``).
4. **views** (``views/``): one typed view per generated module, built in
   Python from the analysed IR (``VIEWS``: ``models``, ``codec``,
   ``patch``, ``session``, ``protocol``, ``connection``, ``senders``, the package's
   ``__init__`` and ``_schema``). Every decision about what a module prints
   is made there, under mypy: annotations, literals, docstrings and error
   messages as ready source text (``views/text.py``), which branches exist.
   No schema name can clash with a name a generated module binds, by
   construction (``views/names.py``): a module binds only underscore-first
   names besides its exports, which ``names.exports`` computes (every
   ``__all__`` comes from there), and reaches a builtin or a fixed name that
   a schema name hides through ``builtins`` or ``models``.
5. **render** (``emit/render.py``, ``templates/``): Jinja2, one template per
   generated module, given only its view, with no filters or globals: loops,
   boolean ifs and substitutions (``tests/unit/test_views.py`` counts each
   template's lines of fixed Python). The fixed code is the ``runtime/``
   modules, copied in as they are.
6. **format** (``emit/fmt.py``): ``ruff format`` in black's style, given
   each distinct top-level definition of all the packages once.
7. **write** (``output/``): under a lock, staged beside the target and
   swapped in as one journaled transaction; only over directories acpgen
   made; acpgen's own files never written through a link (``ownfiles``).
   Temporary directories (formatting, ``schema update``) are ``scratch.py``'s,
   removed however a run ends.

Beside the pipeline: ``cli/`` (the command line), ``diff/`` (``acpgen
diff``), ``update/`` (``acpgen schema update``), ``validate/`` (``acpgen
validate``), ``conformance/`` (the conformance suite).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .compile.ir import Package
from .compile.load import Schema, load_schema
from .compile.lower import lower
from .compile.lower.facts import schema_version as schema_version  # re-exported: acpgen.diff reads it here
from .compile.passes import Options, run_passes
from .config import Target, package_name_problem
from .emit.fmt import format_files
from .emit.render import render_package
from .errors import AcpgenError
from .output.trees import read_tree
from .output.write import package_tree
from .views.text import fallback_report


def build_ir(
    schema: Schema,
    package_name: str,
    rules: str | None = None,
    *,
    methods: bool = True,
) -> Package:
    """The named IR of a loaded schema. ``rules`` names the patch rule set
    (checked against the schema), ``"none"`` for none; without it the set is
    told from the schema (:mod:`acpgen.compile.passes.ruleselect`). ``methods=False`` leaves
    out the JSON-RPC method table (and its checks). Only lowering reads the
    schema: the later passes read the facts it carries in the IR."""
    check_package_name(package_name)
    return run_passes(lower(schema), Options(package_name, rules, methods))


def check_package_name(name: str, option: str | None = None) -> None:
    """Refuse a generated package's name that is not a usable one (see
    :func:`~acpgen.config.package_name_problem`); ``option`` names where it
    came from (``--package``)."""
    problem = package_name_problem(name)
    if problem is not None:
        where = f" ({option})" if option else ""
        raise AcpgenError(f"the package name {name!r}{where} {problem}")


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
    package's fallback report (:func:`acpgen.views.text.fallback_report`) is
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
    return {package: {name: formatted[f"{package}/{name}"] for name in files} for package, files in rendered.items()}


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
    files = render_package(package, templates)
    if warnings is not None:
        warnings.extend(f"{package_name}: {w}" for w in package.warnings)
        if not package.methods:
            warnings.append(
                f"{package_name}: {schema.path} marks no type with x-method, so the package's METHODS is empty "
                "and its Agent and Client interfaces have no methods (the ACP schemas mark every request, "
                "response and notification)"
            )
    if fallbacks is not None:
        fallbacks[package_name] = fallback_report(package)
    return files


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
