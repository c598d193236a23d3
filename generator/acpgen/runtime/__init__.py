"""Python modules copied into every generated package as they are (with the
generated header in front): ordinary source, linted, type-checked and
unit-tested here like the rest of acpgen."""

from pathlib import Path

SOURCES = {"_runtime.py": Path(__file__).with_name("_runtime.py")}
"""Generated file name -> the source copied into the package."""
