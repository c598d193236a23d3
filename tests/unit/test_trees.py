"""The tree walk shared by the package marker and the journal digest: what
each of them sees of a tree, pinned to the format journals and markers
already on disk were written with."""

from __future__ import annotations

import hashlib
import os

from acpgen.output import manifest
from acpgen.output.journal import directory_digest


def _odd_tree(root):
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "f.txt").write_bytes(b"deep")
    (root / "x.py").write_bytes(b"x")
    (root / "empty").mkdir()
    (root / "cached" / "__pycache__").mkdir(parents=True)
    (root / "cached" / "__pycache__" / "m.pyc").write_bytes(b"pyc")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "top.pyc").write_bytes(b"pyc")
    os.symlink("sub", root / "dirlink")
    os.symlink("x.py", root / "filelink")
    os.mkfifo(root / "pipe")


def test_the_digest_is_the_journaled_format(tmp_path):
    _odd_tree(tmp_path)
    # Written out from the format the journal documents: sorted records of
    # path NUL record, a file by its sha256, a link by its destination, an
    # empty directory (one holding only __pycache__ counts) and anything else
    # by a tag; __pycache__ directories left out.
    records = {
        "cached": b"\0directory",
        "dirlink": b"\0symlink\0sub",
        "empty": b"\0directory",
        "filelink": b"\0symlink\0x.py",
        "pipe": b"\0special",
        "sub/deep/f.txt": hashlib.sha256(b"deep").digest(),
        "x.py": hashlib.sha256(b"x").digest(),
    }
    expected = hashlib.sha256()
    for relative in sorted(records):
        expected.update(relative.encode("utf-8") + b"\0" + records[relative])
    assert directory_digest(tmp_path) == expected.hexdigest()


def test_a_tree_of_regular_files_digests_as_before(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.py").write_bytes(b"b")
    (tmp_path / "c.py").write_bytes(b"c")
    expected = hashlib.sha256(
        b"a/b.py\0" + hashlib.sha256(b"b").digest() + b"c.py\0" + hashlib.sha256(b"c").digest()
    ).hexdigest()
    assert directory_digest(tmp_path) == expected


def test_the_marker_scan_hashes_regular_files_and_names_the_rest(tmp_path):
    _odd_tree(tmp_path)
    hashes, odd = manifest.scan(tmp_path)
    assert hashes == {
        "sub/deep/f.txt": hashlib.sha256(b"deep").hexdigest(),
        "x.py": hashlib.sha256(b"x").hexdigest(),
    }
    assert sorted(odd) == ["dirlink", "filelink", "pipe"]
