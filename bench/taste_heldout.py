"""A second, differently built generator for bench/taste_recovery.py (the held-out check).

Not the bench's own generator, so that inference is not tuned to it:

* a catalogue of 400 items whose colours and brands are Zipf-skewed (black, white, navy
  make most of it), each with a Pareto popularity that both picks and ranks what a list
  shows (popular items come first);
* people's true colour and brand are Zipf-skewed too, milder;
* 3 to 6 lists a session of 6, 8, 10, 16 or 20 items, 2, 3 or 6 of them visible;
* a cascade click model: the person reads top-down, continues with probability 0.85,
  clicks with a logistic utility (colour +2.2, brand +1.8, Gaussian noise) and stops
  after a click half of the time; `seen` reports how far they read in 70% of the lists
  only (the others rely on `visible_k` and the default curve);
* clicks, details and mentions; a third carted, 40% of carts bought (of the person's size);
* noise: one list in five gets a click on a random item among those read;
* a `category` field declared taste in examples/types.toml that no one has a taste for
  (a noise field), and state fields (`price_sale`, `in_stock`).
"""

from __future__ import annotations

import math
import random
from datetime import timedelta
from typing import Any

from bench.taste_recovery import START, Person, Writer, _token, _ts, _uuid7

COLORS = (
    "black", "white", "navy", "grey", "beige", "red", "green", "blue", "brown", "pink",
    "yellow", "purple",
)  # fmt: skip
BRANDS = ("aurora", "brisa", "cobalto", "duna", "estrela", "farol", "gaia", "horizonte")
CATEGORIES = ("sneakers", "running", "boots", "sandals", "loafers")
SIZES = ("37", "38", "39", "40")
FIELDS = ("color", "brand", "category", "size", "price_sale", "in_stock")


def _zipf(n: int, s: float) -> list[float]:
    return [1 / (i + 1) ** s for i in range(n)]


def catalogue(rand: random.Random) -> list[dict[str, Any]]:
    colours, brands = _zipf(len(COLORS), 1.0), _zipf(len(BRANDS), 0.8)
    return [
        {
            "ref": f"item_variant:acme:{9000 + i}",
            "color": rand.choices(COLORS, colours)[0],
            "brand": rand.choices(BRANDS, brands)[0],
            "category": rand.choice(CATEGORIES),
            "size": rand.choice(("36", *SIZES, "41", "42")),
            "price_sale": round(rand.uniform(80, 900), 2),
            "in_stock": rand.random() < 0.7,
            "pop": rand.paretovariate(1.5),
        }
        for i in range(400)
    ]


def people(rand: random.Random, n: int) -> list[Person]:
    colours, brands = _zipf(len(COLORS), 0.5), _zipf(len(BRANDS), 0.5)
    return [
        Person(
            f"q_{i:032x}",
            rand.choices(COLORS, colours)[0],
            rand.choices(BRANDS, brands)[0],
            rand.choice(SIZES),
        )
        for i in range(1, n + 1)
    ]


def session_lines(person: Person, number: int, items: list[dict[str, Any]], seed: int) -> list:
    """Session ``number`` of ``person``: the same for a given seed, whatever N."""
    rand = random.Random(f"heldout:{seed}:{person.pid}:{number}")
    at = START + timedelta(days=number, minutes=rand.randrange(900))
    w = Writer(person, number)
    weights = [it["pop"] for it in items]
    for _ in range(rand.randint(3, 6)):
        at += timedelta(seconds=rand.randint(10, 200))
        shown: list[dict[str, Any]] = []
        length = rand.choice((6, 8, 10, 16, 20))
        while len(shown) < length:
            pick = rand.choices(items, weights)[0]
            if pick not in shown:
                shown.append(pick)
        shown.sort(key=lambda it: -it["pop"] * rand.random())
        exposure_id = _uuid7(at, rand)
        page = [
            {"pos": p, "ref": it["ref"], "shown": {k: it[k] for k in FIELDS}}
            for p, it in enumerate(shown, 1)
        ]
        w.add(at, {"interaction": {
            "kind": "presented", "exposure_id": exposure_id, "list_id": f"m-{exposure_id[:8]}",
            "list_kind": "search_products", "delivered_at": _ts(at),
            "visible_k": rand.choice((2, 3, 6)), "items": page,
        }})  # fmt: skip
        depth, clicked = 1, []
        for pos, it in enumerate(shown, 1):
            depth = pos
            utility = (
                -3.0
                + 2.2 * (it["color"] == person.color)
                + 1.8 * (it["brand"] == person.brand)
                + rand.gauss(0, 0.5)
            )
            if rand.random() < 1 / (1 + math.exp(-utility)):
                clicked.append((pos, it))
                if rand.random() < 0.5:
                    break
            if rand.random() > 0.85:
                break
        if rand.random() < 0.7:
            at += timedelta(seconds=rand.randint(2, 20))
            w.add(at, {"interaction": {"kind": "seen", "exposure_id": exposure_id,
                                       "max_index_seen": depth}})  # fmt: skip
        if rand.random() < 0.2:
            pos = rand.randint(1, depth)
            clicked.append((pos, shown[pos - 1]))
        for pos, it in clicked:
            at += timedelta(seconds=rand.randint(3, 60))
            action = rand.choice(("click", "click", "detail", "mention"))
            engaged = {"kind": "engaged", "exposure_id": exposure_id, "ref": it["ref"], "pos": pos}
            w.add(at, {"interaction": engaged | {"action": action}})
            if rand.random() < 0.3:
                w.add(at, {"interaction": engaged | {"action": "cart"}})
                if rand.random() < 0.4:
                    bought = at + timedelta(minutes=rand.randint(2, 60))
                    order = f"o2-{person.pid[-6:]}-{number}-{w.n}"
                    w.add(bought, {"outcome": "purchase", "ref": it["ref"], "order_id": order,
                                   "exposure_token": _token(exposure_id, pos),
                                   "attrs": {"size": person.size}}, kind="outcome")  # fmt: skip
    return w.lines
