"""Exposure weights and which presented items count as exposed."""

from __future__ import annotations

import pytest

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    E2,
    A,
    B,
    C,
    at,
    fold_all,
    item,
    presented,
    seen,
)
from turnstream.core.derivation import ProfileState, weight, weight_micro


def positions(state: ProfileState, for_: str = "self") -> list[int]:
    return [e.pos for e in state.exposures(for_)]


def five_items() -> list[dict]:
    return [item(pos, f"item_variant:acme:{pos}") for pos in range(1, 6)]


@pytest.mark.parametrize(("pos", "expected"), [(1, 1.0), (2, 0.630930), (3, 0.5), (7, 0.333333)])
def test_weight_is_one_over_log2_of_pos_plus_one(pos: int, expected: float) -> None:
    assert round(weight(pos), 6) == expected
    assert weight_micro(pos) == round(expected * 1_000_000)


def test_weight_refuses_a_position_below_one() -> None:
    with pytest.raises(ValueError, match="from 1"):
        weight(0)


def test_visible_k_alone_exposes_the_first_k_positions() -> None:
    state = fold_all([presented("p1", E1, five_items(), visible_k=3)])
    assert positions(state) == [1, 2, 3]
    [first, *_] = state.exposures("self")
    assert (first.exposure_id, first.list_id, first.ref, first.weight) == (
        E1,
        "results-1",
        "item_variant:acme:1",
        1.0,
    )
    assert (first.method, first.for_, first.delivered_at) == ("bridge", "self", at(-1))


def test_visible_k_zero_exposes_nothing_until_seen() -> None:
    state = fold_all([presented("p1", E1, five_items(), visible_k=0)])
    assert positions(state) == []


def test_a_seen_arriving_after_the_presented_extends_the_exposure() -> None:
    state = fold_all([presented("p1", E1, five_items(), visible_k=2), seen("s1", E1, 4, t=5)])
    assert positions(state) == [1, 2, 3, 4]


def test_a_seen_arriving_before_the_presented_counts_the_same() -> None:
    after = fold_all([presented("p1", E1, five_items(), visible_k=2), seen("s1", E1, 4, t=5)])
    before = fold_all([seen("s1", E1, 4, t=5), presented("p1", E1, five_items(), visible_k=2)])
    assert positions(before) == [1, 2, 3, 4]
    assert before.exposures("self") == after.exposures("self")
    assert before == after
    # pos 1..4: 1 + 0.630930 + 0.5 + 0.430677
    assert before.buckets["self"].refs["item_variant:acme:4"].exposure_micro == 430677


def test_the_highest_seen_wins_in_any_order() -> None:
    events = [presented("p1", E1, five_items(), visible_k=1), seen("s1", E1, 4), seen("s2", E1, 2)]
    assert positions(fold_all(events)) == [1, 2, 3, 4]
    assert positions(fold_all(reversed(events))) == [1, 2, 3, 4]


def test_a_seen_of_another_exposure_exposes_nothing() -> None:
    state = fold_all([presented("p1", E1, five_items(), visible_k=1), seen("s1", E2, 5)])
    assert positions(state) == [1]


def test_two_pages_of_one_list_each_count_visible_k_from_their_first_position() -> None:
    page1 = [item(1, A), item(2, B), item(3, C)]
    page2 = [item(pos, f"item_variant:acme:{pos}") for pos in (4, 5, 6)]
    state = fold_all(
        [presented("p1", E1, page1, visible_k=3), presented("p2", E1, page2, page=2, t=10)]
    )
    assert positions(state) == [1, 2, 3, 4, 5, 6]
    assert [round(e.weight, 6) for e in state.exposures("self")][3:] == [
        0.430677,
        0.386853,
        0.356207,
    ]


def test_page_two_with_a_smaller_visible_k_needs_a_seen_for_the_rest() -> None:
    page1 = [item(1, A), item(2, B), item(3, C)]
    page2 = [item(pos, f"item_variant:acme:{pos}") for pos in (4, 5, 6)]
    events = [
        presented("p1", E1, page1, visible_k=3),
        presented("p2", E1, page2, page=2, visible_k=1, t=10),
    ]
    assert positions(fold_all(events)) == [1, 2, 3, 4]
    assert positions(fold_all([*events, seen("s1", E1, 5, t=20)])) == [1, 2, 3, 4, 5]


def test_the_same_page_under_another_key_is_not_counted_twice() -> None:
    events = [presented("p1", E1, [item(1, A)]), presented("p1-again", E1, [item(1, A)], t=3)]
    state = fold_all(events)
    assert positions(state) == [1]
    assert state.buckets["self"].refs[A].exposures == 1


def test_tool_result_exposures_keep_their_method_and_count_in_effective_exposure() -> None:
    state = fold_all([presented("p1", E1, [item(1, A), item(2, B)], method="tool_result")])
    assert {e.method for e in state.exposures("self")} == {"tool_result"}
    assert state.buckets["self"].refs[A].effective_exposure == 1.0


def test_effective_exposure_of_a_ref_shown_at_pos_1_and_3_is_one_and_a_half() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red")]),
            presented("p2", E2, [item(1, B), item(2, C), item(3, A, color="red")], t=10),
        ]
    )
    stats = state.buckets["self"].refs[A]
    assert (stats.exposures, stats.effective_exposure) == (2, 1.5)
    assert state.buckets["self"].values["item_variant.color"]["red"].effective_exposure == 1.5


def test_already_presented_counts_exposed_and_unexposed_presentations() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, B), item(2, A)], visible_k=1),
            presented("p2", E2, [item(1, A)], t=10),
        ]
    )
    listed = {p.ref: (p.times, p.last_delivered_at) for p in state.already_presented("self")}
    assert listed == {A: (2, at(9)), B: (1, at(-1))}
    assert state.buckets["self"].refs[A].exposures == 1  # only the second one was exposed


def test_exposures_are_kept_per_bucket() -> None:
    state = fold_all([presented("p1", E1, [item(1, A)], for_="gift")], CONFIG)
    assert positions(state, "gift") == [1]
    assert positions(state, "self") == []
    assert [e.for_ for e in state.exposures("gift")] == ["gift"]
