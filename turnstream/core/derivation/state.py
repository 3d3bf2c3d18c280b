"""Per-profile evidence, folded one signal event at a time.

:func:`fold` mutates the state it is given. Each event is folded once: the state
remembers the idempotency keys it folded (the latest ``max_folded_keys`` by
``occurred_at``), so a redelivered event changes nothing. Exposure weights and signals
are added as integer millionths, so ``presented`` and ``seen`` of one exposure give the
same state in either order.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.events import SignalEvent, parse_time
from turnstream.core.derivation.evidence import (
    KeyWindow,
    RefStats,
    SizeStats,
    ValueStats,
    later,
    parse_or_none,
    remember,
    time_or_none,
    to_micro,
)
from turnstream.core.derivation.exposure import (
    AlreadyPresented,
    ExposedItem,
    Page,
    ShownItem,
    already_presented,
    exposed_items,
    is_exposed,
    weight_micro,
)
from turnstream.core.derivation.inference import Inference
from turnstream.core.derivation.values import attr_of, ref_type, size_key, value_key

__all__ = [
    "GIFT",
    "BucketState",
    "ProfileState",
    "dispose_gift",
    "fold",
    "resolved",
    "settle",
]


def _nested_to(table: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        outer: {inner: stats.to_dict() for inner, stats in sorted(by.items())}
        for outer, by in sorted(table.items())
    }


def _sizes_from(data: Mapping[str, Any]) -> dict[str, SizeStats]:
    """One field's sizes by :func:`size_key`: the spellings of one size a state saved
    before they were one holds apart (``40`` and ``40.0``, ``M`` and ``m``) as one."""
    sizes: dict[str, SizeStats] = {}
    for value, raw in sorted(data.items()):
        stats, key = SizeStats.from_dict(raw), size_key(value)
        sizes[key] = sizes[key].merged(stats) if key in sizes else stats
    return sizes


@dataclass
class BucketState:
    """The evidence of one ``for`` bucket (``self``, ``gift``, ``beneficiary:<id>``)."""

    pages: dict[str, dict[int, Page]] = field(default_factory=dict)  # exposure_id -> page
    refs: dict[str, RefStats] = field(default_factory=dict)
    values: dict[str, dict[str, ValueStats]] = field(default_factory=dict)  # attr -> value
    sizes: dict[str, dict[str, SizeStats]] = field(default_factory=dict)  # attr -> size
    sensitive_counts: dict[str, int] = field(default_factory=dict)
    event_counts: dict[str, int] = field(default_factory=dict)  # by event name
    #: The newest interaction folded into the bucket (the gift bucket goes after it).
    last_occurred_at: datetime | None = None

    def credit_copy(self) -> BucketState:
        """A copy whose counts may be credited apart from this one's: the pages, frozen,
        are shared (what a deep copy spent most of its time on); every count is its
        own."""
        return BucketState(
            pages={exposure_id: dict(by_page) for exposure_id, by_page in self.pages.items()},
            refs={ref: stats.copy() for ref, stats in self.refs.items()},
            values={a: {v: s.copy() for v, s in by.items()} for a, by in self.values.items()},
            sizes={a: {v: s.copy() for v, s in by.items()} for a, by in self.sizes.items()},
            sensitive_counts=dict(self.sensitive_counts),
            event_counts=dict(self.event_counts),
            last_occurred_at=self.last_occurred_at,
        )

    def all_pages(self) -> Iterator[Page]:
        for by_page in self.pages.values():
            yield from by_page.values()

    def item_of(self, pointer: tuple[str, int, int] | None) -> ShownItem | None:
        """The presented item at ``(exposure_id, page, pos)``."""
        if pointer is None:
            return None
        page = self.pages.get(pointer[0], {}).get(pointer[1])
        if page is None:
            return None
        return next((item for item in page.items if item.pos == pointer[2]), None)

    def to_dict(self) -> dict[str, Any]:
        pages = sorted(self.all_pages(), key=lambda p: (p.exposure_id, p.page))
        return {
            "pages": [page.to_dict() for page in pages],
            "refs": {ref: stats.to_dict() for ref, stats in sorted(self.refs.items())},
            "values": _nested_to(self.values),
            "sizes": _nested_to(self.sizes),
            "sensitive_counts": dict(sorted(self.sensitive_counts.items())),
            "event_counts": dict(sorted(self.event_counts.items())),
            "last_occurred_at": time_or_none(self.last_occurred_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BucketState:
        bucket = cls(
            refs={ref: RefStats.from_dict(s) for ref, s in data["refs"].items()},
            values={
                attr: {value: ValueStats.from_dict(s) for value, s in by.items()}
                for attr, by in data["values"].items()
            },
            sizes={attr: _sizes_from(by) for attr, by in data["sizes"].items()},
            sensitive_counts=dict(data["sensitive_counts"]),
            event_counts=dict(data["event_counts"]),
            last_occurred_at=parse_or_none(data.get("last_occurred_at")),
        )
        for raw in data["pages"]:
            page = Page.from_dict(raw)
            bucket.pages.setdefault(page.exposure_id, {})[page.page] = page
        return bucket


@dataclass
class ProfileState:
    """Everything derivation knows of one person.

    ``max_seen`` is kept per profile, not per bucket: a ``seen`` says how far the list
    was seen, whoever it was for, and an exposure id is unique.
    """

    space_id: str | None = None
    profile_id: str | None = None
    buckets: dict[str, BucketState] = field(default_factory=dict)
    max_seen: dict[str, int] = field(default_factory=dict)
    tombstones: set[str] = field(default_factory=set)
    opted_out: bool = False
    inferences: dict[str, Inference] = field(default_factory=dict)
    folded: KeyWindow = field(default_factory=KeyWindow)
    newest_occurred_at: datetime | None = None
    #: Engagements, feedback and outcomes, by key: credited when evidence is resolved.
    signals: dict[str, SignalEvent] = field(default_factory=dict)
    #: The latest ``erase``: nothing that occurred at or before it is folded again,
    #: whenever it arrives (outcomes and commands travel on other topics).
    erased_through: datetime | None = None

    def exposures(self, for_: str) -> list[ExposedItem]:
        """The exposed items of bucket ``for_``."""
        bucket = self.buckets.get(for_)
        return [] if bucket is None else exposed_items(bucket.all_pages(), self.max_seen, for_)

    def already_presented(self, for_: str) -> list[AlreadyPresented]:
        """The refs presented in bucket ``for_``, with how many times and when last."""
        bucket = self.buckets.get(for_)
        return [] if bucket is None else already_presented(bucket.all_pages())

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form (saved in ``signal_state``), read back by :meth:`from_dict`."""
        return {
            "space_id": self.space_id,
            "profile_id": self.profile_id,
            "buckets": {name: b.to_dict() for name, b in sorted(self.buckets.items())},
            "max_seen": dict(sorted(self.max_seen.items())),
            "tombstones": sorted(self.tombstones),
            "opted_out": self.opted_out,
            "inferences": [inf.to_dict() for _, inf in sorted(self.inferences.items())],
            "folded": self.folded.to_dict(),
            "newest_occurred_at": time_or_none(self.newest_occurred_at),
            "signals": [e.to_dict() for e in _in_time_order(self.signals.values())],
            "erased_through": time_or_none(self.erased_through),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProfileState:
        inferences = (Inference.from_dict(raw) for raw in data["inferences"])
        return cls(
            space_id=data["space_id"],
            profile_id=data["profile_id"],
            buckets={name: BucketState.from_dict(b) for name, b in data["buckets"].items()},
            max_seen=dict(data["max_seen"]),
            tombstones=set(data["tombstones"]),
            opted_out=data["opted_out"],
            inferences={inf.id: inf for inf in inferences},
            folded=KeyWindow.from_dict(data["folded"]),
            newest_occurred_at=parse_or_none(data["newest_occurred_at"]),
            signals={
                e.idempotency_key: e
                for e in (SignalEvent.from_dict(raw) for raw in data.get("signals", []))
            },
            erased_through=parse_or_none(data.get("erased_through")),
        )


# -- folding ---------------------------------------------------------------------------


def fold(state: ProfileState, event: SignalEvent, config: SignalsConfig) -> bool:
    """Apply one event to ``state`` (in place). False when its key was already folded.

    Interactions, outcomes and commands of another profile are refused (ValueError).
    Evidence is folded after an ``opt_out`` too (exposures are measurement); it is
    derivation that stops, so the result does not depend on where the opt-out falls.
    Evidence that occurred at or before an ``erase`` is never folded, whether it arrives
    before the erase (cleared by it) or after (skipped), so the erased past leaves the
    same state in any order. Evidence older than ``raw_window_days`` before the person's
    newest event is not folded (:mod:`~turnstream.core.derivation.window` settles and
    drops what ages out).
    """
    if state.profile_id is None:
        state.space_id, state.profile_id = event.space_id, event.profile_id
    elif (state.space_id, state.profile_id) != (event.space_id, event.profile_id):
        raise ValueError("the event belongs to another profile")
    if event.idempotency_key in state.folded:
        return False
    window = timedelta(days=config.raw_window_days)
    newest = state.newest_occurred_at
    if event.kind != "command" and newest is not None and event.occurred_at < newest - window:
        return False  # past the raw window: its evidence is settled already (window.py)
    state.folded.add(event.idempotency_key, event.occurred_at, config.max_folded_keys)
    state.newest_occurred_at = later(state.newest_occurred_at, event.occurred_at)
    if event.kind == "command":
        _command(state, event)
    elif state.erased_through is None or event.occurred_at > state.erased_through:
        _evidence(state, event, config)
    return True


def _evidence(state: ProfileState, event: SignalEvent, config: SignalsConfig) -> None:
    if event.kind == "outcome":
        _record(state, event, config)
        return
    name = event.name
    bucket = state.buckets.setdefault(event.for_, BucketState())
    bucket.last_occurred_at = later(bucket.last_occurred_at, event.occurred_at)
    _count(bucket.event_counts, name)
    if name == "presented":
        _presented(bucket, event, state.max_seen, config)
    elif name == "seen":
        _seen(state, event, config)
    elif name in ("engaged", "feedback"):
        _record(state, event, config)
    # preference, attribute, watch, unwatch: stated, never evidence for an inference.


GIFT = "gift"


def _bucket_of(state: ProfileState, event: SignalEvent) -> str:
    """The bucket a held engagement, feedback or outcome credits (see :func:`_outcome`)."""
    if event.kind != "outcome":
        return event.for_
    line = _token_line(state, event.payload.get("exposure_token"))
    return event.payload.get("for") or (line[0] if line else event.for_)


def _names_gift(event: SignalEvent) -> bool:
    return event.for_ == GIFT or event.payload.get("for") == GIFT


def dispose_gift(state: ProfileState, config: SignalsConfig) -> bool:
    """Drop the gift bucket (its pages and the signals that credit it) once the person's
    newest event is more than ``gift_days`` past the bucket's newest. True when dropped.

    A gift is evidence of someone else's taste for one occasion: it serves the block
    asked ``for = gift`` while the gift is chosen, and its purchase and an early return;
    after that it is only a liability. Event time, so live and replay drop it alike;
    the engine calls it once per person at each derivation.
    """
    bucket = state.buckets.get(GIFT)
    if state.newest_occurred_at is None or (
        bucket is None and not any(_names_gift(e) for e in state.signals.values())
    ):
        return False
    held = [e for e in state.signals.values() if _bucket_of(state, e) == GIFT]
    times = [e.occurred_at for e in held]
    if bucket is not None and bucket.last_occurred_at is not None:
        times.append(bucket.last_occurred_at)
    if not times or state.newest_occurred_at - max(times) <= timedelta(days=config.gift_days):
        return False
    for event in held:
        del state.signals[event.idempotency_key]
    state.buckets.pop(GIFT, None)
    return True


def _in_time_order(events: Iterable[SignalEvent]) -> list[SignalEvent]:
    return sorted(events, key=lambda e: (e.occurred_at, e.idempotency_key))


def _record(state: ProfileState, event: SignalEvent, config: SignalsConfig) -> None:
    """Keep an engagement, feedback or outcome for :func:`resolved` (the latest N)."""
    state.signals[event.idempotency_key] = event
    if len(state.signals) > config.max_folded_keys:
        for old in _in_time_order(state.signals.values())[: -config.max_folded_keys]:
            del state.signals[old.idempotency_key]


def resolved(state: ProfileState, config: SignalsConfig) -> ProfileState:
    """The state with every engagement, feedback and outcome credited, in time order.

    Credit goes to the values of the latest presentation delivered before the event (an
    outcome: to the line its exposure token names). Resolving at derivation time, over
    everything folded so far, is what makes the result independent of the order in
    which events arrived (outcomes and interactions travel on different topics). The
    returned state shares everything but its buckets with ``state``.
    """
    view = replace(state, buckets={k: b.credit_copy() for k, b in state.buckets.items()})
    shown = _Presentations()
    for event in _in_time_order(state.signals.values()):
        _credit(view, event, config, shown)
    return view


def _credit(
    state: ProfileState, event: SignalEvent, config: SignalsConfig, shown: _Presentations
) -> None:
    """Credit one engagement, feedback or outcome to ``state``'s buckets."""
    if event.kind == "outcome":
        _outcome(state, event, config, shown)
    elif event.name == "engaged":
        _engaged(state.buckets.setdefault(event.for_, BucketState()), event, config, shown)
    elif event.name == "feedback":
        _feedback(state.buckets.setdefault(event.for_, BucketState()), event, config, shown)


def settle(state: ProfileState, cut: datetime, config: SignalsConfig) -> int:
    """Credit the engagements, feedback and outcomes that occurred before ``cut`` to
    ``state``'s own counts, as :func:`resolved` credits them, and drop their payloads;
    how many. What they credited stays; what they were goes."""
    old = [e for e in _in_time_order(state.signals.values()) if e.occurred_at < cut]
    shown = _Presentations()
    for event in old:
        _credit(state, event, config, shown)
        del state.signals[event.idempotency_key]
    return len(old)


class _Presentations:
    """The presentation a signal credits: the item showing its ref in the latest page
    delivered at or before it (ranked by ``(delivered_at, exposure_id, page, pos)``), for
    the buckets of one :func:`resolved` or :func:`settle` call, from an index (ref -> its
    presentations by rank) built once per bucket on its first look-up.

    A scan of every page per signal was quadratic in a person's pages (1.9 s of the 4.4 s
    settling 500 states took in ``bench/retention_fold.py``). The index lives for one
    call only, because crediting never adds or drops a page (``_engaged``,
    ``_feedback``, ``_outcome`` and ``_size`` touch counts and values only); pages change
    in :func:`fold`, ``expire`` and :func:`dispose_gift`, between calls, so a per-call
    index cannot go stale where a cache on the bucket would have to be invalidated at
    each of them.
    """

    def __init__(self) -> None:
        # id(bucket) -> (bucket, ref -> (delivery times, items), both in rank order);
        # the bucket is held so its id cannot be reused while the index lives.
        self._by_bucket: dict[
            int, tuple[BucketState, dict[str, tuple[list[datetime], list[ShownItem]]]]
        ] = {}

    def at(self, bucket: BucketState, ref: str, when: datetime) -> ShownItem | None:
        """The item showing ``ref`` in the latest page of ``bucket`` delivered by ``when``."""
        held = self._by_bucket.get(id(bucket))
        if held is None:
            held = self._by_bucket[id(bucket)] = (bucket, _index(bucket))
        found = held[1].get(ref)
        if found is None:
            return None
        times, items = found
        at = bisect_right(times, when)
        return items[at - 1] if at else None


def _index(bucket: BucketState) -> dict[str, tuple[list[datetime], list[ShownItem]]]:
    """Each ref's presentations in rank order, one per rank (the scan keeps the first
    it meets of equal ranks: the stable sort and ``>`` below keep the same one)."""
    ranked: dict[str, list[tuple[tuple[datetime, str, int, int], ShownItem]]] = {}
    for page in bucket.all_pages():
        for item in page.items:
            rank = (page.delivered_at, page.exposure_id, page.page, item.pos)
            ranked.setdefault(item.ref, []).append((rank, item))
    index: dict[str, tuple[list[datetime], list[ShownItem]]] = {}
    for ref, shown in ranked.items():
        shown.sort(key=lambda pair: pair[0])
        times: list[datetime] = []
        items: list[ShownItem] = []
        last: tuple[datetime, str, int, int] | None = None
        for rank, item in shown:
            if last is None or rank > last:
                times.append(rank[0])
                items.append(item)
                last = rank
        index[ref] = (times, items)
    return index


def _count(counts: dict[str, int], name: str, by: int = 1) -> None:
    counts[name] = counts.get(name, 0) + by


def _command(state: ProfileState, event: SignalEvent) -> None:
    command = event.payload.get("command")
    if command in ("delete", "correct"):
        inference_id = event.payload.get("inference_id")
        if not inference_id:
            return
        state.tombstones.add(inference_id)
        current = state.inferences.get(inference_id)
        if current is not None and current.status != "deleted":
            assert state.newest_occurred_at is not None
            state.inferences[inference_id] = replace(
                current, status="deleted", updated_at=state.newest_occurred_at
            )
    elif command == "opt_out":
        state.opted_out = True
    elif command == "erase":
        # Evidence and inferences go; tombstones, the opt-out and the folded keys stay,
        # so neither a redelivered event nor the same evidence brings anything back, and
        # nothing that occurred before the erase is folded if it arrives later.
        state.erased_through = later(state.erased_through, event.occurred_at)
        state.buckets.clear()
        state.max_seen.clear()
        state.inferences.clear()
        state.signals.clear()


def _presented(
    bucket: BucketState, event: SignalEvent, max_seen: Mapping[str, int], config: SignalsConfig
) -> None:
    payload = event.payload
    exposure_id, number = payload["exposure_id"], int(payload.get("page") or 1)
    by_page = bucket.pages.setdefault(exposure_id, {})
    if number in by_page:
        return  # the same page again under another key: the first one stands
    items: list[ShownItem] = []
    for raw in payload["items"]:
        ref = raw["ref"]
        kind = ref_type(ref)
        if kind in config.sensitive:
            _count(bucket.sensitive_counts, kind)
            continue
        shown: dict[str, Any] = {}
        hidden: list[str] = []
        for name, value in (raw.get("shown") or {}).items():
            if value is None:
                continue
            attr = attr_of(ref, name)
            if attr in config.sensitive:
                hidden.append(attr)
                _count(bucket.sensitive_counts, attr)
            else:
                shown[name] = value
        items.append(ShownItem(int(raw["pos"]), ref, shown, tuple(sorted(hidden))))
    page = Page(
        exposure_id=exposure_id,
        page=number,
        list_id=payload["list_id"],
        list_kind=payload.get("list_kind") or "",
        visible_k=int(payload["visible_k"]),
        method=payload.get("method") or "bridge",
        delivered_at=parse_time(payload["delivered_at"]),
        items=tuple(sorted(items, key=lambda item: item.pos)),
        key=event.idempotency_key,
        occurred_at=event.occurred_at,
    )
    by_page[number] = page
    seen = max_seen.get(exposure_id, 0)
    for item in page.items:
        stats = bucket.refs.setdefault(item.ref, RefStats())
        if _newer(bucket, (exposure_id, number, item.pos), stats.latest):
            stats.latest = (exposure_id, number, item.pos)
        if is_exposed(page, item.pos, seen):
            _expose(bucket, page, item, config)


def _newer(
    bucket: BucketState, pointer: tuple[str, int, int], than: tuple[str, int, int] | None
) -> bool:
    """Whether ``pointer`` is a later presentation than ``than`` (by delivery, then id)."""
    if than is None:
        return True

    def rank(p: tuple[str, int, int]) -> tuple[datetime, str, int, int]:
        return (bucket.pages[p[0]][p[1]].delivered_at, *p)

    return rank(pointer) > rank(than)


def _expose(bucket: BucketState, page: Page, item: ShownItem, config: SignalsConfig) -> None:
    micro = weight_micro(item.pos)
    stats = bucket.refs.setdefault(item.ref, RefStats())
    stats.exposures += 1
    stats.exposure_micro += micro
    remember(stats.exposure_keys, page.occurred_at, page.key, config.max_origin_events)
    for name, value in item.shown.items():
        values = bucket.values.setdefault(attr_of(item.ref, name), {})
        vs = values.setdefault(value_key(value), ValueStats())
        vs.exposure_micro += micro
        vs.last_occurred_at = later(vs.last_occurred_at, page.occurred_at)


def _seen(state: ProfileState, event: SignalEvent, config: SignalsConfig) -> None:
    exposure_id = event.payload["exposure_id"]
    before = state.max_seen.get(exposure_id, 0)
    after = max(before, int(event.payload["max_index_seen"]))
    if after == before:
        return
    state.max_seen[exposure_id] = after
    for bucket in state.buckets.values():
        for page in bucket.pages.get(exposure_id, {}).values():
            for item in page.items:
                if is_exposed(page, item.pos, after) and not is_exposed(page, item.pos, before):
                    _expose(bucket, page, item, config)


def _signal(
    bucket: BucketState,
    event: SignalEvent,
    item: ShownItem | None,
    micro: int,
    config: SignalsConfig,
    fields: frozenset[str] | None = None,
) -> None:
    """Add ``micro`` to every value ``item`` showed (only ``fields`` when given).

    Sensitive attributes the item showed only add to their count.
    """
    if item is None:
        return  # never presented: no value to credit
    for attr in item.hidden:
        if fields is None or attr.split(".", 1)[1] in fields:
            _count(bucket.sensitive_counts, attr)
    if micro == 0:
        return
    for name, value in item.shown.items():
        if fields is not None and name not in fields:
            continue
        values = bucket.values.setdefault(attr_of(item.ref, name), {})
        vs = values.setdefault(value_key(value), ValueStats())
        vs.signal_micro += micro
        vs.events += 1
        vs.sessions.add(event.session)
        remember(vs.origin, event.occurred_at, event.idempotency_key, config.max_origin_events)
        vs.last_occurred_at = later(vs.last_occurred_at, event.occurred_at)


def _ref_stats(bucket: BucketState, ref: str, config: SignalsConfig) -> RefStats | None:
    """The stats of ``ref``, or None (and one more count) for a sensitive type."""
    kind = ref_type(ref)
    if kind in config.sensitive:
        _count(bucket.sensitive_counts, kind)
        return None
    return bucket.refs.setdefault(ref, RefStats())


def _engaged(
    bucket: BucketState, event: SignalEvent, config: SignalsConfig, shown: _Presentations
) -> None:
    stats = _ref_stats(bucket, event.payload["ref"], config)
    if stats is None:
        return
    micro = to_micro(config.engagement_weights.get(event.payload["action"], 0.0))
    stats.engagements += 1
    stats.engagement_micro += micro
    stats.sessions.add(event.session)
    remember(stats.engaged_keys, event.occurred_at, event.idempotency_key, config.max_origin_events)
    _signal(
        bucket,
        event,
        shown.at(bucket, event.payload["ref"], event.occurred_at),
        micro,
        config,
    )


def _field_names(ref: str, names: Iterable[str] | None) -> frozenset[str] | None:
    """Feedback ``fields`` as field names: ``color`` or ``item_variant.color`` both work."""
    if names is None:
        return None
    prefix = f"{ref_type(ref)}."
    return frozenset(n[len(prefix) :] if n.startswith(prefix) else n for n in names)


def _feedback(
    bucket: BucketState, event: SignalEvent, config: SignalsConfig, shown: _Presentations
) -> None:
    ref = event.payload["ref"]
    stats = _ref_stats(bucket, ref, config)
    if stats is None:
        return
    like = event.payload["polarity"] == "like"
    micro = to_micro(config.like_weight if like else config.dislike_weight)
    stats.feedback += 1
    fields = _field_names(ref, event.payload.get("fields"))
    item = shown.at(bucket, ref, event.occurred_at)
    _signal(bucket, event, item, micro, config, fields)


def _token_line(state: ProfileState, token: str | None) -> tuple[str, Page, int] | None:
    """The bucket, page and position an exposure token names, if its page is known.

    ``tool_result`` exposures never attribute an outcome by line: their tokens are ignored.
    """
    parts = (token or "").split(".")
    if len(parts) != 4 or parts[0] != "nx1" or not parts[2].isdigit():
        return None
    exposure_id, pos = parts[1], int(parts[2])
    for name, bucket in sorted(state.buckets.items()):
        for page in bucket.pages.get(exposure_id, {}).values():
            if page.method != "tool_result" and any(item.pos == pos for item in page.items):
                return name, page, pos
    return None


def _outcome(
    state: ProfileState, event: SignalEvent, config: SignalsConfig, shown: _Presentations
) -> None:
    """An outcome goes to the bucket its ``for`` names; without one, to the bucket of the
    exposure its token names, else to its own. A purchase for a dependent shown on the
    buyer's list is the dependent's evidence: never the buyer's size or taste."""
    payload = event.payload
    ref, outcome = payload["ref"], payload["outcome"]
    line = _token_line(state, payload.get("exposure_token"))
    for_ = payload.get("for") or (line[0] if line else event.for_)
    bucket = state.buckets.setdefault(for_, BucketState())
    _count(bucket.event_counts, "outcome")
    stats = _ref_stats(bucket, ref, config)
    if stats is None:
        return
    stats.outcomes += 1
    item = None
    if line is not None:
        _, page, pos = line
        item = next((i for i in page.items if i.pos == pos and i.ref == ref), None)
    if item is None:
        item = shown.at(bucket, ref, event.occurred_at)
    _signal(bucket, event, item, to_micro(config.outcome_weights.get(outcome, 0.0)), config)
    _size(bucket, event, ref, config)


def _size(bucket: BucketState, event: SignalEvent, ref: str, config: SignalsConfig) -> None:
    """Count the sizes of an outcome: ``attrs.size``, and each ``attrs`` field of the
    ref's type that ``config.size_fields`` names (``attrs.shoe_size`` of a sneaker
    counts on ``item_variant.shoe_size``, never on its clothing ``size``), each by its
    :func:`size_key` (``40.0`` and ``m`` count as ``40`` and ``M``)."""
    payload = event.payload
    if payload["outcome"] in ("purchase", "kept"):
        delta = 1
    elif payload["outcome"] == "return" and payload.get("reason") == "returned_for_size":
        delta = -1
    else:
        return
    for name, size in sorted((payload.get("attrs") or {}).items()):
        attr = attr_of(ref, name)
        if size is None or isinstance(size, bool):
            continue
        if name != "size" and attr not in config.size_fields:
            continue
        if attr in config.sensitive:
            _count(bucket.sensitive_counts, attr)
            continue
        stats = bucket.sizes.setdefault(attr, {}).setdefault(size_key(size), SizeStats())
        stats.net += delta
        stats.events += 1
        stats.sessions.add(event.session)
        remember(stats.origin, event.occurred_at, event.idempotency_key, config.max_origin_events)
        stats.last_occurred_at = later(stats.last_occurred_at, event.occurred_at)
