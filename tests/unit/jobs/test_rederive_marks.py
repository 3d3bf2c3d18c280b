"""The hash a space's re-derivation is marked with: what derivation reads, nothing else."""

from __future__ import annotations

from turnstream.core.derivation.field_prior import FieldPrior
from turnstream.jobs.rederive import DEFAULTS, priors_hash

COLOUR = FieldPrior(0.9, (1.0, 2.0), (0.25, 0.75), 40)


def test_the_same_priors_in_any_order_hash_alike() -> None:
    one = {("item_variant.color", "red"): 0.1, ("item_variant.color", "blue"): 0.4}
    other = dict(reversed(list(one.items())))
    assert priors_hash(one, {"item_variant.color": COLOUR}) == priors_hash(
        other, {"item_variant.color": COLOUR}
    )


def test_a_changed_prior_or_fit_hashes_otherwise() -> None:
    priors = {("item_variant.color", "red"): 0.1}
    base = priors_hash(priors, {"item_variant.color": COLOUR})
    assert priors_hash({("item_variant.color", "red"): 0.2}, {"item_variant.color": COLOUR}) != base
    refit = FieldPrior(0.8, COLOUR.lifts, COLOUR.weights, COLOUR.people)
    assert priors_hash(priors, {"item_variant.color": refit}) != base
    assert priors_hash(priors, {}) != base
    assert priors_hash({}, {}) == DEFAULTS
