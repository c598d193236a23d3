"""Shared helpers: paths, generating a package from a small schema, and the
hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE``, or ``--hypothesis-profile``):

- ``dev`` (the default): real randomness, so every run tries new examples;
  a failure is saved in ``.hypothesis/`` and tried first next time.
- ``ci`` (the default when ``CI`` is set): the same examples each run
  (derandomized), so a CI run is reproducible; it explores nothing new.
- ``fuzz`` (``make fuzz``): real randomness and :data:`FUZZ_FACTOR` times the
  examples of each property test.

A property test asks for ``examples(n)``: n under ``dev`` and ``ci``, more
under ``fuzz``.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# A test run started in the background of a shell without job control
# inherits SIGINT ignored, and one under nohup SIGHUP: the children the tests
# interrupt with them would inherit that too and go on. This process and so
# (through exec) every child it starts get them at their defaults.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

FUZZ_FACTOR = 10

_COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", **_COMMON)
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("fuzz", max_examples=100 * FUZZ_FACTOR, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def examples(n: int) -> int:
    """``n`` examples, scaled by the loaded profile (``fuzz``: many more)."""
    return max(1, n * settings.default.max_examples // 100)


ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
SCHEMAS = {
    "acp_v1": ROOT / "schema/v1/schema.json",
    "acp_v1_unstable": ROOT / "schema/v1/schema.unstable.json",
    "acp_v2": ROOT / "schema/v2/schema.json",
    "acp_v2_unstable": ROOT / "schema/v2/schema.unstable.json",
}

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

_counter = itertools.count()


def load_generated(name: str):
    """A committed generated package, imported."""
    return importlib.import_module(name)


@pytest.fixture
def make_package(tmp_path):
    """``make_package(schema_dict) -> module``: generate a package from a
    schema document into a temporary directory and import it."""
    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    def make(schema: dict, name: str | None = None):
        name = name or f"acpgen_test_pkg_{next(_counter)}"
        path = tmp_path / f"{name}.schema.json"
        path.write_text(json.dumps(schema), encoding="utf-8")
        write_packages(tmp_path / "out", {name: build_package(path, name)})
        sys.path.insert(0, str(tmp_path / "out"))
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(tmp_path / "out"))

    return make


def schema_with(defs: dict) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Test", "$defs": defs}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The tests of a module that sets up a module- or session-scoped fixture
    of its own (a probe run over many agents, a package generated once, a
    browser) go to one xdist worker together (``--dist loadgroup``), so the
    fixture is made once; every other test is spread over the workers one by
    one, so a long file (the conformance runs) no longer sits on one."""
    grouped: dict[str, bool] = {}
    for item in items:
        module = getattr(item, "module", None)
        info = getattr(item, "_fixtureinfo", None)
        if module is None or info is None:
            continue
        name = module.__name__
        if name not in grouped:
            grouped[name] = False
        if not grouped[name]:
            grouped[name] = any(
                fixture.scope in ("module", "package", "session") and getattr(fixture.func, "__module__", None) == name
                for defs in info.name2fixturedefs.values()
                for fixture in defs
            )
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and grouped.get(module.__name__):
            item.add_marker(pytest.mark.xdist_group(name=module.__name__))


_CPU_LOG = os.environ.get("ACPGEN_TEST_CPU")


if _CPU_LOG:
    import resource

    def _cpu() -> tuple[float, float]:
        """This process's CPU seconds, and those of its children it waited for."""
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        """``ACPGEN_TEST_CPU=FILE``: append each test's CPU seconds (its
        setup, call and teardown, with the processes it waited for: ``cpu``,
        of which ``children`` in those processes) to FILE as a JSON line;
        ``python tests/cpu_top.py FILE`` ranks them."""
        own, children = _cpu()
        yield
        own_after, children_after = _cpu()
        spent, spawned = own_after - own, children_after - children
        line = json.dumps({"test": item.nodeid, "cpu": round(spent + spawned, 3), "children": round(spawned, 3)}) + "\n"
        fd = os.open(_CPU_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    """In an xdist worker under ``--dist loadgroup``: fail the run when a
    grouped test's id lacks its ``@group`` suffix, the only channel xdist
    has to its scheduler. pytest 9.2 stopped honouring that suffix
    (pytest-xdist issue 1386), and the groups were then spread over the
    workers in silence: every module fixture above (the probe matrices, the
    packages generated once) was built on each worker (the client-probe
    matrix alone is a minute of CPU). pyproject.toml pins pytest below 9.2
    for this."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            message = (
                f"--dist loadgroup is not grouping {item.nodeid} (pytest {pytest.__version__} with this "
                "pytest-xdist: see pytest-xdist issue 1386); install the pytest pyproject.toml pins"
            )
            os.write(2, f"\nconftest.py: {message}\n".encode())  # a worker's own report is lost
            raise pytest.UsageError(message)
