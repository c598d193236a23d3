"""The views of the package's ``__init__.py`` and of ``_schema.py``."""

from __future__ import annotations

import json

from ..records import dataclass
from . import text
from .inputs import ViewInputs
from .names import PACKAGE_METADATA, lazy_exports, package_imports
from .source import header, literal

SCHEMA_SUMMARY = "The schema's definitions without their annotations: what strict mode validates against."


@dataclass(frozen=True)
class BuiltinNames:
    """How the package's ``__init__.py`` names the builtins it calls (a
    schema name of the same spelling shadows one there)."""

    str_: str
    globals_: str
    dict_: str
    object_: str


@dataclass(frozen=True)
class MetadataView:
    """The package's metadata names (``_``-prefixed where the schema defines
    the same name) and their values as literals."""

    generator_version: str
    schema_file: str
    schema_sha256: str
    schema_version: str
    definitions: str
    generator_version_value: str
    schema_file_value: str
    schema_sha256_value: str
    schema_version_value: str


@dataclass(frozen=True)
class DefinitionEntry:
    name: str
    """The ``$defs`` name as a literal."""
    class_name: str


@dataclass(frozen=True)
class LazyEntry:
    name: str
    """A name the package loads on first use, as a literal."""
    module: str
    """The module of the package it is read from, as a literal."""


@dataclass(frozen=True)
class PackageView:
    header: str
    eager_imports: str
    """The imports of the modules' exports, loaded with the package."""
    lazy_imports: str
    """The imports of the exports loaded on first use, for type checkers."""
    lazy: tuple[LazyEntry, ...]
    """The exports loaded on first use, each with its module."""
    builtins: BuiltinNames
    meta: MetadataView
    definitions: tuple[DefinitionEntry, ...]
    exports: tuple[str, ...]
    """``__all__`` as string literals."""


def build_package_view(inputs: ViewInputs) -> PackageView:
    package, names = inputs.package, inputs.names
    schema = frozenset(inputs.exports["models"])
    imports = package_imports(package)
    meta = {n: "_" + n if n in schema else n for n in PACKAGE_METADATA}
    b = names.builtin
    return PackageView(
        header=header(package, inputs.generator_version, text.package_doc(package)),
        eager_imports=imports["eager"],
        lazy_imports=imports["lazy"],
        lazy=tuple(LazyEntry(literal(n), literal(m)) for n, m in lazy_exports(package).items()),
        builtins=BuiltinNames(
            str_=b("str"),
            globals_=b("globals"),
            dict_=b("dict"),
            object_=b("object"),
        ),
        meta=MetadataView(
            generator_version=meta["GENERATOR_VERSION"],
            schema_file=meta["SCHEMA_FILE"],
            schema_sha256=meta["SCHEMA_SHA256"],
            schema_version=meta["SCHEMA_VERSION"],
            definitions=meta["DEFINITIONS"],
            generator_version_value=literal(inputs.generator_version),
            schema_file_value=literal(package.schema_path),
            schema_sha256_value=literal(package.schema_sha256),
            schema_version_value=literal(package.schema_version),
        ),
        definitions=tuple(DefinitionEntry(literal(d.name), d.class_name) for d in package.definitions),
        exports=tuple(literal(n) for n in inputs.exports["__init__"]),
    )


@dataclass(frozen=True)
class SchemaView:
    header: str
    schema_json: str
    """The ``$defs`` without their annotations, as a string literal of compact JSON."""


def build_schema_view(inputs: ViewInputs) -> SchemaView:
    package = inputs.package
    return SchemaView(
        header=header(package, inputs.generator_version, SCHEMA_SUMMARY),
        schema_json=literal(json.dumps(package.validation_defs, sort_keys=False, separators=(",", ":"))),
    )
