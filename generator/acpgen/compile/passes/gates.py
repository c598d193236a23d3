"""The IR stage for capability gates: which methods need a capability of the
side that handles them, and where in the ``initialize`` exchange that side
advertises it.

The capabilities are the fields reachable from the params of ``initialize``
(what the client advertises) and from its result (what the agent
advertises), through the objects they refer to. A field's description that
has a paragraph "Whether the <side> supports `METHOD`" (or "support all
`terminal/*` methods", "supports `a` and `b`", "supports the `m` method")
gates the methods it names that the advertising side handles; a ``*`` in a
name stands for any rest of a method name. ``rules/capabilities.toml`` adds
the gates the descriptions state in other words, by ``Definition.property``.
The result is :attr:`ir.Package.gates`, in method order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from ...errors import AcpgenError
from ...records import dataclass
from .. import ir
from .options import Options
from .rules import CAPABILITIES, builtin_file, read_rules

INITIALIZE = "initialize"

_WHETHER = re.compile(
    r"Whether the (?:client|agent) supports? (?:all )?(?:the )?"
    r"(`[^`\s]+`(?:(?:,| and| or|, and)+ `[^`\s]+`)*)",
    re.IGNORECASE,
)
_NAMED = re.compile(r"`([^`\s]+)`")


@dataclass(frozen=True)
class GateRule:
    """One entry of ``rules/capabilities.toml``."""

    definition: str
    wire_name: str
    methods: tuple[str, ...]


def builtin_gates_file() -> Path:
    return builtin_file(CAPABILITIES)


def gate_rules(path: Path | None = None) -> tuple[GateRule, ...]:
    """The entries of the rules file."""
    path = path or builtin_gates_file()
    data = read_rules(path)
    out: list[GateRule] = []
    for entry in data.get("gate", []):
        capability = entry.get("capability") if isinstance(entry, dict) else None
        methods = entry.get("methods") if isinstance(entry, dict) else None
        if (
            not isinstance(capability, str)
            or capability.count(".") != 1
            or not isinstance(methods, list)
            or not methods
            or not all(isinstance(m, str) for m in methods)
        ):
            raise AcpgenError(
                'each [[gate]] needs capability = "Definition.property" and a list of methods', file=str(path)
            )
        definition, wire_name = capability.split(".")
        out.append(GateRule(definition, wire_name, tuple(methods)))
    return tuple(out)


def find_gates(package: ir.Package, rules: tuple[GateRule, ...] | None = None) -> ir.Package:
    """The package with its gates (none when it has no ``initialize``)."""
    if rules is None:
        rules = gate_rules()
    initialize = next((m.request for m in package.methods if m.name == INITIALIZE and m.request), None)
    if initialize is None:
        return package
    defs = {d.name: d for d in package.definitions}
    handled: dict[str, set[ir.Side]] = {}
    for method in package.methods:
        for call in method.calls:
            handled.setdefault(method.name, set()).add(call.side)
    found: dict[str, ir.Gate] = {}

    def add(method: str, side: ir.Side, path: tuple[str, ...], source: ir.GateSource) -> None:
        gate = ir.Gate(method=method, side=side, path=path, source=source)
        other = found.get(method)
        if other is not None and other.path != path:
            raise AcpgenError(
                f"{method!r} would need both {'.'.join(other.path)} and {'.'.join(path)}:"
                " say which in rules/capabilities.toml",
                file=package.schema_path,
            )
        found.setdefault(method, gate)

    places: dict[tuple[str, str], tuple[tuple[str, ...], ir.Side]] = {}
    roots: tuple[tuple[str, ir.Side], ...] = ((initialize.params, "client"), (initialize.result, "agent"))
    for root, side in roots:
        for owner, f, path in _fields(root, defs):
            places.setdefault((owner, f.wire_name), (path, side))
            for pattern in _named(f.description):
                for name in sorted(handled):
                    if fnmatchcase(name, pattern) and side in handled[name]:
                        add(name, side, path, "description")
    for rule in rules:
        place = places.get((rule.definition, rule.wire_name))
        if place is None:
            continue
        path, side = place
        for name in rule.methods:
            sides = handled.get(name)
            if sides is None:
                continue
            if side not in sides:
                raise AcpgenError(
                    f"rules/capabilities.toml: {name!r} is handled by the {'/'.join(sorted(sides))} side,"
                    f" but {rule.definition}.{rule.wire_name} is advertised by the {side}",
                    file=package.schema_path,
                )
            add(name, side, path, "rules")
    order = [m.name for m in package.methods]
    gates = tuple(sorted(found.values(), key=lambda g: order.index(g.method)))
    return replace(package, gates=gates)


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the gates of the method table (:func:`find_gates`), unless
    the options leave the table out."""
    return find_gates(package) if options.methods else package


def _fields(root: str, defs: dict[str, ir.Definition]) -> Iterator[tuple[str, ir.Field, tuple[str, ...]]]:
    """``(owner definition, field, wire path)`` for every field reachable from
    the object ``root``, depth first, each definition once per path."""

    def walk(name: str, path: tuple[str, ...], seen: frozenset[str]) -> Iterator[tuple[str, ir.Field, tuple[str, ...]]]:
        definition = defs.get(name)
        if not isinstance(definition, ir.ObjectDef):
            return
        for f in definition.fields:
            if f.wire_name == "_meta" or f.flatten:
                continue
            here = (*path, f.wire_name)
            yield name, f, here
            target = f.value_type
            if isinstance(target, ir.RefT) and target.name not in seen:
                yield from walk(target.name, here, seen | {target.name})

    return walk(root, (), frozenset({root}))


def _named(description: str) -> list[str]:
    """The method names (or patterns) a "Whether the ... supports" paragraph
    of ``description`` names."""
    out: list[str] = []
    for paragraph in description.split("\n\n"):
        match = _WHETHER.match(paragraph.strip())
        if match:
            out.extend(_NAMED.findall(match.group(1)))
    return out
