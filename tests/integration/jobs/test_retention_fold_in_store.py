"""The retention fold settled in the store (SQL over the states) against ``expire``, the
pure Python reference: the same states folded both ways on real chDB give the same
states, counts and ``evidence_from``, for people who cover what settling reads (token
lines, ``for`` buckets, feedback fields, sensitive types and attributes, sizes, the
latest-N keys, unicode, values at limits) and the edges (nothing to settle, everything
expired, no pages, no signals, numbers the store cannot keep exact)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest

from tests.unit.core.derivation.builders import (
    PRIORS,
    T0,
    command,
    engaged,
    event,
    feedback,
    item,
    outcome,
    presented,
    seen,
)
from tests.unit.core.derivation.test_shoe_sizes import EXAMPLE, SHIRT, SNEAKERS, _bought
from turnstream.adapters.clickhouse.retention import Folded, fold_states
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive
from turnstream.core.derivation.state import ProfileState, fold
from turnstream.core.derivation.window import evidence_from

pytestmark = pytest.mark.integration

DAY = 86_400
#: The cut falls 10 days after T0: what occurred in the first 10 days is settled.
NOW = T0 + timedelta(days=55)
CONFIG = SignalsConfig(max_origin_events=3).with_sensitive(
    frozenset({"health_item", "item_variant.material", "item_variant.fit"})
)
E1, E2, E3, E4 = (f"0190f5a2-7b3c-7def-8123-00000000000{n}" for n in range(1, 5))
A, B, C = "item_variant:acme:1", "item_variant:acme:2", "item_variant:acme:3"
H = "health_item:acme:1"
U = "item_variant:ação:☃"


def _rich(profile: str, space: str) -> list:
    """Every path of ``state.settle``, old and recent."""
    kw = {"profile": profile, "space": space}
    return [
        presented("pg1", E1, [item(1, A, color="vermelho", size="M", material="cotton"),
                              item(2, B, color="azul", qty=7, flag=True),
                              item(3, H, color="x")], t=0, **kw),
        seen("sn1", E1, 2, t=5, **kw),
        presented("pg2", E2, [item(1, A, color="verde")], t=3 * DAY, method="tool_result",
                  **kw),
        presented("pg3", E3, [item(1, A, color="preto", fit="slim"), item(2, C, size="G")],
                  t=2 * DAY, session="s2", **kw),
        presented("pg4", E3, [item(1, B, color="rosa")], page=2, t=2 * DAY + 1, **kw),
        presented("pg5", E4, [item(1, A, color="branco"), item(4, B, color="azul")],
                  t=20 * DAY, **kw),
        engaged("c1", A, t=60, **kw),
        engaged("c2", B, "cart", t=70, session="s2", **kw),
        engaged("c3", "item_variant:acme:99", t=80, **kw),
        engaged("c4", H, t=90, **kw),
        engaged("c5", A, "no-such-action", t=2 * DAY + 10, **kw),
        engaged("c6", A, "share", t=21 * DAY, **kw),
        feedback("f1", A, "like", ["item_variant.color", "material"], t=100, **kw),
        feedback("f2", B, "dislike", ["color", "qty"], t=110, **kw),
        feedback("f3", A, "like", t=2 * DAY + 20, **kw),
        feedback("f4", B, "like", [], t=130, **kw),
        feedback("f5", A, "dislike", ["color"], t=2 * DAY + 25, **kw),
        outcome("o1", A, "purchase", size="M", token=f"nx1.{E1}.1.sig", t=200, **kw),
        outcome("o2", B, "return", size="G", reason="returned_for_size", t=210, **kw),
        outcome("o3", A, "kept", size="P", whose="gift", t=220, **kw),
        outcome("o4", H, "purchase", t=230, **kw),
        outcome("o5", A, "purchase", token=f"nx1.{E2}.1.sig", t=3 * DAY + 5, **kw),
        outcome("o6", C, "purchase", size="G", token=f"nx1.{E3}.2.sig", t=2 * DAY + 30,
                **kw),
        outcome("o7", A, "exchanged", token="nx1.bad", t=240, **kw),
        outcome("o8", B, "purchase", size="M", token=f"nx1.{E1}.2.sig", whose="beneficiary:kid",
                t=250, **kw),
        outcome("o9", A, "purchase", size="M", t=22 * DAY, **kw),
    ]  # fmt: skip


def _unicode(profile: str, space: str) -> list:
    """Unicode and escapes everywhere, integers at the edge the store keeps exactly, times
    with fractions of a second, members named as the state's own, and more engagements
    than ``max_origin_events`` keeps."""
    kw = {"profile": profile, "space": space}
    # fmt: off
    odd = 'aspas " barra \\ nova\nlinha \u0001 ☃ 🎨 é'
    out = [presented("u-pg", E1, [item(1, U, color=odd, big=2**53, neg=-(2**53), on=False),
                                  item(2, A, **{"cor ç": "ünï", "n": 0}),
                                  item(3, B, erased_through="x", space_id="y", signals="z")],
                      t=0.25, **kw)]
    out += [engaged(f"u-c{n} ☃", U, ("click", "cart")[n % 2], t=10 + n / 7,
                    session=f"sessão {n % 3}", **kw) for n in range(6)]
    out += [feedback("u-f", A, "like", ["cor ç"], t=50, **kw),
            # A size with white space or past ASCII is settled in Python (p9): not here.
            outcome("u-o", U, "purchase", size='aspas " barra \\ M', t=60, session="🎨", **kw),
            engaged("u-new", A, t=12 * DAY, **kw), engaged("u-old", B, t=70, **kw)]
    for one in out[-2:]:  # members named as the state's own, recent and old
        one.payload.update({"space_id": "zz", "signals": [1], "erased_through": None})
    # fmt: on
    return out


def _people() -> dict[tuple[str, str], list]:
    return {
        ("acme", "p1"): _rich("p1", "acme"),
        ("beta", "p1"): _rich("p1", "beta")[:12],  # the same id in another space
        ("acme", "p2 ☃"): _unicode("p2 ☃", "acme"),
        # Everything expired, pages only; signals only (never presented).
        ("acme", "p3"): [presented("p3-pg", E1, [item(1, A, color="x")], t=0, profile="p3"),
                         presented("p3-pg2", E2, [item(1, B)], t=DAY, profile="p3")],
        ("acme", "p4"): [engaged("p4-c", A, t=0, profile="p4"),
                         outcome("p4-o", B, "purchase", size="M", t=5, profile="p4")],
        # Nothing expired: not selected, the same both ways.
        ("acme", "p5"): [presented("p5-pg", E1, [item(1, A, color="x")], t=30 * DAY,
                                   profile="p5"),
                         engaged("p5-c", A, t=30 * DAY + 9, profile="p5")],
        # Numbers the store reads back otherwise (100.0 as 100; 19 digits): by ``expire``.
        ("acme", "p6"): [presented("p6-pg", E1, [item(1, A, price=19.99, weight=100.0)],
                                   t=0, profile="p6"),
                         engaged("p6-c", A, t=9, profile="p6")],
        ("acme", "p7"): [presented("p7-pg", E1, [item(1, A, big=2**63 - 1)], t=0,
                                   profile="p7"),
                         engaged("p7-c", A, t=9, profile="p7")],
        # Sizes spelled otherwise than counted (m, 40,0, +40, two spaces, past ASCII): by
        # ``expire``; sizes spelled as counted, even odd ones: in the store.
        ("acme", "p9"): [outcome(f"p9-o{n}", A, "purchase", size=size, t=n, profile="p9")
                         for n, size in enumerate(("m", " M", "40,0", "40.50", "one  size",
                                                   "M\u00a0", "único", "+40"))],
        ("acme", "p10"): [outcome(f"p10-o{n}", A, "purchase", size=size, t=n, profile="p10")
                          for n, size in enumerate(("M", "40", "40.5", "one size", "38-40",
                                                    "00", "1.299", "2XL", "Small"))],
        # Erased after old evidence, then active again.
        ("acme", "p8"): [presented("p8-pg", E1, [item(1, A, color="x")], t=0, profile="p8"),
                         command("p8-e", "erase", t=DAY, profile="p8"),
                         presented("p8-pg2", E2, [item(1, B, color="y")], t=2 * DAY,
                                   profile="p8"),
                         engaged("p8-c", B, t=2 * DAY + 5, profile="p8"),
                         engaged("p8-c2", B, t=25 * DAY, profile="p8")],
    }  # fmt: skip


def _write(
    store: Store, people: dict[tuple[str, str], list] | None = None, types_for=lambda _s: None
) -> None:
    rows = []
    for (space, profile), events in (_people() if people is None else people).items():
        state = ProfileState()
        for one in sorted(events, key=lambda e: e.occurred_at):
            one = type(one)(**{**one.__dict__, "space_id": space, "profile_id": profile})
            fold(state, one, CONFIG.for_space(types_for(space)))
        body = json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)
        rows.append([profile, space, body, 1, evidence_from(state)])
    store.insert("signal_state", rows, ["profile_id", "space_id", "state", "version",
                                        "evidence_from"])  # fmt: skip


def _fold(
    store: Store, in_store: bool, people: dict | None = None, types_for=lambda _s: None
) -> tuple[Folded, list]:
    _write(store, people, types_for)
    folded = Folded()
    fold_states(store, NOW, CONFIG, folded, page=5, in_store=in_store, types_for=types_for)
    rows = store.query(
        "SELECT space_id, profile_id, argMax(state, version), argMax(evidence_from, version), "
        "count() FROM signal_state GROUP BY ALL ORDER BY ALL"
    ).rows
    return folded, [(s, p, ProfileState.from_dict(json.loads(t)).to_dict(), json.loads(t), e, n)
                    for s, p, t, e, n in rows]  # fmt: skip


def test_the_fold_in_the_store_gives_what_expire_gives(
    store_factory: Callable[[], Store],
) -> None:
    reference, expected = _fold(store_factory(), in_store=False)
    folded, got = _fold(store_factory(), in_store=True)
    assert [r[:2] for r in got] == [r[:2] for r in expected]
    for want, have in zip(expected, got, strict=True):
        assert have[2] == want[2], f"{want[:2]}: the state differs"
        # The same JSON, not only equal after reading (3 == 3.0 in Python).
        assert json.dumps(have[3], sort_keys=True) == json.dumps(want[3], sort_keys=True)
        assert have[4:] == want[4:], f"{want[:2]}: evidence_from or rows differ"
    assert folded.as_dict() == reference.as_dict()
    assert folded.states == 10 and folded.signals > 30 and folded.pages > 8
    # Every state but the two with numbers the store cannot keep and the one with sizes
    # spelled otherwise than counted was settled in SQL.
    assert folded.in_python == 3 and reference.in_python == 10
    sizes = {r[1]: r[2]["buckets"]["self"]["sizes"]["item_variant.size"] for r in got
             if r[1] in ("p9", "p10")}  # fmt: skip
    nets = {k: v["net"] for k, v in sizes["p9"].items()}
    assert nets == {"M": 3, "40": 2, "40.5": 1, "one size": 1, "único": 1}
    assert set(sizes["p10"]) == {"M", "40", "40.5", "one size", "38-40", "00", "1.299", "2XL",
                                 "Small"}  # fmt: skip
    # The rich person kept its recent evidence and settled the rest into counts.
    rich = next(r[2] for r in got if r[:2] == ("acme", "p1"))
    assert {p["exposure_id"] for p in rich["buckets"]["self"]["pages"]} == {E4}
    assert {e["idempotency_key"] for e in rich["signals"]} == {"c6", "o9"}
    assert rich["buckets"]["self"]["refs"][A]["engagements"] == 2
    assert set(rich["buckets"]) >= {"gift", "beneficiary:kid"}


def _shoes(space: str) -> dict[tuple[str, str], list]:
    """Sneakers bought in 40 (``attrs.shoe_size``, once as a number) and a shirt in M,
    aged past the window, and sneakers in 41 since; a shirt buyer beside them."""
    shoes = [_bought("s-o1", SNEAKERS[0], 1, shoe_size="40"),
             _bought("s-o2", SNEAKERS[1], 2 * DAY, shoe_size=40, size="M"),
             _bought("s-o3", SHIRT, 3, size="M"),
             _bought("s-o4", SNEAKERS[0], 20 * DAY, shoe_size="41")]  # fmt: skip
    return {(space, "p11"): shoes, (space, "p12"): [_bought("s-o5", SHIRT, 4, size="G")]}


def test_shoe_sizes_aged_out_are_counted_as_derivation_counts_them(
    store_factory: Callable[[], Store],
) -> None:
    """A space whose types declare ``item_variant.shoe_size`` (examples/types.toml): the
    folded state derives the same shoe size as the unfolded one, in SQL and in Python;
    in a space without types, ``attrs.shoe_size`` is no size before or after."""

    def types_for(space: str):  # type: ignore[no-untyped-def]
        return EXAMPLE if space == "shoes" else None

    people = {**_shoes("shoes"), **_shoes("plain")}
    before = {}
    for (space, profile), events in people.items():
        state = ProfileState()
        for one in events:
            fold(state, type(one)(**{**one.__dict__, "space_id": space, "profile_id": profile}),
                 CONFIG.for_space(types_for(space)))  # fmt: skip
        before[space, profile] = derive(state, PRIORS, CONFIG.for_space(types_for(space)),
                                        types_for(space))  # fmt: skip
    reference, expected = _fold(store_factory(), False, people, types_for)
    folded, got = _fold(store_factory(), True, people, types_for)
    assert [r[2] for r in got] == [r[2] for r in expected]
    assert folded.as_dict() == reference.as_dict() and folded.states == 4
    for space, profile, state, *_ in got:
        config = CONFIG.for_space(types_for(space))
        after = derive(ProfileState.from_dict(state), PRIORS, config, types_for(space))
        assert after == before[space, profile], (space, profile)
    # Shoe sizes are counted in the store too.
    assert folded.in_python == 0
    sizes = {(r[0], r[1]): r[2]["buckets"]["self"]["sizes"] for r in got}
    assert {k: v["net"] for k, v in sizes["shoes", "p11"]["item_variant.shoe_size"].items()} \
        == {"40": 2}  # fmt: skip
    shoe = next(r[2] for r in got if r[:2] == ("shoes", "p11"))
    assert {e["idempotency_key"] for e in shoe["signals"]} == {"s-o4"}  # 41: not yet settled
    assert "item_variant.shoe_size" not in sizes["plain", "p11"]
    assert {k: v["net"] for k, v in sizes["plain", "p11"]["item_variant.size"].items()} \
        == {"M": 2}  # fmt: skip
    shoe_sizes = {(i.attr, i.value) for i in before["shoes", "p11"]}
    assert ("item_variant.shoe_size", "40") in shoe_sizes


def _sized(
    key: str, ref: str, what: str, t: float, reason: str | None = None, **attrs: object
) -> object:
    """An outcome of ``ref`` whose ``attrs`` are ``attrs`` (``None`` kept: no size)."""
    payload = {"outcome": what, "ref": ref, "order_id": key, "exposure_token": None,
               "attrs": attrs, "reason": reason, "for": None}  # fmt: skip
    return event("outcome", payload, key, t=t)


PERSON = "person:acme:9"


def _shoes_and_more(space: str) -> dict[tuple[str, str], list]:
    """Outcomes with ``shoe_size`` beside ``size``, returned for size, as numbers, on a
    type without the field, on a sensitive type, with a sensitive size field
    (``person.diet``), and spelled otherwise than counted."""
    sneaker, shirt = SNEAKERS[0], SHIRT
    return {
        (space, "p13"): [
            _sized("b-o1", sneaker, "purchase", 1, shoe_size="40", size="M"),
            _sized("b-o2", sneaker, "kept", 2, shoe_size=40, size="M"),
            _sized("b-o3", sneaker, "return", 3, "returned_for_size", shoe_size="40"),
            _sized("b-o4", sneaker, "return", 4, "changed_mind", shoe_size="41", size="G"),
            _sized("b-o5", shirt, "return", 5, "returned_for_size", size="M", shoe_size=None),
            _sized("b-o6", sneaker, "purchase", 6, shoe_size=True, size="2XL"),
            _sized("b-o7", sneaker, "purchase", 7, shoe_size="38-39", colour="preto"),
            _sized("b-o8", "product:acme:1", "purchase", 8, shoe_size="42", size="G"),
            _sized("b-o9", H, "purchase", 9, shoe_size="43", size="M"),
            _sized("b-o10", PERSON, "purchase", 10, shoe_size="44", diet="vegan", age=30),
            _sized("b-o11", PERSON, "return", 11, "returned_for_size", diet="vegan"),
            _sized("b-o12", sneaker, "exchanged", 12, shoe_size="45"),
            _sized("b-o13", sneaker, "purchase", 20 * DAY, shoe_size="46", size="M"),
        ],
        (space, "p14"): [  # spelled otherwise than counted: by ``expire`` where a size
            _sized(f"c-o{n}", sneaker, "purchase", n, shoe_size=size)
            for n, size in enumerate(("40,0", " 41", "41.0", "+42"))
        ],
        (space, "p15"): [_sized("d-o1", sneaker, "purchase", 1, shoe_size="m", size="M")],
    }


def test_the_fold_in_the_store_counts_every_size_field_as_expire_does(
    store_factory: Callable[[], Store],
) -> None:
    """In a space with shoe sizes (examples/types.toml) and one without, the states whose
    outcomes carry ``shoe_size`` fold in SQL to what ``expire`` gives; only the sizes
    ``size_key`` spells otherwise go to Python, in a space where they are sizes."""

    def types_for(space: str):  # type: ignore[no-untyped-def]
        return EXAMPLE if space == "shoes" else None

    people = {**_shoes_and_more("shoes"), **_shoes_and_more("plain")}
    reference, expected = _fold(store_factory(), False, people, types_for)
    folded, got = _fold(store_factory(), True, people, types_for)
    assert [r[:2] for r in got] == [r[:2] for r in expected]
    for want, have in zip(expected, got, strict=True):
        assert have[2] == want[2], f"{want[:2]}: the state differs"
        assert json.dumps(have[3], sort_keys=True) == json.dumps(want[3], sort_keys=True)
        assert have[4:] == want[4:], f"{want[:2]}: evidence_from or rows differ"
    assert folded.as_dict() == reference.as_dict() and folded.states == 6
    # p14 and p15 (a shoe size ``m``) of the shoe space; in the plain space shoe_size
    # is no size, whatever its spelling.
    assert folded.in_python == 2
    state = {(r[0], r[1]): r[2]["buckets"]["self"] for r in got}
    shoes = state["shoes", "p13"]
    nets = {a: {k: v["net"] for k, v in by.items()} for a, by in shoes["sizes"].items()}
    assert nets == {
        "item_variant.shoe_size": {"40": 1, "38-39": 1},  # no size in 41: changed mind
        "item_variant.size": {"M": 1, "2XL": 1},
        "product.size": {"G": 1},
        "person.shoe_size": {"44": 1},
        "person.age": {"30": 1},
    }
    assert shoes["sizes"]["item_variant.shoe_size"]["40"]["events"] == 3
    assert shoes["sensitive_counts"] == {"health_item": 1, "person.diet": 2}
    plain = state["plain", "p13"]
    assert set(plain["sizes"]) == {"item_variant.size", "product.size"}
    assert plain["sensitive_counts"] == {"health_item": 1}
    assert {e["idempotency_key"] for r in got for e in r[2]["signals"]} == {"b-o13"}
