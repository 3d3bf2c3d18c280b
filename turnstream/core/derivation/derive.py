"""The inference rules: what the evidence of one person says, by docs/signals.md.

:func:`derive` is pure but for one thing: it records the current set in
``state.inferences``, which is how an inference keeps its ``created_at`` and how a
tombstoned one stays listed as deleted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.evidence import MICRO, Keyed
from turnstream.core.derivation.field_prior import FieldPrior
from turnstream.core.derivation.inference import (
    Evidence,
    Inference,
    InferenceKind,
    inference_id,
)
from turnstream.core.derivation.shrinkage import field_means
from turnstream.core.derivation.spellings import FieldValues, field_values
from turnstream.core.derivation.state import BucketState, ProfileState, resolved
from turnstream.core.derivation.taste import FieldPosterior, field_posterior
from turnstream.core.derivation.values import attr_of, ref_type, size_key, value_key
from turnstream.core.value_ids import ValueIds, value_ids
from turnstream.models.object_types import ObjectTypes

__all__ = ["ShownObject", "derive", "field_counts", "shown_objects"]

#: A field whose fitted prior (:mod:`.field_prior`) says at least this share of the space's
#: people has a taste on it is judged against the others' refined posteriors
#: (:func:`_refined`); any other field, as without a fit, against their first ones: on a
#: field few have a taste on, what sharper explaining away lays bare that no taste
#: explains (a popular object's pull, a recommender's ranking) would pass for a taste.
COMMON_TASTE = 0.5
#: Digits weights, confidences, lifts and evidence figures are rounded to.
_DIGITS = 6


def _round(value: float) -> float:
    return round(value, _DIGITS)


def _confidence(count: int) -> float:
    return _round(1 - 1 / (1 + count))


def _keys(keyed: Keyed) -> tuple[str, ...]:
    return tuple(key for _, key in keyed)


@dataclass(frozen=True)
class _Draft:
    """An inference before its id, owner and times are known."""

    kind: InferenceKind
    attr: str
    value: str
    polarity: Literal["prefer", "avoid"] | None
    weight: float
    confidence: float
    evidence: Evidence
    origin_events: tuple[str, ...]
    applies: Literal["always", "when_asked"] = "always"


#: Per taste field, per value: the engaged objects and the effective exposure.
_Counts = dict[str, dict[str, tuple[float, float]]]
#: One object: its taste values (attr -> value), engaged or not, its effective exposure.
ShownObject = tuple[dict[str, str], float, float]


def _engagement(signal: float) -> float:
    """How much one object's engagement counts, from its weighted signal (a click 1, a
    cart 2, ...): the first unit whole, a quarter for each further unit up to 3, so that
    a click and a cart (1.5) weigh more than a click (1) and more than two clicks (1.25),
    while one object stays about one observation (its events are not independent)."""
    if signal <= 0:
        return 0.0
    return min(signal, 1.0) + 0.25 * max(0.0, min(signal, 3.0) - 1.0)


def _named(field: FieldValues | None, spelling: str) -> str:
    return spelling if field is None else field.name(spelling)


def shown_objects(
    bucket: BucketState,
    tastes: frozenset[str],
    fields: Mapping[str, FieldValues] | None = None,
) -> list[ShownObject]:
    """Each object the person was shown: the values its latest presentation showed for
    the taste fields (each by the name of the value it names in ``fields``, when given:
    :mod:`.spellings`), how much the person engaged with it (:func:`_engagement` of its
    signal per engaged session, times those sessions: an object engaged with again in
    another session is new evidence, clicks in one session are not), and its effective
    exposure (the sum of its showings' examination weights)."""
    out: list[ShownObject] = []
    named = fields or {}
    for ref, stats in sorted(bucket.refs.items()):
        item = bucket.item_of(stats.latest)
        if item is None:
            continue
        values = {
            attr: _named(named.get(attr), value_key(v))
            for name, v in item.shown.items()
            if (attr := attr_of(ref, name)) in tastes
        }
        if values:
            signal = stats.engagement_micro / MICRO
            sessions = max(1, len(stats.sessions))
            engaged = sessions * _engagement(signal / sessions)
            out.append((values, engaged, stats.exposure_micro / MICRO))
    return out


def _counts(
    objects: list[ShownObject], attr: str, others: Mapping[str, FieldPosterior]
) -> dict[str, tuple[float, float, float]]:
    """``attr``'s counts per value (engagement, exposure, engaged objects). Each object's
    exposure is scaled by what the other fields' posteriors expect of it (``others``: the
    product of their :meth:`FieldPosterior.expected_rate`), so that the colour of the
    objects of a loved brand is not taken for a taste of its own (explaining away)."""
    counts: dict[str, list[float]] = {}
    for values, engaged, exposure in objects:
        value = values.get(attr)
        if value is None:
            continue
        scale = 1.0
        for other, post in others.items():
            if other != attr and (shown := values.get(other)) is not None:
                scale *= post.expected_rate(shown)
        tally = counts.setdefault(value, [0.0, 0.0, 0.0])
        tally[0] += engaged
        tally[1] += exposure * scale
        tally[2] += engaged > 0
    return {v: (n, e, k) for v, (n, e, k) in counts.items()}


def _prior(
    priors: Mapping[tuple[str, str], float], attr: str, value: str, field: FieldValues | None
) -> float | None:
    """The space's prior of ``value`` of ``attr``: with several spellings
    (:mod:`.spellings`), the mean of their positive priors."""
    spellings = () if field is None else field.spellings.get(value, ())
    if len(spellings) < 2:
        return priors.get((attr, value))
    found = [p for s in spellings if (p := priors.get((attr, s))) is not None and p > 0]
    return sum(found) / len(found) if found else None


def _scaler(
    priors: Mapping[tuple[str, str], float],
    fields: Mapping[str, FieldValues],
) -> Callable[[str, Mapping[str, tuple[float, float, float]]], dict[str, tuple[float, float]]]:
    """``scaled(attr, counts)``: ``(n, e)`` per value, each exposure scaled by how much the
    space engages with the value anyway (its prior over the field's mean prior; a value of
    several spellings in ``fields``, by :func:`_prior`)."""
    means = field_means(priors)

    def scaled(
        attr: str, counts: Mapping[str, tuple[float, float, float]]
    ) -> dict[str, tuple[float, float]]:
        mean = means.get(attr)
        field = fields.get(attr)
        out = {}
        for v, (n, e, _) in counts.items():
            prior = _prior(priors, attr, v, field)
            out[v] = (n, e * (prior / mean if mean and prior and prior > 0 else 1.0))
        return out

    return scaled


def field_counts(
    state: ProfileState,
    priors: Mapping[tuple[str, str], float],
    config: SignalsConfig,
    types: ObjectTypes | None = None,
) -> dict[str, dict[str, tuple[float, float]]]:
    """The person's own counts per taste field of ``types`` (every field not sensitive
    without), ``self`` bucket, as the second pass of :func:`_affinities` gives them to
    :func:`~turnstream.core.derivation.taste.field_posterior` under the configured
    ``taste_prior`` (explained away by the other fields' first posteriors): what a
    space's field priors are fitted on (:mod:`~turnstream.core.derivation.field_prior`)."""
    bucket = resolved(state, config).buckets.get("self")
    if bucket is None:
        return {}
    fields = frozenset(
        attr
        for attr in bucket.values
        if (types is None or types.is_taste(attr)) and not config.is_sensitive(attr)
    )
    spelled = _field_values(bucket, fields, value_ids(types))
    objects = shown_objects(bucket, fields, spelled)
    scaled = _scaler(priors, spelled)
    posts: dict[str, FieldPosterior] = {}
    for attr in sorted(fields):
        first = field_posterior(
            scaled(attr, _counts(objects, attr, {})), config.taste_prior, config.avoid_prior
        )
        if first is not None:
            posts[attr] = first
    out = {attr: scaled(attr, _counts(objects, attr, posts)) for attr in sorted(fields)}
    return {attr: counts for attr, counts in out.items() if counts}


def _refined(
    objects: list[ShownObject],
    fields: frozenset[str],
    posts: Mapping[str, FieldPosterior],
    posterior: Callable[[str, Mapping[str, tuple[float, float, float]]], FieldPosterior | None],
    common: frozenset[str],
) -> dict[str, FieldPosterior]:
    """The first posteriors, those of the ``common`` fields (see :data:`COMMON_TASTE`)
    taken once more from counts explained away by the others' first posteriors: a field's
    first posterior is diluted by the engagement another field's taste brings to its other
    values, so what it explains away of the others is sharper the second time. Only
    those: a field on the default prior may be one no one has a taste on, and its chance
    favourite would take credit from a true one. Without such fields, ``posts``."""
    out = dict(posts)
    for attr in sorted(fields & common):
        post = posterior(attr, _counts(objects, attr, posts))
        if post is not None:
            out[attr] = post
    return out


def _affinities(
    bucket: BucketState,
    priors: Mapping[tuple[str, str], float],
    config: SignalsConfig,
    types: ObjectTypes | None,
    field_priors: Mapping[str, FieldPrior],
) -> Iterator[_Draft]:
    """Affinities on taste fields, from one posterior per field (:mod:`.taste`): a value
    the person favours (``prefer``) or keeps skipping where others are engaged (``avoid``).

    Counted per object (:func:`_engagement`), in two passes: in the second, each
    object's exposure in a field is scaled by what the other fields' first posteriors
    expect of it (:func:`_counts`); a field most of the space's people have a taste on
    (fitted, :data:`COMMON_TASTE`) is judged against the others' posteriors refined once
    more (:func:`_refined`). A field with a fitted prior in ``field_priors``
    (:mod:`.field_prior`) takes its share of people with a taste and its lift weights;
    any other the configured ``taste_prior`` and the grid alike."""
    if types is None:
        return  # without a types document no field is a taste
    tastes = frozenset(
        attr for attr in bucket.values if types.is_taste(attr) and not config.is_sensitive(attr)
    )
    if not tastes:
        return
    spelled = _field_values(bucket, tastes, value_ids(types))
    objects = shown_objects(bucket, tastes, spelled)
    scaled = _scaler(priors, spelled)

    def posterior(
        attr: str, counts: Mapping[str, tuple[float, float, float]]
    ) -> FieldPosterior | None:
        fitted = field_priors.get(attr)
        if fitted is None:
            return field_posterior(scaled(attr, counts), config.taste_prior, config.avoid_prior)
        return field_posterior(
            scaled(attr, counts),
            fitted.taste_prior,
            config.avoid_prior,
            favour_lifts=fitted.lifts,
            lift_weights=fitted.weights,
        )

    posts: dict[str, FieldPosterior] = {}
    for attr in sorted(tastes):
        first = posterior(attr, _counts(objects, attr, {}))
        if first is not None:
            posts[attr] = first
    common = frozenset(a for a, f in field_priors.items() if f.taste_prior >= COMMON_TASTE)
    sharp = _refined(objects, tastes, posts, posterior, common)
    for attr in sorted(tastes):
        counts = _counts(objects, attr, sharp if attr in common else posts)
        post = posterior(attr, counts)
        if post is None:
            continue
        for value, (_, _, engaged) in sorted(counts.items()):
            stats = spelled[attr].stats.get(value)
            if stats is None:
                continue
            signal = _round(stats.signal_micro / MICRO)
            exposure = _round(stats.exposure_micro / MICRO)
            lift = _round(post.lift[value])
            favour, avoid = _round(post.favour[value]), _round(post.avoid[value])
            evidence = Evidence(exposure, signal, int(engaged), len(stats.sessions), lift)
            if (
                favour >= config.affinity_min_confidence
                and lift >= config.affinity_min_lift
                and engaged >= config.affinity_min_events
                and len(stats.sessions) >= config.affinity_min_sessions
            ):
                yield _Draft(
                    kind="affinity",
                    attr=attr,
                    value=value,
                    polarity="prefer",
                    # As sure as the posterior, as strong as the lift: lift 2 or more weighs 1.
                    weight=_round(favour * min(1.0, math.log2(lift))),
                    confidence=favour,
                    evidence=evidence,
                    # The latest, as many as one spelling keeps (each spelling keeps its own).
                    origin_events=_keys(stats.origin[-config.max_origin_events :]),
                )
            elif (
                avoid >= config.avoid_min_confidence
                and engaged == 0
                and stats.signal_micro <= 0
                and exposure >= config.avoid_min_exposure
            ):
                yield _Draft(
                    kind="affinity",
                    attr=attr,
                    value=value,
                    polarity="avoid",
                    weight=_round(config.avoid_weight * avoid),
                    confidence=avoid,
                    evidence=evidence,
                    origin_events=(),
                )


def _field_values(
    bucket: BucketState, attrs: frozenset[str], ids: ValueIds
) -> dict[str, FieldValues]:
    """The values of each of ``attrs`` by the value they name (:mod:`.spellings`)."""
    return {attr: field_values(attr, bucket.values[attr], ids) for attr in attrs}


def _carries_taste(types: ObjectTypes | None, type_name: str) -> bool:
    """Whether objects of ``type_name`` have a declared taste field."""
    declared = None if types is None else types.types.get(type_name)
    return declared is not None and any(f.role == "taste" for f in declared.fields.values())


def _per_ref(
    bucket: BucketState, config: SignalsConfig, types: ObjectTypes | None
) -> Iterator[_Draft]:
    """Implicit negatives (objects of a type with a taste field only) and interests."""
    for ref, stats in sorted(bucket.refs.items()):
        kind_of_ref = ref_type(ref)
        if config.is_sensitive(kind_of_ref):
            continue
        attr = f"{kind_of_ref}.ref"
        exposure = _round(stats.exposure_micro / MICRO)
        signal = _round(stats.engagement_micro / MICRO)
        if (
            _carries_taste(types, kind_of_ref)
            and stats.exposures >= config.negative_min_exposures
            and exposure >= config.negative_min_effective_exposure
            and stats.engagements == 0
            and stats.outcomes == 0
            and stats.feedback == 0
        ):
            yield _Draft(
                kind="implicit_negative",
                attr=attr,
                value=ref,
                polarity="avoid",
                weight=_round(config.negative_weight),
                confidence=_confidence(stats.exposures),
                evidence=Evidence(effective_exposure=exposure, exposures=stats.exposures),
                origin_events=_keys(stats.exposure_keys),
            )
        if stats.engagements >= config.interest_min_engagements:
            lift = _round(signal / exposure / config.neutral_prior) if exposure > 0 else 0.0
            yield _Draft(
                kind="interest",
                attr=attr,
                value=ref,
                polarity="prefer",
                weight=_round(min(1.0, stats.engagements / config.interest_weight_scale)),
                confidence=_confidence(stats.engagements),
                evidence=Evidence(
                    exposure,
                    signal,
                    stats.engagements,
                    len(stats.sessions),
                    lift,
                    stats.exposures,
                ),
                origin_events=_keys(stats.engaged_keys),
            )


def _sizes(
    bucket: BucketState, config: SignalsConfig, types: ObjectTypes | None
) -> Iterator[_Draft]:
    """The size with the highest net count (at least 1, and alone at the top) per
    attribute field the types declare; applied only when asked."""
    for attr, by_size in sorted(bucket.sizes.items()):
        if types is None or types.role(attr) != "attribute":
            continue
        if config.is_sensitive(attr) or not by_size:
            continue
        best = max(stats.net for stats in by_size.values())
        top = [size for size, stats in by_size.items() if stats.net == best]
        if best < 1 or len(top) != 1:
            continue
        stats = by_size[top[0]]
        yield _Draft(
            kind="attribute",
            attr=attr,
            value=top[0],
            polarity=None,
            weight=1.0,
            confidence=_confidence(stats.net),
            evidence=Evidence(
                weighted_signal=float(stats.net), events=stats.events, sessions=len(stats.sessions)
            ),
            origin_events=_keys(stats.origin),
            applies="when_asked",
        )


def _drafts(
    bucket: BucketState,
    for_: str,
    priors: Mapping[tuple[str, str], float],
    config: SignalsConfig,
    types: ObjectTypes | None,
    field_priors: Mapping[str, FieldPrior],
) -> Iterator[_Draft]:
    yield from _affinities(bucket, priors, config, types, field_priors)
    yield from _per_ref(bucket, config, types)
    if for_ != "gift":  # a gift never becomes an attribute of anyone
        yield from _sizes(bucket, config, types)


def _rests_on(
    bucket: BucketState,
    for_: str,
    draft: _Draft,
    deleted: set[tuple[str, str, str]],
    ids: ValueIds,
) -> bool:
    """Whether an interest rests on a deleted affinity: its object shows the value (in any
    spelling: ``deleted`` holds the values' :meth:`~ValueIds.key`)."""
    if draft.kind != "interest" or not deleted:
        return False
    stats = bucket.refs.get(draft.value)
    item = None if stats is None else bucket.item_of(stats.latest)
    if item is None:
        return False
    shown = ((attr_of(item.ref, name), v) for name, v in item.shown.items())
    return any((for_, attr, ids.key(attr, value_key(v))) in deleted for attr, v in shown)


def _ordered(inferences: Mapping[str, Inference]) -> list[Inference]:
    return sorted(inferences.values(), key=lambda i: (i.for_, i.kind, i.attr, i.value, i.id))


def derive(
    state: ProfileState,
    priors: Mapping[tuple[str, str], float],
    config: SignalsConfig,
    types: ObjectTypes | None = None,
    field_priors: Mapping[str, FieldPrior] | None = None,
) -> list[Inference]:
    """The current inferences of the person: active ones from the rules, and deleted ones.

    ``priors`` maps ``(attr, value)`` to the space's prior rate; a value without one takes
    the mean prior of its field; each is scaled by the person's activity on the field
    (:func:`~turnstream.core.derivation.shrinkage.reference_rates`). ``types`` is the
    space's object types document: only its taste fields get affinities, only its
    attribute fields inferred sizes (none without a document). ``field_priors`` maps a
    taste field to the space's fitted prior for it (:mod:`.field_prior`); a field without
    one takes ``config.taste_prior``.

    An inference is stamped with the ``occurred_at`` of the newest folded event when it
    first appears (``created_at``) and when any of its
    content changes (``updated_at``). A tombstoned id is never active again; one that
    was emitted stays listed as deleted. After an opt-out the stored set is returned
    as it is. Updates ``state.inferences`` to the returned set.
    """
    if state.space_id is None or state.profile_id is None:
        return _ordered(state.inferences)
    if state.opted_out:
        # An objection to profiling: nothing is derived, and what was is withdrawn.
        state.inferences = {}
        return []
    now = state.newest_occurred_at
    assert now is not None  # a state with an owner has folded an event
    current: dict[str, Inference] = {
        iid: old for iid, old in state.inferences.items() if iid in state.tombstones
    }
    # Deleted affinities: what rests on the same evidence (an interest in an object that
    # shows the deleted value) is deleted with them, and never inferred again, whatever
    # spelling of the value now names it (:mod:`.spellings`: ``Black`` deleted, ``black``).
    ids = value_ids(types)
    tombstoned = [
        old
        for iid, old in state.inferences.items()
        if iid in state.tombstones and old.kind == "affinity"
    ]
    deleted_affinities = {(old.for_, old.attr, ids.key(old.attr, old.value)) for old in tombstoned}
    deleted = {
        (old.for_, old.attr, ids.key(old.attr, old.value))
        for old in tombstoned
        if old.polarity == "prefer"
    }
    # A size deleted as it was spelled before its spellings were one (``40.0``, ``m``)
    # stays deleted: its value as counted now (``40``, ``M``) is not inferred again.
    deleted_sizes = {
        (old.for_, old.attr, size_key(old.value))
        for iid, old in state.inferences.items()
        if iid in state.tombstones and old.kind == "attribute"
    }
    for for_, bucket in sorted(resolved(state, config).buckets.items()):
        for draft in _drafts(bucket, for_, priors, config, types, field_priors or {}):
            iid = inference_id(
                state.space_id, state.profile_id, for_, draft.kind, draft.attr, draft.value
            )
            if iid in current:
                continue  # tombstoned and already listed as deleted
            if draft.kind == "attribute" and (for_, draft.attr, draft.value) in deleted_sizes:
                continue  # deleted as spelled before (``40.0``), listed as such above
            if (
                draft.kind == "affinity"
                and (for_, draft.attr, ids.key(draft.attr, draft.value)) in deleted_affinities
            ):
                continue  # deleted as spelled otherwise (``Black``), listed as such above
            fresh = Inference(
                id=iid,
                space_id=state.space_id,
                profile_id=state.profile_id,
                for_=for_,
                kind=draft.kind,
                attr=draft.attr,
                value=draft.value,
                polarity=draft.polarity,
                weight=draft.weight,
                confidence=draft.confidence,
                evidence=draft.evidence,
                origin_events=draft.origin_events,
                applies=draft.applies,
                # A tombstone that came before the evidence: listed as deleted, never
                # active, so the order of a delete and its evidence does not matter.
                status="deleted"
                if iid in state.tombstones or _rests_on(bucket, for_, draft, deleted, ids)
                else "active",
                created_at=now,
                updated_at=now,
            )
            old = state.inferences.get(iid)
            if old is not None:
                fresh = replace(fresh, created_at=old.created_at, updated_at=old.updated_at)
                if fresh != old:
                    fresh = replace(fresh, updated_at=now)
            current[iid] = fresh
    state.inferences = current
    return _ordered(current)
