"""Which patch rule set (``rules/patch.toml``) fits a schema, told from the
schema's own content.

The ACP schema files do not state their protocol version, but their methods
do: only v1 has ``authenticate``, ``session/load``, ``session/set_mode`` and
the ``fs/*`` methods, only v2 has ``auth/login`` and ``auth/logout`` (true of
every release of ``@agentclientprotocol/sdk`` with both versions). The
unstable files mark what is not part of the spec yet with descriptions that
begin ``**UNSTABLE**``; the stable files have none. A schema with neither
kind of method (not an ACP schema) gets no rules unless some are named.

``--rules`` (or ``rules =`` in ``[tool.acpgen]``) may name the set: one that
contradicts what the schema says is refused, and ``none`` generates without
patch rules (``apply`` then says so when called).
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import AcpgenError
from .. import ir
from .options import Options
from .rules import PATCH, builtin_file, read_rules

NO_RULES = "none"
V1_METHODS = frozenset({"authenticate", "session/load", "session/set_mode", "fs/read_text_file", "fs/write_text_file"})
V2_METHODS = frozenset({"auth/login", "auth/logout"})


def detect(facts: ir.SchemaFacts) -> str | None:
    """The rule set the schema's content calls for, or None when it does not
    tell (no ACP methods, or methods of both versions)."""
    v1, v2 = bool(facts.methods_named & V1_METHODS), bool(facts.methods_named & V2_METHODS)
    if v1 == v2:
        return None
    return ("v1" if v1 else "v2") + ("_unstable" if facts.unstable_marked else "")


def choose(package: ir.Package, requested: str | None) -> str | None:
    """The rule set to generate with: ``requested`` (checked against the
    schema's facts), or the detected one when it is None; None for no rules."""
    if requested == NO_RULES:
        return None
    detected = detect(package.facts)
    if requested is None:
        return detected
    if requested not in read_rules(builtin_file(PATCH)):
        return requested  # apply_rules names the sets there are
    if detected is not None and requested != detected:
        raise AcpgenError(
            f"the rule set {requested!r} does not fit this schema, which is an ACP {detected} schema "
            f"(by its methods and **UNSTABLE** markers); use --rules {detected}, or --rules {NO_RULES} "
            "to generate without patch rules",
            file=package.schema_path,
        )
    return requested


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: the rule set the later passes apply, as
    :attr:`~acpgen.compile.ir.Package.rule_set` (:func:`choose`)."""
    return replace(package, rule_set=choose(package, options.rules))
