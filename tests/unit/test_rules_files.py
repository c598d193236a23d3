"""The rules files (rules/*.toml) are read one way by every pass that has
rules: a missing file, an unreadable one and one that is not TOML are each
an error naming the file, whichever pass reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acpgen.compile.load import parse_schema
from acpgen.compile.passes import cancellation, gates, methods, resumption, rules, session, upserts
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir


def _package():
    return build_ir(parse_schema(json.dumps({"$defs": {"A": {"type": "string"}}}).encode(), "t.json"), "p")


READERS = {
    "patch": upserts.load_rules,
    "methods": methods.handler_overrides,
    "capabilities": gates.gate_rules,
    "resumption": resumption.resumption_rules,
    "cancellation": cancellation.cancellation_rules,
    "session": lambda path: session.apply_session_rules(_package(), "v1", path),
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_missing_rules_file_is_an_error_naming_it(tmp_path: Path, reader) -> None:
    missing = tmp_path / "gone.toml"
    with pytest.raises(AcpgenError) as info:
        reader(missing)
    assert str(info.value) == f"{missing}: no such file"


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_rules_file_that_is_not_toml_is_an_error_naming_it(tmp_path: Path, reader) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[unclosed\n", encoding="utf-8")
    with pytest.raises(AcpgenError, match=r"invalid TOML") as info:
        reader(bad)
    assert str(info.value).startswith(f"{bad}: ")


def test_a_rules_file_that_is_not_text_is_an_error_naming_it(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(AcpgenError, match=r"cannot read the rules") as info:
        rules.read_rules(binary)
    assert str(info.value).startswith(f"{binary}: ")


def test_a_rule_set_that_extends_itself_is_refused() -> None:
    table = {"a": {"extends": "b"}, "b": {"extends": "a"}}
    with pytest.raises(AcpgenError, match="rule set 'a' extends itself"):
        rules.extends_chain(table, "a", "r.toml")
    assert rules.extends_chain({"a": {"extends": "b"}, "b": {}}, "a", "r.toml") == [{"extends": "b"}, {}]


def test_every_builtin_rules_file_reads() -> None:
    for name in (rules.PATCH, rules.SESSION, rules.METHODS, rules.CAPABILITIES, rules.RESUMPTION, rules.CANCELLATION):
        assert rules.read_rules(rules.builtin_file(name))


def test_a_changed_rules_file_is_read_again(tmp_path: Path) -> None:
    # read_rules keeps parsed tables by the file's text: an edit between two
    # reads (same path, same size) gives the new table, never the kept one.
    path = tmp_path / "r.toml"
    path.write_text('[a]\nx = "1"\n', encoding="utf-8")
    assert rules.read_rules(path) == {"a": {"x": "1"}}
    path.write_text('[a]\nx = "2"\n', encoding="utf-8")
    assert rules.read_rules(path) == {"a": {"x": "2"}}
    path.write_text("[unclosed\n", encoding="utf-8")
    with pytest.raises(AcpgenError, match=r"invalid TOML"):
        rules.read_rules(path)
    path.unlink()
    with pytest.raises(AcpgenError, match=r"no such file"):
        rules.read_rules(path)


def test_each_read_of_a_rules_file_is_a_table_of_its_own(tmp_path: Path) -> None:
    # A caller that changes the table it got changes no later read's.
    path = tmp_path / "r.toml"
    path.write_text('[a]\nx = ["1"]\n[a.b]\ny = 1\n', encoding="utf-8")
    first = rules.read_rules(path)
    first["a"]["x"].append("2")
    first["a"]["b"]["y"] = 2
    del first["a"]["b"]
    first["z"] = {}
    assert rules.read_rules(path) == {"a": {"x": ["1"], "b": {"y": 1}}}


def test_the_same_text_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two files of the same text (or one file read twice) are one parse.
    parses: list[str] = []
    loads = rules.tomllib.loads
    monkeypatch.setattr(rules.tomllib, "loads", lambda text: parses.append(text) or loads(text))
    text = '[unique_to_this_test]\nx = "parsed once"\n'
    for name in ("one.toml", "two.toml", "one.toml"):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert rules.read_rules(tmp_path / name) == {"unique_to_this_test": {"x": "parsed once"}}
    assert parses == [text]
