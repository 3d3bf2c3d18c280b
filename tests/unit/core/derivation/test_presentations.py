"""The presentation a signal credits, looked up in the per-call index, is the one a scan
of every page finds: the latest delivered at or before the signal, ties included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.core.derivation.exposure import Page, ShownItem
from turnstream.core.derivation.state import BucketState, _Presentations

T0 = datetime(2026, 3, 1, tzinfo=UTC)
REFS = ("item_variant:acme:1", "item_variant:acme:2", "product:acme:3")


def scan(bucket: BucketState, ref: str, when: datetime) -> ShownItem | None:
    """The definition: the item showing ``ref`` with the highest ``(delivered_at,
    exposure_id, page, pos)`` among pages delivered at or before ``when``; of equal
    ranks, the first met."""
    best: ShownItem | None = None
    best_rank: tuple[datetime, str, int, int] | None = None
    for page in bucket.all_pages():
        if page.delivered_at > when:
            continue
        for item in page.items:
            rank = (page.delivered_at, page.exposure_id, page.page, item.pos)
            if item.ref == ref and (best_rank is None or rank > best_rank):
                best, best_rank = item, rank
    return best


def page(exposure_id: str, number: int, minute: int, items: list[tuple[int, str]]) -> Page:
    shown = tuple(
        # ``seq`` tells apart items of equal rank (the same pos twice in one page).
        ShownItem(pos, ref, {"seq": seq})
        for seq, (pos, ref) in enumerate(sorted(items, key=lambda i: i[0]))
    )
    return Page(
        exposure_id=exposure_id,
        page=number,
        list_id="l1",
        list_kind="search",
        visible_k=5,
        method="bridge",
        delivered_at=T0 + timedelta(minutes=minute),
        items=shown,
        key=f"k-{exposure_id}-{number}",
        occurred_at=T0 + timedelta(minutes=minute),
    )


pages = st.lists(
    st.tuples(
        st.sampled_from(("e1", "e2", "e3")),  # few ids and minutes: many equal deliveries
        st.integers(1, 3),
        st.integers(0, 4),
        st.lists(st.tuples(st.integers(1, 4), st.sampled_from(REFS)), max_size=6),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(pages=pages, asks=st.lists(st.tuples(st.sampled_from(REFS), st.integers(-1, 5))))
def test_the_index_finds_what_the_scan_finds(pages: list, asks: list) -> None:
    bucket = BucketState()
    for exposure_id, number, minute, items in pages:
        bucket.pages.setdefault(exposure_id, {})[number] = page(exposure_id, number, minute, items)
    shown = _Presentations()
    for ref, minute in asks:
        when = T0 + timedelta(minutes=minute)
        assert shown.at(bucket, ref, when) is scan(bucket, ref, when)


def test_of_equal_delivery_the_higher_exposure_page_and_pos_wins() -> None:
    a, b = REFS[0], REFS[1]
    bucket = BucketState()
    bucket.pages["e1"] = {1: page("e1", 1, 2, [(1, a)]), 2: page("e1", 2, 2, [(3, a), (3, a)])}
    bucket.pages["e2"] = {1: page("e2", 1, 2, [(1, a), (2, b)]), 2: page("e2", 2, 9, [(1, a)])}
    shown = _Presentations()
    found = shown.at(bucket, a, T0 + timedelta(minutes=5))
    # e2 page 1 beats e1 page 2 (exposure id first); e2 page 2 is delivered after the ask.
    assert found is bucket.pages["e2"][1].items[0]
    assert shown.at(bucket, a, T0 + timedelta(minutes=9)) is bucket.pages["e2"][2].items[0]
    assert shown.at(bucket, a, T0 + timedelta(minutes=1)) is None
    assert shown.at(bucket, REFS[2], T0 + timedelta(minutes=9)) is None
    only_e1 = BucketState(pages={"e1": bucket.pages["e1"]})
    # Two items at the same pos of one page: the first of them, as the scan keeps it.
    assert shown.at(only_e1, a, T0 + timedelta(minutes=2)) is only_e1.pages["e1"][2].items[0]
