"""``acpgen schema update``: vendor a release of the ACP schemas.

The source is an npm tarball of ``@agentclientprotocol/sdk`` (``.tgz``), an
unpacked package directory (with ``package.json`` and ``schema/``), or one
schema file, which replaces the vendored file of the same name (``--as``
names it when the file name does not tell). The project's ``schema/``
directory (beside the ``pyproject.toml`` with the ``[tool.acpgen]`` table)
then holds the release's schema files and LICENSE, and ``SOURCE.json``
records the package, its version and the sha256 of each file::

    {"package": "@agentclientprotocol/sdk", "version": "2.4.0",
     "license": "Apache-2.0", "files": {"v1/schema.json": "<sha256>", ...}}

A single file has no version: it is recorded under ``"local"`` instead of
``"files"``, so the packages generated from it say SCHEMA_VERSION = "".

Only the files acpgen manages are written or deleted (the release's schema
files, LICENSE, SOURCE.json, and the files of the previous release it
drops); everything else in ``schema/`` is carried over as it is (modes,
symbolic links, empty directories), and a managed file or directory that is
a symbolic link is refused rather than written through.

Everything is staged first: every schema file is checked, and the packages
are generated from the new files in a scratch directory (unless ``generate``
is off); only then are ``schema/`` and the packages replaced, as one
transaction (:mod:`acpgen.output.write`): on any error, or after a run killed
midway once the next run has recovered, the project has the old ``schema/``
and packages or the new ones, never a mix.
"""

from __future__ import annotations

from .applying import apply, build, check, targets
from .planning import Plan, known_names, plan
from .release import npm_pack, read_source

__all__ = ["Plan", "apply", "build", "check", "known_names", "npm_pack", "plan", "read_source", "targets"]
