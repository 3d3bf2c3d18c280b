"""What an experiment's figures must be read with: warnings on plain counts. Pure.

``experiments compare`` and ``experiments analyze`` print them under their tables and put
them in their JSON (``code``, ``message``, the arms concerned). Each code:

* ``multiple_arms``: units found in more than one arm; they are left out of every figure.
* ``critical_source``: people who came through a critical source (never sent to control,
  so they do not follow the split); left out of every figure, the SRM check included.
* ``small_arm``: an arm with fewer units than the minimum count: its interval and
  p-value rest on too few people to act on.
* ``zero_events``: an arm (control included) where no unit had the event: the rate's
  normal approximation fails and a p-value against it overstates what is known.
* ``sample_ratio``: the units per arm do not follow the configured split (chi-square
  p < 0.001): the assignment or the logging is broken; no estimate should be trusted.
* ``peeking``: a fixed-horizon p-value, read at a look that is not the planned last one:
  reading it again as data come in inflates false positives; use the sequential option.
* ``past_horizon``: a look after the planned horizon: the sequential test ended there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CODES",
    "MIN_UNITS",
    "SRM_ALPHA",
    "AnalysisWarning",
    "ArmCounts",
    "arm_warnings",
    "excluded_warnings",
    "horizon_warning",
    "peeking_warning",
    "sample_ratio_warning",
]

#: Every warning's code, in the order the reports print them.
CODES = (
    "multiple_arms",
    "critical_source",
    "small_arm",
    "zero_events",
    "sample_ratio",
    "peeking",
    "past_horizon",
)

#: The default minimum of units an arm needs before its figures are read (a GrowthBook-like
#: floor: below it an interval is wide and a p-value swings with a few people).
MIN_UNITS = 100
#: The sample-ratio check's level (the usual 0.001: a flag means a broken assignment).
SRM_ALPHA = 0.001


@dataclass(frozen=True)
class AnalysisWarning:
    """One warning: a stable ``code``, a sentence, and the arms it concerns."""

    code: str
    message: str
    arms: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "arms": list(self.arms)}


@dataclass(frozen=True)
class ArmCounts:
    """An arm's units and, for a count or a 0/1 metric, its units with the event
    (``None`` for a continuous metric, where zero events mean nothing)."""

    name: str
    units: int
    events: int | None = None


def excluded_warnings(in_several_arms: int, critical_source: int) -> list[AnalysisWarning]:
    """The units the population rule left out (docs/experiments.md, "Who is counted")."""
    out = []
    if in_several_arms:
        out.append(
            AnalysisWarning(
                "multiple_arms",
                f"{in_several_arms} units were found in more than one arm; they are left out "
                "of every figure (the SRM check and the estimates)",
            )
        )
    if critical_source:
        out.append(
            AnalysisWarning(
                "critical_source",
                f"{critical_source} people came through a critical source (never sent to "
                "control); they are left out of every figure (the SRM check and the estimates)",
            )
        )
    return out


def arm_warnings(
    arms: Sequence[ArmCounts], min_units: int = MIN_UNITS, unit: str = "units"
) -> list[AnalysisWarning]:
    """Arms below ``min_units``, and arms where no unit had the event."""
    if min_units < 1:
        raise ValueError(f"min_units: at least 1, not {min_units}")
    out = []
    small = [a for a in arms if a.units < min_units]
    if small:
        listed = ", ".join(f"{a.name} ({a.units})" for a in small)
        out.append(
            AnalysisWarning(
                "small_arm",
                f"arms below the minimum of {min_units} {unit}: {listed}; their intervals and "
                "p-values rest on too few to act on",
                tuple(a.name for a in small),
            )
        )
    empty = [a for a in arms if a.events == 0 and a.units > 0]
    if empty:
        listed = ", ".join(f"{a.name} (0 of {a.units})" for a in empty)
        out.append(
            AnalysisWarning(
                "zero_events",
                f"arms where no unit had the event: {listed}; the normal approximation "
                "fails at 0, so a p-value against it overstates what is known",
                tuple(a.name for a in empty),
            )
        )
    return out


def sample_ratio_warning(
    units: Mapping[str, int], weights: Mapping[str, float], p_value: float | None
) -> AnalysisWarning | None:
    """The SRM flag against the configured split (``weights``), when ``p_value`` is below
    :data:`SRM_ALPHA`."""
    if p_value is None or p_value >= SRM_ALPHA:
        return None
    total = sum(units.values())
    weight = sum(weights.get(a, 1.0) for a in units) or 1.0
    seen = ", ".join(
        f"{a} {n} ({n / total:.1%} against {weights.get(a, 1.0) / weight:.1%})"
        for a, n in units.items()
    )
    return AnalysisWarning(
        "sample_ratio",
        f"sample ratio mismatch (p {p_value:.2g} < {SRM_ALPHA:g}) against the configured "
        f"split: {seen}; the assignment or its logging is broken: do not trust the estimates",
        tuple(units),
    )


def peeking_warning(sequential: bool) -> AnalysisWarning | None:
    """The fixed-horizon warning, unless the sequential option is used."""
    if sequential:
        return None
    return AnalysisWarning(
        "peeking",
        "fixed-horizon p-values: valid once, at the planned sample size; read again as data "
        "come in (peeking) they reject far more often than their level; use --sequential "
        "LOOK/LOOKS for a look of a planned series",
    )


def horizon_warning(look: int, horizon: int) -> AnalysisWarning | None:
    """A look after the planned horizon."""
    if look <= horizon:
        return None
    return AnalysisWarning(
        "past_horizon",
        f"day {look} since the start is past the planned horizon of {horizon} days: the "
        f"sequential test ended at look {horizon}; this look is outside its plan",
    )
