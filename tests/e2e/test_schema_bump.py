"""Schema bumps with real releases: ``acpgen diff`` between the vendored
@agentclientprotocol/sdk 2.0.0 schemas (tests/fixtures/sdk-2.0.0) and the
2.4.0 ones in schema/, and ``acpgen schema update`` in a copy of the project.

The facts the diff reports are checked against the schema files themselves,
not only against the diff's own output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import typing
from pathlib import Path

import pytest
from acpgen.cli import main
from acpgen.compile.lower import strip_annotations
from acpgen.update.release import MAX_MEMBER_BYTES
from click.testing import CliRunner

from ..conftest import ROOT

FIXTURE = ROOT / "tests/fixtures/sdk-2.0.0"
SCHEMA = ROOT / "schema"
FILES = ("v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json")
PACKAGES = ("acp_v1", "acp_v1_unstable", "acp_v2", "acp_v2_unstable")
SDK = "@agentclientprotocol/sdk"


def acpgen(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def defs(directory: Path, name: str) -> dict:
    return json.loads((directory / name).read_text(encoding="utf-8"))["$defs"]


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


# ---------------------------------------------------------------- releases and projects


def package_dir(tmp_path: Path, schemas: Path, version: str, license_text: bytes | None = None) -> Path:
    """An unpacked npm package of the SDK holding the schemas of ``schemas``."""
    root = tmp_path / f"sdk-{version}" / "package"
    (root / "schema").mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps({"name": SDK, "version": version, "license": "Apache-2.0", "type": "module"}, indent=2)
    )
    (root / "LICENSE").write_bytes(license_text if license_text is not None else (schemas / "LICENSE").read_bytes())
    (root / "README.md").write_text("not vendored\n")
    for name in FILES:
        target = root / "schema" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(schemas / name, target)
    return root


def tarball(tmp_path: Path, schemas: Path, version: str, **kwargs) -> Path:
    """An npm-style tarball (members under package/) of ``package_dir``."""
    root = package_dir(tmp_path, schemas, version, **kwargs)
    out = tmp_path / f"agentclientprotocol-sdk-{version}.tgz"
    with tarfile.open(out, "w:gz") as archive:
        archive.add(root, arcname="package")
    return out


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the project: pyproject.toml, schema/ and generated/."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(SCHEMA, root / "schema")
    shutil.copytree(ROOT / "generated", root / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def config(project: Path) -> str:
    return str(project / "pyproject.toml")


# ---------------------------------------------------------------- the fixture


def test_the_fixture_is_the_2_0_0_release():
    source = json.loads((FIXTURE / "SOURCE.json").read_text())
    assert source["package"] == SDK and source["version"] == "2.0.0"
    assert sorted(source["files"]) == sorted(FILES)
    for name, sha in source["files"].items():
        assert hashlib.sha256((FIXTURE / name).read_bytes()).hexdigest() == sha
    current = json.loads((SCHEMA / "SOURCE.json").read_text())
    assert current["version"] == "2.4.0"


# ---------------------------------------------------------------- acpgen diff on the real releases


@pytest.fixture(scope="module")
def v2_unstable() -> dict:
    name = "v2/schema.unstable.json"
    result = acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def change(data: dict, kind: str, path: str) -> dict:
    found = [c for c in data["changes"] if c["kind"] == kind and c["path"] == path]
    assert len(found) == 1, (kind, path)
    return found[0]


def test_v2_unstable_header_and_summary(v2_unstable):
    assert v2_unstable["old"]["version"] == "2.0.0"
    assert v2_unstable["new"]["version"] == "2.4.0"
    summary = v2_unstable["summary"]
    changes = v2_unstable["changes"]
    assert summary["changes"] == len(changes)
    assert summary["breaking"] == sum(c["breaking"] for c in changes)
    assert summary["breaking"] + summary["compatible"] == summary["changes"]
    # "over forty types" gained: check against the files.
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    added = sorted(set(new) - set(old))
    assert len(added) > 40
    assert sorted(c["path"] for c in changes if c["kind"] == "type-added") == added
    assert sorted(c["path"] for c in changes if c["kind"] == "type-removed") == sorted(set(old) - set(new))


def test_tool_call_update_gained_capabilities(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    assert "capabilities" not in old["ToolCallUpdate"]["properties"]
    assert "capabilities" in new["ToolCallUpdate"]["properties"]
    assert "capabilities" not in new["ToolCallUpdate"].get("required", [])
    added = change(v2_unstable, "field-added", "ToolCallUpdate.capabilities")
    assert added["definition"] == "ToolCallUpdate"
    assert added["new"]["required"] is False and "ToolCallCapabilities" in added["new"]["type"]
    assert added["wire"]["breaking"] is False and added["api"]["breaking"] is False
    assert added["breaking"] is False
    assert added["senders"] == ["agent"]


def test_terminal_update_gained_capabilities_and_size(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    for field in ("capabilities", "size"):
        assert field not in old["TerminalUpdate"]["properties"]
        assert field in new["TerminalUpdate"]["properties"]
        assert field not in new["TerminalUpdate"].get("required", [])
        added = change(v2_unstable, "field-added", f"TerminalUpdate.{field}")
        assert added["breaking"] is False, added


def test_removed_types(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    for name in ("AuthCapabilities", "ProtocolLevelNotification"):
        assert name in old and name not in new
        removed = change(v2_unstable, "type-removed", name)
        assert removed["breaking"] is True
        assert removed["api"]["breaking"] is True and f"`{name}` is gone" in removed["api"]["reason"]
    # AuthCapabilities lives on, same shape, as ClientAuthCapabilities: the
    # wire is unchanged, only the Python class name breaks.
    assert strip_annotations(old["AuthCapabilities"]) == strip_annotations(new["ClientAuthCapabilities"])
    auth = change(v2_unstable, "type-removed", "AuthCapabilities")
    assert auth["wire"]["breaking"] is False and "ClientAuthCapabilities" in auth["wire"]["reason"]
    assert auth["new"] == "ClientAuthCapabilities"
    field = change(v2_unstable, "field-type-changed", "ClientCapabilities.auth")
    assert field["wire"]["breaking"] is False and field["api"]["breaking"] is True
    # ProtocolLevelNotification was only used in the JSON-RPC batch message
    # forms, which 2.4.0 removed: old peers may still send those.
    old_doc = json.loads((FIXTURE / "v2/schema.unstable.json").read_text())
    new_doc = json.loads((SCHEMA / "v2/schema.unstable.json").read_text())
    old_forms = {f["title"] for f in old_doc["anyOf"]}
    new_forms = {f["title"] for f in new_doc["anyOf"]}
    assert {"AgentBatchCall", "ClientBatchCall"} <= old_forms - new_forms
    assert "ProtocolLevelNotification" in json.dumps(
        next(f for f in old_doc["anyOf"] if f["title"] == "AgentBatchCall")
    )
    protocol = change(v2_unstable, "type-removed", "ProtocolLevelNotification")
    assert protocol["wire"]["breaking"] is True and protocol["wire"]["affects"] == ["old-senders"]
    assert "AgentBatchCall" in protocol["wire"]["reason"]
    batch = change(v2_unstable, "message-form-removed", "message AgentBatchCall")
    assert batch["wire"]["breaking"] is True and batch["api"]["breaking"] is False


def test_elicitation_schema_now_requires_type_and_properties(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    assert "required" not in old["ElicitationSchema"]
    assert set(new["ElicitationSchema"]["required"]) == {"type", "properties"}
    for field in ("type", "properties"):
        # 2.0.0 had a default for both; 2.4.0 has none.
        assert "default" in old["ElicitationSchema"]["properties"][field]
        assert "default" not in new["ElicitationSchema"]["properties"][field]
        required = change(v2_unstable, "field-required", f"ElicitationSchema.{field}")
        # Agents send elicitation requests: an old agent may omit the field,
        # and a new client rejects that; old clients are not affected.
        assert required["senders"] == ["agent"]
        assert required["wire"]["breaking"] is True
        assert required["wire"]["affects"] == ["old-senders"]
        assert "clients built on the new schema reject" in required["wire"]["reason"]
        assert required["api"]["breaking"] is True and "needs the argument" in required["api"]["reason"]
        default = change(v2_unstable, "field-default-changed", f"ElicitationSchema.{field}")
        assert default["new"] is None and default["breaking"] is False
    lenient = change(v2_unstable, "deserialize-removed", "ElicitationSchema.type")
    assert lenient["breaking"] is False


def test_other_facts_of_the_bump(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    # An object that became a tagged union: old agents send commands without
    # the tag, which new clients drop.
    assert "properties" in old["AvailableCommand"] and "anyOf" in new["AvailableCommand"]
    kind = change(v2_unstable, "type-kind-changed", "AvailableCommand")
    assert kind["wire"]["affects"] == ["old-senders"] and kind["api"]["breaking"] is True
    # New methods are compatible.
    method = change(v2_unstable, "method-added", "method session/set_title (agent)")
    assert method["breaking"] is False and method["senders"] == ["client"]
    assert new["SetSessionTitleRequest"]["x-method"] == "session/set_title"
    # ToolCallStatus is only held where old receivers drop unknown values.
    paused = change(v2_unstable, "enum-value-added", "ToolCallStatus:paused")
    assert paused["breaking"] is False


def test_a_flattened_scope_that_went_from_anyOf_to_oneOf_names_the_keywords(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    # The scopes of the form mode, as the files have them.
    assert "anyOf" in old["ElicitationFormMode"] and "oneOf" not in old["ElicitationFormMode"]
    assert "oneOf" in new["ElicitationFormMode"] and "anyOf" not in new["ElicitationFormMode"]
    scopes = [m["allOf"][0]["$ref"].rsplit("/", 1)[1] for m in new["ElicitationFormMode"]["oneOf"]]
    assert scopes == ["ElicitationSessionScope", "ElicitationRequestScope"]
    scope = change(v2_unstable, "field-type-changed", "ElicitationFormMode.(scope)")
    assert scope["summary"] == (
        "the flattened field `scope`: its members (`ElicitationSessionScope`, `ElicitationRequestScope`) were "
        "told apart by `anyOf`, now by `oneOf` (exactly one may match)"
    )
    # oneOf refuses an object with both scopes' keys, which anyOf took: old
    # senders (agents) are affected, not old receivers.
    assert scope["wire"]["affects"] == ["old-senders"]
    assert "with the keys of more than one `scope` member" in scope["wire"]["reason"]
    assert scope["api"]["breaking"] is False
    assert "`ElicitationSessionScope | ElicitationRequestScope`" in scope["api"]["reason"]
    # No entry is left without a name.
    assert not [c["path"] for c in v2_unstable["changes"] if c["path"].endswith(".") or "``" in c["summary"]]


def test_a_raw_subschema_is_shown_by_what_it_restricts(v2_unstable):
    old, new = defs(FIXTURE, "v2/schema.unstable.json"), defs(SCHEMA, "v2/schema.unstable.json")
    before, after = old["Cost"]["properties"]["currency"], new["Cost"]["properties"]["currency"]
    assert before["type"] == after["type"] == "string"
    assert "pattern" in before and "pattern" not in after
    currency = change(v2_unstable, "field-type-changed", "Cost.currency")
    assert currency["summary"] == f"`currency` was `str (pattern {before['pattern']!r})`, now `str`"
    assert "(schema)" not in json.dumps(v2_unstable)


def test_unions_name_their_variant_classes(v2_unstable):
    import acp_v2_unstable

    new = defs(SCHEMA, "v2/schema.unstable.json")
    kind = change(v2_unstable, "type-kind-changed", "AvailableCommand")
    # The variant classes, as the generated package has them.
    classes = [cls.__name__ for cls in typing.get_args(acp_v2_unstable.AvailableCommand)]
    assert len(classes) == len(new["AvailableCommand"]["anyOf"]) == 2
    shown = ", ".join(f"`{name}`" for name in classes)
    fields = len(defs(FIXTURE, "v2/schema.unstable.json")["AvailableCommand"]["properties"])
    assert kind["summary"] == (f"was dataclass ({fields} fields), now union tagged by `type` of 2 variants: {shown}")


USER_CODE = """\
from acp_v2_unstable import AuthCapabilities, ClientCapabilities, SessionMessageChunk
import acp_v2_unstable as acp

caps = ClientCapabilities(auth=AuthCapabilities())


def handle(chunk: SessionMessageChunk) -> None:
    print(chunk.sender_session_id, chunk.content)
    command = acp.AvailableCommand(name="x", description="y")
"""


def test_diff_lists_the_lines_of_user_code_that_use_changed_names(tmp_path):
    code = tmp_path / "code"
    (code / "app").mkdir(parents=True)
    (code / "app/main.py").write_text(USER_CODE)
    # Attributes are matched in files that name their class: not here.
    (code / "app/other.py").write_text("def f(x):\n    return x.sender_session_id\n")
    (code / "app/broken.py").write_text("def (:\n")
    # The vendored package itself is not the user's code.
    shutil.copytree(
        ROOT / "generated/acp_v2_unstable", code / "acp_v2_unstable", ignore=shutil.ignore_patterns("__pycache__")
    )
    name = "v2/schema.unstable.json"
    result = acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--code", str(code))
    assert result.exit_code == 0, result.output
    data = json.loads(acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--format", "json").stdout)
    removed = change(data, "type-removed", "AuthCapabilities")["api"]["reason"]
    kind = change(data, "type-kind-changed", "AvailableCommand")["api"]["reason"]
    gone = change(data, "field-removed", "SessionMessageChunk.senderSessionId")["api"]["reason"]
    auth = change(data, "field-type-changed", "ClientCapabilities.auth")["api"]["reason"]
    main = os.path.normpath(code / "app/main.py")
    section = result.stdout[result.stdout.index(f"\nuses in {os.path.normpath(code)}: 5\n") :].splitlines()[2:]
    assert section == [
        f"  {main}:1: AuthCapabilities — {removed}",
        f"  {main}:4: AuthCapabilities — {removed}",
        f"  {main}:4: auth — {auth}",
        f"  {main}:8: sender_session_id — {gone}",
        f"  {main}:9: AvailableCommand — {kind}",
    ]
    assert "broken.py: not scanned" in result.stderr
    as_json = json.loads(
        acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--code", str(code), "--format", "json").stdout
    )
    assert [(u["line"], u["name"]) for u in as_json["code"]["uses"]] == [
        (1, "AuthCapabilities"),
        (4, "AuthCapabilities"),
        (4, "auth"),
        (8, "sender_session_id"),
        (9, "AvailableCommand"),
    ]
    assert acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--code", str(code / "none")).exit_code == 2


def test_all_four_files(tmp_path):
    for name in FILES:
        result = acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--format", "json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["summary"]["changes"] > 0
        old, new = defs(FIXTURE, name), defs(SCHEMA, name)
        for item in data["changes"]:
            assert item["definition"] == "" or item["definition"] in old or item["definition"] in new
        again = acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--format", "json")
        assert again.stdout == result.stdout
    # The stable v1 schema changed compatibly only.
    stable = acpgen("diff", str(FIXTURE / "v1/schema.json"), str(SCHEMA / "v1/schema.json"), "--fail-on-breaking")
    assert stable.exit_code == 0 and "0 breaking" in stable.output
    unstable = acpgen(
        "diff", str(FIXTURE / "v2/schema.unstable.json"), str(SCHEMA / "v2/schema.unstable.json"), "--fail-on-breaking"
    )
    assert unstable.exit_code == 1


def test_markdown_changelog_entry():
    name = "v2/schema.unstable.json"
    result = acpgen("diff", str(FIXTURE / name), str(SCHEMA / name), "--format", "markdown")
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("### Schema changes: `")
    assert "2.0.0 → 2.4.0" in text.splitlines()[0]
    assert "#### Breaking changes (" in text
    assert "- **field now required** `ElicitationSchema.type`" in text
    assert "<details>" in text and text.rstrip().endswith("</details>")


# ---------------------------------------------------------------- acpgen schema update


def test_update_from_a_tarball_without_generating(tmp_path, project):
    (project / "schema/LICENSE").write_text("stale license\n")
    generated = tree(project / "generated")
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 0, result.output
    assert f"{SDK} 2.4.0 -> 2.0.0" in result.output
    for name in FILES:
        assert f"  {name}: " in result.output
        assert (project / "schema" / name).read_bytes() == (FIXTURE / name).read_bytes()
    # SOURCE.json as the fixture records it; the LICENSE refreshed.
    assert (project / "schema/SOURCE.json").read_bytes() == (FIXTURE / "SOURCE.json").read_bytes()
    assert (project / "schema/LICENSE").read_bytes() == (FIXTURE / "LICENSE").read_bytes()
    assert tree(project / "generated") == generated
    assert "updated schema/ (SOURCE.json, LICENSE)" in result.output
    assert "acpgen generate" in result.output
    # Back to 2.4.0 from the unpacked form: schema/ is the repository's again,
    # byte for byte, SOURCE.json included.
    unpacked = package_dir(tmp_path / "back", SCHEMA, "2.4.0")
    back = acpgen("schema", "update", "--from", str(unpacked), "--config", config(project), "--no-generate")
    assert back.exit_code == 0, back.output
    assert tree(project / "schema") == tree(SCHEMA)
    assert not [p for p in project.iterdir() if p.name.startswith(".")]


def test_dry_run_and_report_write_nothing_in_the_project(tmp_path, project):
    before = tree(project)
    report = tmp_path / "report.md"
    result = acpgen(
        "schema",
        "update",
        "--from",
        str(tarball(tmp_path, FIXTURE, "2.0.0")),
        "--config",
        config(project),
        "--dry-run",
        "--report",
        str(report),
    )
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output
    assert tree(project) == before
    again = acpgen(
        "schema", "update", "--from", str(SCHEMA / "v1/schema.json"), "--config", config(project), "--no-generate"
    )
    assert again.exit_code == 0 and "already up to date" in again.output
    assert tree(project) == before
    text = report.read_text()
    assert "### Schema changes: `v2/schema.unstable.json` 2.4.0 → 2.0.0" in text


def test_update_is_atomic(tmp_path, project):
    before = tree(project)
    # A release with a schema file that is not JSON.
    broken = package_dir(tmp_path / "broken", FIXTURE, "2.0.0")
    (broken / "schema/v2/schema.json").write_text("{ not json")
    result = acpgen("schema", "update", "--from", str(broken), "--config", config(project))
    assert result.exit_code == 2
    assert result.stderr.startswith("acpgen: error: ") and "invalid JSON" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    # A release that lacks a configured schema.
    partial = package_dir(tmp_path / "partial", FIXTURE, "2.0.0")
    (partial / "schema/v1/schema.json").unlink()
    result = acpgen("schema", "update", "--from", str(partial), "--config", config(project))
    assert result.exit_code == 2 and "acp_v1" in result.stderr
    # Generation fails (a template that does not compile): nothing changes.
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "models.py.jinja").write_text("{% if %}\n")
    result = acpgen(
        "schema",
        "update",
        "--from",
        str(tarball(tmp_path, FIXTURE, "2.0.0")),
        "--config",
        config(project),
        "--templates",
        str(templates),
    )
    assert result.exit_code == 2 and "template" in result.stderr
    # Not a tarball, and bad arguments.
    fake = tmp_path / "fake.tgz"
    fake.write_bytes(b"not a tarball")
    assert acpgen("schema", "update", "--from", str(fake), "--config", config(project)).exit_code == 2
    assert acpgen("schema", "update", "--config", config(project)).exit_code == 2
    assert tree(project) == before


def test_update_with_one_schema_file(tmp_path, project):
    name = "v2/schema.unstable.json"
    # The name is inferred from the path when it ends like a vendored file.
    result = acpgen("schema", "update", "--from", str(FIXTURE / name), "--config", config(project), "--no-generate")
    assert result.exit_code == 0, result.output
    assert (project / "schema" / name).read_bytes() == (FIXTURE / name).read_bytes()
    record = json.loads((project / "schema/SOURCE.json").read_text())
    assert name not in record["files"] and name in record["local"]
    assert record["version"] == "2.4.0" and len(record["files"]) == 3
    assert (project / "schema/v2/schema.json").read_bytes() == (SCHEMA / "v2/schema.json").read_bytes()
    # A bare file name that two vendored files share needs --as.
    loose = tmp_path / "schema.unstable.json"
    shutil.copyfile(SCHEMA / "v1/schema.unstable.json", loose)
    ambiguous = acpgen("schema", "update", "--from", str(loose), "--config", config(project), "--no-generate")
    assert ambiguous.exit_code == 2 and "--as" in ambiguous.stderr
    named = acpgen(
        "schema",
        "update",
        "--from",
        str(loose),
        "--as",
        "v2/schema.unstable.json",
        "--config",
        config(project),
        "--no-generate",
    )
    assert named.exit_code == 0, named.output
    assert (project / "schema" / name).read_bytes() == loose.read_bytes()


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for npm")
def test_update_with_npm(tmp_path, project):
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    npm = bin_dir / "npm"
    npm.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{calls}"\n'
        f'cp "{release}" ./agentclientprotocol-sdk-2.0.0.tgz\n'
        "echo agentclientprotocol-sdk-2.0.0.tgz\n"
    )
    npm.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = acpgen("schema", "update", "--npm", "2.0.0", "--config", config(project), "--no-generate", env=env)
    assert result.exit_code == 0, result.output
    assert calls.read_text().split()[:2] == ["pack", f"{SDK}@2.0.0"]
    assert json.loads((project / "schema/SOURCE.json").read_text())["version"] == "2.0.0"
    missing = acpgen(
        "schema", "update", "--npm", "2.0.0", "--config", config(project), env={"PATH": str(tmp_path / "none")}
    )
    assert missing.exit_code == 2 and "npm" in missing.stderr


def keep_packages(project: Path, *names: str) -> None:
    """The project's pyproject.toml with only the packages ``names``."""
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    head, _, rest = text.partition("[[tool.acpgen.packages]]")
    entries = ["[[tool.acpgen.packages]]" + e for e in rest.split("[[tool.acpgen.packages]]")]
    entries[-1], tail = entries[-1].split("[tool.pytest", 1)
    kept = [e for e in entries if any(f'package = "{name}"' in e for name in names)]
    assert len(kept) == len(names)
    pyproject.write_text(head + "".join(kept) + "[tool.pytest" + tail)


def test_update_summarises_only_the_schemas_the_project_generates(tmp_path, project):
    # A project that generates the two v2 packages only.
    keep_packages(project, "acp_v2", "acp_v2_unstable")
    release = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--dry-run")
    assert result.exit_code == 0, result.output
    listed = [line.split(":")[0].strip() for line in result.output.splitlines() if line.startswith("  v")]
    assert listed == ["v2/schema.json", "v2/schema.unstable.json"]
    assert (
        "  and 2 file(s) no package is generated from, vendored as they are "
        "(v1/schema.json, v1/schema.unstable.json changed); --all shows their changes"
    ) in result.output
    every = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--dry-run", "--all")
    assert every.exit_code == 0, every.output
    listed = [line.split(":")[0].strip() for line in every.output.splitlines() if line.startswith("  v")]
    assert listed == list(FILES)
    # What is vendored does not depend on it: every file of the release.
    written = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert written.exit_code == 0, written.output
    for name in FILES:
        assert (project / "schema" / name).read_bytes() == (FIXTURE / name).read_bytes()


def test_update_fail_on_breaking_writes_nothing(tmp_path, project):
    # A schema of another protocol in place of v2/schema.json: no methods.
    # Without rules = in [tool.acpgen], the rule set is told from the schema
    # (none here), so the package would generate.
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        "".join(line for line in pyproject.read_text().splitlines(True) if not line.startswith("rules = "))
    )
    mcp = tmp_path / "mcp.json"
    mcp.write_text(
        json.dumps(
            {"$defs": {"Tool": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
        )
    )
    before = tree(project)
    args = ("schema", "update", "--from", str(mcp), "--as", "v2/schema.json", "--config", config(project))
    result = acpgen(*args, "--fail-on-breaking")
    assert result.exit_code == 1, result.output
    breaking = json.loads(acpgen("diff", str(SCHEMA / "v2/schema.json"), str(mcp), "--format", "json").stdout)
    count = breaking["summary"]["breaking"]
    assert count > 100
    assert f"{count} breaking changes (v2/schema.json): nothing written (--fail-on-breaking)" in result.stderr
    assert tree(project) == before
    # A compatible update goes through with the flag (v1 changed compatibly only).
    compatible = acpgen(
        "schema",
        "update",
        "--from",
        str(FIXTURE / "v1/schema.json"),
        "--config",
        config(project),
        "--no-generate",
        "--fail-on-breaking",
    )
    assert compatible.exit_code == 0, compatible.output
    assert (project / "schema/v1/schema.json").read_bytes() == (FIXTURE / "v1/schema.json").read_bytes()
    # Without the flag it is written, and the missing methods are said.
    written = acpgen(*args)
    assert written.exit_code == 0, written.output
    assert "acp_v2: schema/v2/schema.json marks no type with x-method" in written.stderr


NPM_ETARGET = """npm error code ETARGET
npm error notarget No matching version found for @agentclientprotocol/sdk@99.0.0.
npm error notarget In most cases you or one of your dependencies are requesting a package version that doesn't exist.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T15_34_30_312Z-debug-0.log
"""
"""What npm 11 prints for ``npm pack @agentclientprotocol/sdk@99.0.0``."""


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for npm")
def test_npm_pack_of_a_version_that_does_not_exist_says_so(tmp_path, project):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "etarget.txt").write_text(NPM_ETARGET)
    npm = bin_dir / "npm"
    npm.write_text(f'#!/bin/sh\ncat "{tmp_path / "etarget.txt"}" >&2\nexit 1\n')
    npm.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    before = tree(project)
    result = acpgen("schema", "update", "--npm", "99.0.0", "--config", config(project), env=env)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"acpgen: error: npm pack {SDK}@99.0.0 failed: {SDK} has no version 99.0.0 "
        f"(npm: No matching version found for {SDK}@99.0.0.)"
    ]
    assert tree(project) == before


# ---------------------------------------------------------------- the whole bump


DECODE = r"""
import json
import acp_v2_unstable as p

out = {"version": p.SCHEMA_VERSION, "sha256": p.SCHEMA_SHA256}
# Envelope params stay JSON (decoded by method), so decode the update itself.
message = p.decode("SessionUpdate", {
    "sessionUpdate": "tool_call_update", "toolCallId": "t1", "capabilities": {"cancel": {}}})
out["update"] = type(message).__name__
out["tool_call"] = p.encode(message)
terminal = p.decode("TerminalUpdate", {"terminalId": "x", "size": {"cols": 80, "rows": 24}})
out["terminal"] = p.encode(terminal)
try:
    p.decode("ElicitationSchema", {"properties": {}})
    out["elicitation_without_type"] = "accepted"
except p.ValidationError:
    out["elicitation_without_type"] = "rejected"
out["classes"] = sorted(n for n in ("AuthCapabilities", "ClientAuthCapabilities", "ToolCallCapabilities") if hasattr(p, n))
print(json.dumps(out))
"""


def decode_with(generated: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(generated), PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(
        [sys.executable, "-c", DECODE], env=env, capture_output=True, text=True, check=True, cwd=generated
    )
    return json.loads(result.stdout)


def test_the_whole_bump(tmp_path, project):
    """2.0.0 generated -> update to 2.4.0 without generating -> check names
    the stale packages -> generate -> the packages decode 2.4.0 messages.

    The project generates two of the four packages, one from each schema
    directory: the bump of several packages in one transaction is the same
    with two, at half the generation; all four are generated from the
    vendored schemas by every ``acpgen check`` of this repository."""
    keep_packages(project, "acp_v1", "acp_v2_unstable")
    old = tarball(tmp_path, FIXTURE, "2.0.0")
    result = acpgen("schema", "update", "--from", str(old), "--config", config(project))
    assert result.exit_code == 0, result.output
    assert "generated 2 package(s)" in result.output
    assert acpgen("check", "--config", config(project)).exit_code == 0
    before = decode_with(project / "generated")
    assert before["version"] == "2.0.0"
    assert before["sha256"] == hashlib.sha256((FIXTURE / "v2/schema.unstable.json").read_bytes()).hexdigest()
    assert before["classes"] == ["AuthCapabilities"]
    assert before["elicitation_without_type"] == "accepted"  # 2.0.0 defaults it
    assert "capabilities" not in before["tool_call"]  # unknown to 2.0.0: dropped

    new = package_dir(tmp_path / "new", SCHEMA, "2.4.0")
    generated = tree(project / "generated")
    result = acpgen("schema", "update", "--from", str(new), "--config", config(project), "--no-generate")
    assert result.exit_code == 0, result.output
    assert "v2/schema.unstable.json: " in result.output and "breaking" in result.output
    assert tree(project / "generated") == generated
    assert tree(project / "schema") == tree(SCHEMA)

    stale = acpgen("check", "--config", config(project))
    assert stale.exit_code == 1
    assert "2 package(s) out of date: acp_v1, acp_v2_unstable" in stale.output
    for package in ("acp_v1", "acp_v2_unstable"):
        assert f"stale: generated/{package}/__init__.py" in stale.output

    result = acpgen("generate", "--config", config(project))
    assert result.exit_code == 0, result.output
    assert acpgen("check", "--config", config(project)).exit_code == 0

    after = decode_with(project / "generated")
    assert after["version"] == "2.4.0"
    assert after["sha256"] == hashlib.sha256((SCHEMA / "v2/schema.unstable.json").read_bytes()).hexdigest()
    assert after["update"] == "ToolCallUpdateSessionUpdate"
    assert after["tool_call"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "capabilities": {"cancel": {}},
    }
    assert after["terminal"] == {"terminalId": "x", "size": {"cols": 80, "rows": 24}}
    assert after["elicitation_without_type"] == "rejected"
    assert after["classes"] == ["ClientAuthCapabilities", "ToolCallCapabilities"]


# ---------------------------------------------------------------- hostile releases


def test_a_directory_with_a_symlink_leading_out_is_refused(tmp_path, project):
    before = tree(project)
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "do not read"}')
    for link, target in (("schema/v2/extra.json", secret), ("schema/elsewhere", tmp_path), ("LICENSE", secret)):
        release = package_dir(tmp_path / link.replace("/", "_"), FIXTURE, "2.0.0")
        (release / link).unlink(missing_ok=True)
        (release / link).symlink_to(target)
        result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
        assert result.exit_code == 2, result.output
        assert "symbolic link that leads out of the directory" in result.stderr
        assert tree(project) == before
    # A link that stays inside is read as its target.
    release = package_dir(tmp_path / "inside", FIXTURE, "2.0.0")
    (release / "schema/v2/schema.json").unlink()
    (release / "schema/v2/schema.json").symlink_to(release / "schema/v1/../v2/schema.unstable.json")
    result = acpgen(
        "schema", "update", "--from", str(release), "--config", config(project), "--no-generate", "--dry-run"
    )
    assert result.exit_code == 0, result.output


def _hostile_tarball(tmp_path: Path, name: str, add) -> Path:
    out = tmp_path / f"{name}.tgz"
    root = package_dir(tmp_path / name, FIXTURE, "2.0.0")
    with tarfile.open(out, "w:gz") as archive:
        archive.add(root, arcname="package")
        add(archive)
    return out


class _Zeros:
    """A file object of ``size`` zero bytes, without holding them."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def _member(name: str, kind=tarfile.REGTYPE, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


@pytest.mark.parametrize(
    "case, member, message",
    [
        ("huge", _member("package/schema/v2/big.json", size=1 << 30), "more than the 64 MiB cap"),
        (
            "symlink",
            _member("package/schema/v2/link.json", tarfile.SYMTYPE, link="/etc/passwd"),
            "link, device or FIFO",
        ),
        (
            "hardlink",
            _member("package/schema/v2/hard.json", tarfile.LNKTYPE, link="package/package.json"),
            "link, device or FIFO",
        ),
        ("device", _member("package/schema/dev.json", tarfile.CHRTYPE), "link, device or FIFO"),
        ("absolute", _member("/package/schema/v2/abs.json", size=2), "leaves the archive"),
        ("dotdot", _member("package/../../escape.json", size=2), "leaves the archive"),
    ],
)
def test_a_hostile_tarball_is_refused_before_its_data_is_read(tmp_path, project, case, member, message):
    before = tree(project)

    def add(archive):
        if member.size > MAX_MEMBER_BYTES:
            # Its header only, no data behind it: what is refused on the
            # header is never read (writing the GiB would cost seconds).
            archive.fileobj.write(member.tobuf(archive.format, archive.encoding, archive.errors))
        else:
            archive.addfile(member, _Zeros(member.size) if member.isfile() else None)

    release = _hostile_tarball(tmp_path, case, add)
    assert release.stat().st_size < 8 << 20  # a small file on disk
    result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
    assert result.exit_code == 2, result.output
    assert message in result.stderr and str(release) in result.stderr
    assert tree(project) == before


def test_tarball_members_add_up_to_a_cap(tmp_path, project, monkeypatch):
    from acpgen.update import release

    monkeypatch.setattr(release, "MAX_TOTAL_BYTES", 4 << 20)

    def add(archive):
        for index in range(5):
            archive.addfile(_member(f"package/data/{index}.bin", size=1 << 20), _Zeros(1 << 20))

    result = acpgen(
        "schema",
        "update",
        "--from",
        str(_hostile_tarball(tmp_path, "many", add)),
        "--config",
        config(project),
        "--no-generate",
    )
    assert result.exit_code == 2 and "4 MiB" in result.stderr


def test_without_tarfiles_data_filter_the_same_members_are_refused(tmp_path, project, monkeypatch):
    # Python 3.10 before 3.10.12 has no tarfile.data_filter.
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    for case, member in (
        ("symlink", _member("package/schema/v2/link.json", tarfile.SYMTYPE, link="../../x")),
        ("dotdot", _member("package/../escape.json", size=2)),
    ):
        release = _hostile_tarball(
            tmp_path, case, lambda archive, member=member: archive.addfile(member, _Zeros(member.size))
        )
        result = acpgen("schema", "update", "--from", str(release), "--config", config(project), "--no-generate")
        assert result.exit_code == 2 and str(release) in result.stderr


def test_a_dry_run_refuses_what_the_update_refuses(tmp_path, project):
    """A release the configured packages cannot be generated from (here its
    v2/schema.json is a v1 schema, which the v2 rules of [tool.acpgen] do
    not fit): the update refuses it with exit 2, and so does --dry-run, with
    the same error, before saying anything is fine."""
    schemas = tmp_path / "mislabeled"
    shutil.copytree(SCHEMA, schemas)
    shutil.copyfile(SCHEMA / "v1/schema.json", schemas / "v2/schema.json")
    release = str(tarball(tmp_path, schemas, "1.9.0"))
    before = tree(project)
    real = acpgen("schema", "update", "--from", release, "--config", config(project))
    assert real.exit_code == 2, real.output
    assert tree(project) == before
    (error,) = [line for line in real.stderr.splitlines() if line.startswith("acpgen: error: ")]
    assert "the rule set 'v2' does not fit this schema" in error
    dry = acpgen("schema", "update", "--from", release, "--config", config(project), "--dry-run")
    assert dry.exit_code == 2, dry.output
    assert error in dry.stderr.splitlines()
    assert "dry run: nothing written" not in dry.stdout
    assert tree(project) == before


def test_a_dry_run_refuses_to_replace_an_edited_package_as_the_update_does(tmp_path, project):
    keep_packages(project, "acp_v1", "acp_v2")  # the edited package and one other: the same refusal at half the cost
    edited = project / "generated/acp_v1/models.py"
    edited.write_text(edited.read_text() + "# mine\n")
    release = str(tarball(tmp_path, FIXTURE, "2.0.0"))
    before = tree(project)
    real = acpgen("schema", "update", "--from", release, "--config", config(project))
    dry = acpgen("schema", "update", "--from", release, "--config", config(project), "--dry-run")
    assert (real.exit_code, dry.exit_code) == (2, 2), dry.output
    assert "refusing to replace a generated package whose files changed" in real.stderr
    assert real.stderr.splitlines()[-1] == dry.stderr.splitlines()[-1]
    assert tree(project) == before
    allowed = acpgen(
        "schema", "update", "--from", release, "--config", config(project), "--dry-run", "--overwrite-edited"
    )
    assert allowed.exit_code == 0, allowed.output
    assert "the 2 package(s) generate from the new schemas" in allowed.stdout
    assert allowed.stdout.rstrip().endswith("dry run: nothing written")
    assert tree(project) == before
