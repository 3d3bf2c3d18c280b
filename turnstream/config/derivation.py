"""The thresholds of signals derivation: the ``[signals]`` section (docs/signals.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["ENGAGEMENT_ACTIONS", "OUTCOME_KINDS", "SignalsConfig", "SpaceTypes"]

#: Every ``engaged.action`` of the wire format.
ENGAGEMENT_ACTIONS = frozenset({"click", "detail", "mention", "cart", "compare", "share"})
#: Every lifecycle ``outcome`` of the wire format.
OUTCOME_KINDS = frozenset({"purchase", "delivery", "return", "kept"})

_SENSITIVE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?\Z")


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


class SpaceTypes(Protocol):
    """What a space's types document (``models.object_types.ObjectTypes``) tells derivation."""

    def sensitive_names(self) -> frozenset[str]: ...

    def attribute_names(self) -> frozenset[str]: ...


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

    # Affinity (taste fields only): one posterior per field over "no taste", "favours v"
    # and "avoids v" (core/derivation/taste.py, docs/signals.md). An affinity needs
    # P(favours v) >= ``affinity_min_confidence``, ``affinity_min_events`` engaged objects
    # with the value over ``affinity_min_sessions`` sessions and a lift of
    # ``affinity_min_lift``; ``taste_prior`` is the prior mass of "the person favours or
    # avoids one value of the field" on a field without a prior fitted across the space's
    # people by the nightly job (core/derivation/field_prior.py).
    affinity_min_signal: Positive = 3.0  # kept for old configuration files; not read
    affinity_min_events: AtLeastOne = 2
    affinity_min_sessions: AtLeastOne = 1
    affinity_min_lift: Positive = 1.2
    # 0.7 with taste_prior 0.5, tuned on the two generators of bench/taste_recovery.py
    # (precision >= 0.9 on both) and checked on bench/taste_verify.py (docs/signals.md).
    affinity_min_confidence: Annotated[float, Field(gt=0, lt=1)] = 0.7
    prior_strength: Positive = 4.0  # kept for old configuration files; not read
    #: Kept for old configuration files; affinity no longer reads it (docs/signals.md).
    affinity_weight_scale: Positive = 10.0
    taste_prior: Annotated[float, Field(gt=0, lt=1)] = 0.5

    # Implicit negative
    negative_min_exposures: AtLeastOne = 3
    negative_min_effective_exposure: Positive = 1.5
    negative_weight: Annotated[float, Field(gt=0, le=1)] = 0.5

    # Interest
    interest_min_engagements: AtLeastOne = 2
    interest_weight_scale: Positive = 5.0

    # Lift, provenance, privacy
    #: The rate an ``interest``'s lift is taken against (an object has no prior).
    neutral_prior: Positive = 1.0
    max_origin_events: AtLeastOne = 50
    sensitive: Annotated[frozenset[str], AfterValidator(_sensitive_names)] = frozenset(
        {"health_plan", "person.diet"}
    )

    # The block: soft entries kept at most, the strongest first.
    block_soft_max: AtLeastOne = 8

    # The raw window: a person's evidence (pages with their values, engagement and outcome
    # payloads) is kept this many days past the person's newest event; older evidence is
    # settled into the per-value and per-object counts and dropped, and an event older
    # than that when it arrives is not folded. The raw interactions' TTL (45 days).
    raw_window_days: AtLeastOne = 45

    # The gift bucket is disposable: it serves the gift being chosen (what was shown and
    # disliked for it, its purchase and an early return) and goes once the person's newest
    # event is this many days past the bucket's newest (event time, so live = replay).
    gift_days: AtLeastOne = 7

    # A value-level avoid (soft): P(avoids v) of the field's posterior at least
    # ``avoid_min_confidence``, over at least ``avoid_min_exposure`` effective exposure of
    # the value, with no engaged object of it.
    avoid_min_confidence: Annotated[float, Field(gt=0, lt=1)] = 0.9
    avoid_prior: Annotated[float, Field(gt=0, lt=1)] = 0.3
    avoid_min_exposure: Positive = 3.0
    avoid_weight: Annotated[float, Field(gt=0, le=1)] = 0.5

    # Not in the spec: how many idempotency keys a profile remembers to fold each event once.
    max_folded_keys: AtLeastOne = 10_000

    # Not in the spec: the ``type.field`` names an outcome's ``attrs`` gives a size of,
    # beside ``size`` (``attrs.shoe_size`` of an ``item_variant``: its
    # ``item_variant.shoe_size``); the engine adds the attribute fields of the space's
    # types, so a shoe's size and a shirt's are counted apart.
    size_fields: frozenset[str] = frozenset()

    def with_size_fields(self, names: frozenset[str]) -> SignalsConfig:
        """This config with ``names`` (``type.field``) counted as sizes too."""
        if names <= self.size_fields:
            return self
        return self.model_copy(update={"size_fields": self.size_fields | names})

    def for_space(self, types: SpaceTypes | None) -> SignalsConfig:
        """This config for a space whose types document is ``types`` (``None``: none):
        its sensitive types and fields, and its attribute fields as sizes, added. What
        derivation, the retention fold and the field priors of the space all count by."""
        if types is None:
            return self
        return self.with_sensitive(types.sensitive_names()).with_size_fields(
            types.attribute_names()
        )

    def with_sensitive(self, names: frozenset[str]) -> SignalsConfig:
        """This config with ``names`` (types or ``type.field``) sensitive too."""
        if names <= self.sensitive:
            return self
        return self.model_copy(update={"sensitive": self.sensitive | names})

    def is_sensitive(self, attr_or_type: str) -> bool:
        """Whether a type (``health_plan``) or a ``type.field`` is sensitive, by type or field."""
        return attr_or_type in self.sensitive or attr_or_type.split(".", 1)[0] in self.sensitive
