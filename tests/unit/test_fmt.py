"""Stage 5: formatting. What is written is what the formatter returned for
what was rendered (nothing read back from a cache), errors name the file,
and the formatter never outlives acpgen."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from acpgen.emit.fmt import format_files, format_source
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_package, render_one

from ..conftest import ROOT, schema_with
from ..patience import HANG

SCHEMA = schema_with(
    {
        "Greeting": {
            "description": "A greeting.\n\nWith a second paragraph that is long enough to be wrapped by nobody at all.",
            "type": "object",
            "properties": {"text": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["text"],
        }
    }
)


def test_long_lines_are_wrapped_and_quotes_normalised():
    source = "x = {'a': 1, 'b': [" + ", ".join(f"'item{i}'" for i in range(20)) + "]}\n"
    out = format_source(source, "m.py")
    assert all(len(line) <= 88 for line in out.splitlines())
    assert "'" not in out and out.count("\n") > 3
    compile(out, "m.py", "exec")


def test_code_that_does_not_parse_is_an_error_naming_the_file():
    files = {"pkg/models.py": "x = 1\n", "pkg/codec.py": "def broken(:\n    pass\n", "pkg/py.typed": ""}
    with pytest.raises(AcpgenError) as info:
        format_files(files)
    assert info.value.file == "pkg/codec.py"
    assert "does not parse" in str(info.value) and "line 1" in str(info.value)


def test_other_files_pass_through_unchanged():
    files = {"a/py.typed": "", "a/data.txt": "x  =  1\n", "a/m.py": "x  =  1\n"}
    assert format_files(files) == {"a/py.typed": "", "a/data.txt": "x  =  1\n", "a/m.py": "x = 1\n"}


def test_a_configuration_on_the_machine_does_not_change_the_output(tmp_path, monkeypatch):
    source = "def f(a, b):\n    return {'key': a, 'other': b, 'third': [a, b, a, b, a, b, a, b], 'x': 1}\n"
    before = format_source(source, "m.py")
    (tmp_path / "ruff.toml").write_text("line-length = 40\n[format]\nquote-style = 'single'\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 40\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RUFF_LINE_LENGTH", "40")
    assert format_source(source, "m.py") == before


def test_formatting_in_pieces_gives_what_formatting_whole_files_gives():
    """Checked on what the templates print for two ACP packages, cut far
    finer than usual so that every kind of top-level statement meets a cut."""
    files = {}
    for package, schema, rules in (
        ("acp_v1", "schema/v1/schema.json", "v1"),
        ("acp_v2_unstable", "schema/v2/schema.unstable.json", "v2_unstable"),
    ):
        for name, text in render_one(ROOT / schema, package, display_path=schema, rules=rules).items():
            files[f"{package}/{name}"] = text
    whole = format_files(files, piece_lines=10**9)
    assert format_files(files, piece_lines=150) == whole
    assert format_files(files) == whole


def test_a_cut_inside_a_string_falls_back_to_the_whole_file():
    source = 'X = 1\n\n\ndef f():\n    return 1\n\n\nTEXT = """\n\ndef not_code(:\n"""\n\n\nclass  A:\n    pass\n'
    assert format_source_in_pieces(source) == format_files({"m.py": source}, piece_lines=10**9)["m.py"]
    broken = source + "\n\ndef g(:\n    pass\n"
    with pytest.raises(AcpgenError) as info:
        format_files({"p/m.py": broken}, piece_lines=1)
    assert "line 18" in str(info.value)  # counted in the whole file, not a piece


def format_source_in_pieces(source: str) -> str:
    return format_files({"m.py": source}, piece_lines=1)["m.py"]


def _old_cache_key(source: str) -> str:
    """The name under which earlier versions stored, and trusted, a
    formatted file: sha256 of black's version, its mode and the source."""
    import black

    mode = black.Mode(target_versions={black.TargetVersion.PY310})
    return hashlib.sha256(f"{black.__version__}\0{mode!r}\0{source}".encode()).hexdigest()


def test_a_planted_cache_entry_cannot_inject_code(tmp_path, monkeypatch):
    """Code appended to a file in ~/.cache/acpgen (or $ACPGEN_CACHE_DIR)
    never reaches a generated package."""
    path = tmp_path / "greeting.json"
    path.write_text(json.dumps(SCHEMA))
    clean = build_package(path, "greeting")
    rendered = render_one(path, "greeting")
    for home in ("home", "xdg", "acpgen-cache"):
        (tmp_path / home).mkdir()
    caches = [tmp_path / "home/.cache/acpgen", tmp_path / "xdg/acpgen", tmp_path / "acpgen-cache"]
    for cache in caches:
        cache.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            planted = clean[name] + "\nimport os; os.system('echo injected')  # INJECTED\n"
            (cache / f"{_old_cache_key(text)}.py").write_text(planted)
            (cache / f"{hashlib.sha256(text.encode()).hexdigest()}.py").write_text(planted)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(tmp_path / "acpgen-cache"))
    again = build_package(path, "greeting")
    assert again == clean
    assert not any("INJECTED" in text for text in again.values())


# ------------------------------------------------------------------ the formatter process

_CHILD = """
import sys
import acpgen.emit.fmt
acpgen.emit.fmt.ruff_binary = lambda: sys.argv[1]
print("formatting", flush=True)
try:
    acpgen.emit.fmt.format_files({"p/m.py": "x = 1\\n"})
except KeyboardInterrupt:
    sys.exit(130)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent has not reaped it


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_killing_acpgen_ends_the_formatter(tmp_path, how):
    """A stand-in formatter that would run for a minute records its pid; acpgen
    is killed while it waits for it, and the formatter must be gone."""
    pid_file = tmp_path / "formatter.pid"
    fake = tmp_path / "slow-formatter"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 3600\n")  # hangs: only the signal ends the run
    fake.chmod(0o755)
    parent = subprocess.Popen([sys.executable, "-c", _CHILD, str(fake)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "formatting"
        deadline = time.monotonic() + HANG
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the formatter did not start"
            time.sleep(0.02)
        formatter = int(pid_file.read_text())
        assert _alive(formatter)
        parent.send_signal(how)
        parent.wait(timeout=HANG)
        deadline = time.monotonic() + HANG
        while _alive(formatter) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(formatter), f"the formatter outlived acpgen killed by {how.name}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if pid_file.exists() and pid_file.read_text().strip() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
