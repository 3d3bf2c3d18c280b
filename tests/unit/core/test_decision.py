"""A decision's hand-written constructor stays the dataclass's: every field, in order,
with its default; still frozen, copied by ``dataclasses.replace`` and by pickle."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from turnstream.core.ingest import Decision, Reason, Refusal, Source


def test_the_constructor_takes_every_field_in_order_with_its_default() -> None:
    params = list(inspect.signature(Decision.__init__).parameters.values())[1:]
    fields = dataclasses.fields(Decision)
    assert [p.name for p in params] == [f.name for f in fields]
    for param, field in zip(params, fields, strict=True):
        want = inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        assert param.default == want, field.name


def test_a_decision_is_frozen_and_copied_whole() -> None:
    refusal = Refusal(Reason.invalid, "x", "bad")
    decision = Decision(Source("t", 1, 2), b"{}", "k", refusal=refusal, duplicate=True)
    assert dataclasses.asdict(decision)["refusal"]["field_path"] == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.duplicate = False  # type: ignore[misc]
    copy = dataclasses.replace(decision, erased=True)
    assert (copy.erased, copy.refusal, copy.duplicate, copy.raw) == (True, refusal, True, b"{}")
    assert pickle.loads(pickle.dumps(decision)) == decision
    assert decision == Decision(Source("t", 1, 2), b"{}", "k", None, None, refusal, True)
