"""What ``experiments analyze`` adds to an :class:`~.analysis.Analysis`: the look of a
planned sequential series (``--sequential LOOK/LOOKS``) and the warnings the figures
must be read with (``core/experiment_warnings.py``). Pure: figures in, figures out.

The sequential look is look ``k`` of ``K`` equally spaced planned looks, Lan-DeMets
O'Brien-Fleming-type spending (:mod:`.sequential`, the daily job's method): per arm, the
level at which its z (the CUPED z when a covariate is given) crosses look ``k``'s
boundary, Holm-adjusted across the arms, and the repeated 95% interval.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnstream.core.experiment_warnings import (
    MIN_UNITS,
    AnalysisWarning,
    ArmCounts,
    arm_warnings,
    peeking_warning,
    sample_ratio_warning,
)
from turnstream.jobs.experiments.analysis import Analysis, holm
from turnstream.jobs.experiments.sequential import (
    METHOD,
    boundaries,
    look_fractions,
    repeated_interval,
    sequential_p_value,
)

__all__ = ["SequentialArm", "SequentialLook", "analysis_warnings", "parse_look", "sequential_look"]

_LOOK = re.compile(r"^\s*(\d{1,4})\s*/\s*(\d{1,4})\s*\Z")


def parse_look(text: str) -> tuple[int, int]:
    """``"3/10"`` as (3, 10): look 3 of 10 planned; ValueError naming what is wrong."""
    found = _LOOK.match(text)
    if found is None:
        raise ValueError(f"--sequential: LOOK/LOOKS, e.g. 3/10, not {text!r}")
    look, looks = int(found[1]), int(found[2])
    if not 1 <= look <= looks:
        raise ValueError(f"--sequential: the look must be within 1..{looks}, not {look}")
    return look, looks


@dataclass(frozen=True)
class SequentialArm:
    """One arm's sequential figures at this look (None where undefined)."""

    name: str
    p_value: float | None
    p_holm: float | None
    diff_low: float | None
    diff_high: float | None


@dataclass(frozen=True)
class SequentialLook:
    """Look ``look`` of ``looks``: its boundary (|z|), the basis and each arm's figures."""

    look: int
    looks: int
    boundary: float
    basis: str
    arms: tuple[SequentialArm, ...]
    method: str = METHOD

    def as_dict(self) -> dict[str, object]:
        return {
            "look": self.look,
            "looks": self.looks,
            "method": self.method,
            "basis": self.basis,
            "boundary": self.boundary if math.isfinite(self.boundary) else None,
            "arms": {
                a.name: {
                    "p_value": a.p_value,
                    "p_value_holm": a.p_holm,
                    "diff_ci": [a.diff_low, a.diff_high],
                }
                for a in self.arms
            },
        }


def sequential_look(analysis: Analysis, look: int, looks: int) -> SequentialLook:
    """The sequential figures of every arm against control at look ``look`` of ``looks``."""
    fractions = look_fractions(look, looks)
    cuped = analysis.theta is not None
    found: list[tuple[str, float | None, float | None, float | None]] = []
    for arm in analysis.arms:
        if arm.name == analysis.control:
            continue
        effect = arm.cuped if cuped and arm.cuped is not None else arm.raw
        if effect is None or effect.z is None or effect.se is None or effect.diff is None:
            found.append((arm.name, None, None, None))
            continue
        p = sequential_p_value(effect.z, fractions)
        interval = repeated_interval(effect.diff, effect.se, fractions)
        low, high = interval if interval is not None else (None, None)
        found.append((arm.name, p, low, high))
    adjusted = holm([p for _, p, _, _ in found])
    arms = tuple(
        SequentialArm(name, p, q, low, high)
        for (name, p, low, high), q in zip(found, adjusted, strict=True)
    )
    bound = boundaries(fractions)[-1]
    return SequentialLook(look, looks, bound, "cuped" if cuped else "raw", arms)


def analysis_warnings(
    analysis: Analysis,
    values: Mapping[str, Sequence[float]],
    weights: Mapping[str, float] | None,
    min_units: int = MIN_UNITS,
    sequential: bool = False,
) -> list[AnalysisWarning]:
    """Small arms, zero-event arms (a binary metric), the SRM flag against ``weights``
    (equal without), and peeking unless the sequential option is used."""
    counts = [
        ArmCounts(
            arm,
            len(v),
            int(sum(v)) if analysis.kind == "binary" else None,
        )
        for arm, v in values.items()
    ]
    out = arm_warnings(counts, min_units)
    mismatch = sample_ratio_warning(
        {a: len(v) for a, v in values.items()},
        {a: (weights or {}).get(a, 1.0) for a in values},
        analysis.srm.p_value if analysis.srm.flagged else None,
    )
    peek = peeking_warning(sequential)
    return out + [w for w in (mismatch, peek) if w is not None]
