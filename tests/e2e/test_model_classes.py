"""The model classes are built without running ``dataclasses.dataclass`` at
import; they still behave as the slotted keyword-only dataclasses they were."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from tests.conftest import load_generated

PACKAGES = ("acp_v1", "acp_v1_unstable", "acp_v2", "acp_v2_unstable")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_model_class_is_a_slotted_dataclass(name):
    models = load_generated(name).models
    classes = [
        c
        for c in vars(models).values()
        if isinstance(c, type)
        and c.__module__ == models.__name__
        and hasattr(c, "__annotations__")
        and "__dataclass_fields__" in vars(c)
    ]
    assert len(classes) > 100
    for cls in classes:
        assert dataclasses.is_dataclass(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        assert cls.__slots__ == tuple(names)
        assert cls.__match_args__ == ()
        assert cls.__hash__ is None
        with pytest.raises(TypeError):
            cls(1)  # keyword-only


def test_init_defaults_repr_eq_replace():
    acp = load_generated("acp_v1")
    m = acp.models
    chunk = m.TextContentBlock(text="hi")
    # UNSET is the package's (models.py imports it privately: a schema may define one).
    assert chunk.annotations is acp.UNSET
    assert repr(chunk) == "TextContentBlock(annotations=UNSET, text='hi', meta=UNSET)"
    assert chunk == m.TextContentBlock(text="hi")
    assert chunk != m.TextContentBlock(text="ho")
    other = dataclasses.replace(chunk, text="ho")
    assert other == m.TextContentBlock(text="ho") and chunk.text == "hi"
    with pytest.raises(TypeError):
        m.TextContentBlock()  # text is required
    with pytest.raises(TypeError):
        m.TextContentBlock(text="hi", colour="red")
    with pytest.raises(AttributeError):
        chunk.colour = "red"  # slotted
    for clone in (
        copy.copy(chunk),
        copy.deepcopy(chunk),
        pickle.loads(pickle.dumps(chunk)),
    ):
        assert clone == chunk


def test_the_classes_record_what_dataclass_would():
    m = load_generated("acp_v1").models

    @dataclasses.dataclass(slots=True, kw_only=True)
    class Real:
        text: str

    params = m.TextContentBlock.__dataclass_params__
    assert (params.init, params.repr, params.eq) == (True, True, True)
    assert (params.order, params.unsafe_hash, params.frozen) == (False, False, False)
    real = Real.__dataclass_params__
    names = [n for n in dir(real) if not n.startswith("_")] or list(real.__slots__)
    assert names
    for name in names:
        assert getattr(params, name) == getattr(real, name), name


def test_repr_of_a_model_holding_itself_does_not_recurse():
    m = load_generated("acp_v1").models
    update = m.ToolCallUpdate(tool_call_id="c", raw_input=[])
    update.raw_input.append(update)
    assert repr(update).startswith("ToolCallUpdate(tool_call_id='c'")
    assert "raw_input=[...]" in repr(update)


def test_default_factories_are_fresh_per_instance():
    models = load_generated("acp_v1").models
    state_classes = [
        c
        for c in vars(models).values()
        if isinstance(c, type) and issubclass(c, models._State) and c is not models._State
    ]
    fresh = 0
    for cls in state_classes:
        for f in dataclasses.fields(cls):
            if f.default_factory is not dataclasses.MISSING:
                required = {
                    g.name: None
                    for g in dataclasses.fields(cls)
                    if g.default is dataclasses.MISSING and g.default_factory is dataclasses.MISSING
                }
                a, b = cls(**required), cls(**required)
                assert getattr(a, f.name) == f.default_factory()
                assert getattr(a, f.name) is not getattr(b, f.name)
                fresh += 1
    assert fresh
