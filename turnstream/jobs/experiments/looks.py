"""The daily look at an experiment: CUPED beside the raw figures, Holm across the arms, and
the group-sequential verdict (whether the result may be acted on yet).

Pure: the arms' statistics, each person's (success, covariate) per arm, the look number
and the smallest repeated p-values of earlier looks in; a :class:`Look` out.

* The covariate is the same outcome in the ``cuped_days`` before the person's assignment.
* The sequential test reads the CUPED-adjusted z when the adjustment could be made (the
  experiment asks for it and the covariate varies), else the raw pooled z; ``basis`` says
  which. Its repeated p-value is the smallest over this look and the earlier ones
  (:mod:`.sequential`), Holm-adjusted across the arms; an arm whose adjusted repeated
  p-value is at most ``alpha`` has crossed its boundary, and the result may be acted on.
  At the horizon's last look it may be acted on whatever it says: the planned test is over.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from turnstream.jobs.experiments.analysis import (
    CORRECTION,
    Effect,
    cuped_effects,
    holm,
    proportion_effect,
)
from turnstream.jobs.experiments.sequential import (
    METHOD,
    boundaries,
    look_fractions,
    repeated_interval,
    sequential_p_value,
)
from turnstream.jobs.experiments.stats import ArmStats
from turnstream.models.measurement import Experiment

__all__ = ["ArmLook", "Earlier", "Look", "assess", "information", "look_number"]


@dataclass(frozen=True)
class ArmLook:
    """One arm against the baseline at this look (the baseline has none)."""

    name: str
    p_holm: float | None = None
    cuped: Effect | None = None
    cuped_p_holm: float | None = None
    z: float | None = None
    boundary: float | None = None
    seq_p_value: float | None = None
    seq_p_holm: float | None = None
    seq_diff_low: float | None = None
    seq_diff_high: float | None = None


@dataclass(frozen=True)
class Earlier:
    """An arm's earlier looks: ``(look, information)`` each, and its smallest repeated
    p-value so far. Information is ``1 / (1/n + 1/n0)`` with ``n``, ``n0`` the people in
    the arm and the baseline: how much the difference knows."""

    looks: tuple[tuple[int, float], ...] = ()
    seq_p_value: float | None = None


def information(people: int, baseline_people: int) -> float | None:
    """``1 / (1/n + 1/n0)``; None while either arm is empty."""
    if people <= 0 or baseline_people <= 0:
        return None
    return 1 / (1 / people + 1 / baseline_people)


def _schedule(
    look: int, horizon: int, now: float | None, earlier: Earlier
) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
    """Horizon shares and information of the looks so far, this one last.

    Earlier looks count when they came before this one and within the horizon, and hold
    less information than the later ones (a look with no new people adds nothing; the
    later of two equal ones is kept). Past the horizon this look stands at its end.
    """
    k = min(look, horizon)
    if now is None:
        return look_fractions(k, horizon), None
    kept: list[tuple[int, float]] = [(k, now)]
    for j, info in sorted(earlier.looks, reverse=True):
        if 1 <= j < k and j < kept[-1][0] and 0 < info < kept[-1][1]:
            kept.append((j, info))
    kept.reverse()
    return tuple(j / horizon for j, _ in kept), tuple(i for _, i in kept)


@dataclass(frozen=True)
class Look:
    """What the daily look may conclude."""

    method: str
    basis: str
    look: int
    horizon_days: int
    alpha: float
    boundary: float | None
    may_act: bool
    verdict: str
    cuped_days: int
    theta: float | None
    arms: tuple[ArmLook, ...]

    def arm(self, name: str) -> ArmLook:
        """The look at one arm."""
        for arm in self.arms:
            if arm.name == name:
                return arm
        raise KeyError(name)


def look_number(starts_at: datetime, as_of: datetime) -> int:
    """The daily look of ``as_of``: 1 on the start day (0 and below: before the start)."""
    return (as_of.date() - starts_at.date()).days + 1


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _min(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def assess(
    experiment: Experiment,
    arm_stats: Sequence[ArmStats],
    units: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    look: int,
    previous: Mapping[str, Earlier] | None = None,
) -> Look:
    """The look from the arms' statistics (:func:`.stats.compare_arms`): ``units`` maps an
    arm to its people's (success 0/1, covariate) values; ``previous`` an arm to its
    earlier looks."""
    e, previous = experiment, previous or {}
    baseline = e.baseline.name
    base = next(c for c in arm_stats if c.name == baseline)
    others = [c for c in arm_stats if c.name != baseline]
    raw = {
        c.name: proportion_effect(c.successes, c.people, base.successes, base.people)
        for c in others
    }
    theta, adjusted = None, {}
    if e.cuped_days > 0:
        filled = {a: u for a, u in units.items() if len(u[0]) >= 2}
        if baseline in filled and len(filled) > 1:
            theta, adjusted = cuped_effects(
                {a: np.asarray(y, float) for a, (y, _) in filled.items()},
                {a: np.asarray(x, float) for a, (_, x) in filled.items()},
                baseline,
            )
    basis = "cuped" if adjusted and all(c.name in adjusted for c in others) else "raw"
    tested = adjusted if basis == "cuped" else raw

    seq: dict[str, float | None] = {}
    bounds: dict[str, float] = {}
    intervals: dict[str, tuple[float, float] | None] = {}
    for c in others:
        earlier = previous.get(c.name, Earlier())
        effect = tested.get(c.name)
        seq[c.name] = earlier.seq_p_value
        intervals[c.name] = None
        if look < 1:
            continue
        now = information(c.people, base.people)
        fractions, info = _schedule(look, e.horizon_days, now, earlier)
        bounds[c.name] = boundaries(fractions, e.alpha, info)[-1]
        if effect is None or effect.z is None:
            continue
        p_now = sequential_p_value(effect.z, fractions, info)
        seq[c.name] = _min(p_now, earlier.seq_p_value)
        if effect.se and effect.diff is not None:
            intervals[c.name] = repeated_interval(effect.diff, effect.se, fractions, e.alpha, info)
    # The arms' boundaries differ only with their people; the look reports the largest.
    bound = max(bounds.values(), default=math.inf)

    raw_holm = holm([c.p_value for c in others])
    cuped_holm = holm([adjusted[c.name].p_value if c.name in adjusted else None for c in others])
    seq_holm = holm([seq[c.name] for c in others])
    arms = tuple(
        ArmLook(
            name=c.name,
            p_holm=raw_holm[i],
            cuped=adjusted.get(c.name),
            cuped_p_holm=cuped_holm[i],
            z=tested[c.name].z if tested.get(c.name) else None,
            boundary=_finite(bounds.get(c.name)),
            seq_p_value=seq[c.name],
            seq_p_holm=seq_holm[i],
            seq_diff_low=intervals[c.name][0] if intervals[c.name] else None,
            seq_diff_high=intervals[c.name][1] if intervals[c.name] else None,
        )
        for i, c in enumerate(others)
    )
    crossed = [a.name for a in arms if a.seq_p_holm is not None and a.seq_p_holm <= e.alpha]
    horizon = f"look {look} of {e.horizon_days}"
    if look > e.horizon_days:  # "look 338 of 28" read as a look of the plan
        horizon = f"day {look}, past the {e.horizon_days}-day horizon"
    if look < 1:
        verdict = "wait: the experiment has not started"
    elif crossed:
        verdict = f"act: {', '.join(crossed)} differ from {baseline} ({horizon}, {CORRECTION})"
    elif look >= e.horizon_days:
        verdict = f"final: no arm differs from {baseline} at {e.alpha:g} ({horizon})"
    else:
        verdict = f"wait: no arm has crossed its boundary ({horizon})"
    return Look(
        method=METHOD,
        basis=basis,
        look=look,
        horizon_days=e.horizon_days,
        alpha=e.alpha,
        boundary=_finite(bound),
        may_act=bool(crossed) or look >= e.horizon_days,
        verdict=verdict,
        cuped_days=e.cuped_days,
        theta=theta,
        arms=arms,
    )
