"""The raw window of a person's evidence: what ages out is settled into counts and
dropped. Pure: the cut is passed in (the engine's is event time, the retention job's the
clock), so the same state gives the same result live, in replay and in the job.

What a state keeps past the cut is what cannot replay the raw evidence: per object its
exposures, engagements, outcomes and feedback counts, per value its exposure and
signal sums, per size its net count, with up to ``max_origin_events`` idempotency keys
each (ids, no content). What goes: the pages (what was shown, with its values), the
payloads of engagements, feedback and outcomes, the ``seen`` marks of pages gone, and
the folded keys (a redelivery of an event that old is refused by its age instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.state import ProfileState, settle

__all__ = ["Expired", "cut_for", "evidence_from", "expire"]


@dataclass(frozen=True)
class Expired:
    """What :func:`expire` settled and dropped."""

    signals: int = 0
    pages: int = 0
    keys: int = 0

    def __bool__(self) -> bool:
        return bool(self.signals or self.pages or self.keys)


def cut_for(newest: datetime, config: SignalsConfig) -> datetime:
    """The oldest moment the raw window keeps, ``newest`` being now (event time or the
    clock)."""
    return newest - timedelta(days=config.raw_window_days)


def evidence_from(state: ProfileState) -> datetime | None:
    """When the oldest raw evidence the state holds occurred (a page or a held signal);
    None when it holds none. Folded keys are ids, not evidence."""
    times = [p.occurred_at for b in state.buckets.values() for p in b.all_pages()]
    times += [e.occurred_at for e in state.signals.values()]
    return min(times) if times else None


def expire(state: ProfileState, cut: datetime, config: SignalsConfig) -> Expired:
    """Settle and drop (in place) the evidence that occurred before ``cut``.

    Signals are settled first, while the pages they credit are still there; then the
    pages go, object pointers to them are cleared, ``seen`` marks of exposures without a
    page left go, and so do the folded keys older than the cut.
    """
    signals = settle(state, cut, config)
    pages = 0
    for bucket in state.buckets.values():
        for exposure_id in list(bucket.pages):
            by_page = bucket.pages[exposure_id]
            for number in [n for n, page in by_page.items() if page.occurred_at < cut]:
                del by_page[number]
                pages += 1
            if not by_page:
                del bucket.pages[exposure_id]
        for stats in bucket.refs.values():
            latest = stats.latest
            if latest is not None and latest[1] not in bucket.pages.get(latest[0], {}):
                stats.latest = None
    kept = {e for b in state.buckets.values() for e in b.pages}
    for exposure_id in [e for e in state.max_seen if e not in kept]:
        del state.max_seen[exposure_id]
    keys = state.folded.forget_before(cut)
    return Expired(signals, pages, keys)
