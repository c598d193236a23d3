"""acpgen probe --client: our example clients (v1 and v2) pass; the
seeded-fault client passes every check without a fault and fails exactly
the check each fault is named after; the official SDKs' clients (Python,
TypeScript) run under it with the results asserted below; expected
failures are reported without failing the run, and a stale one fails it.
The clients run in one event loop, a few at a time."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from acpgen.probe import Report
from acpgen.probe.client_checks import CLIENT_CHECKS, CLIENT_NAMES
from acpgen.probe.client_context import ClientContext, Link
from acpgen.probe.client_runner import listen_probe_agent, probe_client
from acpgen.probe.context import Failed
from acpgen.probe.samples import session_updates, update_kinds
from acpgen.validate.loader import load_package

from ..patience import HANG, patience
from .faulty_client import FAULTS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TS = ROOT / "tests" / "interop" / "ts"
PY = sys.executable
FAULTY = [PY, "-S", str(HERE / "faulty_client.py")]
TIMEOUT = patience(30.0)
"""Per check: generous on a loaded machine (the clients answer at once)."""

HANGING = {"cancel-request", "error-mid-turn", "disconnect-mid-turn"}
"""The faults that make their check wait out its timeout (the client goes silent)."""

HANGING_TIMEOUT = 5.0
"""The timeout of those runs: only a silent client waits it out, so no pass hinges on it."""

UNEXERCISED = {"permission-cancel", "cancel-request", "fs", "terminal"}
"""What a client that refuses permission requests and advertises no file
system or terminal (the examples, the SDK clients) leaves skipped ...

... but for ``cancel-request``: its ``$/cancel_request`` comes right behind
the permission request, so such a client may read it before it refuses the
request, and answer -32800 (a pass) instead of -32601 (not exercised)."""


def _unexercised(report: Report) -> set[str]:
    """The checks ``report`` did not pass, ``cancel-request`` counted as
    unexercised when it passed because the client answered the cancel
    (-32800) where it would have refused the request (-32601)."""
    statuses = _statuses(report)
    missed = {name for name, status in statuses.items() if status != "pass"}
    if statuses.get("cancel-request") == "pass":
        assert _reason(report, "cancel-request") == "answered -32800 (cancelled)", _shown(report)
        missed.add("cancel-request")
    else:
        assert "the client refuses session/request_permission (-32601)" in _reason(report, "cancel-request")
    return missed


@pytest.fixture(scope="module")
def packages() -> dict[int, ModuleType]:
    return {1: load_package(str(ROOT / "generated" / "acp_v1")), 2: load_package(str(ROOT / "generated" / "acp_v2"))}


def _node() -> str | None:
    node = shutil.which("node")
    return node if node is not None and (TS / "node_modules" / "@agentclientprotocol" / "sdk").is_dir() else None


RUNS: dict[str, tuple[list[str], list[str]]] = {
    "echo": ([PY, str(ROOT / "examples" / "echo_client.py"), "--", "{agent}"], []),
    "echo_v2": ([PY, str(ROOT / "examples" / "echo_client_v2.py"), "--", "{agent}"], []),
    "faulty": ([*FAULTY, "--", "{agent}"], []),
    "python-sdk": ([PY, str(HERE / "sdk_prompt_client.py"), "{agent}"], []),
    **{f"fault:{fault}": ([*FAULTY, "--fault", fault, "--", "{agent}"], [fault]) for fault in FAULTS},
    # Whole runs of two faults: the one every client run goes through (initialize) and a turn's.
    "all:client-initialize": ([*FAULTY, "--fault", "client-initialize", "--", "{agent}"], []),
    "all:permission-answer": ([*FAULTY, "--fault", "permission-answer", "--", "{agent}"], []),
}


@pytest.fixture(scope="module")
def matrix(packages: dict[int, ModuleType]) -> dict[str, Report]:
    runs = dict(RUNS)
    node = _node()
    if node is not None:
        client = str(TS / "prompt_client.mjs")
        runs["ts-sdk"] = ([node, client, "--", "{agent}"], [])
        runs["ts-sdk-v2"] = ([node, client, "--protocol", "v2", "--", "{agent}"], [])
        acpx = TS / "node_modules" / "acpx" / "dist" / "cli.js"
        if acpx.is_file():  # a third-party client, pinned in package.json; slow to start, so a few checks
            runs["acpx"] = ([node, str(acpx), "--agent={agent}", "--approve-all", "exec", "hello"], ACPX_CHECKS)

    async def run() -> dict[str, Report]:
        gate = asyncio.Semaphore(2)

        async def one(label: str, command: list[str], only: list[str]) -> tuple[str, Report]:
            async with gate:
                hangs = label.startswith("fault:") and label[6:] in HANGING
                timeout = HANGING_TIMEOUT if hangs else TIMEOUT
                report = await probe_client(command, packages, timeout=timeout, startup_timeout=HANG, only=only)
                return label, report

        return dict(await asyncio.gather(*(one(label, *args) for label, args in runs.items())))

    return asyncio.run(run())


ACPX_CHECKS = ["client-initialize", "update-unknown-kind", "tool-call-patches", "permission-answer", "fs", "terminal"]
"""The checks run against acpx (a node process of a second or more each)."""


def _statuses(report: Report) -> dict[str, str]:
    return {r.check.name: r.status for r in report.results}


def _reason(report: Report, name: str) -> str:
    (result,) = [r for r in report.results if r.check.name == name]
    return result.reason


def _shown(report: Report) -> str:
    return "\n".join(report.text())


def test_every_client_check_has_its_fault() -> None:
    assert sorted(FAULTS) == sorted(CLIENT_NAMES)


@pytest.mark.parametrize("version", [1, 2])
def test_the_samples_cover_every_update_kind_of_the_schema(packages: dict[int, ModuleType], version: int) -> None:
    schema = json.loads((ROOT / "schema" / f"v{version}" / "schema.json").read_text())
    union = schema["$defs"]["SessionUpdate"]
    kinds = [
        o["properties"]["sessionUpdate"]["const"]
        for o in union.get("oneOf", union.get("anyOf", []))
        if "const" in o.get("properties", {}).get("sessionUpdate", {})
    ]
    made, missed = session_updates(packages[version], "s")
    assert missed == []
    assert [params["update"]["sessionUpdate"] for params in made] == kinds == update_kinds(packages[version])
    for params in made:  # each valid on its own, strictly
        packages[version].decode_message({"jsonrpc": "2.0", "method": "session/update", "params": params}, strict=True)


OURS_UNEXERCISED = {"permission-cancel", "fs", "terminal"}
"""Our example clients have no ``request_permission`` of their own: their
connection's default permission policy answers, denying (the reject option),
so ``permission-answer`` is exercised, and ``cancel-request`` always gets a
result (the denial, or the ``cancelled`` outcome when the cancel came first)."""


@pytest.mark.parametrize(("label", "version"), [("echo", 1), ("echo_v2", 2)])
def test_our_example_clients_pass(matrix: dict[str, Report], label: str, version: int) -> None:
    report = matrix[label]
    statuses = _statuses(report)
    assert report.version == version
    assert report.exit_status == 0, _shown(report)
    assert {name for name, status in statuses.items() if status != "pass"} == OURS_UNEXERCISED, _shown(report)
    assert _reason(report, "permission-answer") == "selected permission-answer-reject", _shown(report)
    assert _reason(report, "cancel-request") == "answered with a result", _shown(report)


def test_the_faulty_client_without_a_fault_passes_every_check(matrix: dict[str, Report]) -> None:
    report = matrix["faulty"]
    assert set(_statuses(report).values()) == {"pass"}, _shown(report)
    assert _reason(report, "permission-answer") == "selected permission-answer-allow"
    assert _reason(report, "cancel-request") == "answered -32800 (cancelled)"
    assert _reason(report, "fs").startswith("wrote and read back ")


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_fails_its_check(matrix: dict[str, Report], fault: str) -> None:
    report = matrix[f"fault:{fault}"]
    assert _statuses(report) == {fault: "fail"}, _shown(report)
    tier = next(check.tier for check in CLIENT_CHECKS if check.name == fault)
    assert report.exit_status == (1 if tier == "MUST" else 0)


@pytest.mark.parametrize("fault", ["client-initialize", "permission-answer"])
def test_a_fault_fails_nothing_else(matrix: dict[str, Report], fault: str) -> None:
    report = matrix[f"all:{fault}"]
    failed = {name for name, status in _statuses(report).items() if status == "fail"}
    assert failed == {fault}, _shown(report)


def test_what_the_faults_are_blamed_for(matrix: dict[str, Report]) -> None:
    def reason(fault: str) -> str:
        return _reason(matrix[f"fault:{fault}"], fault)

    assert "offers protocolVersion '1', not an integer" in reason("client-initialize")
    assert "cwd is '.', not an absolute path" in reason("session-new")
    assert "for session 'not-a-session', which no session/new opened" in reason("prompt")
    assert "selected 'always', which was not offered" in reason("permission-answer")
    assert "after session/cancel the pending permission request was answered selected" in reason("permission-cancel")
    assert "the client exited with status 1 after an update sent after the turn's end" in reason("updates-after-turn")
    assert "the client cancelled a turn" in reason("slow-turn")
    assert "had neither exited nor started its agent again" in reason("disconnect-mid-turn")
    assert reason("terminal").startswith("terminal/create (advertised) was refused")
    for fault in ("update-kinds", "update-unknown-kind", "tool-call-patches"):
        assert reason(fault).startswith("the client closed the connection without answering _acpgen_probe/barrier")


class _ClosingConnection:
    """A connection to a client that closed it after ``sent`` notifications."""

    def __init__(self, sent: int) -> None:
        self.sent = sent

    async def notify(self, method: str, params: object) -> None:
        if self.sent == 0:
            raise ConnectionError("the peer closed the connection")
        self.sent -= 1

    async def request(self, method: str, params: object) -> object:
        raise ConnectionError("the peer closed the connection")


@pytest.mark.parametrize("sent", [0, 1, 2])
def test_a_client_that_closes_fails_with_one_reason_wherever_the_probe_was(packages, sent: int) -> None:
    """Whether the client's close shows while the probe still sends (the
    first or second update) or while it waits for the barrier's answer
    (both sent) is timing alone: the reason is the same."""

    async def run() -> str:
        ctx = ClientContext({1: packages[1]}, timeout=TIMEOUT, startup_timeout=TIMEOUT, command=["client"])
        link = Link(ctx, None, None)
        link.conn = _ClosingConnection(sent)
        try:
            async with link.surviving("two updates"):
                for text in ("one", "two"):
                    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
                    await link.notify("session/update", {"sessionId": "s", "update": update})
        except Failed as failed:
            return str(failed)
        raise AssertionError("the closed connection went unnoticed")

    assert (
        asyncio.run(run())
        == "the client closed the connection without answering _acpgen_probe/barrier after two updates"
    )


def test_the_python_sdk_client(matrix: dict[str, Report]) -> None:
    report = matrix["python-sdk"]
    statuses = _statuses(report)
    assert report.version == 1
    assert {name for name, status in statuses.items() if status != "pass"} == UNEXERCISED, _shown(report)
    # The SDK's connection ignores $/cancel_request: it refuses the request whenever the cancel comes
    assert "the client refuses session/request_permission (-32601)" in _reason(report, "cancel-request")


@pytest.mark.parametrize(("label", "version"), [("ts-sdk", 1), ("ts-sdk-v2", 2)])
def test_the_typescript_sdk_client(matrix: dict[str, Report], label: str, version: int) -> None:
    if label not in matrix:
        pytest.fail("node, or tests/interop/ts/node_modules, is missing: run `make install`")
    report = matrix[label]
    assert report.version == version
    assert _unexercised(report) == UNEXERCISED, _shown(report)


def test_acpx(matrix: dict[str, Report]) -> None:
    """acpx (npm, a headless ACP client) with --approve-all: it advertises a
    file system and a terminal, and serves them; it grants the first allow
    option offered."""
    if "acpx" not in matrix:
        pytest.fail("node, or acpx in tests/interop/ts/node_modules, is missing: run `make install`")
    report = matrix["acpx"]
    assert set(_statuses(report).values()) == {"pass"}, _shown(report)
    assert _reason(report, "permission-answer") == "selected permission-answer-allow"
    assert "'terminal': True" in _reason(report, "client-initialize")


def _acpgen(*args: str) -> subprocess.CompletedProcess[str]:
    acpgen = Path(sys.executable).parent / "acpgen"
    return subprocess.run([str(acpgen), *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG)


def test_an_expected_failure_does_not_fail_the_run(tmp_path: Path) -> None:
    expected = tmp_path / "expected"
    expected.write_text("# the client grants an option it was not offered\nv1/permission-answer\n")
    args = ["--only", "permission-answer", "--", *FAULTY, "--fault", "permission-answer", "--", "{agent}"]
    done = _acpgen("probe", "--client", "--expected-failures", str(expected), *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL  MUST          permission-answer (expected to fail): the client selected 'always'" in done.stdout
    unexpected = _acpgen("probe", "--client", *args)
    assert unexpected.returncode == 1


def test_a_stale_expectation_fails_the_run(tmp_path: Path) -> None:
    expected = tmp_path / "expected"
    expected.write_text("permission-answer\n")
    command = ["--only", "permission-answer", "--format", "json", "--", *FAULTY, "--", "{agent}"]
    done = _acpgen("probe", "--client", "--expected-failures", str(expected), *command)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["staleExpectations"] == ["permission-answer"]
    assert report["failed"] == 0


def test_an_expectation_for_another_version_does_not_apply(tmp_path: Path) -> None:
    expected = tmp_path / "expected"
    expected.write_text("v2/permission-answer\n")
    args = ["--only", "permission-answer", "--", *FAULTY, "--fault", "permission-answer", "--", "{agent}"]
    done = _acpgen("probe", "--client", "--expected-failures", str(expected), *args)
    assert done.returncode == 1, done.stdout + done.stderr


def test_an_unknown_check_in_the_expectations_is_a_usage_error(tmp_path: Path) -> None:
    expected = tmp_path / "expected"
    expected.write_text("no-such-check\n")
    done = _acpgen("probe", "--client", "--expected-failures", str(expected), "--", *FAULTY, "--", "{agent}")
    assert done.returncode == 2
    assert "no check is called 'no-such-check'" in done.stderr


def test_the_sdk_clients_expected_failures_are_current() -> None:
    """The SDK clients' expected failures (none known): a listed check that
    now passes would fail this run as stale."""
    expected = HERE / "sdk_clients.expected"
    command = [PY, str(HERE / "sdk_prompt_client.py"), "{agent}"]
    only = [arg for name in ("permission-answer", "update-unknown-kind") for arg in ("--only", name)]
    done = _acpgen("probe", "--client", "--expected-failures", str(expected), *only, "--", *command)
    assert done.returncode == 0, done.stdout + done.stderr


def test_probe_agent_plays_one_check_per_prompt(tmp_path: Path) -> None:
    """probe-agent is the agent a client starts: two prompts, two checks,
    the findings in the file."""
    findings = tmp_path / "findings"
    agent = [str(Path(PY).parent / "acpgen"), "probe-agent", "--findings", str(findings)]
    agent += ["--only", "prompt", "--only", "update-unknown-kind"]
    client = subprocess.run(
        [PY, str(HERE / "two_prompt_client.py"), *agent], cwd=ROOT, capture_output=True, text=True, timeout=HANG
    )
    assert client.returncode == 0, client.stderr
    text = findings.read_text()
    assert "PASS  MUST          prompt\n" in text
    assert "PASS  SHOULD        update-unknown-kind\n" in text
    assert text.rstrip().endswith("2 passed, 0 failed (0 MUST, 0 SHOULD, 0 advisory), 0 skipped")


def test_probe_agent_listens_for_websocket_and_streamable_http(packages: dict[int, ModuleType]) -> None:
    """probe-agent --listen: the runtime's server transports; the first
    connection (WebSocket) plays the first check, the second (Streamable
    HTTP) the second."""
    acp = packages[2]

    class Client(acp.Client):  # type: ignore[misc,name-defined]
        def __init__(self, conn: object) -> None:
            self.idle: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def session_update(self, params: object) -> None:
            update = getattr(params, "update", None)
            idle = isinstance(update, acp.StateUpdateSessionUpdate) and isinstance(update.value, acp.StateUpdateIdle)
            if idle and not self.idle.done():
                self.idle.set_result(None)

    async def one_prompt(connecting: object) -> None:
        async with connecting as conn:  # type: ignore[attr-defined]
            info = acp.Implementation(name="listen-test", version="1")
            await conn.initialize(acp.InitializeRequest(protocol_version=2, info=info))
            session = await conn.new_session(acp.NewSessionRequest(cwd=str(ROOT)))
            prompt = [acp.TextContentBlock(text="hello")]
            await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
            await asyncio.wait_for(conn.handler.idle, HANG)

    async def run() -> Report:
        port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        only = ["prompt", "update-unknown-kind"]
        serving = asyncio.ensure_future(
            listen_probe_agent(packages, 2, host="127.0.0.1", port=0, timeout=TIMEOUT, only=only, ready=port.set_result)
        )
        where = f"127.0.0.1:{await asyncio.wait_for(port, HANG)}"
        await one_prompt(acp.connect_agent_ws(Client, f"ws://{where}/acp"))
        await one_prompt(acp.connect_agent_http(Client, f"http://{where}/acp"))
        return await asyncio.wait_for(serving, HANG)

    report = asyncio.run(run())
    assert _statuses(report) == {"prompt": "pass", "update-unknown-kind": "pass"}, _shown(report)
    assert report.version == 2
