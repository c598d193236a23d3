"""The permission policy of the runtime (``_permissions``): by kind, by path,
asking, denying by default, never the first option by position."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acpgen.runtime._permissions import PermissionPolicy, decision_of, subject_of

OPTIONS = [
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "once", "name": "Once", "kind": "allow_once"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]


def request(kind: str | None = None, paths: tuple[str, ...] = (), options: list[Any] = OPTIONS) -> dict[str, Any]:
    tool: dict[str, Any] = {"toolCallId": "t1"}
    if kind is not None:
        tool["kind"] = kind
    if paths:
        tool["locations"] = [{"path": p} for p in paths]
    return {"sessionId": "s1", "toolCall": tool, "options": options}


def decide(policy: PermissionPolicy, wire: dict[str, Any], known=None):
    return asyncio.run(policy.decide(wire, wire, known))


def test_the_default_policy_denies_with_a_reject_option_never_the_first_option() -> None:
    decision = decide(PermissionPolicy(), request("read"))
    assert (decision.outcome, decision.option_id, decision.allowed) == ("selected", "no", False)
    assert decision.reason.startswith("denied by default")
    assert decision.result() == {"outcome": {"outcome": "selected", "optionId": "no"}}


def test_without_a_reject_option_a_denial_is_the_cancelled_outcome() -> None:
    only_allow = [o for o in OPTIONS if o["kind"].startswith("allow")]
    decision = decide(PermissionPolicy(), request("edit", options=only_allow))
    assert decision.result() == {"outcome": {"outcome": "cancelled"}}
    assert not decision.allowed


def test_allowed_kinds_pick_allow_once_never_allow_always() -> None:
    decision = decide(PermissionPolicy(allow={"read", "search"}), request("read"))
    assert (decision.option_id, decision.option_kind, decision.allowed) == ("once", "allow_once", True)
    assert decision.reason == "tool kind 'read' is allowed"
    only_always = [OPTIONS[0], OPTIONS[2]]
    decision = decide(PermissionPolicy(allow={"read"}), request("read", options=only_always))
    assert decision.outcome == "cancelled" and not decision.allowed


def test_rejection_wins_over_allowance_and_paths_are_matched() -> None:
    policy = PermissionPolicy(allow={"edit"}, allow_paths=["/work/*"], reject_paths=["*/.env"])
    assert decide(policy, request("edit", ("/work/.env",))).option_id == "no"
    assert decide(PermissionPolicy(allow={"edit"}, reject={"edit"}), request("edit")).option_id == "no"
    by_path = PermissionPolicy(allow_paths=["/work/*"])
    assert decide(by_path, request("edit", ("/work/a.py", "/work/b.py"))).option_id == "once"
    assert decide(by_path, request("edit", ("/work/a.py", "/etc/passwd"))).option_id == "no"
    assert decide(by_path, request("edit")).option_id == "no"  # no path: nothing matched


def test_ask_is_asked_what_the_rules_do_not_settle() -> None:
    asked: list[Any] = []

    async def ask(params: Any) -> str | None:
        asked.append(params)
        return "always"

    policy = PermissionPolicy(reject={"delete"}, ask=ask)
    assert decide(policy, request("delete")).option_id == "no" and not asked
    decision = decide(policy, request("edit"))
    assert (decision.option_id, decision.reason, len(asked)) == ("always", "asked", 1)

    async def unknown(params: Any) -> str | None:
        return "not-offered"

    assert decide(PermissionPolicy(ask=unknown), request("edit")).option_id == "no"


def test_the_fold_supplies_what_the_request_leaves_out() -> None:
    calls: list[tuple[str, str]] = []

    def known(session_id: str, tool_call_id: str):
        calls.append((session_id, tool_call_id))
        return "read", ("/work/x",)

    decision = decide(PermissionPolicy(allow={"read"}), request(), known)
    assert (decision.kind, decision.paths, decision.option_id) == ("read", ("/work/x",), "once")
    assert calls == [("s1", "t1")]


def test_a_v2_subject_is_read_too() -> None:
    tool = {"sessionId": "s", "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t", "kind": "read"}}}
    assert subject_of(tool) == ("t", "read", ())
    command = {"sessionId": "s", "subject": {"type": "command", "command": "ls", "cwd": "/w"}}
    assert subject_of(command) == (None, "execute", ("/w",))


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"outcome": {"outcome": "selected", "optionId": "once"}}, ("selected", "once", "allow_once", True)),
        ({"outcome": {"outcome": "cancelled"}}, ("cancelled", None, None, False)),
    ],
)
def test_a_handlers_answer_is_recorded_as_a_decision(result, expected) -> None:
    decision = decision_of(request("edit"), result, "answered by the handler")
    assert (decision.outcome, decision.option_id, decision.option_kind, decision.allowed) == expected
