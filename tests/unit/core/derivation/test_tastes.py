"""The field posterior on simulated sessions: a clear taste is found after three sessions,
noise is not, state and noise fields never become affinities, a colour skipped where it
was visible is avoided, and a cart weighs more than a click."""

from __future__ import annotations

import random
from typing import Any

from tests.unit.core.derivation.builders import (
    CONFIG,
    TYPES,
    engaged,
    fold_all,
    item,
    presented,
    seen,
)
from turnstream.core.derivation import Inference, ProfileState, derive
from turnstream.core.derivation.taste import field_posterior

COLOURS = ("red", "blue", "green", "white", "black", "beige")
BRANDS = ("b1", "b2", "b3", "b4")


def _eid(n: int) -> str:
    return f"0190f5a2-7b3c-7def-8126-{n:012d}"


def sessions(
    count: int, picks: Any, seed: int = 3, lists: int = 3, length: int = 12, visible: int = 5
) -> ProfileState:
    """``count`` sessions of ``lists`` lists of ``length`` random items, ``visible`` of
    them visible and all seen; ``picks(rand, shown)`` -> the positions clicked."""
    rand = random.Random(seed)
    events: list[Any] = []
    t = 0
    for s in range(count):
        for n in range(lists):
            eid = _eid(s * 100 + n)
            shown = {
                pos: {
                    "color": rand.choice(COLOURS),
                    "brand": rand.choice(BRANDS),
                    "price_sale": rand.choice((99.9, 149.9, 199.9)),
                    "in_stock": rand.random() < 0.8,
                    "size": rand.choice(("P", "M", "G")),
                    "badge": rand.choice(("new", "sale")),  # declared by no type: noise
                }
                for pos in range(1, length + 1)
            }
            refs = {pos: f"item_variant:acme:{s}-{n}-{pos}" for pos in shown}
            items = [item(pos, refs[pos], **shown[pos]) for pos in shown]
            events.append(presented(f"p{s}{n}", eid, items, visible_k=visible, t=t))
            events.append(seen(f"v{s}{n}", eid, length, t=t + 1))
            for pos in picks(rand, shown):
                t += 1
                events.append(engaged(f"c{s}{n}{pos}", refs[pos], t=t + 2, session=f"s{s}"))
            t += 10
    return fold_all(events)


def prefers(state: ProfileState) -> list[tuple[str, str]]:
    return [
        (i.attr, i.value)
        for i in derive(state, {}, CONFIG, TYPES)
        if i.kind == "affinity" and i.polarity == "prefer" and i.status == "active"
    ]


def affinity(found: list[Inference], value: str) -> Inference:
    [one] = [i for i in found if i.kind == "affinity" and i.value == value]
    return one


def test_a_clear_taste_is_found_after_three_sessions() -> None:
    # Red clicked 60% of the time it is shown in the first 8 positions, anything else 3%:
    # about two red clicks and one other a session. Found in at least 15 of 20 people.
    def picks(rand: random.Random, shown: dict) -> list[int]:
        return [
            pos
            for pos, v in shown.items()
            if pos <= 8 and rand.random() < (0.6 if v["color"] == "red" else 0.03)
        ]

    found = [prefers(sessions(3, picks, seed=seed)) for seed in range(20)]
    assert sum(f == [("item_variant.color", "red")] for f in found) >= 15
    assert all(f in ([], [("item_variant.color", "red")]) for f in found)


def test_clicks_at_random_make_no_taste() -> None:
    # The same number of clicks spread at random over the first 8 positions: at most one
    # person in 20 gets an affinity (the posterior's bar is 0.7, not certainty).
    def picks(rand: random.Random, shown: dict) -> list[int]:
        return [pos for pos in shown if pos <= 8 and rand.random() < 0.12]

    assert sum(prefers(sessions(3, picks, seed=seed)) != [] for seed in range(20)) <= 1


def test_state_attribute_and_noise_fields_never_become_affinities() -> None:
    # Every click is on an item priced 99.9, of size M, badged "new" and in stock: what
    # was clicked is all about those fields, yet none is a taste (only colour and brand,
    # spread at random here, can be).
    def picks(rand: random.Random, shown: dict) -> list[int]:
        return [
            pos
            for pos, v in shown.items()
            if (v["price_sale"], v["size"], v["badge"], v["in_stock"]) == (99.9, "M", "new", True)
        ]

    state = sessions(5, picks)
    found = derive(state, {}, CONFIG, TYPES)
    assert {i.attr for i in found if i.kind == "affinity"} <= {
        "item_variant.color",
        "item_variant.brand",
    }


def test_a_colour_skipped_where_it_was_visible_is_avoided_and_not_where_it_was_not() -> None:
    # Red at position 1 of 8 lists, never engaged; the rest engaged: avoid red. Red only
    # below what was visible and never seen: nothing is said about red.
    def lists(red_pos: int, visible: int) -> ProfileState:
        events: list[Any] = []
        for i in range(8):
            colours = ["blue", "green", "white", "beige"]
            colours.insert(red_pos - 1, "red")
            refs = [f"item_variant:acme:{i}-{pos}" for pos in range(1, 6)]
            items = [item(pos, refs[pos - 1], color=c) for pos, c in enumerate(colours, 1)]
            events.append(presented(f"p{i}", _eid(500 + i), items, visible_k=visible, t=i))
            events += [
                engaged(f"c{i}{pos}", refs[pos - 1], t=40 + i, session=f"s{i % 4}")
                for pos in range(1, 6)
                if colours[pos - 1] != "red"
            ]
        return fold_all(events)

    top = derive(lists(1, 5), {}, CONFIG, TYPES)
    assert affinity(top, "red").polarity == "avoid"
    hidden = derive(lists(5, 4), {}, CONFIG, TYPES)
    assert [i for i in hidden if i.kind == "affinity" and i.value == "red"] == []


def test_a_cart_weighs_more_than_a_click() -> None:
    def person(action: str) -> ProfileState:
        events: list[Any] = []
        for i in range(4):
            colours = ["red", "blue", "green", "white"]
            refs = [f"item_variant:acme:{i}-{pos}" for pos in range(1, 5)]
            items = [item(pos, refs[pos - 1], color=c) for pos, c in enumerate(colours, 1)]
            events.append(presented(f"p{i}", _eid(700 + i), items, visible_k=4, t=i))
        events.append(engaged("c1", "item_variant:acme:0-1", t=50, session="s1"))
        events.append(engaged("c2", "item_variant:acme:1-1", t=51, session="s2"))
        events.append(engaged("c3", "item_variant:acme:2-2", t=52, session="s2"))
        events.append(engaged("c4", "item_variant:acme:1-1", action, t=53, session="s2"))
        return fold_all(events)

    config = CONFIG.model_copy(update={"affinity_min_confidence": 0.01})
    clicked = affinity(derive(person("click"), {}, config, TYPES), "red")
    carted = affinity(derive(person("cart"), {}, config, TYPES), "red")
    assert carted.confidence > clicked.confidence


def test_the_field_posterior_expects_more_of_a_likely_favourite() -> None:
    post = field_posterior({"red": (6.0, 2.0), "blue": (1.0, 2.0), "green": (1.0, 2.0)}, 0.5)
    assert post is not None
    assert post.expected_rate("red") > 2.0 > post.expected_rate("blue") >= 1.0
    assert post.expected_rate("purple") == 1.0  # a value the field never showed
