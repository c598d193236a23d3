"""The compiled-template cache (acpgen.emit.template_cache): used again while
a template's source is unchanged, never trusted otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from acpgen.emit import template_cache
from acpgen.emit.template_cache import PrivateBytecodeCache, bytecode_cache, cache_directory

from ..conftest import schema_with
from ..patience import HANG

SALT = "test"


def environment(templates: Path, cache: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        bytecode_cache=PrivateBytecodeCache(cache, SALT),
        keep_trailing_newline=True,
    )


def no_compiling(env: jinja2.Environment) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled, not taken from the cache")

    env.compile = refuse  # type: ignore[method-assign]


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    directory = tmp_path / "templates"
    directory.mkdir()
    (directory / "t.jinja").write_text("{% for x in xs %}{{ x }};{% endfor %}\n")
    return directory


def entries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []


def test_a_second_environment_runs_the_cached_code(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert environment(templates, cache).get_template("t.jinja").render(xs=[1, 2]) == "1;2;\n"
    assert len(entries(cache)) == 1
    assert os.stat(cache).st_mode & 0o777 == 0o700
    assert os.stat(cache / entries(cache)[0]).st_mode & 0o777 == 0o600
    again = environment(templates, cache)
    no_compiling(again)
    assert again.get_template("t.jinja").render(xs=[3]) == "3;\n"


def test_a_changed_source_is_compiled_again_and_replaces_its_entry(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    environment(templates, cache).get_template("t.jinja").render(xs=[])
    (templates / "t.jinja").write_text("{{ xs | length }}\n")
    assert environment(templates, cache).get_template("t.jinja").render(xs=[1, 2, 3]) == "3\n"
    assert len(entries(cache)) == 1
    again = environment(templates, cache)
    no_compiling(again)
    assert again.get_template("t.jinja").render(xs=[1]) == "1\n"


def test_a_corrupt_entry_is_compiled_again(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    environment(templates, cache).get_template("t.jinja").render(xs=[])
    (entry,) = entries(cache)
    data = (cache / entry).read_bytes()
    for garbage in (b"", b"junk", data[:-40], data[:20] + b"\0" * (len(data) - 20)):
        (cache / entry).write_bytes(garbage)
        assert environment(templates, cache).get_template("t.jinja").render(xs=[7]) == "7;\n"
        # replaced by a good one (marshal's bytes may differ run to run: it is read back, not compared)
        assert (cache / entry).read_bytes() != garbage
        again = environment(templates, cache)
        no_compiling(again)
        assert again.get_template("t.jinja").render(xs=[8]) == "8;\n"


def test_a_directory_others_can_write_is_not_used(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    assert environment(templates, cache).get_template("t.jinja").render(xs=[1]) == "1;\n"
    assert entries(cache) == []
    cache.chmod(0o750)
    environment(templates, cache).get_template("t.jinja").render(xs=[1])
    assert entries(cache) == []


def test_a_planted_link_is_never_followed(templates: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert environment(templates, link).get_template("t.jinja").render(xs=[1]) == "1;\n"
    assert entries(real) == []
    # an entry that is a link: not read, not written through
    cache = tmp_path / "cache"
    environment(templates, cache).get_template("t.jinja").render(xs=[])
    (entry,) = entries(cache)
    target = tmp_path / "elsewhere"
    target.write_bytes((cache / entry).read_bytes())
    (cache / entry).unlink()
    (cache / entry).symlink_to(target)
    env = environment(templates, cache)
    assert env.get_template("t.jinja").render(xs=[2]) == "2;\n"
    assert (cache / entry).is_file() and not (cache / entry).is_symlink()  # renamed over the link
    assert target.read_bytes() != b""  # the link's target untouched


def test_the_salt_keeps_entries_of_other_options_apart(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = PrivateBytecodeCache(cache, "a")
    second = PrivateBytecodeCache(cache, "b")
    assert first.get_cache_key("t.jinja", "/x") != second.get_cache_key("t.jinja", "/x")
    assert first.get_cache_key("t.jinja", "/x") != first.get_cache_key("t.jinja", "/y")
    plain = bytecode_cache((("trim_blocks", True),))
    trimmed = bytecode_cache((("trim_blocks", False),))
    assert plain is not None and trimmed is not None
    assert plain.get_cache_key("t.jinja") != trimmed.get_cache_key("t.jinja")


def test_where_the_cache_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(tmp_path / "c"))
    assert cache_directory() == tmp_path / "c"
    monkeypatch.setenv("ACPGEN_CACHE_DIR", "")
    assert cache_directory() is None and bytecode_cache(()) is None
    monkeypatch.delenv("ACPGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "acpgen" / "templates"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "home" / ".cache" / "acpgen" / "templates"
    assert template_cache.CACHE_ENV == "ACPGEN_CACHE_DIR"


def test_generate_writes_the_same_packages_with_a_warm_cache_as_with_none(tmp_path: Path) -> None:
    """Two real runs of ``acpgen generate``: without a cache, then with one
    filled by an earlier run; the outputs are byte for byte the same."""
    acpgen = str(Path(sys.executable).parent / "acpgen")
    schema = tmp_path / "s.json"
    schema.write_text(
        json.dumps(schema_with({"Greeting": {"type": "object", "properties": {"t": {"type": "string"}}}}))
    )
    cache = tmp_path / "cache"

    def generate(out: str, cache_dir: str) -> dict[str, bytes]:
        env = {**os.environ, "ACPGEN_CACHE_DIR": cache_dir}
        command = [acpgen, "generate", "--schema", str(schema), "--package", "greet", "--out", str(tmp_path / out)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=HANG)
        assert done.returncode == 0, done.stderr
        root = tmp_path / out / "greet"
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    cold = generate("cold", "")
    assert not cache.exists()
    generate("fill", str(cache))
    assert entries(cache)
    assert generate("warm", str(cache)) == cold
