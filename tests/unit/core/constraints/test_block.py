"""The constraints block: what enters, as what, and what wins a clash."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.unit.core.constraints.builders import (
    COLOR,
    NETWORK,
    NOW,
    PRICE,
    SIZE,
    ago,
    attribute,
    block,
    by_id,
    inference,
    pref,
    rule,
)
from turnstream.core.constraints import Disliked, InvalidViewInput, Presented


@pytest.mark.parametrize("op", ["in", "not_in"])
def test_a_refused_colour_is_a_hard_not_in_never_relaxed(op: str) -> None:
    got = block([pref("p1", COLOR, op, ("black",), "must_not")])
    assert got["hard"] == [
        {
            "id": "p1",
            "attr": COLOR,
            "op": "not_in",
            "values": ["black"],
            "source": "stated",
            "scope": "persistent",
            "category": None,
            "relax": "never",
            "origin": "event:p1",
            "origins": ["event:p1"],
            "expires_at": None,
        }
    ]
    assert got["soft"] == [] and got["relaxation_order"] == ["soft"]


@pytest.mark.parametrize(
    ("op", "values", "expected"),
    [("eq", ("M",), "ne"), ("ne", ("M",), "ne"), ("lte", (100,), "gt"), ("gt", (700,), "lte")],
)
def test_a_refusal_turns_each_operator_into_its_opposite(
    op: str, values: tuple, expected: str
) -> None:
    got = block([pref("p1", SIZE, op, values, "must_not")])
    assert (got["hard"][0]["op"], got["hard"][0]["values"]) == (expected, list(values))


def test_a_must_is_hard_and_may_be_relaxed_after_asking() -> None:
    got = block([pref("p1", PRICE, "lte", (700,), "must")])
    assert (got["hard"][0]["op"], got["hard"][0]["relax"]) == ("lte", "ask")
    assert got["relaxation_order"] == ["soft", "p1"]


def test_a_prefer_is_soft_with_full_weight() -> None:
    got = block([pref("p1", COLOR, "in", ("navy",), "prefer", scope="session", hours_ago=2)])
    assert got["hard"] == []
    assert got["soft"] == [
        {
            "id": "p1",
            "attr": COLOR,
            "op": "in",
            "values": ["navy"],
            "polarity": "prefer",
            "weight": 1.0,
            "confidence": 1.0,
            "kind": "preference",
            "source": "stated",
            "scope": "session",
            "category": None,
            "origin": "event:p1",
            "origins": ["event:p1"],
            "expires_at": "2026-09-30T12:00:00+00:00",
            "inferred": False,
        }
    ]


def test_an_avoid_names_the_avoided_values() -> None:
    got = block([pref("p1", COLOR, "not_in", ("black",), "avoid")])
    assert (got["soft"][0]["op"], got["soft"][0]["polarity"]) == ("in", "avoid")


def test_an_inference_is_never_hard() -> None:
    got = block(
        inferences=[
            inference("inf_a", "affinity", COLOR, "navy", weight=0.4, confidence=0.8),
            inference(
                "inf_n",
                "implicit_negative",
                "item_variant.ref",
                "item_variant:acme:9",
                polarity="avoid",
                weight=0.5,
            ),
        ]
    )
    assert got["hard"] == []
    assert [(s["id"], s["polarity"], s["weight"], s["inferred"]) for s in got["soft"]] == [
        ("inf_n", "avoid", 0.5, True),
        ("inf_a", "prefer", 0.4, True),
    ]
    assert by_id(got["soft"])["inf_a"]["confidence"] == 0.8
    assert by_id(got["soft"])["inf_a"]["values"] == ["navy"]


def test_only_active_inferences_of_this_person_enter() -> None:
    got = block(
        inferences=[
            inference("inf_deleted", "affinity", COLOR, "navy", status="deleted"),
            inference("inf_other", "affinity", COLOR, "red", profile="p2"),
        ]
    )
    assert got["soft"] == []


def test_the_newer_stated_constraint_wins_and_both_stay() -> None:
    old = pref("p_old", COLOR, "in", ("black",), "must", hours_ago=5)
    new = pref("p_new", COLOR, "in", ("black",), "must_not", hours_ago=1)
    got = block([old, new])
    assert [h["id"] for h in got["hard"]] == ["p_new", "p_old"]
    assert by_id(got["hard"])["p_old"]["lost"] is True
    assert "lost" not in by_id(got["hard"])["p_new"]
    assert got["conflicts"] == [
        {
            "entries": ["p_new", "p_old"],
            "kept": "p_new",
            "reason": "current_utterance",
            "ask": COLOR,
        }
    ]
    # The lost must no longer relaxes anything; the standing must_not is never relaxed.
    assert got["relaxation_order"] == ["soft"]


def test_the_winner_is_the_newest_whatever_the_order_given() -> None:
    old = pref("p_b", SIZE, "eq", ("M",), "must", hours_ago=30)
    new = pref("p_a", SIZE, "eq", ("L",), "must", hours_ago=2)
    assert block([old, new])["conflicts"] == block([new, old])["conflicts"]
    assert block([old, new])["conflicts"][0]["kept"] == "p_a"


@pytest.mark.parametrize(
    ("a", "b", "clash"),
    [
        (("eq", ("M",)), ("eq", ("L",)), True),
        (("eq", ("M",)), ("eq", ("M",)), False),
        (("lte", (100,)), ("gte", (200,)), True),
        (("lte", (200,)), ("gte", (100,)), False),
        (("in", ("black", "navy")), ("not_in", ("black",)), False),
    ],
)
def test_only_entries_that_cannot_both_hold_conflict(a: tuple, b: tuple, clash: bool) -> None:
    got = block(
        [
            pref("p1", PRICE, a[0], a[1], "must", hours_ago=3),
            pref("p2", PRICE, b[0], b[1], "must", hours_ago=1),
        ]
    )
    assert bool(got["conflicts"]) is clash
    assert len(got["hard"]) == (1 if a == b else 2)  # the same thing said twice: one entry


def test_stated_beats_inferred_even_when_older() -> None:
    stated = pref("p1", COLOR, "in", ("black",), "avoid", hours_ago=500)
    inferred = inference("inf_black", "affinity", COLOR, "black")
    got = block([stated], inferences=[inferred])
    assert got["conflicts"] == [
        {
            "entries": ["inf_black", "p1"],
            "kept": "p1",
            "reason": "stated_over_inferred",
            "ask": COLOR,
        }
    ]
    assert by_id(got["soft"])["inf_black"]["lost"] is True
    assert "lost" not in by_id(got["soft"])["p1"]


def test_a_hard_refusal_beats_an_inferred_liking_of_the_same_value() -> None:
    got = block(
        [pref("p1", COLOR, "in", ("black",), "must_not")],
        inferences=[inference("inf_black", "affinity", COLOR, "black")],
    )
    assert got["conflicts"][0]["kept"] == "p1"
    assert by_id(got["soft"])["inf_black"]["lost"] is True


def test_a_stated_soft_and_an_inferred_one_leaning_the_same_way_do_not_conflict() -> None:
    got = block(
        [pref("p1", COLOR, "in", ("black",), "prefer")],
        inferences=[inference("inf_black", "affinity", COLOR, "black")],
    )
    assert got["conflicts"] == []


def test_rules_come_by_rank_and_a_clash_between_rules_goes_to_the_lower_rank() -> None:
    rules = [
        rule("r_third", 3, "Offer the acme network.", NETWORK, "in", "acme"),
        rule("r_first", 1, "Never offer the acme network.", NETWORK, "not_in", "acme"),
        rule("r_second", 2, "Quote monthly prices with taxes."),
    ]
    got = block(rules=rules)
    assert got["rules"] == [
        {
            "id": "r_first",
            "rank": 1,
            "origin": "policy:v3",
            "text": "Never offer the acme network.",
        },
        {
            "id": "r_second",
            "rank": 2,
            "origin": "policy:v3",
            "text": "Quote monthly prices with taxes.",
        },
        {
            "id": "r_third",
            "rank": 3,
            "origin": "policy:v3",
            "text": "Offer the acme network.",
            "lost": True,
        },
    ]
    assert got["conflicts"] == [
        {"entries": ["r_first", "r_third"], "kept": "r_first", "reason": "rule_rank"}
    ]


def test_session_constraints_last_24_hours_persistent_ones_stay_turn_ones_never_enter() -> None:
    got = block(
        [
            pref("fresh", COLOR, "in", ("red",), "prefer", scope="session", hours_ago=23),
            pref("stale", COLOR, "in", ("blue",), "prefer", scope="session", hours_ago=25),
            pref("edge", COLOR, "in", ("teal",), "prefer", scope="session", hours_ago=24),
            pref("old", COLOR, "in", ("navy",), "prefer", scope="persistent", hours_ago=900),
            pref("now", COLOR, "in", ("pink",), "prefer", scope="turn", hours_ago=0),
        ]
    )
    assert [s["id"] for s in got["soft"]] == ["fresh", "old"]
    assert by_id(got["soft"])["fresh"]["expires_at"] == "2026-09-29T15:00:00+00:00"
    assert by_id(got["soft"])["old"]["expires_at"] is None


def test_a_session_read_sees_only_its_own_session_constraints() -> None:
    prefs = [
        pref("mine", COLOR, "in", ("red",), "must", scope="session", session="s1"),
        pref("other", SIZE, "eq", ("M",), "must", scope="session", session="s2"),
        pref("always", PRICE, "lte", (700,), "must", session="s2", hours_ago=2),
    ]
    assert [h["id"] for h in block(prefs, session="s1")["hard"]] == ["mine", "always"]
    assert [h["id"] for h in block(prefs)["hard"]] == ["mine", "other", "always"]


def test_an_inferred_size_applies_only_when_asked() -> None:
    size = inference("inf_size", "attribute", SIZE, "M", polarity=None, confidence=0.5)
    assert block(inferences=[size])["attributes"] == []
    assert block(inferences=[size], asked=("color",))["attributes"] == []
    asked = block(inferences=[size], asked=("size",))["attributes"]
    assert asked == [
        {
            "id": "inf_size",
            "attr": SIZE,
            "value": "M",
            "system": "BR",  # the measuring system the types declare for the field
            "source": "inferred",
            "applies": "when_asked",
            "confidence": 0.5,
            "inferred": True,
            "origin": None,
        }
    ]
    assert block(inferences=[size], asked=(SIZE,))["attributes"] == asked


def test_a_stated_attribute_always_applies_one_not_said_only_when_asked() -> None:
    said = attribute("a1", "person.size", "M", system="BR")
    bought = attribute("a2", "person.shoe_size", "41", source="acquired")
    got = block(attributes=[said, bought])
    assert [(a["id"], a["applies"]) for a in got["attributes"]] == [("a1", "always")]
    asked = block(attributes=[said, bought], asked=("shoe_size",))
    assert [(a["id"], a["applies"]) for a in asked["attributes"]] == [
        ("a2", "when_asked"),
        ("a1", "always"),
    ]


def test_a_stated_attribute_beats_an_inferred_one() -> None:
    got = block(
        attributes=[attribute("a1", SIZE, "L")],
        inferences=[inference("inf_size", "attribute", SIZE, "M", polarity=None)],
        asked=("size",),
    )
    assert got["conflicts"] == [
        {"entries": ["a1", "inf_size"], "kept": "a1", "reason": "stated_over_inferred", "ask": SIZE}
    ]
    assert by_id(got["attributes"])["inf_size"]["lost"] is True


def test_a_gift_yields_no_attributes() -> None:
    got = block(
        [pref("p1", COLOR, "in", ("red",), "prefer", for_="gift")],
        attributes=[attribute("a1", SIZE, "M", for_="gift")],
        inferences=[inference("inf_size", "attribute", SIZE, "M", polarity=None, for_="gift")],
        asked=("size",),
        for_="gift",
    )
    assert got["attributes"] == []
    assert [s["id"] for s in got["soft"]] == ["p1"]
    assert got["subject"] == {"profile_id": "p1", "for": "gift"}


def test_a_beneficiary_block_holds_only_that_beneficiary_entries() -> None:
    prefs = [
        pref("mine", SIZE, "eq", ("L",), "must"),
        pref("kid", SIZE, "eq", ("4T",), "must", for_="beneficiary:kid"),
        pref("other_kid", SIZE, "eq", ("8",), "must", for_="beneficiary:teen"),
    ]
    attrs = [attribute("a_kid", "person.size", "4T", for_="beneficiary:kid")]
    infs = [inference("inf_self", "affinity", COLOR, "navy")]
    kid = block(prefs, attrs, infs, for_="beneficiary:kid")
    assert [h["id"] for h in kid["hard"]] == ["kid"]
    assert [a["id"] for a in kid["attributes"]] == ["a_kid"]
    assert kid["soft"] == [] and kid["conflicts"] == []
    me = block(prefs, attrs, infs)
    assert [h["id"] for h in me["hard"]] == ["mine"] and me["attributes"] == []


def test_objects_not_to_offer_and_already_presented() -> None:
    got = block(
        presented=[Presented("sku:b", 2), Presented("sku:a", 1), Presented("sku:a", 2)],
        disliked=[Disliked("sku:z"), Disliked("sku:c"), Disliked("sku:z")],
    )
    assert got["already_presented"] == [{"ref": "sku:a", "times": 3}, {"ref": "sku:b", "times": 2}]
    assert got["exclude"] == ["sku:c", "sku:z"]


def test_precedence_and_ask() -> None:
    got = block(delivery_elsewhere=True)
    assert got["precedence"] == ["current_utterance", "stated_persistent", "inferred"]
    assert got["ask"] == ["for_whom"]
    assert block()["ask"] == []


def test_relaxation_order_lists_the_relaxable_hard_entries_newest_first() -> None:
    got = block(
        [
            pref("older", PRICE, "lte", (700,), "must", hours_ago=3),
            pref("newer", SIZE, "eq", ("M",), "must", hours_ago=1),
            pref("never", COLOR, "in", ("black",), "must_not", hours_ago=0.5),
        ]
    )
    assert got["relaxation_order"] == ["soft", "newer", "older"]


def test_an_empty_block_has_the_exact_shape() -> None:
    got = block()
    body = {
        "subject": {"profile_id": "p1", "for": "self"},
        "hard": [],
        "soft": [],
        "attributes": [],
        "exclude": [],
        "already_presented": [],
        "relaxation_order": ["soft"],
        "precedence": ["current_utterance", "stated_persistent", "inferred"],
        "rules": [],
        "conflicts": [],
        "ask": [],
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    assert got == {
        **body,
        "language": "en",
        "text": "",
        "version": "cv_" + hashlib.sha256(canonical.encode()).hexdigest()[:16],
    }
    # The language, like the text, is how the block reads, not what it holds.
    assert block(language="es")["version"] == got["version"]


def test_the_version_is_stable_follows_the_content_and_ignores_the_text() -> None:
    prefs = [pref("p1", PRICE, "lte", (700,), "must"), pref("p2", COLOR, "in", ("red",), "prefer")]
    first, again = block(prefs), block(list(reversed(prefs)))
    assert first["version"] == again["version"]
    assert first["version"].startswith("cv_") and len(first["version"]) == 19
    pt = block(prefs, language="pt")
    assert pt["text"] != first["text"] and pt["version"] == first["version"]
    labelled = block(prefs, labels={PRICE: "mensalidade"})
    assert labelled["text"] != first["text"] and labelled["version"] == first["version"]
    changed = block([pref("p1", PRICE, "lte", (800,), "must"), prefs[1]])
    assert changed["version"] != first["version"]


def test_the_version_hashes_the_block_without_text_language_and_version() -> None:
    got = block([pref("p1", PRICE, "lte", (700,), "must")])
    body = {k: v for k, v in got.items() if k not in ("text", "language", "version")}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    assert got["version"] == "cv_" + digest.hexdigest()[:16]


def test_now_must_carry_a_zone() -> None:
    with pytest.raises(InvalidViewInput):
        block(now=NOW.replace(tzinfo=None))


def test_a_session_constraint_said_in_the_last_second_is_in() -> None:
    got = block(
        [pref("p1", COLOR, "in", ("red",), "must", scope="session", hours_ago=0)],
        now=ago(0),
    )
    assert got["hard"][0]["expires_at"] == "2026-09-30T14:00:00+00:00"
