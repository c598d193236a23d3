"""The bridge's translation of whole messages, with the state a
conversation needs: the requests in flight (a response is translated by the
method of its request), the prompt turns (v1 answers a prompt when the turn
ends, v2 at once), the tool calls each session has seen (v2's upsert against
v1's create-then-update).

:class:`Bridge` takes one message at a time from either peer and says what
goes where (:class:`Routed`): messages for the agent, messages for the
client, and the values lost on the way. It does no I/O; :mod:`.proxy` runs
it between two processes.
"""

from __future__ import annotations

import copy
import itertools
import uuid
from dataclasses import dataclass, field

from ..jsontypes import Json, JsonObject, JsonPath
from .convert import Converter
from .rules import BridgeRules
from .shapes import LOST, LostValue, Side, describe, show

META_KEY = "acpgen.bridge/lost"
"""The ``_meta`` key of a translated message's params (or result) that lists
what was lost on the way, when the bridge adds notes."""

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


@dataclass
class Routed:
    """What one message becomes."""

    to_agent: list[JsonObject] = field(default_factory=list[JsonObject])
    to_client: list[JsonObject] = field(default_factory=list[JsonObject])
    lost: list[LostValue] = field(default_factory=list[LostValue])


@dataclass
class _Turn:
    """A prompt in flight."""

    session: str
    client_id: Json
    agent_id: Json
    accepted: bool = False
    message_id: str = ""
    reply_id: str = ""


@dataclass
class _Session:
    tool_calls: dict[str, str] = field(default_factory=dict[str, str])
    """Tool call id -> its last known title."""
    plan_id: str = ""
    reply_id: str = ""


class Bridge:
    """Translates between a client speaking ``client_version`` and an agent
    speaking the other version."""

    def __init__(self, sides: dict[int, Side], rules: BridgeRules, client_version: int, *, notes: bool = True) -> None:
        self.sides, self.rules = sides, rules
        self.client_version = client_version
        self.agent_version = 3 - client_version
        self.notes = notes
        self.from_client_requests: dict[Json, str] = {}
        """Requests the client sent, by id: their method (after renaming)."""
        self.from_agent_requests: dict[Json, str] = {}
        self.turns: dict[Json, _Turn] = {}
        """v2 client, v1 agent: prompts by the id the agent got."""
        self.v1_turns: dict[str, list[_Turn]] = {}
        """v1 client, v2 agent: the prompts in flight, by session, oldest first
        (each idle state_update ends the oldest)."""
        self.v1_ended: set[Json] = set()
        """v1 client, v2 agent: prompts (by id) whose turn ended before the agent answered them."""
        self.sessions: dict[str, _Session] = {}
        self.counter = itertools.count(1)
        self.requested_version: Json = client_version

    # -- helpers ------------------------------------------------------

    def _session(self, session_id: Json) -> _Session:
        return self.sessions.setdefault(str(session_id), _Session())

    def _new_id(self) -> str:
        return uuid.uuid4().hex

    def _converter(self, sender: str, method: str, routed: Routed) -> tuple[Converter, list[LostValue]]:
        src = self.client_version if sender == "client" else self.agent_version
        lost: list[LostValue] = []
        direction = f"v{src}->v{3 - src}"

        def lose(path: JsonPath, value: Json, reason: str) -> None:
            lost.append(LostValue(direction, sender, method, describe(path), show(value), reason))

        def forget(path: JsonPath) -> None:
            prefix = describe(path)
            lost[:] = [item for item in lost if not (item.path + "/").startswith(prefix + "/")]

        converter = Converter(self.sides[src], self.sides[3 - src], self.rules, lose, forget)
        return converter, lost

    def _finish(self, routed: Routed, lost: list[LostValue], message: JsonObject | None, key: str) -> None:
        """Adds ``lost`` to ``routed`` and, with notes on, to ``message[key]._meta``."""
        routed.lost.extend(lost)
        if self.notes and lost and message is not None and isinstance(message.get(key), dict):
            meta = message[key].get("_meta")
            meta = dict(meta) if isinstance(meta, dict) else {}
            meta[META_KEY] = [item.record() for item in lost]
            message[key]["_meta"] = meta

    def _lose_whole(self, routed: Routed, sender: str, method: str, message: JsonObject, reason: str) -> None:
        src = self.client_version if sender == "client" else self.agent_version
        routed.lost.append(LostValue(f"v{src}->v{3 - src}", sender, method, "", show(message), reason))

    def _target_method(self, method: str, sender: str) -> str | None:
        """The other version's name of ``method``; None when it has none."""
        src = self.client_version if sender == "client" else self.agent_version
        dst = 3 - src
        renamed = self.rules.renamed_to(dst)
        if method in renamed:
            return renamed[method]
        if method in self.sides[dst].methods:
            return method
        if method in self.sides[src].methods:
            return None
        return method  # an extension method, or one neither schema has: passed as it is

    def _convert_params(
        self, sender: str, method: str, target: str, params: Json, kind: str, routed: Routed
    ) -> tuple[Json, list[LostValue]]:
        src = self.client_version if sender == "client" else self.agent_version
        stypes = self.sides[src].methods.get(method)
        dtypes = self.sides[3 - src].methods.get(target)
        converter, lost = self._converter(sender, method, routed)
        if stypes is None or dtypes is None or params is None:
            return params, lost
        sname = getattr(stypes, kind)
        dname = getattr(dtypes, kind)
        if sname is None or dname is None:
            return params, lost
        converted = converter.by_name(params, sname, dname, ("params" if kind != "result" else "result",))
        return (params if converted is LOST else converted), lost

    # -- entry points -------------------------------------------------

    def from_client(self, message: JsonObject) -> Routed:
        """What a message from the client becomes."""
        routed = Routed()
        if "method" in message and not isinstance(message["method"], str):
            self._bad_method("client", message, routed)
        elif "method" in message:
            self._request_or_notification("client", message, routed)
        else:
            self._response("client", message, routed)
        return routed

    def from_agent(self, message: JsonObject) -> Routed:
        """What a message from the agent becomes."""
        routed = Routed()
        if "method" in message and not isinstance(message["method"], str):
            self._bad_method("agent", message, routed)
        elif "method" in message:
            self._request_or_notification("agent", message, routed)
        else:
            self._response("agent", message, routed)
        return routed

    def _bad_method(self, sender: str, message: JsonObject, routed: Routed) -> None:
        """A message whose method is no string: refused (a request is answered
        -32600 Invalid Request), never passed on."""
        reason = "its method is no string"
        self._lose_whole(routed, sender, show(message.get("method")), message, reason)
        if "id" in message:
            self._refuse(sender, message.get("id"), INVALID_REQUEST, f"Invalid Request: {reason}", routed)

    def _refuse(self, sender: str, ident: Json, code: int, text: str, routed: Routed) -> None:
        """Answers the request ``ident`` of ``sender`` with the error ``code``."""
        error: JsonObject = {"code": code, "message": text}
        self._back(sender, routed).append({"jsonrpc": "2.0", "id": ident, "error": error})

    # -- requests and notifications -------------------------------------

    def _forward(self, sender: str, routed: Routed) -> list[JsonObject]:
        return routed.to_agent if sender == "client" else routed.to_client

    def _back(self, sender: str, routed: Routed) -> list[JsonObject]:
        return routed.to_client if sender == "client" else routed.to_agent

    def _request_or_notification(self, sender: str, message: JsonObject, routed: Routed) -> None:
        method: str = message["method"]
        is_request = "id" in message
        target = self._target_method(method, sender)
        if target is None:
            reason = (
                f"v{3 - (self.client_version if sender == 'client' else self.agent_version)} has no method {method!r}"
            )
            self._lose_whole(routed, sender, method, message, reason)
            if is_request:
                error = {
                    "code": METHOD_NOT_FOUND,
                    "message": "Method not found",
                    "data": {"method": method, "reason": reason},
                }
                self._back(sender, routed).append({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        out = copy.deepcopy(message)
        out["method"] = target
        if method == "session/update" and sender == "agent":
            self._session_update(out, routed)
            return
        if method == "session/request_permission" and sender == "agent":
            self._permission(out, routed)
            return
        params, lost = self._convert_params(
            sender, method, target, message.get("params"), "params" if is_request else "notification", routed
        )
        if "params" in message:
            out["params"] = params
        if method == "initialize" and sender == "client" and isinstance(params, dict):
            self.requested_version = message.get("params", {}).get("protocolVersion")
            params["protocolVersion"] = self.agent_version
        if method == "session/prompt" and sender == "client" and is_request and isinstance(params, dict):
            self._prompt(message, out, lost, routed)
            return
        self._finish(routed, lost, out, "params")
        if is_request:
            (self.from_client_requests if sender == "client" else self.from_agent_requests)[message["id"]] = target
        self._forward(sender, routed).append(out)

    def _prompt(self, message: JsonObject, out: JsonObject, lost: list[LostValue], routed: Routed) -> None:
        session = str(out["params"].get("sessionId"))
        self._finish(routed, lost, out, "params")
        if self.client_version == 1:
            # v2 agent: its answer is held, the turn ends with its idle state_update.
            self.v1_turns.setdefault(session, []).append(_Turn(session, message["id"], message["id"]))
            self.from_client_requests[message["id"]] = "session/prompt"
            routed.to_agent.append(out)
            return
        # v2 client, v1 agent: the bridge answers at once and the v1 answer ends the turn.
        agent_id = f"acpgen-bridge-prompt-{next(self.counter)}"
        turn = _Turn(session, message["id"], agent_id, accepted=True)
        turn.message_id, turn.reply_id = self._new_id(), self._new_id()
        self._session(session).reply_id = turn.reply_id
        self.turns[agent_id] = turn
        out["id"] = agent_id
        self.from_client_requests[agent_id] = "session/prompt"
        routed.to_agent.append(out)
        routed.to_client.append({"jsonrpc": "2.0", "id": message["id"], "result": {"messageId": turn.message_id}})
        user = {
            "sessionUpdate": "user_message",
            "messageId": turn.message_id,
            "content": out["params"].get("prompt", []),
        }
        routed.to_client.append(_update(session, user))
        routed.to_client.append(_update(session, {"sessionUpdate": "state_update", "state": "running"}))

    # -- responses ------------------------------------------------------

    def _response(self, sender: str, message: JsonObject, routed: Routed) -> None:
        pending = self.from_agent_requests if sender == "client" else self.from_client_requests
        ident = message.get("id")
        method = pending.pop(ident, None)
        out = copy.deepcopy(message)
        if method is None:
            self._forward(sender, routed).append(out)
            return
        if method == "session/prompt" and sender == "agent":
            self._prompt_answer(message, out, routed)
            return
        if "result" in message:
            source = self._source_method(method, sender)
            result, lost = self._convert_params(sender, source, method, message["result"], "result", routed)
            out["result"] = result
            if method == "initialize" and sender == "agent" and isinstance(result, dict):
                result["protocolVersion"] = self.client_version
            self._finish(routed, lost, out, "result")
        self._forward(sender, routed).append(out)

    def _source_method(self, method: str, sender: str) -> str:
        """The name, in the sender's version, of ``method`` (named in the receiver's)."""
        src = self.client_version if sender == "client" else self.agent_version
        for name, renamed in self.rules.renamed_to(3 - src).items():
            if renamed == method:
                return name
        return method

    def _prompt_answer(self, message: JsonObject, out: JsonObject, routed: Routed) -> None:
        if self.client_version == 1:
            # v2 agent's {messageId}: held; the idle state_update answers the v1 client.
            found = next(
                (t for turns in self.v1_turns.values() for t in turns if t.agent_id == message.get("id")), None
            )
            ended = message.get("id") in self.v1_ended
            self.v1_ended.discard(message.get("id"))
            if "error" in message:
                if ended:
                    # Its turn has ended already (an idle came first): the client has its answer.
                    reason = "the prompt's turn has ended already: v1 has its answer"
                    self._lose_whole(routed, "agent", "session/prompt", message, reason)
                    return
                if found is not None:
                    turns = self.v1_turns[found.session]
                    turns.remove(found)
                    if not turns:
                        del self.v1_turns[found.session]
                routed.to_client.append(out)
                return
            result = message.get("result")
            if found is not None:
                found.accepted = True
                if isinstance(result, dict):
                    found.message_id = str(result.get("messageId", ""))
            converter, lost = self._converter("agent", "session/prompt", routed)
            held = result.get("messageId") if isinstance(result, dict) else result
            converter.lose(("result", "messageId"), held, "v1 answers a prompt when its turn ends, with no message id")
            routed.lost.extend(lost)
            return
        turn = self.turns.pop(message.get("id"), None)
        if turn is None:
            return
        if "error" in message:
            idle: JsonObject = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error"}
            idle["error"] = message["error"]
        else:
            result = message.get("result") or {}
            idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": result.get("stopReason")}
            if isinstance(result, dict) and result.get("_meta"):
                idle["_meta"] = result["_meta"]
        routed.to_client.append(_update(turn.session, idle))

    # -- session/update ---------------------------------------------------

    def _session_update(self, out: JsonObject, routed: Routed) -> None:
        params = out.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
            routed.to_client.append(out)
            return
        update: JsonObject = params["update"]
        tag = update.get("sessionUpdate")
        session_id = str(params.get("sessionId"))
        session = self._session(session_id)
        rule = self.rules.variant("SessionUpdate", self.agent_version, str(tag))
        handler = rule.handler if rule else None
        converter, lost = self._converter("agent", "session/update", routed)
        base = {k: v for k, v in params.items() if k != "update"}
        # The notification's own fields (sessionId, _meta) are the same in both versions.
        base_converted = base
        updates: list[JsonObject] = []
        union = self.sides[self.agent_version].named("SessionUpdate")
        dunion = self.sides[self.client_version].named("SessionUpdate")

        def plain(value: JsonObject) -> None:
            converted = converter.convert(value, union, dunion, ("params", "update"))
            if converted is not LOST:
                updates.append(converted)

        if self.agent_version == 1:
            if handler == "tool_call":
                value = dict(update, sessionUpdate="tool_call_update")
                session.tool_calls[str(update.get("toolCallId"))] = str(update.get("title", ""))
                plain_v = converter.convert(
                    {k: v for k, v in value.items()},
                    self.sides[1].named("ToolCall"),
                    self.sides[2].named("ToolCallUpdate"),
                    ("params", "update"),
                )
                if plain_v is not LOST:
                    updates.append(dict(plain_v, sessionUpdate="tool_call_update"))
            elif tag in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
                value = dict(update)
                if value.get("messageId") is None:
                    value["messageId"] = session.reply_id or self._new_id()
                    session.reply_id = str(value["messageId"])
                plain(value)
            elif handler == "plan":
                session.plan_id = session.plan_id or self._new_id()
                entries = converter.convert(
                    update.get("entries", []),
                    {"type": "array", "items": self.sides[1].named("PlanEntry")},
                    {"type": "array", "items": self.sides[2].named("PlanEntry")},
                    ("params", "update", "entries"),
                )
                if entries is not LOST:  # else recorded as lost, and the update with it
                    plan: JsonObject = {"type": "items", "planId": session.plan_id, "entries": entries}
                    converted: JsonObject = {"sessionUpdate": "plan_update", "plan": plan}
                    if update.get("_meta") is not None:
                        converted["_meta"] = update["_meta"]
                    updates.append(converted)
            else:
                if tag == "tool_call_update":
                    session.tool_calls.setdefault(str(update.get("toolCallId")), "")
                    if isinstance(update.get("title"), str):
                        session.tool_calls[str(update.get("toolCallId"))] = update["title"]
                plain(update)
        else:
            if handler == "turn_state":
                self._turn_state(session_id, update, params, routed)
                if update.get("state") != self.rules.turn["end_state"]:
                    converter.lose(("params", "update"), update, "v1 has no turn state")
            elif handler == "tool_call":
                updates.extend(self._v2_tool_call(session, update, converter))
            elif handler == "chunk":
                chunk_tag = rule.v1 if rule else None
                content = update.get("content")
                for index, block in enumerate(content if isinstance(content, list) else []):
                    chunk = {"sessionUpdate": chunk_tag, "messageId": update.get("messageId"), "content": block}
                    converted_chunk = converter.convert(chunk, union, dunion, ("params", "update", "content", index))
                    if converted_chunk is not LOST:
                        updates.append(converted_chunk)
                if update.get("_meta"):
                    converter.lose(("params", "update", "_meta"), update["_meta"], "v1 chunks have no message _meta")
            elif handler == "plan":
                plan_v = update.get("plan")
                if isinstance(plan_v, dict) and plan_v.get("type") == "items":
                    entries = converter.convert(
                        plan_v.get("entries", []),
                        {"type": "array", "items": self.sides[2].named("PlanEntry")},
                        {"type": "array", "items": self.sides[1].named("PlanEntry")},
                        ("params", "update", "plan", "entries"),
                    )
                    converter.lose(("params", "update", "plan", "planId"), plan_v.get("planId"), "v1 plans have no id")
                    if entries is not LOST:  # else recorded as lost, and the update with it
                        v1_plan: JsonObject = {"sessionUpdate": "plan", "entries": entries}
                        if update.get("_meta") is not None:
                            v1_plan["_meta"] = update["_meta"]
                        updates.append(v1_plan)
                else:
                    converter.lose(("params", "update"), update, "v1 has no such plan")
            else:
                plain(update)
        self._finish(routed, lost, None, "params")
        for index, item in enumerate(updates):
            message: JsonObject = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": dict(base_converted, update=item),
            }
            if index == 0 and self.notes and lost:
                meta = dict(message["params"].get("_meta") or {})
                meta[META_KEY] = [entry.record() for entry in lost]
                message["params"]["_meta"] = meta
            routed.to_client.append(message)

    def _v2_tool_call(self, session: _Session, update: JsonObject, converter: Converter) -> list[JsonObject]:
        """v2's upsert as v1's tool_call (an id not seen yet) or tool_call_update."""
        ident = str(update.get("toolCallId"))
        value = dict(update)
        defaults = {"kind": "other", "status": "pending", "content": [], "locations": []}
        for key, default in defaults.items():
            if key in value and value[key] is None:
                value[key] = default
        if "title" in value and value["title"] is None:
            converter.lose(("params", "update", "title"), None, "v1 cannot unset a tool call's title")
            del value["title"]
        known = ident in session.tool_calls
        if isinstance(value.get("title"), str):
            session.tool_calls[ident] = value["title"]
        if known:
            value["sessionUpdate"] = "tool_call_update"
            converted = converter.convert(
                value, self.sides[2].named("SessionUpdate"), self.sides[1].named("SessionUpdate"), ("params", "update")
            )
            return [] if converted is LOST else [converted]
        if not isinstance(value.get("title"), str):
            value["title"] = value.get("name") if isinstance(value.get("name"), str) else ident
            session.tool_calls[ident] = value["title"]
        value.pop("sessionUpdate", None)
        converted = converter.convert(
            value, self.sides[2].named("ToolCallUpdate"), self.sides[1].named("ToolCall"), ("params", "update")
        )
        return [] if converted is LOST else [dict(converted, sessionUpdate="tool_call")]

    def _turn_state(self, session_id: str, update: JsonObject, params: JsonObject, routed: Routed) -> None:
        turns = self.v1_turns.get(session_id)
        if not turns or update.get("state") != self.rules.turn["end_state"]:
            return
        # The oldest prompt in flight ends, whether or not its answer or a
        # `running` came first.
        turn = turns.pop(0)
        if not turns:
            del self.v1_turns[session_id]
        if not turn.accepted:
            self.v1_ended.add(turn.agent_id)
        stop = update.get("stopReason")
        if stop == self.rules.turn["error_stop_reason"]:
            error = update.get("error") or {"code": -32603, "message": "the turn ended with an error"}
            routed.to_client.append({"jsonrpc": "2.0", "id": turn.client_id, "error": error})
            return
        converter, lost = self._converter("agent", "session/update", routed)
        result: JsonObject = {"stopReason": stop}
        checked = converter.by_name(result, "PromptResponse", "PromptResponse", ("params", "update"))
        if checked is LOST:
            result = {"stopReason": "end_turn"}
        for key in ("background",):
            if update.get(key) is not None:
                converter.lose(("params", "update", key), update[key], "v1 has no background work")
        if update.get("_meta") is not None:
            result["_meta"] = update["_meta"]
        response = {"jsonrpc": "2.0", "id": turn.client_id, "result": result}
        self._finish(routed, lost, response, "result")
        routed.to_client.append(response)

    # -- session/request_permission ---------------------------------------

    def _permission(self, out: JsonObject, routed: Routed) -> None:
        params = out.get("params")
        converter, lost = self._converter("agent", "session/request_permission", routed)
        if not isinstance(params, dict):
            routed.to_client.append(out)
            return
        session = self._session(params.get("sessionId"))
        v1_field = self.rules.permission["v1"]
        subject_type = self.rules.permission["subject_type"]
        name = "RequestPermissionRequest"
        subject: Json
        if self.agent_version == 1:
            tool = params.get(v1_field)
            rest = {k: v for k, v in params.items() if k != v1_field}
            ident = str(tool.get("toolCallId")) if isinstance(tool, dict) else ""
            title = tool.get("title") if isinstance(tool, dict) else None
            if not isinstance(title, str) or not title:
                title = session.tool_calls.get(ident) or self.rules.permission["title_fallback"].format(id=ident)
            new: JsonObject = {"title": title}
            for key, value in rest.items():
                new[key] = value
            converted = converter.by_name(new, name, name, ("params",))
            if isinstance(tool, dict):
                v2_tool = converter.by_name(tool, "ToolCallUpdate", "ToolCallUpdate", ("params", v1_field))
                # A tool call v2 cannot take (no string toolCallId) is recorded
                # as lost: the v2 request goes without a subject.
                if v2_tool is not LOST:
                    subject = {"type": subject_type, "toolCall": v2_tool}
                    if isinstance(converted, dict):
                        converted["subject"] = subject
                    session.tool_calls.setdefault(ident, title if isinstance(tool.get("title"), str) else "")
            elif tool is not None:
                converter.lose(("params", v1_field), tool, "not an object")
        else:
            subject = params.get("subject")
            rest = {k: v for k, v in params.items() if k not in ("subject", "title", "description")}
            v1_tool: Json = None
            if (
                isinstance(subject, dict)
                and subject.get("type") == subject_type
                and isinstance(subject.get("toolCall"), dict)
            ):
                v1_tool = converter.by_name(
                    subject["toolCall"], "ToolCallUpdate", "ToolCallUpdate", ("params", "subject", "toolCall")
                )
                if subject.get("_meta") is not None:
                    converter.lose(("params", "subject", "_meta"), subject["_meta"], "v1 has no permission subject")
            else:
                if subject is not None:
                    converter.lose(("params", "subject"), subject, "v1 asks permission for v1_tool calls only")
                wanted = subject.get("toolCallId") if isinstance(subject, dict) else None
                v1_tool = {"toolCallId": wanted or f"acpgen-bridge-permission-{next(self.counter)}"}
            if not isinstance(v1_tool, dict):
                v1_tool = {"toolCallId": f"acpgen-bridge-permission-{next(self.counter)}"}
            ident = str(v1_tool.get("toolCallId"))
            title = params.get("title")
            known = session.tool_calls.get(ident)
            if title is not None and title != (v1_tool.get("title") or known):
                converter.lose(("params", "title"), title, "v1 permission requests have no title of their own")
            if params.get("description") is not None:
                converter.lose(
                    ("params", "description"), params["description"], "v1 permission requests have no description"
                )
            if ident not in session.tool_calls:
                # v2: a first-seen v1_tool call in the subject creates it; v1 announces it first.
                start = dict(v1_tool)
                start.setdefault("title", title if isinstance(title, str) else ident)
                session.tool_calls[ident] = str(start["title"])
                # ``start`` is v1 already (its losses recorded): checked as a v1 ToolCall.
                check = Converter(self.sides[1], self.sides[1], self.rules, _ignore_loss, _ignore_forget)
                created = check.by_name(start, "ToolCall", "ToolCall", ("params", "subject"))
                if created is not LOST:
                    routed.to_client.append(
                        _update(str(params.get("sessionId")), dict(created, sessionUpdate="tool_call"))
                    )
            converted = converter.by_name(dict(rest, **{v1_field: v1_tool}), name, name, ("params",))
            if isinstance(converted, dict):
                converted[v1_field] = v1_tool
        if converted is LOST:
            # The params have no form in the client's version: the agent is answered, nothing goes on.
            routed.lost.extend(lost)
            reason = f"the bridge cannot translate its params to v{self.client_version}"
            self._lose_whole(routed, "agent", "session/request_permission", out, reason)
            if "id" in out:
                self._refuse("agent", out.get("id"), INVALID_PARAMS, f"Invalid params: {reason}", routed)
            return
        if isinstance(converted, dict):
            out["params"] = converted
        self._finish(routed, lost, out, "params")
        self.from_agent_requests[out.get("id")] = "session/request_permission"
        routed.to_client.append(out)


def _update(session: str, update: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}


def _ignore_loss(_path: JsonPath, _value: Json, _reason: str) -> None:
    pass


def _ignore_forget(_path: JsonPath) -> None:
    pass
