"""The generated namespaces, clash-free by construction (acpgen.views.names):
a generated module binds only the schema's names, its own exports and
underscore-first names; a schema name its own names or a builtin would hide
is reached through ``models``; a builtin a schema name hides through
``builtins``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from acpgen.compile import ir
from acpgen.views.names import ModuleNames, exports, lazy_exports, package_imports, schema_names

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    ROOT / "tests/fixtures/golden/kitchen_sink",
    ROOT / "generated/acp_v2",
    ROOT / "generated/acp_v1",
    ROOT / "generated/acp_v1_unstable",
]
MODULES = ["__init__", "models", "codec", "patch", "session", "protocol", "connection"]


def _bound(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level, ``if`` blocks included."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).partition(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)

    visit(tree.body)
    return names


def _all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("no __all__")


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_generated_module_binds_only_its_exports_and_private_names(package: Path):
    # proxy.py: only in a package whose schema has a proxy chain.
    modules = [*MODULES, *(["proxy"] if (package / "proxy.py").exists() else [])]
    trees = {m: ast.parse((package / f"{m}.py").read_text(encoding="utf-8")) for m in modules}
    schema = set(_all(trees["models"]))
    for module, tree in trees.items():
        own = set(_all(tree))
        public = {n for n in _bound(tree) if not n.startswith("_")}
        # `annotations`: bound by `from __future__ import annotations`.
        assert public - own - schema - {"annotations"} == set(), module
        if module not in ("models", "__init__"):
            # A schema name imported here is not one of the module's own.
            assert public & schema & own == set(), module


def _package(*definitions: ir.Definition) -> ir.Package:
    return ir.Package(name="p", schema_path="s", schema_sha256="0", schema_title="", definitions=definitions)


def _named(*names: str) -> ir.Package:
    return _package(*(ir.AliasDef(name=n, target=ir.StrT(), class_name=n) for n in names))


def test_the_package_exports_the_schema_s_name_where_a_fixed_name_has_its_spelling():
    package = _named("RequestId", "Connection", "decode", "UNSET", "Agent")
    names = exports(package)
    assert names["models"] == schema_names(package) == ("RequestId", "Connection", "decode", "UNSET", "Agent")
    public = names["__init__"]
    for name in ("RequestId", "Connection", "decode", "UNSET", "Agent"):
        assert public.count(name) == 1, name
    # The fixed names are still their modules' exports.
    assert "decode" in names["codec"] and "Connection" in names["connection"] and "Agent" in names["protocol"]
    imports = package_imports(package)
    assert "from .codec import decode_class as decode_class" in imports["eager"]
    assert "from .codec import decode as decode" not in imports["eager"]
    assert "from .protocol import Client as Client" in imports["lazy"]
    assert "from .protocol import *" not in imports["lazy"]
    assert "from .connection import Connection as Connection" not in imports["lazy"]
    assert "from .connection import spawn_agent as spawn_agent" in imports["lazy"]
    # What loads on first use leaves out the schema's names too: those are
    # the models'.
    lazy = lazy_exports(package)
    assert lazy["Client"] == "protocol" and lazy["spawn_agent"] == "connection"
    assert "Agent" not in lazy and "Connection" not in lazy and "decode" not in lazy


def test_a_package_whose_schema_shares_no_fixed_name_star_imports_its_modules():
    imports = package_imports(_named("RequestId", "PromptRequest"))
    assert imports["eager"].splitlines() == [
        "from ._runtime import UNSET, Unset, ValidationError",
        "from .codec import decode, decode_class, encode",
        "from .models import *  # noqa: F401,F403",
    ]
    assert imports["lazy"].splitlines() == [
        "    from .patch import *  # noqa: F401,F403",
        "    from .session import *  # noqa: F401,F403",
        "    from .protocol import *  # noqa: F401,F403",
        "    from .senders import *  # noqa: F401,F403",
        "    from .connection import *  # noqa: F401,F403",
    ]


def test_outside_models_a_schema_name_hidden_by_an_own_name_or_a_builtin_is_reached_through_models():
    names = ModuleNames(
        own=frozenset({"Agent", "METHODS"}), schema=("Agent", "str", "PromptRequest"), binds_schema=False
    )
    assert names.ref("Agent") == "_types.Agent"
    assert names.ref("str") == "_types.str"
    assert names.ref("PromptRequest") == "PromptRequest"
    assert names.builtin("str") == "str"
    assert names.imports("") == "from . import models as _types\nfrom .models import (\n    PromptRequest,\n)"


def test_where_the_schema_s_names_are_bound_a_builtin_they_hide_is_reached_through_builtins():
    names = ModuleNames(own=frozenset(), schema=("str", "dict", "Plain"), binds_schema=True)
    assert names.builtin("str") == "_builtins.str" and names.builtin("int") == "int"
    assert names.ref("str") == "str"
    # In an annotation, read before the class is defined: through models.
    assert names.annotation_ref("dict") == "_types.dict" and names.annotation_ref("Plain") == "Plain"
    assert names.imports("") == (
        "import builtins as _builtins\nif _typing.TYPE_CHECKING:\n    from . import models as _types"
    )


def test_in_a_class_body_a_builtin_a_field_shadows_is_reached_through_builtins():
    names = ModuleNames(own=frozenset(), schema=("Thing",), binds_schema=True)
    assert names.enter_class(["str", "name"]) == ""
    assert names.builtin("str") == "_builtins.str" and names.builtin("int") == "int"
    names.enter_class([])
    assert names.builtin("str") == "str"
    assert names.imports("") == "import builtins as _builtins"


def test_nothing_is_imported_for_a_module_that_needs_nothing():
    names = ModuleNames(own=frozenset(), schema=("A",), binds_schema=True)
    assert names.builtin("str") == "str" and names.ref("A") == "A"
    assert names.imports("") == ""


def test_an_optional_import_is_made_only_when_the_rendered_module_uses_it():
    names = ModuleNames(
        own=frozenset(),
        schema=(),
        binds_schema=False,
        optional_imports=(("_runtime", "check_str"), ("_runtime", "missing")),
    )
    assert names.imports("x = _check_str(v)\n") == "from ._runtime import check_str as _check_str"
