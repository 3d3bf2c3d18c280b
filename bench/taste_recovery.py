"""Taste recovery: do the inferences find what people really like?

    .venv/bin/python bench/taste_recovery.py [--people 150] [--sessions 1,2,3,5,10] [--seed 11]
        [--generator ours,heldout] [--priors]

A population of PEOPLE, each with hidden true tastes: one colour, one brand and one size.
Each session shows them three lists of 12 items from a catalogue of 240 (a store's
search: random items, ranked at random), 4 visible, with position bias: the chance of
looking at an item falls as 1 / pos^0.8, and how far the person scrolls is drawn too
(`seen`). A looked-at item is clicked with a base rate of 4%, plus 30 points when its
colour is theirs and 25 points when its brand is; one list in three also gets a noise click
on a random visible item. A click on an item of their size is carted a third of the time
and bought (with the exposure token and `attrs.size`); one purchase in ten is of the wrong
size and comes back `returned_for_size`. Items also show state fields (`price_sale`,
`price_list`, `in_stock`) that carry no taste.

That is "ours". `--generator heldout` runs a differently built one (bench/taste_heldout.py:
skewed catalogue and tastes, popularity ranking, a cascade click model, other list sizes,
`seen` on 70% of the lists, a `category` field no one has a taste for); inference is not
tuned to it. For ours the script also prints the ceiling: what a Bayes classifier that
knows the generator's exact click model (both fields jointly, the examination curve, the
noise clicks) reaches at precision 0.9 from the same lines, which no method can beat.

For each number of sessions N, the first N sessions of everyone are written to a file and
run through replay (`build_replay`: the same core as the live worker, on event time) into
a fresh embedded store; then it prints, against the hidden truth:

* precision: of the active inferences that claim a taste (an `affinity` that prefers a
  value, or an inferred size `attribute`), the share that names a true taste of the
  person (an affinity on a price or a stock flag is a false one);
* recall: of the true tastes (3 per person), the share some such inference names;
* taste recall: of the true colours and brands (2 per person), the share an active
  `prefer` affinity names; affinity precision, of those affinities; and how many
  affinities (prefer) rest on a state, attribute or noise (`category`) field, and how
  many `avoid` affinities name a true taste;
* with `--priors`, twice: without priors, then with the priors the nightly job computes
  from the same days (`recompute_priors`, the file replayed again so that derivation
  reads them);
* the share of people's blocks (`build_block`, the read side's pure core) whose `soft`
  holds an entry on a field the types document declares `state` (price, stock).

Prints figures; asserts nothing. Runs on a tree without a types document too (the code
before issue #17), so the two can be compared (docs/signals.md).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import inspect
import itertools
import json
import math
import os
import random
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._scoring import best_recall
from turnstream.adapters.clickhouse.profile_reads import load_inputs
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import SpaceConfig, load_settings
from turnstream.core.constraints import BlockRequest, build_block
from turnstream.entrypoints.bootstrap import build_replay
from turnstream.jobs.priors import recompute_priors

COLORS = ("black", "navy", "white", "red", "green", "beige", "grey", "pink")
BRANDS = ("aurora", "brisa", "cobalto", "duna", "estrela", "farol")
SIZES = ("XS", "S", "M", "L", "XL")
STATE_FIELDS = {"item_variant.price_sale", "item_variant.price_list", "item_variant.in_stock"}
#: Fields no affinity may rest on: state, attribute and the held-out generator's noise.
NOT_TASTES = STATE_FIELDS | {"item_variant.size", "item_variant.category"}
CATALOGUE = 240
LISTS_PER_SESSION = 3
LIST_LENGTH = 12
VISIBLE = 4
SECRET = "bench-taste-recovery"
ROOT = Path(__file__).resolve().parents[1]
TYPES = ROOT / "examples" / "types.toml"
#: Session n is on day START + n: recent, so that the raw tables' 45-day TTL and the
#: daily aggregates' 100 days keep everything the priors job reads.
START = datetime.combine(datetime.now(UTC).date() - timedelta(days=14), datetime.min.time(), UTC)


@dataclass(frozen=True)
class Item:
    ref: str
    color: str
    brand: str
    size: str
    price: float
    in_stock: bool

    def shown(self) -> dict[str, Any]:
        return {
            "color": self.color,
            "brand": self.brand,
            "size": self.size,
            "price_sale": self.price,
            "price_list": round(self.price * 1.25, 1),
            "in_stock": self.in_stock,
        }


@dataclass(frozen=True)
class Person:
    pid: str
    color: str
    brand: str
    size: str


def catalogue(rand: random.Random) -> list[Item]:
    return [
        Item(
            ref=f"item_variant:acme:{5000 + i}",
            color=rand.choice(COLORS),
            brand=rand.choice(BRANDS),
            size=rand.choice(SIZES),
            price=round(rand.uniform(40, 400), 1),
            in_stock=rand.random() < 0.8,
        )
        for i in range(CATALOGUE)
    ]


def people(rand: random.Random, n: int) -> list[Person]:
    return [
        Person(f"p_{i:032x}", rand.choice(COLORS), rand.choice(BRANDS), rand.choice(SIZES))
        for i in range(1, n + 1)
    ]


def _ts(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _uuid7(at: datetime, rand: random.Random) -> str:
    ms = int(at.timestamp() * 1000)
    value = ms << 80 | 0x7 << 76 | rand.getrandbits(12) << 64 | 0b10 << 62
    return str(uuid.UUID(int=value | rand.getrandbits(62)))


def _token(exposure_id: str, pos: int) -> str:
    verifier = hmac.new(b"bench", f"{exposure_id}.{pos}".encode(), hashlib.sha256).hexdigest()
    return f"nx1.{exposure_id}.{pos}.{verifier[:16]}"


class Writer:
    """One person's items, each with its own idempotency key."""

    def __init__(self, person: Person, session: int) -> None:
        self.person, self.session, self.n = person, session, 0
        self.lines: list[tuple[datetime, bytes]] = []

    def add(self, at: datetime, body: dict[str, Any], kind: str = "interaction") -> None:
        self.n += 1
        item = {
            "type": kind,
            "space_id": "acme",
            "idempotency_key": f"{self.person.pid}-s{self.session}-{self.n}",
            "profile_id": self.person.pid,
            "source": "web",
            "conversation_id": f"{self.person.pid}-s{self.session}",
            "occurred_at": _ts(at),
            **body,
        }
        self.lines.append((at, json.dumps(item, separators=(",", ":")).encode()))


def session_lines(person: Person, number: int, items: list[Item], seed: int) -> list:
    """Session ``number`` (1-based) of ``person``: the same for a given seed, whatever N."""
    rand = random.Random(f"{seed}:{person.pid}:{number}")
    at = START + timedelta(days=number, minutes=rand.randrange(600))
    w = Writer(person, number)
    for _ in range(LISTS_PER_SESSION):
        at += timedelta(seconds=rand.randint(20, 90))
        shown = rand.sample(items, LIST_LENGTH)
        exposure_id = _uuid7(at, rand)
        page = [{"pos": p, "ref": it.ref, "shown": it.shown()} for p, it in enumerate(shown, 1)]
        w.add(at, {"interaction": {
            "kind": "presented", "exposure_id": exposure_id, "list_id": f"l-{exposure_id[:8]}",
            "list_kind": "search_products", "delivered_at": _ts(at), "visible_k": VISIBLE,
            "items": page,
        }})  # fmt: skip
        depth = min(LIST_LENGTH, VISIBLE + int(rand.expovariate(1 / 3)))
        at += timedelta(seconds=rand.randint(2, 20))
        w.add(at, {"interaction": {"kind": "seen", "exposure_id": exposure_id,
                                   "max_index_seen": depth}})  # fmt: skip
        clicked: list[tuple[int, Item]] = []
        for pos, it in enumerate(shown[:depth], 1):
            if rand.random() > 1 / pos**0.8:
                continue  # never looked at
            rate = 0.04 + 0.30 * (it.color == person.color) + 0.25 * (it.brand == person.brand)
            if rand.random() < rate:
                clicked.append((pos, it))
        if rand.random() < 1 / 3:
            pos = rand.randint(1, VISIBLE)
            clicked.append((pos, shown[pos - 1]))
        for pos, it in clicked:
            at += timedelta(seconds=rand.randint(3, 30))
            w.add(at, {"interaction": {"kind": "engaged", "exposure_id": exposure_id,
                                       "ref": it.ref, "pos": pos, "action": "click"}})  # fmt: skip
            wrong_size = rand.random() < 0.1
            if (it.size == person.size or wrong_size) and rand.random() < 1 / 3:
                cart = {"kind": "engaged", "exposure_id": exposure_id, "ref": it.ref, "pos": pos}
                w.add(at, {"interaction": cart | {"action": "cart"}})
                bought = at + timedelta(minutes=rand.randint(2, 30))
                order = f"o-{person.pid[-6:]}-{number}-{w.n}"
                w.add(bought, {"outcome": "purchase", "ref": it.ref, "order_id": order,
                               "exposure_token": _token(exposure_id, pos),
                               "attrs": {"size": it.size}}, kind="outcome")  # fmt: skip
                if it.size != person.size:
                    back = bought + timedelta(days=rand.randint(3, 8))
                    w.add(back, {"outcome": "return", "ref": it.ref, "order_id": order,
                                 "reason": "returned_for_size", "attrs": {"size": it.size}},
                          kind="outcome")  # fmt: skip
    return w.lines


def write_config(home: Path) -> Path:
    """A config with the acme space (pt), and its types document when the tree has one."""
    types = f'types = "{TYPES}"\n' if "types" in SpaceConfig.model_fields else ""
    path = home / "turnstream.toml"
    path.write_text(
        f'[store]\ndsn = "chdb:{home / "store"}"\n[identity]\nsecret = "{SECRET}"\n'
        '[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\n' + types
    )
    return path


def _block(request: BlockRequest, inputs: Any, space: SpaceConfig, now: datetime) -> dict:
    extra: dict[str, Any] = {}
    parameters = inspect.signature(build_block).parameters
    if "types" in parameters and getattr(space, "types", None):
        from turnstream.core.object_types import types_for_space  # after issue #17

        extra["types"] = types_for_space(space)
    return build_block(
        request,
        inputs.preferences,
        inputs.attributes,
        [i for i in inputs.inferences if i.status == "active"],
        inputs.presented,
        inputs.disliked,
        [],
        now,
        labels=space.labels,
        **extra,
    )


def score(store: Store, persons: list[Person], space: SpaceConfig, now: datetime) -> dict:
    """Precision, recall and blocks with a state field in soft, against the truth."""
    found = claimed = true_found = state_blocks = soft_total = 0
    affinities = affinity_hits = taste_found = not_taste = avoids = bad_avoids = 0
    by_field: dict[str, list[int]] = {}
    for person in persons:
        inputs = load_inputs(store, "acme", person.pid, "self")
        truth = {("color", person.color), ("brand", person.brand), ("size", person.size)}
        named: set[tuple[str, str]] = set()
        for inf in inputs.inferences:
            if inf.status != "active" or inf.for_ != "self":
                continue
            pair = (inf.attr.split(".", 1)[1], inf.value)
            if inf.kind == "affinity" and inf.polarity == "avoid":
                avoids += 1
                bad_avoids += pair in truth
            if inf.kind == "affinity" and inf.polarity == "prefer":
                affinities += 1
                affinity_hits += pair in truth
                not_taste += inf.attr in NOT_TASTES
            taste = (inf.kind == "affinity" and inf.polarity == "prefer") or (
                inf.kind == "attribute"
            )
            if not taste:
                continue
            claimed += 1
            key = (inf.attr.split(".", 1)[1], inf.value)
            found += key in truth
            tally = by_field.setdefault(f"{inf.kind}:{key[0]}", [0, 0])
            tally[0] += key in truth
            tally[1] += 1
            named.add(key)
        true_found += len(truth & named)
        taste_found += len({("color", person.color), ("brand", person.brand)} & named)
        request = BlockRequest("acme", person.pid, language="pt", asked=("size",))
        block = _block(request, inputs, space, now)
        soft_total += len(block["soft"])
        state_blocks += any(e["attr"] in STATE_FIELDS for e in block["soft"])
    return {
        "inferred": claimed,
        "precision": found / claimed if claimed else float("nan"),
        "recall": true_found / (3 * len(persons)),
        "state_in_soft": state_blocks / len(persons),
        "soft_per_block": soft_total / len(persons),
        "by_field": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_field.items())},
        "affinity_precision": affinity_hits / affinities if affinities else float("nan"),
        "taste_recall": taste_found / (2 * len(persons)),
        "not_taste": not_taste,
        "avoids": f"{bad_avoids}/{avoids}",
    }


def ceiling(persons: list[Person], items: list[Item], sessions: int, seed: int) -> tuple:
    """Taste recall and precision of the Bayes classifier that knows our generator's exact
    click model, at the largest recall with precision >= 0.9 (colour and brand)."""
    ranked: list[tuple[float, bool]] = []
    for person in persons:
        pages: dict[str, list] = {}
        depth: dict[str, int] = {}
        clicks: dict[str, set[int]] = {}
        for number in range(1, sessions + 1):
            for _, raw in session_lines(person, number, items, seed):
                body = json.loads(raw).get("interaction") or {}
                if body.get("kind") == "presented":
                    pages[body["exposure_id"]] = body["items"]
                elif body.get("kind") == "seen":
                    depth[body["exposure_id"]] = body["max_index_seen"]
                elif body.get("kind") == "engaged" and body["action"] == "click":
                    clicks.setdefault(body["exposure_id"], set()).add(body["pos"])
        log_like = {}
        for colour, brand in itertools.product(COLORS, BRANDS):
            total = 0.0
            for eid, page in pages.items():
                for shown in page[: depth[eid]]:
                    pos, values = shown["pos"], shown["shown"]
                    rate = (
                        0.04 + 0.3 * (values["color"] == colour) + 0.25 * (values["brand"] == brand)
                    )
                    q = min(0.99, rate / pos**0.8 + (pos <= VISIBLE) / (3 * VISIBLE))
                    total += math.log(q if pos in clicks.get(eid, ()) else 1 - q)
            log_like[(colour, brand)] = total
        top = max(log_like.values())
        post = {k: math.exp(v - top) for k, v in log_like.items()}
        z = sum(post.values())
        for index, truth, names in ((0, person.color, COLORS), (1, person.brand, BRANDS)):
            marginal = {n: sum(p for k, p in post.items() if k[index] == n) / z for n in names}
            best = max(marginal, key=marginal.__getitem__)
            ranked.append((marginal[best], best == truth))
    return best_recall(ranked, len(ranked))


def measure(
    persons: list[Person],
    lines_of: Any,
    sessions: int,
    with_priors: bool,
) -> list[dict]:
    """The scores after replaying N sessions: without priors, then with the nightly
    job's priors (computed from the same days, then the file replayed again: folding
    skips what it folded, derivation runs again with the priors)."""
    lines: list[tuple[datetime, bytes]] = []
    for person in persons:
        for number in range(1, sessions + 1):
            lines.extend(lines_of(person, number))
    lines.sort(key=lambda pair: pair[0])
    out = []
    with tempfile.TemporaryDirectory(prefix="taste-") as tmp:
        home = Path(tmp)
        events = home / "events.jsonl"
        events.write_bytes(b"\n".join(raw for _, raw in lines) + b"\n")
        settings = load_settings(write_config(home), environ={})
        store = Store(settings.store.dsn, settings.store.database)
        try:
            apply_migrations(store)
            space = settings.space("acme")
            assert space is not None
            now = lines[-1][0] + timedelta(hours=1)
            started = time.perf_counter()
            build_replay(settings, store).run(events)
            first = time.perf_counter() - started
            out.append({"priors": "none", "replay_s": first} | score(store, persons, space, now))
            if not with_priors:
                return [row | {"sessions": sessions, "lines": len(lines)} for row in out]
            report = recompute_priors(store, now.date() + timedelta(days=1))
            started = time.perf_counter()
            build_replay(settings, store).run(events)
            second = time.perf_counter() - started
            with_priors = score(store, persons, space, now)
            out.append({"priors": str(report.priors), "replay_s": second} | with_priors)
        finally:
            store.close()
    for row in out:
        row |= {"sessions": sessions, "lines": len(lines)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=150)
    parser.add_argument("--sessions", default="1,2,3,5,10")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--generator", default="ours,heldout")
    parser.add_argument("--priors", action="store_true", help="also replay with priors")
    args = parser.parse_args()
    from bench import taste_heldout

    load = os.getloadavg()[0]
    print(f"{args.people} people, seed {args.seed}, load average {load:.2f}")
    for generator in args.generator.split(","):
        rand = random.Random(args.seed)
        if generator == "ours":
            items: Any = catalogue(rand)
            persons = people(rand, args.people)

            def lines_of(p: Person, n: int, items: Any = items) -> list:
                return session_lines(p, n, items, args.seed)
        else:
            items = taste_heldout.catalogue(rand)
            persons = taste_heldout.people(rand, args.people)

            def lines_of(p: Person, n: int, items: Any = items) -> list:
                return taste_heldout.session_lines(p, n, items, args.seed)

        print(f"\ngenerator {generator}: 3 true tastes each (colour, brand, size)")
        print(
            "sessions  lines  priors  inferred  precision  recall  taste-recall"
            "  aff-precision  not-taste  bad-avoid  state-in-soft  replay s  ceiling"
        )
        for n in (int(x) for x in args.sessions.split(",")):
            best = ""
            if generator == "ours":
                recall, precision = ceiling(persons, items, n, args.seed)
                best = f"{recall:.3f} at {precision:.3f}"
            for r in measure(persons, lines_of, n, args.priors):
                print(
                    f"{r['sessions']:>8}  {r['lines']:>5}  {r['priors']:>6}  {r['inferred']:>8}"
                    f"  {r['precision']:>9.3f}  {r['recall']:>6.3f}  {r['taste_recall']:>12.3f}"
                    f"  {r['affinity_precision']:>13.3f}  {r['not_taste']:>9}"
                    f"  {r['avoids']:>9}  {r['state_in_soft']:>13.3f}  {r['replay_s']:>8.1f}"
                    f"  {best}"
                )
                print(f"          true/inferred by kind and field: {r['by_field']}")


if __name__ == "__main__":
    main()
