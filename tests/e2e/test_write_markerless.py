"""``cp out/pk/* vendor/pk/`` leaves the ``.acpgen`` marker behind (the
glob skips dotfiles): ``acpgen generate --out vendor`` then replaces the
copy only while it is what acpgen writes, and refuses an edited one."""

from __future__ import annotations

import json
import shutil

from ..conftest import schema_with
from .test_schema_bump import acpgen

SMALL = schema_with({"Greeting": {"type": "object", "properties": {"text": {"type": "string"}}}})


def _generate(schema, out, *flags):
    return acpgen("generate", "--schema", str(schema), "--package", "pk", "--out", str(out), *flags)


def test_a_hand_edited_copy_without_the_marker_is_kept(tmp_path):
    schema = tmp_path / "small.json"
    schema.write_text(json.dumps(SMALL))
    assert _generate(schema, tmp_path / "out").exit_code == 0
    copy = tmp_path / "vendor" / "pk"
    copy.mkdir(parents=True)
    for path in (tmp_path / "out" / "pk").iterdir():
        if not path.name.startswith("."):
            shutil.copy(path, copy / path.name)
    # Unedited: replaced, and it carries the marker from now on.
    result = _generate(schema, tmp_path / "vendor")
    assert result.exit_code == 0, result.output
    assert (copy / ".acpgen").is_file()
    (copy / ".acpgen").unlink()
    models = (copy / "models.py").read_text()
    (copy / "models.py").write_text(models + "\nLOCAL_PATCH = True\n")
    result = _generate(schema, tmp_path / "vendor")
    assert result.exit_code == 2
    assert "models.py (changed)" in result.output and "--overwrite-edited" in result.output
    assert (copy / "models.py").read_text() == models + "\nLOCAL_PATCH = True\n"
    result = _generate(schema, tmp_path / "vendor", "--overwrite-edited")
    assert result.exit_code == 0, result.output
    assert (copy / "models.py").read_text() == models
