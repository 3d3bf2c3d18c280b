"""The signals settings: documented defaults, refused nonsense."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from turnstream.core.derivation import SignalsConfig


def test_defaults_are_the_documented_numbers() -> None:
    config = SignalsConfig()
    assert (config.oldest_pending_seconds, config.quiet_seconds) == (300, 60)
    assert config.engagement_weights == {
        "click": 1,
        "detail": 1,
        "mention": 1,
        "compare": 1,
        "share": 1,
        "cart": 2,
    }
    assert (config.like_weight, config.dislike_weight) == (2, -2)
    assert config.outcome_weights == {"purchase": 3, "kept": 1, "return": -2}
    assert (
        config.affinity_min_signal,
        config.affinity_min_events,
        config.affinity_min_sessions,
        config.affinity_min_lift,
        config.affinity_min_confidence,
        config.prior_strength,
    ) == (3, 2, 1, 1.2, 0.7, 4.0)
    assert config.taste_prior == 0.5
    assert (config.avoid_min_confidence, config.avoid_min_exposure) == (0.9, 3.0)
    assert config.block_soft_max == 8
    assert (
        config.negative_min_exposures,
        config.negative_min_effective_exposure,
        config.negative_weight,
    ) == (3, 1.5, 0.5)
    assert (config.interest_min_engagements, config.interest_weight_scale) == (2, 5)
    assert (config.neutral_prior, config.max_origin_events) == (1.0, 50)
    assert config.sensitive == {"health_plan", "person.diet"}


@pytest.mark.parametrize(
    "bad",
    [
        {"quiet_seconds": 0},
        {"oldest_pending_seconds": -1},
        {"affinity_min_lift": 0},
        {"neutral_prior": 0},
        {"negative_weight": 1.5},
        {"max_origin_events": 0},
        {"dislike_weight": 2},
        {"engagement_weights": {"wink": 1}},
        {"outcome_weights": {"refund": 1}},
        {"sensitive": ["Health Plan"]},
        {"unknown_threshold": 1},
    ],
)
def test_nonsense_is_refused(bad: dict) -> None:
    with pytest.raises(ValidationError):
        SignalsConfig(**bad)


def test_the_config_is_frozen_and_sensitivity_matches_type_or_field() -> None:
    config = SignalsConfig(sensitive=frozenset({"health_plan", "person.diet"}))
    with pytest.raises(ValidationError):
        config.quiet_seconds = 1  # type: ignore[misc]
    assert config.is_sensitive("health_plan")
    assert config.is_sensitive("health_plan.copay")
    assert config.is_sensitive("person.diet")
    assert not config.is_sensitive("person.size")
