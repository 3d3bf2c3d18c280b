"""How the taste benches score a ranking against the truth."""

from __future__ import annotations

__all__ = ["best_recall"]

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
