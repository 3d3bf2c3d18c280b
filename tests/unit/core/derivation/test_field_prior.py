"""A taste field's prior fitted across people: a noise field fits a share near 0, a
planted taste field a share near 1 with its lift, too few people give no fit, the fit
is deterministic, and derivation takes it in place of ``taste_prior``."""

from __future__ import annotations

import importlib
import math
import random

import pytest

from tests.unit.core.derivation.builders import CONFIG, TYPES
from tests.unit.core.derivation.test_tastes import sessions
from turnstream.core.derivation import ProfileState, derive
from turnstream.core.derivation.derive import field_counts
from turnstream.core.derivation.field_prior import FieldPrior, fit_field_prior
from turnstream.core.derivation.taste import FAVOUR_LIFTS, favour_log_bfs, field_posterior

VALUES = ("a", "b", "c", "d", "e", "f")


def _poisson(rand: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, rand.random()
    while p > limit:
        k += 1
        p *= rand.random()
    return k


def _people(
    n: int, share: float, lift: float, seed: int = 1, exposure: float = 10.0, rate: float = 0.3
) -> list[dict[str, tuple[float, float]]]:
    """``n`` people's counts on a field of six values, each exposed ``exposure``; a share
    ``share`` of them engage ``lift`` times more with one value of their own."""
    rand = random.Random(seed)
    out = []
    for _ in range(n):
        favourite = rand.choice(VALUES) if rand.random() < share else None
        out.append(
            {
                v: (
                    float(_poisson(rand, rate * exposure * (lift if v == favourite else 1))),
                    exposure,
                )
                for v in VALUES
            }
        )
    return out


def test_a_noise_field_fits_a_share_near_zero() -> None:
    fit = fit_field_prior(_people(200, share=0.0, lift=1.0))
    assert fit is not None and fit.people == 200
    assert fit.taste_prior < 0.1


def test_a_planted_taste_field_fits_a_share_near_one_and_its_lift() -> None:
    fit = fit_field_prior(_people(200, share=1.0, lift=6.0))
    assert fit is not None
    assert fit.taste_prior > 0.8
    assert 4.0 <= fit.lift <= 8.0
    assert math.isclose(sum(fit.weights), 1.0, abs_tol=1e-5)
    assert fit.lifts == FAVOUR_LIFTS


def test_half_the_people_with_a_taste_fit_about_half() -> None:
    fit = fit_field_prior(_people(400, share=0.5, lift=8.0, exposure=15.0))
    assert fit is not None
    assert 0.3 <= fit.taste_prior <= 0.7


def test_below_the_floor_of_people_with_evidence_there_is_no_fit() -> None:
    people = _people(9, share=1.0, lift=6.0)
    assert fit_field_prior(people) is None
    # people without evidence on the field (no engagement, or fewer than MIN_ENGAGED
    # engaged objects) do not count toward it
    idle = [{v: (0.0, 5.0) for v in VALUES}] * 20
    few = [{v: (1.0 if v in "abc" else 0.0, 5.0) for v in VALUES}] * 20
    assert fit_field_prior([*people, *idle, *few]) is None
    assert fit_field_prior([*people, *few], min_engaged=3) is not None
    assert fit_field_prior(people, floor=5) is not None


def test_the_fit_is_deterministic_whatever_the_order_of_people() -> None:
    people = _people(120, share=0.7, lift=4.0, seed=5)
    first = fit_field_prior(people)
    assert first == fit_field_prior(list(people))
    assert first == fit_field_prior(list(reversed(people)))


def test_the_fit_maximizes_the_marginal_likelihood() -> None:
    people = _people(150, share=0.6, lift=6.0, seed=9)
    fit = fit_field_prior(people)
    assert fit is not None

    def loglik(pi: float, weights: tuple[float, ...]) -> float:
        total = 0.0
        for counts in people:
            bfs = favour_log_bfs(counts)
            if bfs is None:
                continue
            mean = sum(
                w * math.exp(b) for row in bfs for w, b in zip(weights, row, strict=True)
            ) / len(bfs)
            total += math.log((1 - pi) + pi * mean)
        return total

    best = loglik(fit.taste_prior, fit.weights)
    uniform = tuple(1 / len(FAVOUR_LIFTS) for _ in FAVOUR_LIFTS)
    for pi in (0.05, 0.3, 0.5, 0.9, 0.99):
        assert best >= loglik(pi, uniform) - 1e-6
        assert best >= loglik(pi, fit.weights) - 0.05  # MAP, near the maximum


def test_uniform_weights_are_the_default_average() -> None:
    counts = {"a": (3.0, 4.0), "b": (1.0, 5.0), "c": (0.0, 4.0)}
    plain = field_posterior(counts, 0.5)
    weighted = field_posterior(counts, 0.5, lift_weights=[0.2] * len(FAVOUR_LIFTS))
    assert plain is not None and weighted is not None
    assert weighted.favour == pytest.approx(plain.favour)
    assert weighted.favour_lift == pytest.approx(plain.favour_lift)


NOISE = FieldPrior(0.02, FAVOUR_LIFTS, (0.2,) * 5, people=100)
STRONG = FieldPrior(0.95, FAVOUR_LIFTS, (0.05, 0.6, 0.25, 0.05, 0.05), people=100)


def _prefers(state: ProfileState, field_priors: dict[str, FieldPrior] | None) -> list:
    return [
        (i.attr, i.value)
        for i in derive(state, {}, CONFIG, TYPES, field_priors)
        if i.kind == "affinity" and i.polarity == "prefer" and i.status == "active"
    ]


def _random(rand: random.Random, shown: dict) -> list[int]:
    return [pos for pos in shown if pos <= 8 and rand.random() < 0.12]


def _red(rand: random.Random, shown: dict) -> list[int]:
    return [
        pos
        for pos, v in shown.items()
        if pos <= 8 and rand.random() < (0.6 if v["color"] == "red" else 0.03)
    ]


def test_a_field_fitted_to_no_taste_yields_no_affinity_where_the_default_gave_one() -> None:
    # Clicks at random: with the default prior, people 22 and 28 of 30 get an affinity.
    fitted = {"item_variant.color": NOISE, "item_variant.brand": NOISE}
    default = [_prefers(sessions(3, _random, seed=seed), None) for seed in range(30)]
    assert sum(bool(found) for found in default) == 2
    assert not any(_prefers(sessions(3, _random, seed=seed), fitted) for seed in range(30))


def test_a_field_fitted_to_a_strong_taste_names_it_sooner() -> None:
    red = [("item_variant.color", "red")]
    for count, default_found, fitted_found in ((1, 3, 6), (2, 12, 17)):
        states = [sessions(count, _red, seed=seed) for seed in range(20)]
        assert sum(_prefers(s, None) == red for s in states) == default_found
        states = [sessions(count, _red, seed=seed) for seed in range(20)]
        fitted = [_prefers(s, {"item_variant.color": STRONG}) for s in states]
        assert sum(f == red for f in fitted) == fitted_found
        assert all(f in ([], red) for f in fitted)


def test_field_counts_are_the_persons_own_per_taste_field_explained_away() -> None:
    counts = field_counts(sessions(2, _red, seed=1), {}, CONFIG)
    assert {"item_variant.color", "item_variant.brand", "item_variant.badge"} <= set(counts)
    engaged = sum(n for n, _ in counts["item_variant.color"].values())
    assert engaged == sum(n for n, _ in counts["item_variant.brand"].values()) > 0
    tastes = field_counts(sessions(2, _red, seed=1), {}, CONFIG, TYPES)
    assert tastes.keys() == {"item_variant.color", "item_variant.brand"}
    # Explained away: a brand's exposure is scaled by what the colour's first posterior
    # expects of its objects (red clicked: red objects count as more exposure).
    assert tastes["item_variant.brand"] != counts["item_variant.brand"]
    assert {v: n for v, (n, _) in tastes["item_variant.brand"].items()} == {
        v: n for v, (n, _) in counts["item_variant.brand"].items()
    }


def _both(rand: random.Random, shown: dict) -> list[int]:
    """A person who favours red and brand b1, each on its own."""
    return [
        pos
        for pos, v in shown.items()
        if pos <= 8
        and rand.random()
        < (0.6 if v["color"] == "red" else 0.03) + (0.5 if v["brand"] == "b1" else 0.0)
    ]


TRUTH = {("item_variant.color", "red"), ("item_variant.brand", "b1")}
#: The derive module itself (the package's ``derive`` is the function).
DERIVE = importlib.import_module("turnstream.core.derivation.derive")


def _found(states: list[ProfileState], field_priors: dict[str, FieldPrior] | None) -> list:
    """Per person, the active ``prefer`` affinities and their confidence."""
    return [
        [
            (i.attr, i.value, i.confidence)
            for i in derive(state, {}, CONFIG, TYPES, field_priors)
            if i.kind == "affinity" and i.polarity == "prefer" and i.status == "active"
        ]
        for state in states
    ]


def test_two_fields_fitted_to_a_common_taste_are_refined_and_name_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fitted = {"item_variant.color": STRONG, "item_variant.brand": STRONG}
    states = [sessions(1, _both, seed=seed) for seed in range(30)]
    refined = _found(states, fitted)
    monkeypatch.setattr(DERIVE, "COMMON_TASTE", 2.0)  # no field is common: no refinement
    plain = _found(states, fitted)
    assert refined != plain
    assert sum(len(found) for found in refined) == 33
    assert sum(len(found) for found in plain) == 32
    assert all({(a, v) for a, v, _ in found} <= TRUTH for found in refined + plain)


def test_a_field_fitted_below_the_common_share_is_judged_as_without_refinement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    below = FieldPrior(0.4, FAVOUR_LIFTS, STRONG.weights, people=100)
    above = FieldPrior(0.6, FAVOUR_LIFTS, STRONG.weights, people=100)
    states = [sessions(1, _both, seed=seed) for seed in range(30)]
    one_common = {"item_variant.color": STRONG, "item_variant.brand": below}
    both_common = {"item_variant.color": STRONG, "item_variant.brand": above}
    found = _found(states, one_common), _found(states, both_common)
    monkeypatch.setattr(DERIVE, "COMMON_TASTE", 2.0)
    # One common field has no other common field to be refined against: as before.
    assert found[0] == _found(states, one_common)
    assert found[1] != _found(states, both_common)


def test_without_field_priors_nothing_is_refined(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fitted prior equal to the defaults (share 0.5, the grid alike) derives as no fit
    # does when it is not refined, and otherwise when it is: no fit is never refined.
    as_default = FieldPrior(CONFIG.taste_prior, FAVOUR_LIFTS, (0.2,) * 5, people=100)
    fitted = {"item_variant.color": as_default, "item_variant.brand": as_default}
    states = [sessions(1, _both, seed=seed) for seed in range(30)]
    default, refined = _found(states, None), _found(states, fitted)
    monkeypatch.setattr(DERIVE, "COMMON_TASTE", 2.0)
    assert _found(states, fitted) == default != refined
