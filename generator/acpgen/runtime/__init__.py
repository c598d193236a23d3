"""Python modules copied into every generated package as they are (with the
generated header in front): ordinary source, linted, type-checked and
unit-tested here like the rest of acpgen."""

from pathlib import Path

SOURCES = {
    name: Path(__file__).with_name(name) for name in ("_runtime.py", "_validator.py", "_codec.py", "_models.py")
}
"""Generated file name -> the source copied into the package."""
