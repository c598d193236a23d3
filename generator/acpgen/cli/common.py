"""What the commands share: how errors and warnings are reported, and the
options that guard against replacing what acpgen did not make."""

from __future__ import annotations

import sys
from typing import Any, Callable, NoReturn, TypeVar

import click

from ..errors import AcpgenError

F = TypeVar("F", bound=Callable[..., Any])
"""A command function, before ``click.command`` makes it a command."""


def fail(error: AcpgenError | str) -> NoReturn:
    """Report bad input as one line and exit with status 2."""
    click.echo(f"acpgen: error: {error}", err=True)
    sys.exit(2)


def warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"acpgen: warning: {warning}", err=True)


def overwrite_options(command: F) -> F:
    """``--overwrite-foreign`` and ``--overwrite-edited``."""
    command = click.option(
        "--overwrite-edited",
        is_flag=True,
        help="Replace a generated package even though files in it changed since acpgen wrote it "
        "(by hand or by a merge); those changes are lost. Without it such a package is refused.",
    )(command)
    command = click.option(
        "--overwrite-foreign",
        is_flag=True,
        help="Delete and replace a directory acpgen did not generate (one without its .acpgen marker). "
        "Without it, such a directory is refused with exit status 2 and nothing is touched.",
    )(command)
    return command
