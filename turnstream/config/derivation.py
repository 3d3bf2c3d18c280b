"""The thresholds of signals derivation: the ``[signals]`` section (docs/signals.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["ENGAGEMENT_ACTIONS", "OUTCOME_KINDS", "SignalsConfig"]

#: Every ``engaged.action`` of the wire format.
ENGAGEMENT_ACTIONS = frozenset({"click", "detail", "mention", "cart", "compare", "share"})
#: Every lifecycle ``outcome`` of the wire format.
OUTCOME_KINDS = frozenset({"purchase", "delivery", "return", "kept"})

_SENSITIVE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$")


def _known_keys(known: frozenset[str], what: str) -> Callable[[dict[str, float]], dict[str, float]]:
    def check(weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - known)
        if unknown:
            raise ValueError(f"unknown {what} {unknown}; expected some of {sorted(known)}")
        return weights

    return check


def _sensitive_names(names: frozenset[str]) -> frozenset[str]:
    bad = sorted(n for n in names if not _SENSITIVE.match(n))
    if bad:
        raise ValueError(f"not a type or a type.field: {bad}")
    return names


Positive = Annotated[float, Field(gt=0)]
AtLeastOne = Annotated[int, Field(ge=1)]


class SignalsConfig(BaseModel):
    """Every threshold and weight of signals derivation, with the documented defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Triggers
    oldest_pending_seconds: Positive = 300.0
    quiet_seconds: Positive = 60.0

    # Weighted signal
    engagement_weights: Annotated[
        dict[str, float], AfterValidator(_known_keys(ENGAGEMENT_ACTIONS, "actions"))
    ] = Field(
        default_factory=lambda: {
            "click": 1.0,
            "detail": 1.0,
            "mention": 1.0,
            "compare": 1.0,
            "share": 1.0,
            "cart": 2.0,
        }
    )
    like_weight: Annotated[float, Field(ge=0)] = 2.0
    dislike_weight: Annotated[float, Field(le=0)] = -2.0
    outcome_weights: Annotated[
        dict[str, float], AfterValidator(_known_keys(OUTCOME_KINDS, "outcomes"))
    ] = Field(default_factory=lambda: {"purchase": 3.0, "kept": 1.0, "return": -2.0})

    # Affinity
    affinity_min_signal: Positive = 3.0
    affinity_min_events: AtLeastOne = 2
    affinity_min_sessions: AtLeastOne = 1
    affinity_min_lift: Positive = 1.2
    affinity_weight_scale: Positive = 10.0

    # Implicit negative
    negative_min_exposures: AtLeastOne = 3
    negative_min_effective_exposure: Positive = 1.5
    negative_weight: Annotated[float, Field(gt=0, le=1)] = 0.5

    # Interest
    interest_min_engagements: AtLeastOne = 2
    interest_weight_scale: Positive = 5.0

    # Lift, provenance, privacy
    neutral_prior: Positive = 1.0
    max_origin_events: AtLeastOne = 50
    sensitive: Annotated[frozenset[str], AfterValidator(_sensitive_names)] = frozenset(
        {"health_plan", "person.diet"}
    )

    # Not in the spec: how many idempotency keys a profile remembers to fold each event once.
    max_folded_keys: AtLeastOne = 10_000

    def is_sensitive(self, attr_or_type: str) -> bool:
        """Whether a type (``health_plan``) or a ``type.field`` is sensitive, by type or field."""
        return attr_or_type in self.sensitive or attr_or_type.split(".", 1)[0] in self.sensitive
