"""Stage 5, format: black, called in process."""

from __future__ import annotations

import black

from .errors import AcpgenError

_MODE = black.Mode(target_versions={black.TargetVersion.PY310})


def format_source(source: str, name: str) -> str:
    """``source`` formatted by black; a syntax error is a generator error."""
    try:
        return black.format_str(source, mode=_MODE)
    except black.InvalidInput as exc:
        raise AcpgenError(f"the rendered code does not parse: {exc}", file=name) from None


def format_package(files: dict[str, str], package: str) -> dict[str, str]:
    return {
        name: format_source(text, f"{package}/{name}") if name.endswith(".py") else text
        for name, text in files.items()
    }
