"""Stage 4, render: print the IR through the Jinja2 templates.

One template per generated module; the templates only print what the IR
says, with the few filters below to turn IR values into Python source text
(a literal, an annotation, a docstring). ``--templates DIR`` puts a
directory in front of the built-in templates, so a user can replace any of
them by file name.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import jinja2

from .. import __version__
from ..compile import ir
from . import fmt
from ..errors import AcpgenError
from ..runtime import SOURCES

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
    once a process (a changed file is compiled again: Jinja checks)."""
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
    env.filters["py"] = py_literal
    env.filters["docstring"] = docstring
    env.filters["comment"] = comment
    env.filters["pointer_literal"] = lambda p: py_literal("#" + p)
    env.filters["param"] = parameter
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


def render_package(package: ir.Package, templates: str | Path | None = None) -> dict[str, str]:
    """``{file name: source}`` for one package, not yet formatted."""
    env = environment(templates)
    defs = {d.name: d for d in package.definitions}
    context = {
        "package": package,
        "defs": defs,
        "tag_dispatched": lambda t: _tag_dispatched(t, defs),
        "annotation": _Annotations(package),
        "alias_order": alias_order(package),
        "uses_const": any(t.kind == "const" for t in type_exprs(package)),
        "referenced": referenced(package),
        "schema_json": json.dumps(package.validation_defs, sort_keys=False, separators=(",", ":")),
        "ir": ir,
    }
    out = {}
    for module, template_name in MODULES.items():
        try:
            template = env.get_template(template_name)
            out[module] = template.render(context)
        except jinja2.TemplateError as exc:
            where = getattr(exc, "filename", None) or template_name
            line = getattr(exc, "lineno", None)
            raise AcpgenError(
                f"template error: {exc.message}", file=f"{where}:{line}" if line else where
            ) from None
    header = env.from_string('{% import "macros.jinja" as m %}{{ m.header_comment(package) }}\n')
    for module, source in SOURCES.items():
        # Plain Python modules, copied as they are behind the generated
        # header; a file of the same name in --templates replaces one.
        override = Path(templates, module) if templates is not None else None
        path = override if override is not None and override.is_file() else source
        out[module] = header.render(context) + path.read_text(encoding="utf-8")
    out["py.typed"] = ""
    return out


def alias_order(package: ir.Package) -> list[ir.Definition]:
    """The type aliases (plain and union) in an order where each comes after
    the aliases its value names: they are evaluated when the module loads."""
    aliases = {d.name: d for d in package.definitions if d.kind in ("alias", "union")}
    ordered: list[ir.Definition] = []
    state: dict[str, str] = {}

    def visit(name: str) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "active":
            raise AcpgenError(f"the type alias {name!r} refers to itself", file=package.schema_path)
        state[name] = "active"
        definition = aliases[name]
        if definition.kind == "alias":
            for ref in _refs(definition.target):
                if ref in aliases:
                    visit(ref)
        state[name] = "done"
        ordered.append(definition)

    for name in aliases:
        visit(name)
    return ordered


def type_exprs(package: ir.Package) -> Iterator[ir.TypeExpr]:
    """Every type expression of the package's definitions and patch states,
    nested ones included."""
    roots: list[ir.TypeExpr] = []
    for definition in package.definitions:
        if isinstance(definition, ir.ObjectDef):
            roots += [f.type for f in definition.fields]
        elif isinstance(definition, ir.UnionDef):
            roots += [f.type for v in definition.variants for f in v.fields]
        elif isinstance(definition, ir.AliasDef):
            roots.append(definition.target)
    roots += [f.type for u in package.upserts for f in u.fields]
    while roots:
        t = roots.pop()
        yield t
        roots += [getattr(t, child) for child in ("inner", "items", "values") if hasattr(t, child)]
        roots += getattr(t, "members", ())


def referenced(package: ir.Package) -> set[str]:
    """The definitions another type names (whose encoders the codec calls)."""
    names = {t.name for t in type_exprs(package) if isinstance(t, ir.RefT)}
    names.update(name for t in type_exprs(package) if isinstance(t, ir.KeyedT) for name in t.refs)
    for definition in package.definitions:
        if isinstance(definition, ir.UnionDef):
            names.update(v.wraps for v in definition.variants if v.wraps)
    return names


def _refs(t: ir.TypeExpr) -> Iterator[str]:
    if t.kind == "ref":
        yield t.name
    for child in ("inner", "items", "values"):
        if hasattr(t, child):
            yield from _refs(getattr(t, child))
    for member in getattr(t, "members", ()):
        yield from _refs(member)
    if isinstance(t, ir.KeyedT):
        yield from t.refs


def py_literal(value: Any) -> str:
    """A Python literal for a JSON value; ``repr`` escapes every string."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def parameter(annotation: str, name: str, indent: int = 4) -> str:
    """``name: annotation`` as black prints a parameter of a signature split
    one parameter per line: a union too long for its line is wrapped in
    parentheses (the formatter keeps them, and splits inside them as black
    does). A parameter that needs them never fits a signature on one line."""
    text = f"{name}: {annotation}"
    if indent + len(text) + 1 > fmt.LINE_LENGTH and " | " in annotation:
        return f"{name}: ({annotation})"
    return text


def comment(text: str) -> str:
    """Text for a ``#`` comment: one line, control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def docstring(text: str) -> str:
    """A triple-quoted docstring holding ``text``, whatever it contains.

    Backslashes and quotes are escaped, and characters that are not printable
    (controls, line and paragraph separators, bidirectional overrides) are
    written as escapes, so schema text can never end the string or change
    how the source reads.
    """
    text = text.strip()
    if '"' not in text and "\\" not in text and all(line.isprintable() for line in text.split("\n")):
        # Nothing to escape (isprintable() is False for the Cf, Co and Cs
        # characters escaped below).
        out = [text]
    else:
        out = _escaped(text)
    # Trailing whitespace on a line is not kept by the formatter anyway.
    body = "\n".join(line.rstrip() for line in "".join(out).split("\n"))
    # A multi-line docstring ends with the closing quotes on a line of their
    # own (PEP 257), where black and ruff both leave them.
    return '"""' + body + ('\n"""' if "\n" in body else '"""')


def _escaped(text: str) -> list[str]:
    out = []
    quotes = 0
    for index, char in enumerate(text):
        quotes = quotes + 1 if char == '"' else 0
        if char == "\n":
            out.append(char)
        elif char == "\\":
            out.append("\\\\")
        elif char == '"':
            # Escape the third quote in a row, and a quote that would touch
            # the closing ones.
            if quotes == 3 or index == len(text) - 1:
                out.append('\\"')
                quotes = 0
            else:
                out.append(char)
        elif char.isprintable() and unicodedata.category(char) not in ("Cf", "Co", "Cs"):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return out


class _Annotations:
    """``annotation(type)``: the Python annotation of a type expression."""

    def __init__(self, package: ir.Package) -> None:
        self.defs = {d.name: d for d in package.definitions}

    def __call__(self, t: ir.TypeExpr) -> str:
        if t.kind in ("any", "raw"):
            return "Any"
        if t.kind == "str":
            return "str"
        if t.kind == "int":
            return "int"
        if t.kind == "num":
            return "float"
        if t.kind == "bool":
            return "bool"
        if t.kind == "null":
            return "None"
        if t.kind == "const":
            return f"Literal[{py_literal(t.value)}]"
        if t.kind == "list":
            return f"list[{self(t.items)}]"
        if t.kind == "map":
            return f"dict[str, {self(t.values)}]"
        if t.kind == "nullable":
            return f"{self(t.inner)} | None"
        if t.kind in ("scalar_union", "first_match"):
            return " | ".join(dict.fromkeys(self(m) for m in t.members))
        if t.kind == "keyed":
            return " | ".join(self.defs[name].class_name for name in t.refs)
        if t.kind == "ref":
            return self.defs[t.name].annotation
        raise ValueError(t.kind)
