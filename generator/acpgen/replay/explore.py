"""The interleaving explorer: one exchange, many delivery schedules, and the
first schedule whose outcome differs.

A scenario is a transcript (recorded, or a small script: see
:func:`~.transcript.load_transcript`) whose agent side is played, in
process, to a client connection under test (:class:`ClientUnderTest`: the
generated package's, :class:`GeneratedClient`, or the official Python
SDK's, :class:`PythonSdkClient`). The client's application is scripted
too: it sends the recorded client messages in order, each once it has seen
what the recording has before it, renders each ``session/update`` in a
handler that awaits once (as a UI does) before it records it, and answers
each request of the agent (``session/request_permission``, ``fs/*`` ...) in
its handler with the recorded answer, after one await of its own (a dialog,
a read).

The agent's messages are delivered under each :class:`Schedule`:

- ``baseline``: one at a time, the client left to go idle (every task run
  until none is ready) before the next;
- ``together``: a message handed over with the one before it, no pause
  between (what one read of a pipe holding both lines gives): each gap of
  the recording in turn, then all at once;
- ``swap``: two neighbours exchanged where JSON-RPC and ACP let them come
  in either order (two responses; an update and the answer to a request
  other than ``session/new``, ``session/load``, ``session/resume`` and
  ``session/prompt``, whose updates the spec orders);
- ``cancel``: for each turn the recording does not cancel itself and in
  which the agent sends no request, the client's ``session/cancel`` after
  its 0th, 1st ... update; the scripted agent then drops the rest of the
  turn and answers ``cancelled``.

The outcome of a schedule is what the application saw: each answer (result,
or error code), the session fold it had rendered when each answer reached it,
and its fold at the end; and for each request of the agent, the fold the
application had rendered when the request reached its handler and the
client's answer as it went out on the wire. Two checks, in this order of
schedules:

1. against the wire: when an answer, or a request of the agent, reaches the
   application, its fold must be the fold of every message delivered before
   it (what PR #129 of the Python SDK and issue #128 of the TypeScript SDK
   are about);
2. against the baseline: every ``together`` and ``swap`` schedule must give
   the baseline's answers, answers to the agent's requests and final fold (a
   ``together`` schedule, its folds at each answer and request too).

The first schedule failing either is the result, with the JSON path of each
difference.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol

from .agent import AgentReplayer, _id
from .fold import WireFold, package_for
from .match import Difference, Normalizer
from .script import plain_diff
from .transcript import AGENT, CLIENT, Record, Transcript, load_transcript

IDLE_STEPS = 50
"""Loop turns (``asyncio.sleep(0)``) that make the client idle: far more
than the handful any connection here takes to hand a message on."""
PATIENCE = 30.0
"""How long the scripted application waits for what the recording has
before its next message (only a client that loses a message waits it)."""
ORDERED = frozenset({"session/new", "session/load", "session/resume", "session/prompt"})
"""Requests whose answer the spec orders with the session's updates."""


# ------------------------------------------------------------------ clients

Answer = Callable[[str, Any], Awaitable[tuple[str, Any]]]
"""The application's answer to a request of the agent (its method and
params, JSON): ``("result", JSON)`` or ``("error", {"code", "message",
"data"?})``."""


class ClientUnderTest(Protocol):
    """A client connection, driven through its own API."""

    name: str

    async def start(
        self,
        receive: Callable[[], Awaitable[dict[str, Any] | None]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
        render: Callable[[dict[str, Any]], Awaitable[None]],
        answer: Answer,
    ) -> None:
        """Start the connection over ``receive``/``send`` (whole messages);
        its ``session/update`` handler awaits ``render(params)``, and its
        handler of each request of the agent answers what
        ``answer(method, params)`` gives (params and result as JSON)."""

    async def call(self, method: str, params: Any) -> tuple[str, Any]:
        """Send a request with the connection's API for ``method``; its
        answer: ``("result", JSON)`` or ``("error", code)``."""

    async def notify(self, method: str, params: Any) -> None: ...

    async def close(self) -> None: ...


class GeneratedClient:
    """The client connection of a generated package (``acp_v1`` ...)."""

    def __init__(self, package: ModuleType) -> None:
        self.package = package
        self.name = f"{package.__name__} ClientSideConnection"
        self.conn: Any = None

    async def start(
        self,
        receive: Callable[[], Awaitable[dict[str, Any] | None]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
        render: Callable[[dict[str, Any]], Awaitable[None]],
        answer: Answer,
    ) -> None:
        import json

        package = self.package
        asked: dict[str, tuple[str, Any]] = {
            info.request.handler: (name, info.request)
            for name, info in package.METHODS.items()
            if info.request is not None and info.request.side == "client"
        }

        class Transport:
            closed = False

            async def receive(self) -> bytes | None:
                message = await receive()
                return None if message is None else json.dumps(message).encode()

            async def send(self, data: bytes) -> None:
                await send(json.loads(data))

            def is_closing(self) -> bool:
                return self.closed

            async def close(self) -> None:
                self.closed = True

        class App:
            async def session_update(self, params: Any) -> None:
                await render(package.encode(params))

            def __getattr__(self, name: str) -> Callable[[Any], Awaitable[Any]]:
                """The handler of each request of the agent."""
                if name not in asked:
                    raise AttributeError(name)
                method, info = asked[name]

                async def handle(params: Any) -> Any:
                    kind, value = await answer(method, package.encode(params))
                    if kind == "error":
                        data = (value["data"],) if "data" in value else ()
                        raise package.RequestError(value["code"], value.get("message", ""), *data)
                    return package.decode(info.result_name, value)

                return handle

        self.conn = package.ClientSideConnection(lambda conn: App(), Transport(), check_handler=False)
        self.conn.start()

    def _info(self, method: str) -> Any:
        return self.package.METHODS.get(method)

    async def call(self, method: str, params: Any) -> tuple[str, Any]:
        info = self._info(method)
        try:
            if info is not None and info.request is not None:
                request = self.package.decode(info.request.params_name, params)
                result = await getattr(self.conn, info.request.handler)(request)
                return "result", self.package.encode(result)
            return "result", await self.conn.request(method, params)
        except self.package.RequestError as error:
            return "error", error.code

    async def notify(self, method: str, params: Any) -> None:
        info = self._info(method)
        if info is not None and info.notification is not None:
            await getattr(self.conn, info.notification.handler)(
                self.package.decode(info.notification.params_name, params)
            )
        else:
            await self.conn.notify(method, params)

    async def close(self) -> None:
        await self.conn.close()


class PythonSdkClient:
    """The official Python SDK's ``ClientSideConnection`` (PyPI
    ``agent-client-protocol``, ACP v1), driven through its typed methods."""

    CALLS: ClassVar[dict[str, str]] = {
        "initialize": "initialize",
        "authenticate": "authenticate",
        "session/new": "new_session",
        "session/load": "load_session",
        "session/set_mode": "set_session_mode",
        "session/set_config_option": "set_config_option",
        "session/prompt": "prompt",
        "session/cancel": "cancel",
    }
    ASKED: ClassVar[dict[str, tuple[str, str, str]]] = {
        "session/request_permission": ("request_permission", "RequestPermissionRequest", "RequestPermissionResponse"),
        "fs/read_text_file": ("read_text_file", "ReadTextFileRequest", "ReadTextFileResponse"),
        "fs/write_text_file": ("write_text_file", "WriteTextFileRequest", "WriteTextFileResponse"),
    }
    """The agent's requests its application answers: the SDK's handler, the
    params and the result models."""

    def __init__(self, package: ModuleType | None = None) -> None:
        from importlib import metadata

        self.name = f"agent-client-protocol {metadata.version('agent-client-protocol')} ClientSideConnection"
        self.conn: Any = None

    async def start(
        self,
        receive: Callable[[], Awaitable[dict[str, Any] | None]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
        render: Callable[[dict[str, Any]], Awaitable[None]],
        answer: Answer,
    ) -> None:
        import warnings

        import acp.schema as schema

        class Transport:
            async def send(self, message: dict[str, Any]) -> None:
                await send(message)

            async def receive(self) -> dict[str, Any] | None:
                return await receive()

            async def close(self) -> None:
                pass

        class App:
            async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
                dumped = update.model_dump(mode="json", by_alias=True, exclude_none=True)
                await render({"sessionId": session_id, "update": dumped})

        def handler(method: str, params_model: Any, result_model: Any) -> Callable[..., Awaitable[Any]]:
            async def handle(**fields: Any) -> Any:
                from acp import RequestError

                known = {key: value for key, value in fields.items() if key in params_model.model_fields}
                params = params_model(**known).model_dump(mode="json", by_alias=True, exclude_none=True)
                kind, value = await answer(method, params)
                if kind == "error":
                    raise RequestError(value["code"], value.get("message", ""), value.get("data"))
                return result_model.model_validate(value)

            return handle

        app = App()
        for method, (name, params_name, result_name) in self.ASKED.items():
            setattr(app, name, handler(method, getattr(schema, params_name), getattr(schema, result_name)))

        with warnings.catch_warnings():
            # the SDK's own constructor, which connect_to_agent wraps: it takes a message transport
            warnings.simplefilter("ignore", DeprecationWarning)
            from acp import ClientSideConnection

            self.conn = ClientSideConnection(lambda conn: app, Transport())

    async def _typed(self, method: str, params: Any) -> Any:
        import acp.schema as schema

        name = self.CALLS.get(method)
        if name is None:
            return await self.conn.ext_method(method.removeprefix("_"), params)
        function = getattr(self.conn, name)
        model = getattr(function, "__param_model__", None)
        if model is None:
            models = {
                "initialize": "InitializeRequest",
                "new_session": "NewSessionRequest",
                "load_session": "LoadSessionRequest",
                "set_session_mode": "SetSessionModeRequest",
                "prompt": "PromptRequest",
                "cancel": "CancelNotification",
                "authenticate": "AuthenticateRequest",
            }
            model = getattr(schema, models[name])
        value = model.model_validate(params)
        fields = {key: getattr(value, key) for key in model.model_fields if key != "field_meta"}
        return await function(**fields)

    async def call(self, method: str, params: Any) -> tuple[str, Any]:
        from acp import RequestError

        try:
            result = await self._typed(method, params)
        except RequestError as error:
            return "error", error.code
        if hasattr(result, "model_dump"):
            result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return "result", result

    async def notify(self, method: str, params: Any) -> None:
        await self._typed(method, params)

    async def close(self) -> None:
        await self.conn.close()


# ------------------------------------------------------------------ schedules


@dataclass(frozen=True)
class Schedule:
    """How the agent's messages are delivered (see the module's docstring)."""

    name: str
    together: frozenset[int] = frozenset()
    """Recorded agent messages handed over with the one before them."""
    all_together: bool = False
    swaps: frozenset[int] = frozenset()
    """Recorded agent messages exchanged with the agent message after them."""
    cancel: tuple[int, int] | None = None
    """(the prompt's record index, the updates the client sees before it
    cancels)"""

    @property
    def kind(self) -> str:
        return self.name.split(" ", 1)[0]


def schedules(transcript: Transcript) -> list[Schedule]:
    """Every schedule the explorer runs for ``transcript``, in order."""
    records = transcript.records
    out = [Schedule("baseline")]
    gaps = [
        r.index for previous, r in itertools.pairwise(records) if r.direction == AGENT and previous.direction == AGENT
    ]
    out += [Schedule(f"together line {records[i].line}", together=frozenset({i})) for i in gaps]
    out.append(Schedule("together all", all_together=True))
    for previous, r in itertools.pairwise(records):
        if previous.direction == AGENT and r.direction == AGENT and _swappable(transcript, previous, r):
            out.append(Schedule(f"swap lines {previous.line}-{r.line}", swaps=frozenset({previous.index})))
    if transcript.protocol_version == 1:
        for prompt, updates in _turns(transcript):
            for seen in range(updates + 1):
                line = records[prompt].line
                out.append(Schedule(f"cancel line {line} after {seen}", cancel=(prompt, seen)))
                out.append(
                    Schedule(f"cancel line {line} after {seen} together", cancel=(prompt, seen), all_together=True)
                )
    return out


def _answered_method(transcript: Transcript, response: Record) -> str | None:
    for record in transcript.records[: response.index]:
        if (
            record.direction != response.direction
            and record.is_request
            and _id(record.message["id"]) == _id(response.message.get("id"))
        ):
            return record.method
    return None


def _swappable(transcript: Transcript, first: Record, second: Record) -> bool:
    if first.is_response and second.is_response:
        return True
    pair = (first, second)
    responses = [r for r in pair if r.is_response]
    updates = [r for r in pair if r.method == "session/update"]
    if len(responses) == 1 and len(updates) == 1:
        return _answered_method(transcript, responses[0]) not in ORDERED
    return False


def _turns(transcript: Transcript) -> list[tuple[int, int]]:
    """(prompt record index, its updates) of each v1 turn the recording does
    not cancel and in which the agent sends no request (the scripted
    application answers it as recorded, not as a cancelled turn asks)."""
    turns = []
    records = transcript.records
    for prompt in records:
        if prompt.method != "session/prompt" or not prompt.is_request:
            continue
        updates = 0
        cancelled = False
        for record in records[prompt.index + 1 :]:
            if record.method == "session/cancel" or (record.direction == AGENT and record.is_request):
                cancelled = True
            if (
                record.direction == AGENT
                and record.is_response
                and _id(record.message["id"]) == _id(prompt.message["id"])
            ):
                break
            if record.method == "session/update":
                updates += 1
        if not cancelled:
            turns.append((prompt.index, updates))
    return turns


# ------------------------------------------------------------------ running


@dataclass
class Outcome:
    """What the application saw under one schedule."""

    answers: list[list[Any]] = field(default_factory=list)
    """``[method, "result" | "error", value]`` per request, in sending order."""
    at_answer: list[dict[str, Any]] = field(default_factory=list)
    """The application's fold when each answer reached it."""
    wire_at_answer: list[dict[str, Any]] = field(default_factory=list)
    """The fold of everything delivered before each answer."""
    replies: list[list[Any]] = field(default_factory=list)
    """``[method, "result" | "error", value]`` per request of the agent, in
    recording order: the client's answer as it went out."""
    at_request: list[dict[str, Any]] = field(default_factory=list)
    """The application's fold when each request of the agent reached its
    handler, in recording order ..."""
    wire_at_request: list[dict[str, Any]] = field(default_factory=list)
    """... and the fold of everything delivered before that request."""
    final: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass
class Divergence:
    schedule: Schedule
    against: str
    """``the wire`` or ``the baseline``."""
    differences: list[Difference]

    def __str__(self) -> str:
        head = f"schedule {self.schedule.name!r} differs from {self.against}:"
        return "\n".join([head, *(f"    {self.say(d)}" for d in self.differences[:20])])

    def say(self, difference: Difference) -> str:
        """One difference: what ``against`` has, and what the application saw."""
        expected = self.against.removeprefix("the ")
        if difference.missing == "live":
            return f"{difference.path}: {expected} {_dump(difference.recorded)}, the application none"
        if difference.missing == "recorded":
            return f"{difference.path}: {expected} none, the application {_dump(difference.live)}"
        return f"{difference.path}: {expected} {_dump(difference.recorded)}, the application {_dump(difference.live)}"


def _dump(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "\u2026"


@dataclass
class ExploreResult:
    client: str
    runs: int
    """Schedules run (the first divergence ends the exploration)."""
    total: int
    """Schedules there are."""
    seconds: float
    divergence: Divergence | None = None


class _Run:
    """One schedule's run of the scenario against one client."""

    def __init__(
        self,
        transcript: Transcript,
        package: ModuleType,
        client: ClientUnderTest,
        schedule: Schedule,
        patience: float = PATIENCE,
    ) -> None:
        self.patience = patience
        self.transcript = transcript
        self.package = package
        self.client = client
        self.schedule = schedule
        self.replayer = AgentReplayer(transcript, "compressed", package)
        self.normalize = Normalizer(package)
        self.wire = WireFold(package)
        self.app = WireFold(package)
        self.incoming: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.outbox: list[tuple[Record | None, dict[str, Any]]] = []
        self.wake = asyncio.Event()
        self.changed = asyncio.Event()
        self.outcome = Outcome()
        self.rendered = 0
        self.dropped = 0
        self.answered: set[int] = set()
        """Recorded client requests whose answer reached the application."""
        self.wire_answers: dict[tuple[str, Any], dict[str, Any]] = {}
        """The wire's fold when each answer was delivered, by recorded id."""
        self.our_cancel = False
        """Whether the application sent the schedule's cancel."""
        self.cancelled_turn = False
        self.turn_updates = 0
        self.cancel_sent = asyncio.Event()
        records = transcript.records
        self.agent_requests = [r for r in records if r.direction == AGENT and r.is_request]
        """The agent's requests, in recording order."""
        self.recorded_replies: dict[int, Record] = {}
        """The client's recorded answer to each agent request, by its index."""
        for request in self.agent_requests:
            for r in records[request.index + 1 :]:
                if r.direction == CLIENT and r.is_response and _id(r.message.get("id")) == _id(request.message["id"]):
                    self.recorded_replies[request.index] = r
                    break
        self.asked: list[Record] = []
        """The agent's requests delivered and not yet handed to the
        application's handler, in delivery order."""
        self.in_flight: dict[tuple[str, Any], Record] = {}
        """The agent's requests delivered and not yet answered, by their id."""
        self.handled: set[int] = set()
        """Recorded agent requests the application's handler answered."""
        self.at_request: dict[int, dict[str, Any]] = {}
        self.wire_at_request: dict[int, dict[str, Any]] = {}
        self.replies: dict[int, list[Any]] = {}

    # the agent side ---------------------------------------------------

    async def from_client(self, message: dict[str, Any]) -> None:
        self.wire.add(CLIENT, message)
        request = self.in_flight.pop(_id(message.get("id")), None) if "method" not in message else None
        if request is not None:
            kind = "result" if "result" in message else "error"
            value = message.get(kind)
            if kind == "result":
                value = self.normalize({"jsonrpc": "2.0", "id": 0, "result": value}, request.method)["result"]
            elif isinstance(value, dict):
                value = value.get("code")
            self.replies[request.index] = [request.method, kind, value]
        if self.our_cancel and not self.cancelled_turn and message.get("method") == "session/cancel":
            self.cancelled_turn = True
            self.wake.set()
            return
        before = len(self.replayer.sent_records)
        batch = self.replayer.receive(message)
        records: list[Record | None] = list(self.replayer.sent_records[before:])
        records += [None] * (len(batch) - len(records))
        pairs = [(record, sent) for record, (_delay, sent) in zip(records, batch, strict=True)]
        for n in range(len(pairs) - 1):
            record = pairs[n][0]
            if record is not None and record.index in self.schedule.swaps:
                pairs[n], pairs[n + 1] = pairs[n + 1], pairs[n]
        self.outbox += pairs
        self.wake.set()

    async def deliver(self) -> None:
        prompt = self.schedule.cancel[0] if self.schedule.cancel is not None else None
        prompt_id = self.transcript.records[prompt].message["id"] if prompt is not None else None
        turn_end = len(self.transcript.records)
        if prompt is not None:
            for r in self.transcript.records[prompt + 1 :]:
                if r.direction == AGENT and r.is_response and _id(r.message["id"]) == _id(prompt_id):
                    turn_end = r.index
                    break
        while True:
            while not self.outbox:
                self.wake.clear()
                await self.wake.wait()
            record, message = self.outbox.pop(0)
            if record is None and message.get("method") == "$/end":
                self.incoming.put_nowait(None)
                return
            if not self.schedule.all_together and (record is None or record.index not in self.schedule.together):
                await _idle()
            if prompt is not None and self.cancelled_turn and record is not None and prompt < record.index <= turn_end:
                if record.method == "session/update" and _id(prompt_id) not in self.wire_answers:
                    self.dropped += 1
                    self.changed.set()
                    continue
                if record.is_response and _id(record.message["id"]) == _id(prompt_id):
                    message = {**message, "result": {"stopReason": "cancelled"}}
            self.wire.add(AGENT, message)
            if record is not None and record.is_response:
                self.wire_answers[_id(record.message["id"])] = self.wire.snapshot()
            elif record is not None and record.is_request:
                self.wire_at_request[record.index] = self.wire.snapshot()
                self.asked.append(record)
                self.in_flight[_id(message["id"])] = record
            self.incoming.put_nowait(message)

    # the application --------------------------------------------------

    async def render(self, params: dict[str, Any]) -> None:
        await asyncio.sleep(0)  # the application's own await (a repaint, a write)
        self.app.add(AGENT, {"jsonrpc": "2.0", "method": "session/update", "params": params})
        self.rendered += 1
        self.turn_updates += 1
        self.changed.set()

    async def answer(self, method: str, params: Any) -> tuple[str, Any]:
        """The application's handler of a request of the agent: the recorded
        answer, after one await of its own (a dialog, a read)."""
        seen = self.app.snapshot()
        record = next((r for r in self.asked if r.method == method), None)
        if record is None:
            self.outcome.errors.append(f"the application was asked {method}, which the agent did not send")
            return "error", {"code": -32603, "message": f"acpgen explore: no {method} was sent"}
        self.asked.remove(record)
        self.at_request[record.index] = seen
        await asyncio.sleep(0)
        reply = self.recorded_replies.get(record.index)
        self.handled.add(record.index)
        self.changed.set()
        if reply is None:
            return "error", {"code": -32603, "message": f"acpgen explore: the recording has no answer to {method}"}
        if "result" in reply.message:
            return "result", reply.message["result"]
        return "error", reply.message.get("error")

    async def request(self, record: Record) -> None:
        message = record.message
        self.app.add(CLIENT, message)
        kind, value = await self.client.call(str(record.method), message.get("params"))
        answer = self.normalize({"jsonrpc": "2.0", "id": 0, kind: value}, record.method) if kind == "result" else None
        value = answer["result"] if answer is not None else value
        self.app.add(AGENT, {"jsonrpc": "2.0", "id": message["id"], kind: value})
        self.outcome.answers.append([record.method, kind, value])
        self.outcome.at_answer.append(self.app.snapshot())
        self.outcome.wire_at_answer.append(self.wire_answers.get(_id(message["id"]), {}))
        self.answered.add(record.index)
        self.changed.set()

    def _ready(self, before: int) -> bool:
        """Whether the application has seen what the recording has before
        its message at ``before``."""
        records = self.transcript.records[:before]
        updates = sum(1 for r in records if r.direction == AGENT and r.method == "session/update")
        if self.rendered + self.dropped < updates:
            return False
        answered = {_id(r.message["id"]) for r in records if r.direction == AGENT and r.is_response}
        if not all(r.index in self.handled for r in records if r.direction == AGENT and r.is_request):
            return False
        return all(
            request.index in self.answered
            for request in records
            if request.direction == CLIENT and request.is_request and _id(request.message["id"]) in answered
        )

    async def _until(self, test: Callable[[], bool], what: str) -> bool:
        deadline = time.monotonic() + self.patience
        while not test():
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.outcome.errors.append(f"stalled waiting for {what}")
                return False
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return True

    async def _cancel(self, prompt: int, after: int) -> None:
        """The application cancels the turn of ``prompt`` once it has seen
        ``after`` of its updates (or the turn ended first)."""
        self.turn_updates = 0
        played = self.replayer.played
        await self._until(lambda: prompt in played, "the prompt to be sent")
        await self._until(
            lambda: self.turn_updates >= after or self.dropped > 0 or prompt in self.answered,
            "the updates to cancel after",
        )
        if prompt not in self.answered:
            self.our_cancel = True
            session = self.transcript.records[prompt].message["params"]["sessionId"]
            await self.client.notify("session/cancel", {"sessionId": session})

    async def run(self) -> Outcome:
        async def receive() -> dict[str, Any] | None:
            return await self.incoming.get()

        await self.client.start(receive, self.from_client, self.render, self.answer)
        delivering = asyncio.ensure_future(self.deliver())
        tasks: list[asyncio.Future[None]] = []
        cancel = self.schedule.cancel
        try:
            for record in self.transcript.records:
                if record.direction != CLIENT:
                    continue
                index = record.index
                if not await self._until(functools.partial(self._ready, index), f"what precedes line {record.line}"):
                    break
                if record.is_request:
                    tasks.append(asyncio.ensure_future(self.request(record)))
                    if cancel is not None and index == cancel[0]:
                        await self._cancel(index, cancel[1])
                elif record.is_notification:
                    await self.client.notify(str(record.method), record.message.get("params"))
            if tasks:
                await self._until(lambda: all(t.done() for t in tasks), "the answers")
            for task in tasks:
                if task.done() and task.exception() is not None:
                    self.outcome.errors.append(f"{type(task.exception()).__name__}: {task.exception()}")
            await _idle()
            self.outcome.final = self.app.snapshot()
            for request in self.agent_requests:
                if request.index in self.at_request:
                    self.outcome.at_request.append(self.at_request[request.index])
                    self.outcome.wire_at_request.append(self.wire_at_request[request.index])
                    self.outcome.replies.append(self.replies.get(request.index, [request.method, "none", None]))
        finally:
            for task in tasks:
                task.cancel()
            self.outbox.append((None, {"method": "$/end"}))
            self.wake.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(delivering, self.patience)
            with contextlib.suppress(Exception):
                await self.client.close()
        return self.outcome


async def _idle() -> None:
    for _ in range(IDLE_STEPS):
        await asyncio.sleep(0)


def _check(schedule: Schedule, outcome: Outcome, baseline: Outcome | None) -> Divergence | None:
    if outcome.errors:
        return Divergence(schedule, "a clean run", [Difference("$.errors", [], outcome.errors)])
    for n, (seen, wire) in enumerate(zip(outcome.at_answer, outcome.wire_at_answer, strict=True)):
        differences = plain_diff(wire, seen, f"$.answers[{n}].fold")
        if differences:
            return Divergence(schedule, "the wire", differences)
    for n, (seen, wire) in enumerate(zip(outcome.at_request, outcome.wire_at_request, strict=True)):
        differences = plain_diff(wire, seen, f"$.requests[{n}].fold")
        if differences:
            return Divergence(schedule, "the wire", differences)
    if baseline is None or schedule.cancel is not None:
        return None
    differences = plain_diff(baseline.answers, outcome.answers, "$.answers")
    differences += plain_diff(baseline.replies, outcome.replies, "$.replies")
    differences += plain_diff(baseline.final, outcome.final, "$.final")
    if schedule.kind == "together":
        differences += plain_diff(baseline.at_answer, outcome.at_answer, "$.atAnswer")
        differences += plain_diff(baseline.at_request, outcome.at_request, "$.atRequest")
    return Divergence(schedule, "the baseline", differences) if differences else None


def explore(
    path: str | Path,
    client: Callable[[ModuleType], ClientUnderTest] | None = None,
    *,
    package: str | ModuleType | None = None,
    limit: int | None = None,
    patience: float = PATIENCE,
) -> ExploreResult:
    """Run the scenario at ``path`` under every schedule against the client
    ``client(package)`` makes (default: the generated package's) and stop at
    the first schedule whose outcome differs. ``limit``: run at most that
    many schedules; ``patience``: how long a run waits for what the client
    should have handed on before it calls it stalled."""
    transcript = load_transcript(path)
    fold_package = package if isinstance(package, ModuleType) else package_for(transcript.protocol_version, package)
    make = client or GeneratedClient
    plan = schedules(transcript)
    if limit is not None:
        plan = plan[:limit]
    start = time.monotonic()
    baseline: Outcome | None = None
    name = ""
    for n, schedule in enumerate(plan, 1):
        under_test = make(fold_package)
        name = under_test.name
        outcome = asyncio.run(_Run(transcript, fold_package, under_test, schedule, patience).run())
        divergence = _check(schedule, outcome, baseline)
        if baseline is None:
            baseline = outcome
        if divergence is not None:
            return ExploreResult(name, n, len(plan), time.monotonic() - start, divergence)
    return ExploreResult(name, len(plan), len(plan), time.monotonic() - start)
