"""acpgen probe against the seeded-fault agent: without a fault every check
passes; each fault fails exactly the check it is named after, and nothing
else fails (the checks that need it skip, naming it). An agent that needs
authentication is skipped, not failed; one slow to start passes. The whole
matrix runs in one event loop, a few probes at a time."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from acpgen.probe import CHECKS, NAMES, Report, probe
from acpgen.validate.loader import load_package

from ..patience import HANG, patience
from .faulty_agent import FAULTS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FAULTY = [sys.executable, "-S", str(HERE / "faulty_agent.py")]
TIMEOUT = patience(30.0)
"""Per check: generous on a loaded machine (the checks answer at once); the one
hanging fault waits it out, beside the others."""


@pytest.fixture(scope="module")
def packages() -> dict[int, ModuleType]:
    return {1: load_package(str(ROOT / "generated" / "acp_v1")), 2: load_package(str(ROOT / "generated" / "acp_v2"))}


@pytest.fixture(scope="module")
def unstable_packages() -> dict[int, ModuleType]:
    return {
        1: load_package(str(ROOT / "generated" / "acp_v1_unstable")),
        2: load_package(str(ROOT / "generated" / "acp_v2_unstable")),
    }


AUTH = "probe-login"
"""The auth method faulty_agent.py --auth advertises."""

SLOW = 20.0
"""Seconds the slow agent sleeps before it reads stdin: longer than a short --timeout."""

RUNS: dict[str | None, tuple[list[str], dict[str, object]]] = {
    None: ([], {}),
    **{fault: (["--fault", fault], {}) for fault in FAULTS if fault not in ("authenticate", "session-fork")},
    "authenticate": (["--fault", "authenticate", "--auth"], {"auth_method": AUTH}),
    # session/fork is unstable: the agent serves it with --unstable, the probe with the unstable packages.
    "unstable": (["--unstable"], {"unstable": True}),
    "session-fork": (["--fault", "session-fork", "--unstable"], {"unstable": True}),
    "auth-gated": (["--auth"], {}),
    "authenticated": (["--auth"], {"auth_method": AUTH}),
    "fast": (["--fast"], {}),
    "client": (["--use-client"], {"client_capabilities": ["fs", "terminal"]}),
}
"""Each run of the matrix: the agent's arguments and the probe's options
(``timeout`` is TIMEOUT unless given; ``unstable``: with the unstable
packages)."""

SLOW_RUNS: dict[str, tuple[list[str], dict[str, object]]] = {
    # With the default options, an agent that takes 20 s to start passes.
    "slow": (["--sleep", str(SLOW)], {"timeout": None}),
    # A check's timeout shorter than the start: the start is not counted in it.
    # (initialize alone: its own work, once the agent has answered, is reading the answer.)
    "slow-short-timeout": (["--sleep", str(SLOW)], {"timeout": SLOW / 4, "only": ["initialize"]}),
}
"""Runs that sleep (no CPU), beside the others, outside the gate."""


@pytest.fixture(scope="module")
def matrix(packages: dict[int, ModuleType], unstable_packages: dict[int, ModuleType]) -> dict[str | None, Report]:
    async def run() -> dict[str | None, Report]:
        gate = asyncio.Semaphore(3)

        async def one(label: str | None, args: list[str], options: dict[str, object]) -> tuple[str | None, Report]:
            options = dict(options)
            if options.get("timeout", TIMEOUT) is None:
                del options["timeout"]  # the default
            else:
                options.setdefault("timeout", TIMEOUT)
            chosen = unstable_packages if options.pop("unstable", False) else packages
            return label, await probe(FAULTY + args, chosen, **options)  # type: ignore[arg-type]

        async def gated(label: str | None, args: list[str], options: dict[str, object]) -> tuple[str | None, Report]:
            async with gate:
                return await one(label, args, options)

        # The fault that hangs (until the timeout) first, so that the others run meanwhile.
        labels = ["cancel-request", *[label for label in RUNS if label != "cancel-request"]]
        runs = [one(label, *SLOW_RUNS[label]) for label in SLOW_RUNS]
        runs += [gated(label, *RUNS[label]) for label in labels]
        return dict(await asyncio.gather(*runs))

    return asyncio.run(run())


def _shown(report: Report) -> str:
    return "\n".join(report.text())


def test_every_check_that_can_fail_has_its_fault() -> None:
    assert sorted(FAULTS) == sorted(check.name for check in CHECKS if check.tier != "informational")


def _statuses(report: Report) -> dict[str, str]:
    return {r.check.name: r.status for r in report.results}


def _needs(name: str) -> set[str]:
    """The checks that need ``name``, directly or through another."""
    found: set[str] = set()
    for check in CHECKS:
        if name in check.needs or found & set(check.needs):
            found.add(check.name)
    return found


NOT_EXERCISED = "advertised but not exercised by any check: auth.logout (no check)"
"""What capabilities-exercised says of the agent: it advertises logout, which no check exercises."""


def _reason(report: Report, name: str) -> str:
    (result,) = [r for r in report.results if r.check.name == name]
    return result.reason


def test_the_agent_without_a_fault_passes_every_check(matrix: dict[str | None, Report]) -> None:
    report = matrix[None]
    assert report.version == 1
    statuses = _statuses(report)
    skipped = ("authenticate", "session-fork")
    assert statuses == {name: "skip" if name in skipped else "pass" for name in NAMES}, _shown(report)
    assert _reason(report, "authenticate") == "no --auth-method given (the agent advertises none)"
    assert _reason(report, "session-fork") == ("the agent does not advertise session/fork (sessionCapabilities.fork)")
    assert _reason(report, "capabilities-exercised") == NOT_EXERCISED
    assert not report.must_failed and report.exit_status == 0


def test_with_the_unstable_packages_session_fork_passes_too(matrix: dict[str | None, Report]) -> None:
    report = matrix["unstable"]
    statuses = _statuses(report)
    assert statuses == {name: "skip" if name == "authenticate" else "pass" for name in NAMES}, _shown(report)
    assert "sessionCapabilities.fork" in _reason(report, "agent-info")
    assert _reason(report, "capabilities-exercised") == NOT_EXERCISED


def test_a_capability_whose_check_did_not_run_or_skipped_is_reported(packages: dict[int, ModuleType]) -> None:
    # The agent advertises session/fork (--unstable), which the stable package has not.
    only = ["initialize", "session-new", "prompt-image", "session-fork", "capabilities-exercised"]
    report = asyncio.run(probe([*FAULTY, "--unstable"], packages, timeout=HANG, only=only))
    assert _statuses(report)["session-fork"] == "skip", _shown(report)
    said = _reason(report, "capabilities-exercised")
    assert said.startswith("advertised but not exercised by any check: auth.logout (no check); loadSession "), said
    missed = said.split(": ", 1)[1].split("; ")
    assert "loadSession (load-session did not run, load-fresh-session did not run)" in missed
    assert "mcpCapabilities.http (mcp-http did not run)" in missed
    assert (
        "sessionCapabilities.fork (session-fork was skipped: ACP v1's package has no session/fork "
        "(an unstable method: probe with --unstable))"
    ) in missed
    assert not any(entry.startswith("promptCapabilities.image") for entry in missed)  # its check ran
    assert len(missed) == 12  # the 13 advertised, but the image prompt


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_fails_its_check_and_nothing_else(matrix: dict[str | None, Report], fault: str) -> None:
    report = matrix[fault]
    baseline = _statuses(matrix[{"authenticate": "authenticated", "session-fork": "unstable"}.get(fault)])
    dependents = _needs(fault)
    expected = {name: "skip" if name in dependents else baseline[name] for name in NAMES}
    expected[fault] = "fail"
    if fault == "authenticate":  # then session/new is answered -32000: auth-gated, and so what needs it
        expected.update({name: "skip" for name in {"session-new", "malformed-params", *_needs("session-new")}})
    assert _statuses(report) == expected, _shown(report)
    (failed,) = [r for r in report.results if r.status == "fail"]
    assert failed.reason
    assert failed.transcript, "a failure carries the transcript of its exchange"
    assert report.must_failed == (failed.check.tier == "MUST")
    for result in report.results:
        if result.check.name in dependents:
            assert result.reason.startswith("needs "), _shown(report)
            assert f"needs {fault}, which failed: {failed.reason}" in result.reason or (
                "which was skipped" in result.reason
            ), result.reason


def test_dependents_name_the_check_they_need(matrix: dict[str | None, Report]) -> None:
    report = matrix["session-list"]
    (paging,) = [r for r in report.results if r.check.name == "session-list-paging"]
    assert paging.status == "skip"
    assert paging.reason == (
        "needs session-list, which failed: session/list does not list the session the agent opened ('s1')"
    )


def test_a_wrong_negotiation_is_one_failure(matrix: dict[str | None, Report]) -> None:
    report = matrix["initialize"]
    failed = [r for r in report.results if r.status == "fail"]
    assert [r.check.name for r in failed] == ["initialize"], _shown(report)
    assert failed[0].reason.startswith(
        "the agent answered version 2 with a result that is not ACP v2's (it is a valid ACP v1 initialize result): "
    )
    assert report.version is None
    assert {r.status for r in report.results if r.check.name != "before-initialize"} - {"fail"} == {"skip"}


def test_an_agent_that_needs_authentication_is_skipped_not_failed(matrix: dict[str | None, Report]) -> None:
    report = matrix["auth-gated"]
    statuses = _statuses(report)
    assert "fail" not in statuses.values(), _shown(report)
    assert report.exit_status == 0
    gated = {"session-new", *_needs("session-new")}
    # malformed-params too: this agent asks for authentication before it reads the params.
    assert {name for name, status in statuses.items() if status == "skip"} == {
        "authenticate",
        "malformed-params",
        *gated,
    }
    (new,) = [r for r in report.results if r.check.name == "session-new"]
    assert new.reason == (
        "auth required: session/new was answered -32000 (the agent's auth methods: probe-login (Probe login); "
        "authenticate first with --auth-method ID)"
    )
    assert report.auth_methods == ["probe-login (Probe login)"]
    (prompt,) = [r for r in report.results if r.check.name == "prompt"]
    assert prompt.reason == f"needs session-new, which was skipped: {new.reason}"


def test_auth_method_authenticates_first(matrix: dict[str | None, Report]) -> None:
    report = matrix["authenticated"]
    assert _statuses(report) == {**_statuses(matrix[None]), "authenticate": "pass"}, _shown(report)
    assert {name for name, status in _statuses(report).items() if status != "pass"} == {"session-fork"}
    (authenticate,) = [r for r in report.results if r.check.name == "authenticate"]
    assert authenticate.status == "pass"


def test_an_agent_slow_to_start_passes_with_the_default_options(matrix: dict[str | None, Report]) -> None:
    report = matrix["slow"]
    assert _statuses(report) == _statuses(matrix[None]), _shown(report)


def test_the_start_does_not_count_against_a_checks_timeout(matrix: dict[str | None, Report]) -> None:
    report = matrix["slow-short-timeout"]
    assert _statuses(report) == {"initialize": "pass"}, _shown(report)


def test_a_hanging_request_fails_on_the_timeout_and_the_agent_is_started_again(
    matrix: dict[str | None, Report],
) -> None:
    report = matrix["cancel-request"]
    (failed,) = [r for r in report.results if r.status == "fail"]
    assert failed.reason == f"no answer within {TIMEOUT:g} s (the timeout)"
    after = NAMES[NAMES.index("cancel-request") + 1 :]
    baseline = _statuses(matrix[None])
    assert all(r.status == baseline[r.check.name] for r in report.results if r.check.name in after)


def test_a_cancel_that_lands_after_the_turn_ended_is_not_exercised(matrix: dict[str | None, Report]) -> None:
    report = matrix["fast"]
    expected = {**_statuses(matrix[None]), "cancel": "skip"}
    assert _statuses(report) == expected, _shown(report)
    (cancel,) = [r for r in report.results if r.check.name == "cancel"]
    assert cancel.reason.startswith("not exercised: the turn ended "), cancel.reason


def test_the_client_side_serves_a_sandboxed_file_system_and_terminal(matrix: dict[str | None, Report]) -> None:
    # The agent writes, reads back, runs a command in the session's directory
    # and expects what lies outside it refused; anything else fails its prompt.
    report = matrix["client"]
    assert _statuses(report) == _statuses(matrix[None]), _shown(report)


def test_a_reply_to_a_notification_is_named_as_such(matrix: dict[str | None, Report]) -> None:
    report = matrix["notification-reply"]
    (failed,) = [r for r in report.results if r.status == "fail"]
    assert failed.reason.startswith(
        "replied to the notification `session/cancel` (a response with id null): a notification gets no response; "
        "replied to the notification `$/cancel_request` "
    ), failed.reason


def test_the_text_report_shows_what_the_probe_sent_and_the_end_of_a_long_exchange(
    matrix: dict[str | None, Report],
) -> None:
    shown = list(matrix["cancel"].text())
    start = shown.index("      transcript:") + 1
    end = next(i for i in range(start, len(shown)) if not shown[i].startswith("        "))
    transcript = shown[start:end]
    sent = [line for line in transcript if line.startswith("        -> ")]
    methods = [line.split('"method": ')[1].split(",")[0] for line in sent]
    assert methods == ['"session/prompt"', '"session/cancel"', '"probe/barrier"']
    assert any(line.startswith("        ... ") and line.endswith(" message(s)") for line in transcript)
    assert (
        transcript[-1].startswith('        <- {"jsonrpc": "2.0", "id": ')
        and '"stopReason": "end_turn"' in transcript[-1]
    )


def test_an_agent_that_never_answers_ends_the_probe(packages: dict[int, ModuleType]) -> None:
    silent = [sys.executable, "-S", "-c", "import time; time.sleep(60)"]
    report = asyncio.run(probe(silent, packages, timeout=0.5, startup_timeout=0.5))
    statuses = {r.check.name: r.status for r in report.results}
    assert statuses["initialize"] == "fail"
    assert statuses["before-initialize"] == "fail"
    assert {statuses[name] for name in NAMES if name not in ("initialize", "before-initialize")} == {"skip"}
    assert report.must_failed


def test_an_agent_that_writes_no_json(packages: dict[int, ModuleType]) -> None:
    noise = [sys.executable, "-S", "-c", "import sys\nfor line in sys.stdin: print('hello', flush=True)"]
    report = asyncio.run(probe(noise, packages, timeout=HANG, only=["initialize"]))
    (result,) = report.results
    assert result.status == "fail"
    assert "not JSON: 'hello'" in result.reason
    # The wait ends at the first such line, not at the timeout.
    assert result.reason.startswith("the agent's output is not JSON-RPC"), result.reason


def test_a_command_that_cannot_start(packages: dict[int, ModuleType], tmp_path: Path) -> None:
    report = asyncio.run(
        probe([str(tmp_path / "missing")], packages, timeout=1, startup_timeout=1, only=["initialize"])
    )
    (result,) = report.results
    assert result.status == "fail"
    assert result.reason.startswith("cannot start the agent:")


# ------------------------------------------------------------------ the command


def _acpgen(*args: str) -> subprocess.CompletedProcess[str]:
    acpgen = Path(sys.executable).parent / "acpgen"
    return subprocess.run([str(acpgen), "probe", *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG)


def test_a_failed_must_exits_1_and_shows_the_transcript() -> None:
    done = _acpgen("--only", "unknown-method", "--", *FAULTY, "--fault", "unknown-method")
    assert done.returncode == 1, done.stderr
    assert "FAIL  MUST          unknown-method: an unknown method was answered" in done.stdout
    assert '-> {"jsonrpc": "2.0", "id": 2, "method": "probe/no_such_method"' in done.stdout
    assert done.stdout.rstrip().endswith("0 passed, 1 failed (1 MUST, 0 SHOULD, 0 advisory), 0 skipped")


def test_a_failed_should_exits_0_and_json_reports_it() -> None:
    done = _acpgen("--format", "json", "--only", "before-initialize", "--", *FAULTY, "--fault", "before-initialize")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (result,) = report["results"]
    assert (result["check"], result["tier"], result["status"]) == ("before-initialize", "SHOULD", "fail")
    assert result["transcript"][0]["message"]["method"] == "session/new"
    assert result["transcript"][1]["direction"] == "agent_to_client"
    assert report["protocolVersion"] is None
    assert (report["passed"], report["failed"], report["skipped"]) == (0, 1, 0)
    assert report["failedByTier"] == {"MUST": 0, "SHOULD": 1, "advisory": 0, "informational": 0}
    assert report["exitStatus"] == 0


def test_a_failed_advisory_check_exits_0() -> None:
    args = ("--only", "initialize-string-version", "--", *FAULTY, "--fault", "initialize-string-version")
    done = _acpgen(*args)
    assert done.returncode == 0, done.stderr
    assert 'FAIL  advisory      initialize-string-version: initialize with protocolVersion "1" was refused' in (
        done.stdout
    )


def test_protocol_version_offers_that_version_alone() -> None:
    done = _acpgen("--format", "json", "--protocol-version", "1", "--only", "initialize", "--", *FAULTY)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    sent = report["results"][0]
    assert report["protocolVersion"] == 1 and sent["status"] == "pass"
    # The agent answers 2 when asked for 2 with this fault; asked for 1 alone, it negotiates 1.
    done = _acpgen("--protocol-version", "1", "--only", "initialize", "--", *FAULTY, "--fault", "initialize")
    assert done.returncode == 0, done.stdout
    assert "PASS  MUST          initialize\n" in done.stdout


def test_packages_are_read_from_the_directory_given(tmp_path: Path) -> None:
    done = _acpgen("--packages", "generated", "--only", "initialize", "--", *FAULTY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"acpgen probe: {' '.join(FAULTY)} (ACP v1)\nPASS  MUST          initialize\n")
    done = _acpgen("--packages", str(tmp_path), "--", *FAULTY)
    assert done.returncode == 2
    assert done.stderr.startswith("acpgen: error: ") and "acp_v1" in done.stderr


def test_unstable_updates_are_checked_against_the_unstable_schema() -> None:
    stable = _acpgen("--only", "prompt", "--", *FAULTY, "--unstable")
    assert stable.returncode == 1
    assert "FAIL  MUST          prompt: invalid session/update at /params/update" in stable.stdout
    unstable = _acpgen("--unstable", "--only", "prompt", "--", *FAULTY, "--unstable")
    assert unstable.returncode == 0, unstable.stdout
    assert "PASS  MUST          prompt\n" in unstable.stdout


def test_an_unknown_check_is_a_usage_error() -> None:
    done = _acpgen("--only", "nonsense", "--", *FAULTY)
    assert done.returncode == 2
    assert done.stderr.startswith("acpgen: error: unknown check(s): nonsense")


# ------------------------------------------------------------------ hostile agents

INITIALIZED = '{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}'


def test_empty_capability_objects_advertise_nothing(packages: dict[int, ModuleType]) -> None:
    # As the SDKs write their defaults: objects that hold capabilities, empty; loadSession false.
    capabilities = {"loadSession": False, "promptCapabilities": {}, "sessionCapabilities": {}, "auth": {}}
    answer = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": capabilities}}
    )
    script = f"import sys\nsys.stdin.readline()\nprint({answer!r}, flush=True)\nsys.stdin.read()\n"
    only = ["initialize", "capabilities-exercised"]
    report = asyncio.run(probe([sys.executable, "-S", "-c", script], packages, timeout=HANG, only=only))
    assert _statuses(report) == {"initialize": "pass", "capabilities-exercised": "pass"}, _shown(report)
    assert _reason(report, "capabilities-exercised") == "the agent advertises no capability"


def test_a_response_whose_id_is_a_list_is_a_problem_not_a_crash(packages: dict[int, ModuleType]) -> None:
    script = (
        "import sys\n"
        "sys.stdin.readline()\n"
        'print(\'{"jsonrpc": "2.0", "id": [1], "result": {}}\', flush=True)\n'
        f"print({INITIALIZED!r}, flush=True)\n"
        "sys.stdin.read()\n"
    )
    report = asyncio.run(probe([sys.executable, "-S", "-c", script], packages, timeout=HANG, only=["initialize"]))
    (result,) = report.results
    assert report.version == 1
    assert result.status == "fail"
    assert result.reason == "a response to id [1], which the probe has not sent or was already answered"


def test_an_agent_that_floods_is_held_in_bounded_memory(
    packages: dict[int, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    from acpgen.probe import peer as peer_module

    monkeypatch.setattr(peer_module, "KEPT_NOTIFICATIONS", 100)
    monkeypatch.setattr(peer_module, "KEPT_LINES", 50)
    monkeypatch.setattr(peer_module, "KEPT_PROBLEMS", 10)
    update = '{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {}}}'
    script = f"import sys\nsys.stdout.write(({update!r} + chr(10)) * 20000)\n"

    async def run() -> peer_module.Peer:
        peer = peer_module.Peer([sys.executable, "-S", "-c", script], packages)
        peer.package = packages[1]
        await peer.start()
        while peer.gone is None:
            await asyncio.sleep(0.05)
        await peer.close()
        return peer

    peer = asyncio.run(run())
    assert peer.seen == 20000
    assert len(peer.notifications) <= 100
    record = peer.records["setup"]
    assert len(record.lines) == 50 and record.dropped_lines == 20000 - 50
    assert len(record.problems) == 10 and record.dropped_problems == 20000 - 10


def _vendored(root: Path, *names: str) -> Path:
    """A project whose [tool.acpgen] generates to vendor/, holding ``names``."""
    (root / "pyproject.toml").write_text(
        '[tool.acpgen]\nout = "vendor"\n\n[[tool.acpgen.packages]]\nschema = "s.json"\npackage = "acp_v1"\n',
        encoding="utf-8",
    )
    (root / "vendor").mkdir()
    for name in names:
        shutil.copytree(ROOT / "generated" / name, root / "vendor" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _probe_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    acpgen = Path(sys.executable).parent / "acpgen"
    return subprocess.run([str(acpgen), "probe", *args], cwd=cwd, capture_output=True, text=True, timeout=HANG)


def test_a_v1_agent_is_probed_with_only_the_v1_package_found_where_generate_writes(tmp_path: Path) -> None:
    root = _vendored(tmp_path, "acp_v1")
    done = _probe_in(root, "--only", "initialize", "--", *FAULTY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"acpgen probe: {' '.join(FAULTY)} (ACP v1)\nPASS  MUST          initialize\n")
    (note,) = done.stderr.splitlines()
    assert note.startswith("acpgen probe: protocol version 2 is not checked: acp_v2: no such generated package: ")
    assert str((root / "vendor/acp_v2").resolve()) in note and note.endswith("with --packages")
    # --packages still chooses: the same, from a directory given.
    done = _probe_in(tmp_path, "--packages", "vendor", "--only", "initialize", "--", *FAULTY)
    assert done.returncode == 0, done.stderr
    assert (
        "protocol version 2 is not checked: acp_v2: no such generated package: not in vendor/acp_v2 (--packages)"
        in (done.stderr)
    )


def test_no_package_at_all_names_the_option_and_where_it_looked(tmp_path: Path) -> None:
    root = _vendored(tmp_path)
    done = _probe_in(root, "--", *FAULTY)
    assert done.returncode == 2
    assert done.stderr.startswith("acpgen: error: acp_v1: no such generated package: not in ")
    for name in ("acp_v1", "acp_v2"):
        assert str((root / "vendor" / name).resolve()) in done.stderr
    assert "give the directory holding the generated packages with --packages" in done.stderr
    assert done.stdout == ""


def test_an_expected_failure_of_an_agent_is_reported_without_failing_the_run(tmp_path: Path) -> None:
    expected = tmp_path / "expected"
    expected.write_text("# the agent answers unknown methods wrongly\nunknown-method\n")
    args = ("--only", "unknown-method", "--", *FAULTY)
    done = _acpgen("--expected-failures", str(expected), *args, "--fault", "unknown-method")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL  MUST          unknown-method (expected to fail): an unknown method was answered" in done.stdout
    stale = _acpgen("--expected-failures", str(expected), *args)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "stale expectation: unknown-method is listed as an expected failure but passed" in stale.stdout
