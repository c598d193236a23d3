"""The view of ``session.py`` (:mod:`acpgen.views.session`) on the kitchen
sink and the vendored v1 schema, and the template that prints it: what the
view decides, that the module it prints imports exactly what it uses, and
that the template holds no computation and (nearly) no fixed code."""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from pathlib import Path

import jinja2
import pytest
from acpgen import __version__
from acpgen.compile import ir
from acpgen.compile.load import load_schema
from acpgen.emit.render import builtin_templates, render_package
from acpgen.pipeline import build_ir
from acpgen.views import VIEWS, ViewInputs
from acpgen.views.names import ModuleNames, exports, schema_names
from acpgen.views.session import FoldView, SessionView, session_view
from jinja2 import meta, nodes

from ..conftest import ROOT, SCHEMAS

KITCHEN = ROOT / "tests/kitchen/schema.json"
TEMPLATE = builtin_templates() / "session.py.jinja"


@functools.cache
def package(path: Path, name: str, rules: str | None = None) -> ir.Package:
    return build_ir(load_schema(path), name, rules)


def view_of(p: ir.Package) -> SessionView:
    names = exports(p)
    return session_view(
        ViewInputs(
            package=p,
            defs={d.name: d for d in p.definitions},
            names=ModuleNames(own=frozenset(names["session"]), schema=schema_names(p), binds_schema=False),
            exports=names,
            generator_version=__version__,
        )
    )


def kitchen() -> ir.Package:
    return package(KITCHEN, "kitchen_sink")


def v1() -> ir.Package:
    return package(SCHEMAS["acp_v1"], "acp_v1")


PACKAGES = {"kitchen": kitchen, "v1": v1}


def rules(p: ir.Package) -> ir.SessionRules:
    assert p.session is not None
    return p.session


KINDS = ("entity_upsert", "entity_chunk", "state_upsert", "message_chunk", "set", "keyed_set", "remove", "append")


def test_the_session_module_is_rendered_from_its_view() -> None:
    assert VIEWS["session"] is session_view


@pytest.mark.parametrize("which", ["kitchen", "v1"])
def test_each_fold_is_of_exactly_one_kind_the_kind_of_its_action(which: str) -> None:
    p = PACKAGES[which]()
    view = view_of(p)
    actions = rules(p).actions
    assert [f.function for f in view.folds] == [a.function for a in actions]
    for fold, action in zip(view.folds, actions, strict=True):
        flags = [kind for kind in KINDS if getattr(fold, kind)]
        assert len(flags) == 1, (fold.function, flags)
        expected = {
            "upsert": ("entity_upsert", "state_upsert"),
            "chunk": ("entity_chunk", "entity_upsert", "state_upsert"),
            "message-chunk": ("message_chunk",),
            "set": ("set",),
            "keyed-set": ("keyed_set",),
            "remove": ("remove",),
            "append": ("append",),
        }[action.action]
        assert flags[0] in expected
        # A chunk is appended in place exactly when the rules say which list.
        assert fold.entity_chunk == bool(action.chunk_attr)


def test_the_store_tables_follow_the_fields_containers() -> None:
    p = kitchen()
    view = view_of(p)
    fields = rules(p).fields
    assert [f.name for f in view.fields] == [f.name for f in fields]
    by_name = {f.name: f for f in fields}
    for f in view.fields:
        container = by_name[f.name].container
        assert f.shared == (container in ("entities", "messages", "items"))
        assert f.owned == (container in ("entities", "messages"))
        # Every flag the field has is a slot of the store.
        expected = [repr(f.name)] + [repr(f.name + s) for s, on in (("_shared", f.shared), ("_owned", f.owned)) if on]
        index = view.slots.index(repr(f.name))
        assert list(view.slots[index : index + len(expected)]) == expected
    assert view.shared[-1] == repr("history")
    assert {eval(n) for n in view.maps} == {f.name for f in fields if f.container in ("entities", "messages", "values")}
    assert {eval(n) for n in view.lists} == {
        f.name for f in fields if f.container == "items" or (f.container == "value" and f.empty)
    }


def test_without_message_chunks_nothing_is_extended_without_its_fold() -> None:
    view = view_of(kitchen())
    assert view.message_class == "" and view.tails == () and view.prompt_class == ""
    assert not any(f.message_chunk for f in view.folds)


def test_v1s_message_chunks_extend_the_tail_message_without_their_fold() -> None:
    p = v1()
    view = view_of(p)
    chunks = [a for a in rules(p).actions if a.action == "message-chunk"]
    assert len(chunks) == 3
    assert [(t.field_literal, t.update_class) for t in view.tails] == [
        (repr(a.field.name), a.variant_class) for a in chunks
    ]
    assert view.prompt_class == "PromptRequest" and view.prompt_field == repr("user_messages")


def test_chunks_are_not_inlined_when_the_runtime_could_not_read_their_id() -> None:
    p = v1()
    s = rules(p)
    # A message-chunk kind whose id attribute is not the one the runtime reads.
    actions = tuple(
        dataclasses.replace(a, key="msg_id") if a.action == "message-chunk" and a.tag == "agent_message_chunk" else a
        for a in s.actions
    )
    assert view_of(dataclasses.replace(p, session=dataclasses.replace(s, actions=actions))).tails == ()
    # Two kinds extending the messages of one field.
    first = next(a for a in s.actions if a.action == "message-chunk")
    actions = tuple(dataclasses.replace(a, field=first.field) if a.action == "message-chunk" else a for a in s.actions)
    assert view_of(dataclasses.replace(p, session=dataclasses.replace(s, actions=actions))).tails == ()


def test_a_package_without_session_rules_has_an_empty_session_module() -> None:
    p = package(SCHEMAS["acp_v1"], "acp_v1", "none")
    assert p.session is None
    view = view_of(p)
    assert not view.present and view.exports == ()
    source = render_package(p)["session.py"]
    assert "__all__: list[str] = []" in source and "class Session" not in source


def _private_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {
        node.value.split("[")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier()
    }
    return {n for n in imported if n.startswith("_")}, used


@pytest.mark.parametrize("which", ["kitchen", "v1"])
def test_the_printed_module_imports_exactly_the_private_names_it_uses(which: str) -> None:
    p = PACKAGES[which]()
    source = render_package(p)["session.py"]
    tree = ast.parse(source)
    imported, used = _private_names(tree)
    assert imported - used == set(), "imported and never used"
    # Every private name the module reads is imported or defined in it.
    defined = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    defined |= {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    loaded = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id.startswith("_")
    }
    assert loaded - imported - defined - {"__all__"} == set()


def test_the_printed_folds_are_the_views() -> None:
    p = v1()
    source = render_package(p)["session.py"]
    view = view_of(p)
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    for fold in view.folds:
        node = functions[fold.function]
        assert ast.unparse(node.args.args[1].annotation or ast.Constant(None)) == fold.update_annotation
    calls = {
        fold.function: {
            n.func.id
            for n in ast.walk(functions[fold.function])
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        for fold in view.folds
    }
    by_kind: dict[str, FoldView] = {f.function: f for f in view.folds}
    for name, called in calls.items():
        if by_kind[name].message_chunk:
            assert called == {"_fold_message_chunk"}
        if by_kind[name].entity_upsert:
            # The new state from the patch function, put in place inline
            # (the dict copied first only when it was handed out).
            assert {f"_{by_kind[name].patch_function}", "_own"} <= called and "_put" not in called
            assert ("_enter" in called) == by_kind[name].enters


def _template_lines() -> list[str]:
    return TEMPLATE.read_text(encoding="utf-8").splitlines()


def fixed_lines(lines: list[str]) -> list[str]:
    """The template's lines of fixed Python: no Jinja (``{{``, ``{%``,
    ``{#``) on them, not blank, not an import or the imports marker. The
    module docstring is the view's (``view.header``)."""
    return [
        line
        for line in lines
        if line.strip()
        and not any(mark in line for mark in ("{{", "{%", "{#"))
        and not re.match(r"(from \S+ )?import ", line)
        and line.strip() != "#acpgen:imports#"
    ]


def test_fixed_lines_counts_what_it_should() -> None:
    lines = [
        "{% if x %}",
        "from . import y",
        "import z",
        "",
        "x = 1",
        "    def f(self) -> {{ view.t }}:",
        "#acpgen:imports#",
    ]
    assert fixed_lines(lines) == ["x = 1"]


def test_the_template_holds_under_40_lines_of_fixed_python() -> None:
    assert len(fixed_lines(_template_lines())) < 40


def test_the_template_reads_only_the_view_and_computes_nothing() -> None:
    env = jinja2.Environment()
    tree = env.parse(TEMPLATE.read_text(encoding="utf-8"))
    assert meta.find_undeclared_variables(tree) == {"view"}
    # No filters, calls, arithmetic, comparisons, sets, imports or macros.
    for kind in (
        nodes.Filter,
        nodes.Call,
        nodes.BinExpr,
        nodes.Compare,
        nodes.Assign,
        nodes.Import,
        nodes.FromImport,
        nodes.Macro,
        nodes.Getitem,
        nodes.Test,
    ):
        assert list(tree.find_all(kind)) == [], kind.__name__
