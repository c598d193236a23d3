"""Text helpers of the views: what turns the IR's facts into Python source
text and prose, which the views hand to the templates ready to print.

The IR holds semantic facts only (what a definition is, which rule a field
follows); everything a template prints that is composed from them is made
here: literals, annotations, docstrings, error messages, the container a
stored value is copied with.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from ..compile import ir
from ..emit import fmt

# ---------------------------------------------------------------- source text


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


def parameter(annotation: str, name: str, indent: int = 4, default: str = "") -> str:
    """``name: annotation`` (``= default``) as black prints a parameter of a
    signature split one parameter per line: a union too long for its line
    is wrapped in parentheses (the formatter keeps them, and splits inside
    them as black does). A parameter that needs them never fits a signature
    on one line."""
    tail = f" = {default}" if default else ""
    text = f"{name}: {annotation}{tail}"
    if indent + len(text) + 1 > fmt.LINE_LENGTH and " | " in annotation:
        return f"{name}: ({annotation}){tail}"
    return text


def comment(text: str) -> str:
    """Text for a ``#`` comment: one line, control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@functools.lru_cache(maxsize=8192)
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


def empty(kind: ir.Empty) -> str:
    """The Python source of an empty list or map."""
    return "[]" if kind == "list" else "{}"


def _same(name: str) -> str:
    return name


def definition_annotation(
    d: ir.Definition, ref: Callable[[str], str] = _same, builtin: Callable[[str], str] = _same
) -> str:
    """The Python annotation of a value of a definition: its class, or for
    an open enum the class or a plain value."""
    if isinstance(d, ir.EnumDef) and d.open:
        return f"{ref(d.class_name)} | {builtin(d.value_kind)}"
    return ref(d.class_name)


class Annotations:
    """``annotation(type)``: the Python annotation of a type expression, in
    a module that names the schema's names with ``ref`` and the builtins with
    ``builtin`` (:class:`acpgen.views.names.ModuleNames`) and what it imports
    from ``typing`` with ``typing`` (the templates import ``Any`` as ``_Any``)."""

    def __init__(
        self,
        defs: Mapping[str, ir.Definition],
        ref: Callable[[str], str] = _same,
        builtin: Callable[[str], str] = _same,
        typing: Callable[[str], str] = _same,
    ) -> None:
        self.defs = defs
        self.ref = ref
        self.builtin = builtin
        self.typing = typing

    def __call__(self, t: ir.TypeExpr) -> str:
        b = self.builtin
        if t.kind in ("any", "raw"):
            return self.typing("Any")
        if t.kind == "str":
            return b("str")
        if t.kind == "int":
            return b("int")
        if t.kind == "num":
            return b("float")
        if t.kind == "bool":
            return b("bool")
        if t.kind == "null":
            return "None"
        if t.kind == "const":
            return f"{self.typing('Literal')}[{py_literal(t.value)}]"
        if t.kind == "list":
            return f"{b('list')}[{self(t.items)}]"
        if t.kind == "map":
            return f"{b('dict')}[{b('str')}, {self(t.values)}]"
        if t.kind == "nullable":
            return f"{self(t.inner)} | None"
        if t.kind in ("scalar_union", "first_match"):
            return " | ".join(dict.fromkeys(self(m) for m in t.members))
        if t.kind == "keyed":
            return " | ".join(self.ref(self.defs[name].class_name) for name in t.refs)
        if t.kind == "ref":
            d = self.defs[t.name]
            return definition_annotation(d, self.ref, b)
        raise ValueError(t.kind)


def _copy_of(t: ir.TypeExpr) -> str:
    return "list" if isinstance(t, ir.ListT) else "dict" if isinstance(t, ir.MapT) else ""


def state_copy(f: ir.PatchField) -> str:
    """``list`` or ``dict`` when the stored value is a container the new
    state copies (so that states share none), else empty."""
    return _copy_of(f.type.inner if isinstance(f.type, ir.NullableT) else f.type)


def value_copy(f: ir.PatchField) -> str:
    """``list`` or ``dict`` when a value in the update is stored as a copy,
    else empty (stored as it is, or merged)."""
    if f.rule in ("replace", "collection"):
        return _copy_of(f.type)
    if f.rule == "null-clears" and isinstance(f.type, ir.NullableT):
        return "list" if isinstance(f.type.inner, ir.ListT) else ""
    return ""


# ---------------------------------------------------------------- error messages


def expected_message(d: ir.EnumDef) -> str:
    """The error for a value that is not a member of a closed enum."""
    return "expected one of " + ", ".join(json.dumps(m.value) for m in d.members)


def unknown_tag_message(d: ir.UnionDef) -> str:
    """The error for a tag string no variant has."""
    return "expected one of " + ", ".join(json.dumps(v.tag) for v in d.tagged)


def no_match_message(t: ir.UnionDef | ir.KeyedT) -> str:
    """The error for an object with the required keys of no member: of an
    untagged union, or of a flattened field."""
    if isinstance(t, ir.KeyedT):
        return "expected the members of " + _keyed_members(t)
    return "expected an object with the members of " + _variant_members(t)


def ambiguous_message(t: ir.UnionDef | ir.KeyedT) -> str:
    """The error for an object of an exclusive untagged union (or flattened
    field) with the required keys of more than one member."""
    if isinstance(t, ir.KeyedT):
        return "expected the members of exactly one of " + _keyed_members(t)
    return "expected an object with the members of exactly one of " + _variant_members(t)


def _keyed_members(t: ir.KeyedT) -> str:
    return " or ".join(t.refs) + " (" + "; ".join(", ".join(k) for k in t.keys) + ")"


def _variant_members(d: ir.UnionDef) -> str:
    titles = " or ".join(v.title for v in d.variants)
    keys = "; ".join(", ".join(v.required_keys) for v in d.variants)
    return f"{titles} ({keys})"


# ---------------------------------------------------------------- docstrings


def package_doc(package: ir.Package) -> str:
    """The package's docstring: where it comes from and its contract."""
    source = package.schema_path + (f" ({package.schema_title})" if package.schema_title else "")
    return (
        f"Typed Agent Client Protocol models and wire codec, generated from {source}.\n\n"
        "The contract: decode(name, data, *, strict=False), encode(value), ValidationError"
        " and UNSET. Every $defs name of the schema is an attribute of this package."
    )


def enum_doc(d: ir.EnumDef) -> str:
    """An enum's docstring: the schema's description, and for an open enum
    what happens to other values."""
    if not d.open:
        return d.description
    kind = "string" if d.value_kind == "str" else "integer"
    text = f"{d.description}\n\nOpen: any other {kind} is accepted and kept as a plain {d.value_kind}."
    return text + (f"\n\n{d.open_description}" if d.open_description else "")


def variant_doc(defs: Mapping[str, ir.Definition], union: ir.UnionDef, variant: ir.Variant) -> str:
    """A variant class's docstring: its description (or that of the
    definition it refers to) and what makes it the variant."""
    text = variant.description
    if not text and variant.ref and variant.ref in defs:
        text = defs[variant.ref].description
    text += f"\n\nA variant of {union.class_name}"
    if variant.role == "tagged":
        return text + f" (`{union.tag}` is {variant.tag!r})."
    if variant.role == "catch_all":
        return (
            text + f" for any other `{union.tag}`: the members it does not declare are kept in `extra`,"
            " so it encodes back unchanged."
        )
    return text + "."


def field_doc(f: ir.Field) -> str:
    """A field's docstring: the schema's description; for a flattened field
    (which has none of its own), what it holds."""
    if isinstance(f.type, ir.KeyedT):
        return "One of " + " or ".join(f.type.refs) + ", whose members share the JSON object."
    return f.description


def rule_doc(f: ir.PatchField) -> str:
    """A state field's docstring: its rule, and the sentence it comes from."""
    return f"Rule: {f.rule}." + (f" {f.sentence}" if f.sentence else "")


def state_doc(u: ir.Upsert) -> str:
    """The docstring of an upsert's state class."""
    return (
        f"The stored state of {u.update} upserts: every field concrete, never UNSET. "
        "`apply` folds updates into it; `encode` gives the full snapshot.\n\n" + u.sentence
    )


def upsert_doc(u: ir.Upsert) -> str:
    """The docstring of an upsert's apply function."""
    return f"Fold a {u.update} into the stored state (None for an entity not seen before).\n\n" + u.sentence


def chunk_doc(c: ir.Chunk) -> str:
    """The docstring of a chunk's append function."""
    return (
        f"Append a streamed {c.chunk} to the {c.field} of a {c.target.state_class}"
        " (None for an entity not seen before)."
    )


def action_doc(a: ir.SessionAction) -> str:
    """The docstring of a session fold function: the tag, what it does, why."""
    text = f"{a.tag or 'Any other kind'}: {a.action} {a.field.name}."
    return text + ("\n\n" + a.reason if a.reason else "")


def send_doc(c: ir.Call) -> str:
    """The docstring of the connection's method that sends a call."""
    return f"Send ``{c.method}`` (a {c.kind})."


def handler_doc(c: ir.Call) -> str:
    """The docstring of the handler interface's method."""
    return f"``{c.method}`` {c.kind}" + (f": {c.summary}" if c.summary else "")


# ---------------------------------------------------------------- the fallback report


def fallback_report(package: ir.Package) -> list[str]:
    """``acpgen generate --explain``: each place lowering fell back, as
    three lines (pointer, what it became, why); empty when there is none."""
    defs = {d.name: d for d in package.definitions}
    annotation = Annotations(defs)
    lines: list[str] = []
    for entry in package.fallbacks:
        lines.append(entry.pointer)
        if entry.became == "any":
            lines.append("  became: Any (kept as JSON, checked against the schema)")
        else:
            alias = defs[entry.definition]
            target = annotation(alias.target) if isinstance(alias, ir.AliasDef) else alias.class_name
            lines.append(f"  became: alias {alias.class_name} = {target}")
        lines.extend(f"  why: {reason}" for reason in entry.reasons)
    return lines
