"""Stage 4, render: print each generated module from its view.

One template per generated module; a template receives only its module's
view (:mod:`acpgen.views`: every decision made in Python, over the analysed
IR) and prints it with loops, boolean ``if``\\ s and substitutions. The
environment has no filters or globals, so a template cannot compute.
``--templates DIR`` puts a directory in front of the built-in templates, so a
user can replace any of them by file name (given the same view), and a
runtime module by a file of its name.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import jinja2

from .. import __version__
from ..compile import ir
from ..errors import AcpgenError
from ..runtime import MCP_ONLY, SOURCES
from ..views import VIEWS, ViewInputs
from ..views.names import (
    CODEC_HELPERS,
    IMPORTS_MARKER,
    PROXY_SOURCES,
    SENDERS_HELPERS,
    ModuleNames,
    exports,
    has_mcp,
    proxy_chain,
    schema_names,
)
from ..views.source import header_comment
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
    "senders.py": "senders.py.jinja",
    "proxy.py": "proxy.py.jinja",
}
"""(``proxy.py`` only for a schema with a proxy chain: ``acpgen.views.names.PROXY_SOURCES``.)"""


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
    return env


def render_package(package: ir.Package, templates: str | Path | None = None) -> dict[str, str]:
    """``{file name: source}`` for one package, not yet formatted."""
    env = environment(templates)
    defs = {d.name: d for d in package.definitions}
    names = exports(package)
    schema = schema_names(package)
    out = {}
    chain = proxy_chain(package)
    for module, template_name in MODULES.items():
        if module in PROXY_SOURCES and not chain:
            continue
        stem = module[: -len(".py")]
        # How this module names the schema's names and the builtins: see
        # acpgen.views.names (models.py and the package bind the schema's names).
        module_names = ModuleNames(
            own=frozenset(names.get(stem, ())),
            schema=schema,
            binds_schema=stem in ("models", "__init__"),
            sorted_imports=stem != "codec",
            optional_imports=CODEC_HELPERS if stem == "codec" else SENDERS_HELPERS if stem == "senders" else (),
        )
        try:
            template = env.get_template(template_name)
            inputs = ViewInputs(
                package=package, defs=defs, names=module_names, exports=names, generator_version=__version__
            )
            rendered = template.render(view=VIEWS[stem](inputs))
        except jinja2.TemplateError as exc:
            where = getattr(exc, "filename", None) or template_name
            line = getattr(exc, "lineno", None)
            raise AcpgenError(f"template error: {exc.message}", file=f"{where}:{line}" if line else where) from None
        imports = module_names.imports(rendered)
        out[module] = rendered.replace(IMPORTS_MARKER + "\n", imports + "\n" if imports else "", 1)
    header = header_comment(package, __version__) + "\n"
    mcp = has_mcp(package)
    for module, source in SOURCES.items():
        if module in PROXY_SOURCES and not chain:
            continue
        # Plain Python modules, copied as they are behind the generated
        # header; a file of the same name in --templates replaces one.
        if module in MCP_ONLY and not (mcp or chain):
            continue  # a proxy's connection provides MCP servers through it
        override = Path(templates, module) if templates is not None else None
        path = override if override is not None and override.is_file() else source
        out[module] = header + path.read_text(encoding="utf-8")
    out["py.typed"] = ""
    return out
