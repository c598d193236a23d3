"""Stage 6: atomic output."""

from __future__ import annotations

import os
import stat

import pytest

from acpgen import write
from acpgen.write import read_tree, write_packages


def test_packages_are_replaced_whole_with_ordinary_permissions(tmp_path):
    write_packages(tmp_path, {"a": {"x.py": "1", "sub/y.py": "2"}, "b": {"z.py": "3"}})
    write_packages(tmp_path, {"a": {"x.py": "new"}, "b": {"z.py": "3"}})
    assert read_tree(tmp_path / "a") == {"x.py": b"new"}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE((tmp_path / "a/x.py").stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no staging left


def test_a_failure_while_swapping_puts_everything_back(tmp_path, monkeypatch):
    write_packages(tmp_path, {"a": {"x.py": "old a"}, "b": {"x.py": "old b"}})
    real_rename = os.rename
    calls = []

    def flaky(src, dst):
        calls.append((src, dst))
        # Fail when the second staged package is moved onto its target.
        if str(dst).endswith("/b") and ".b.new-" in str(src):
            raise KeyboardInterrupt
        return real_rename(src, dst)

    monkeypatch.setattr(write.os, "rename", flaky)
    with pytest.raises(KeyboardInterrupt):
        write_packages(tmp_path, {"a": {"x.py": "new a"}, "b": {"x.py": "new b"}})
    monkeypatch.setattr(write.os, "rename", real_rename)
    assert read_tree(tmp_path / "a") == {"x.py": b"old a"}
    assert read_tree(tmp_path / "b") == {"x.py": b"old b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_failure_while_staging_writes_nothing(tmp_path, monkeypatch):
    write_packages(tmp_path, {"a": {"x.py": "old"}})

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write, "_ordinary_permissions", broken)
    with pytest.raises(OSError):
        write_packages(tmp_path, {"a": {"x.py": "new"}})
    assert read_tree(tmp_path / "a") == {"x.py": b"old"}
    assert [p.name for p in tmp_path.iterdir()] == ["a"]
