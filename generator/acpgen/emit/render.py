"""Stage 4, render: print the IR through the Jinja2 templates.

One template per generated module; the templates only print what the IR
says (analysed before, by :mod:`acpgen.compile.passes.analysis`), with the text
helpers of :mod:`.text` as filters to turn IR facts into Python source text
and prose (a literal, an annotation, a docstring, an error message). ``--templates DIR`` puts a
directory in front of the built-in templates, so a user can replace any of
them by file name.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

import jinja2

from .. import __version__
from ..compile import ir
from ..errors import AcpgenError
from ..runtime import SOURCES
from ..views import VIEWS, ViewInputs
from . import text
from .names import CODEC_HELPERS, IMPORTS_MARKER, ModuleNames, exports, package_imports, reexports, schema_names
from .template_cache import bytecode_cache

# Generated file -> template.
MODULES = {
    "__init__.py": "__init__.py.jinja",
    "models.py": "models.py.jinja",
    "codec.py": "codec.py.jinja",
    "_schema.py": "_schema.py.jinja",
    "patch.py": "patch.py.jinja",
    "session.py": "session.py.jinja",
    "protocol.py": "protocol.py.jinja",
    "connection.py": "connection.py.jinja",
}


PLAIN_KINDS = ("any", "str", "int", "num", "bool", "null", "const", "raw")
"""Type expressions whose decoded Python value is its own wire form."""


INLINE_KINDS = ("any", "str", "int", "num", "bool", "const")
"""Type expressions an alias of which is decoded in place, not by a call."""


def builtin_templates() -> Path:
    return Path(str(resources.files("acpgen.templates")))


def environment(templates: str | Path | None = None) -> jinja2.Environment:
    if templates is not None and not Path(templates).is_dir():
        raise AcpgenError("not a directory of templates", file=str(templates))
    return _environment(None if templates is None else str(templates))


@functools.lru_cache(maxsize=8)
def _environment(templates: str | None) -> jinja2.Environment:
    """One environment per template directory, so each template is compiled
    once a process (a changed file is compiled again: Jinja checks), and
    then only when :mod:`.template_cache` holds no code for its source."""
    search = [str(builtin_templates())]
    if templates is not None:
        search.insert(0, templates)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # What changes the compiled code keys its cache entries.
    env.bytecode_cache = bytecode_cache(
        (env.autoescape, env.keep_trailing_newline, env.trim_blocks, env.lstrip_blocks, env.newline_sequence)
    )
    env.filters.update(text.FILTERS)
    env.globals["generator_version"] = __version__
    env.globals["plain_kinds"] = PLAIN_KINDS
    env.globals["inline_kinds"] = INLINE_KINDS
    return env


def _tag_dispatched(t: ir.TypeExpr, defs: dict[str, ir.Definition]) -> ir.UnionDef | None:
    """The union ``t`` refers to when a decoder of ``t`` may look up the
    variant for the tag itself (:attr:`ir.UnionDef.dispatch_by_tag`)."""
    if t.kind != "ref":
        return None
    target = defs[t.name]
    return target if target.kind == "union" and target.dispatch_by_tag else None


def _private(name: str) -> str:
    """What the templates import ``name`` from ``typing`` as."""
    return "_" + name


def render_package(package: ir.Package, templates: str | Path | None = None) -> dict[str, str]:
    """``{file name: source}`` for one package, not yet formatted."""
    env = environment(templates)
    defs = {d.name: d for d in package.definitions}
    names = exports(package)
    schema = schema_names(package)
    context = {
        "package": package,
        "defs": defs,
        "tag_dispatched": lambda t: _tag_dispatched(t, defs),
        "variant_doc": lambda union, variant: text.variant_doc(defs, union, variant),
        "alias_order": [defs[name] for name in package.alias_order],
        "uses_const": package.uses_const,
        "referenced": package.referenced,
        "schema_json": json.dumps(package.validation_defs, sort_keys=False, separators=(",", ":")),
        "ir": ir,
        "exports": names,
        "reexports": reexports(package),
        "package_imports": package_imports(package),
        "schema_names": frozenset(schema),
    }
    out = {}
    for module, template_name in MODULES.items():
        stem = module[: -len(".py")]
        # How this module names the schema's names and the builtins: see
        # acpgen.emit.names (models.py and the package bind the schema's names).
        module_names = ModuleNames(
            own=frozenset(names.get(stem, ())),
            schema=schema,
            binds_schema=stem in ("models", "__init__"),
            sorted_imports=stem != "codec",
            optional_imports=CODEC_HELPERS if stem == "codec" else (),
        )
        try:
            template = env.get_template(template_name)
            builder = VIEWS.get(stem)
            if builder is not None:
                # A module with a view is rendered from its view alone.
                rendered = template.render(
                    view=builder(
                        ViewInputs(
                            package=package,
                            defs=defs,
                            names=module_names,
                            exports=names,
                            generator_version=__version__,
                        )
                    )
                )
            else:
                rendered = _render_legacy(template, context, module_names, defs)
        except jinja2.TemplateError as exc:
            where = getattr(exc, "filename", None) or template_name
            line = getattr(exc, "lineno", None)
            raise AcpgenError(f"template error: {exc.message}", file=f"{where}:{line}" if line else where) from None
        imports = module_names.imports(rendered)
        out[module] = rendered.replace(IMPORTS_MARKER + "\n", imports + "\n" if imports else "", 1)
    header = env.from_string('{% import "macros.jinja" as m %}{{ m.header_comment(package) }}\n')
    for module, source in SOURCES.items():
        # Plain Python modules, copied as they are behind the generated
        # header; a file of the same name in --templates replaces one.
        override = Path(templates, module) if templates is not None else None
        path = override if override is not None and override.is_file() else source
        out[module] = header.render(context) + path.read_text(encoding="utf-8")
    out["py.typed"] = ""
    return out


def _render_legacy(
    template: jinja2.Template, context: dict[str, object], module_names: ModuleNames, defs: dict[str, ir.Definition]
) -> str:
    """A module not yet given a view: the whole package context and the
    naming helpers as callables."""
    return template.render(
        context,
        ref=module_names.ref,
        aref=module_names.annotation_ref,
        enter_class=module_names.enter_class,
        refs=lambda names, ref=module_names.ref: [ref(n) for n in names],
        builtin=module_names.builtin,
        annotation=text.Annotations(defs, module_names.annotation_ref, module_names.builtin, _private),
        # A type alias's value is evaluated at import (after the
        # classes it names): the schema's names as they are.
        alias_value=text.Annotations(defs, module_names.ref, module_names.builtin, _private),
        def_annotation=functools.partial(
            text.definition_annotation, ref=module_names.annotation_ref, builtin=module_names.builtin
        ),
    )
