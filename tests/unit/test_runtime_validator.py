"""The strict-mode validator copied into every generated package
(``_validator.py``), tested as the ordinary module it is in the generator."""

from __future__ import annotations

import pytest
from acpgen.runtime import _validator as va
from acpgen.runtime._runtime import ValidationError


def test_validator_reports_the_branch_that_was_meant():
    root = {"$defs": {"X": {"oneOf": [
        {"type": "object", "properties": {"type": {"const": "a"}, "n": {"type": "integer"}}, "required": ["type"]},
        {"type": "object", "properties": {"type": {"const": "b"}}, "required": ["type"]},
    ]}}}  # fmt: skip
    va.validate(root, "#/$defs/X", {"type": "b"})
    with pytest.raises(ValidationError) as info:
        va.validate(root, "#/$defs/X", {"type": "a", "n": "1"})
    assert info.value.path == "$.n"
    with pytest.raises(ValidationError) as info:
        va.validate(root, "#/$defs/X", {"type": "c"})
    assert info.value.path == "$.type" and '"a", "b"' in info.value.message
