"""The client connection's session folds (``_folding``) on their own, with a
stand-in Session class: which traffic opens a session, what is folded, that
a fold that fails never keeps the update from the handler, and that each
message the fold cannot take is reported to ``on_unfolded`` when given."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from acpgen.runtime._folding import PROMPT, UPDATE, SessionFolds, Unfolded
from acpgen.runtime._runtime import ValidationError

SOURCES = (("session/new", "result"), ("session/load", "params"))


class Note:
    def __init__(self, session_id: str, text: str) -> None:
        self.session_id = session_id
        self.text = text


class Session:
    """Records what was folded into it, in order."""

    def __init__(self, session_id: str, folded: tuple[str, ...] = ()) -> None:
        self.session_id = session_id
        self.folded = folded

    @staticmethod
    def apply_session_update(session: Session, note: Note) -> Session:
        if note.text == "boom":
            raise ValueError("cannot fold this")
        return Session(session.session_id, (*session.folded, note.text))

    @staticmethod
    def apply_prompt(session: Session | None, request: Any) -> Session:
        base = session or Session(request.session_id)
        return Session(base.session_id, (*base.folded, f"user:{request.text}"))


class SessionWithoutPrompts:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id

    @staticmethod
    def apply_session_update(session: Any, note: Note) -> Any:
        return session


def decode(method: str, params: Any) -> Note:
    assert method in (PROMPT, UPDATE)
    if "sessionId" not in params:
        raise ValidationError("missing required property sessionId")
    if not isinstance(params.get("text", ""), str):
        raise ValidationError("expected a string, found a number", ("text",))
    return Note(params["sessionId"], params.get("text", ""))


def folds(cls: Any = Session, on_unfolded: Unfolded | None = None) -> SessionFolds[Any]:
    return SessionFolds(cls, SOURCES, decode, on_unfolded)


def update(folds: SessionFolds[Any], note: Note) -> list[Note]:
    seen: list[Note] = []

    async def handler(params: Any) -> None:
        seen.append(params)

    asyncio.run(folds.update_then(handler, note))
    return seen


def test_sessions_open_from_their_sources_only() -> None:
    f = folds()
    f.sending("session/new", {"cwd": "/"})
    assert f.sessions == {}
    f.answered("session/new", {"sessionId": "a"})
    f.sending("session/load", Note("b", ""))  # params: opened as it is sent
    f.answered("session/load", {})
    f.answered("session/list", {"sessionId": "c"})  # not a source
    assert sorted(f.sessions) == ["a", "b"]


def test_updates_fold_into_known_sessions_before_the_handler_and_others_pass_through() -> None:
    f = folds()
    f.answered("session/new", {"sessionId": "a"})
    assert [n.text for n in update(f, Note("a", "one"))] == ["one"]
    assert [n.text for n in update(f, Note("stranger", "two"))] == ["two"]
    assert f.sessions["a"].folded == ("one",)
    assert "stranger" not in f.sessions


def test_a_prompt_is_folded_as_the_users_turn_and_opens_its_session() -> None:
    f = folds()
    f.sending(PROMPT, Note("p", "hi"))
    f.sending(PROMPT, {"sessionId": "p", "text": "again"})  # sent as JSON: decoded
    f.sending(PROMPT, {"text": "no id"})  # does not decode: not folded, not raised
    update(f, Note("p", "answer"))
    assert f.sessions["p"].folded == ("user:hi", "user:again", "answer")


def test_without_apply_prompt_a_prompt_only_opens_its_session() -> None:
    f = folds(SessionWithoutPrompts)
    f.sending(PROMPT, {"sessionId": "v2"})
    assert list(f.sessions) == ["v2"]


def test_a_fold_that_fails_is_logged_and_the_handler_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    f = folds()
    f.answered("session/new", {"sessionId": "a"})
    update(f, Note("a", "one"))
    with caplog.at_level(logging.ERROR):
        assert [n.text for n in update(f, Note("a", "boom"))] == ["boom"]
    assert "could not fold a session/update into a" in caplog.text
    assert f.sessions["a"].folded == ("one",)  # unchanged


def test_without_a_handler_the_update_is_still_folded() -> None:
    f = folds()
    f.answered("session/new", {"sessionId": "a"})
    asyncio.run(f.update_then(None, Note("a", "one")))
    assert f.sessions["a"].folded == ("one",)


def test_updates_given_as_json_are_decoded_then_folded() -> None:
    f = folds()
    f.answered("session/new", {"sessionId": "a"})
    f.received({"sessionId": "a", "text": "one"})
    f.received({"sessionId": "stranger", "text": 2})  # not known: not decoded, not reported
    assert f.sessions["a"].folded == ("one",)


def test_what_the_fold_cannot_take_is_reported_to_on_unfolded() -> None:
    """A prompt and an update that do not decode, and an update whose fold
    raises: each reported once, with its method, params and why, and its
    session left as it was; what folds is not reported."""
    told: list[tuple[str, Any, str]] = []
    f = folds(on_unfolded=lambda method, params, reason: told.append((method, params, reason)))
    f.answered("session/new", {"sessionId": "a"})
    f.sending(PROMPT, {"sessionId": "a", "text": "hi"})
    f.sending(PROMPT, {"text": "no id"})
    f.received({"sessionId": "a", "text": 7})
    boom = Note("a", "boom")
    assert [n.text for n in update(f, boom)] == ["boom"]  # the handler still runs
    f.received({"sessionId": "a", "text": "boom"})
    update(f, Note("a", "one"))
    assert told == [
        (PROMPT, {"text": "no id"}, "cannot decode: $: missing required property sessionId"),
        (UPDATE, {"sessionId": "a", "text": 7}, "cannot decode: $.text: expected a string, found a number"),
        (UPDATE, boom, "cannot fold: ValueError: cannot fold this"),
        (UPDATE, {"sessionId": "a", "text": "boom"}, "cannot fold: ValueError: cannot fold this"),
    ]
    assert f.sessions["a"].folded == ("user:hi", "one")


def test_with_on_unfolded_a_fold_that_fails_is_reported_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    told: list[str] = []
    f = folds(on_unfolded=lambda method, params, reason: told.append(reason))
    f.answered("session/new", {"sessionId": "a"})
    with caplog.at_level(logging.ERROR):
        update(f, Note("a", "boom"))
    assert told == ["cannot fold: ValueError: cannot fold this"]
    assert caplog.text == ""


def test_without_on_unfolded_nothing_is_reported_and_the_fold_goes_on() -> None:
    f = folds()
    f.answered("session/new", {"sessionId": "a"})
    f.sending(PROMPT, {"text": "no id"})
    f.received({"sessionId": "a", "text": 7})
    f.received({"sessionId": "a", "text": "two"})
    assert f.sessions["a"].folded == ("two",)
    assert f.on_unfolded is None
