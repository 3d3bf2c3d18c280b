"""How the taste benches score a ranking, or a store's affinities, against the truth."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["best_recall", "score_affinities"]

#: The precision every taste figure is read at.
PRECISION = 0.9


def best_recall(ranked: list[tuple[float, bool]], truths: int) -> tuple[float, float]:
    """The largest recall at precision >= 0.9 over thresholds of the score, and its
    precision (NaN when none reaches it). ``ranked`` holds (score, right) per guess;
    ties go together, since a threshold cannot split them; ``truths`` is the recall's
    total."""
    ranked = sorted(ranked, key=lambda pair: -pair[0])
    best, at, hits = 0.0, float("nan"), 0
    for n, (score, ok) in enumerate(ranked, 1):
        hits += ok
        if n < len(ranked) and ranked[n][0] == score:
            continue
        if hits / n >= PRECISION and hits / truths >= best:
            best, at = hits / truths, hits / n
    return best, at


def score_affinities(
    rows: Iterable[Sequence[Any]],
    truth: Mapping[str, set[tuple[str, str]]],
    not_tastes: Iterable[str],
) -> dict[str, Any]:
    """Score active affinities ``rows`` (profile id, attr, value, polarity) against
    ``truth`` (per person, the (field, value) tastes; people not in it are left out):
    how many `prefer`, their precision, the recall of the true tastes, how many rest on
    a field of ``not_tastes``, and ``avoids`` as "naming a true taste/all"."""
    off_fields = set(not_tastes)
    prefer = hits = off_field = avoids = bad_avoids = 0
    named: set[tuple[str, str, str]] = set()
    for pid, attr, value, polarity in rows:
        if pid not in truth:
            continue  # someone else (a history's people)
        field = attr.split(".", 1)[-1]
        right = (field, value) in truth[pid]
        if polarity == "avoid":
            avoids += 1
            bad_avoids += right
            continue
        prefer += 1
        hits += right
        off_field += field in off_fields
        if right:
            named.add((pid, field, value))
    truths = sum(len(t) for t in truth.values())
    return {
        "affinities": prefer,
        "precision": hits / prefer if prefer else float("nan"),
        "recall": len(named) / truths if truths else float("nan"),
        "off_field": off_field,
        "avoids": f"{bad_avoids}/{avoids}",
    }
