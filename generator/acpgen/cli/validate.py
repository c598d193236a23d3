"""``acpgen validate TRANSCRIPT.jsonl``."""

from __future__ import annotations

import json
import sys

import click

from ..errors import AcpgenError
from ..validate.checker import KINDS, validate_file
from ..validate.loader import load_package, package_from_schema
from .common import fail


@click.command("validate")
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False))
@click.option("--package", "package", default="acp_v1", show_default=True, help="The generated package to check against: a directory or an import name.")
@click.option("--schema", "schema", type=click.Path(exists=True, dir_okay=False), help="Generate the package from this schema instead (into a temporary directory).")
@click.option("--rules", "rules", help="With --schema: the rule set (v1, v1_unstable, v2, v2_unstable) for the session checks.")
@click.option("--strict", is_flag=True, help="Count what lenient decoding repairs, and unanswered requests, as errors.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def validate_command(transcript: str, package: str, schema: str | None, rules: str | None, strict: bool, fmt: str) -> None:
    """Check a recorded ACP transcript, one JSON-RPC message per line.

    A line is a bare message or {"direction": "client_to_agent" |
    "agent_to_client", "message": {...}}. Reports, per line: invalid messages
    (with the JSON pointer), what lenient decoding silently drops or repairs,
    responses to unknown ids, duplicate ids, messages for unknown sessions,
    v1 tool call updates never started, and a protocol version mismatch at
    initialize. Exit 1 when anything is wrong (warnings only count with
    --strict), 0 otherwise, 2 on a usage error.
    """
    try:
        module = package_from_schema(schema, rules) if schema else load_package(package)
    except AcpgenError as exc:
        fail(exc)
    errors = warnings = 0
    for finding in validate_file(transcript, module, strict=strict):
        errors += finding.error
        warnings += not finding.error
        click.echo(json.dumps(finding.to_json()) if fmt == "json" else str(finding))
    if fmt == "text":
        click.echo(f"{transcript}: {errors} error(s), {warnings} warning(s)", err=True)
    sys.exit(1 if errors else 0)


__all__ = ["KINDS", "validate_command"]
