"""A third generator, the verification one: never used to choose a threshold.

Built after the two others and like the issue's own check (80 people, one true colour and
one true brand each, three sessions of lists, clicks and carts), but otherwise unlike
them, so that figures on it measure generalisation:

* a catalogue of 300 items; 10 colours and 7 brands (mildly uneven), a `material` field
  declared taste that no one has a taste for, an undeclared `badge` (noise), state fields
  (`price_sale`, `discount_pct`, `in_stock`) and the `size` attribute;
* 2 to 4 lists a session of 10 to 20 items, 4 or 5 visible; half of the lists are a
  recommender's, which ranks items of the person's colour a little higher (a position
  confound: their colour is shown higher, not only clicked more);
* examination falls geometrically (0.88 per position) past the visible ones and stops
  at a scroll depth; `seen` reports that depth on half of the lists only;
* a looked-at item is clicked with a logistic utility (colour +1.7, brand +1.4,
  per-person offset, Gaussian noise); a click is carted 40% of the time on an item of
  the person's colour or brand, 15% otherwise; a fifth of the carts are bought;
* noise: one list in four gets a click on a random visible item.
"""

from __future__ import annotations

import math
import random
from datetime import timedelta
from typing import Any

from bench.taste_recovery import START, Person, Writer, _token, _ts, _uuid7

COLORS = (
    "black", "white", "navy", "grey", "beige", "red", "green", "blue", "brown", "olive",
)  # fmt: skip
BRANDS = ("aurora", "brisa", "cobalto", "duna", "estrela", "farol", "gaia")
MATERIALS = ("cotton", "linen", "wool", "leather", "synthetic")
BADGES = ("new", "sale", "trending", "none")
SIZES = ("P", "M", "G", "GG")
FIELDS = ("color", "brand", "material", "badge", "size", "price_sale", "discount_pct", "in_stock")


def catalogue(rand: random.Random) -> list[dict[str, Any]]:
    colours = [1.0 + 0.15 * i for i in range(len(COLORS))][::-1]
    brands = [1.0 + 0.2 * i for i in range(len(BRANDS))][::-1]
    return [
        {
            "ref": f"item_variant:acme:{20000 + i}",
            "color": rand.choices(COLORS, colours)[0],
            "brand": rand.choices(BRANDS, brands)[0],
            "material": rand.choice(MATERIALS),
            "badge": rand.choice(BADGES),
            "size": rand.choice(SIZES),
            "price_sale": round(rand.uniform(30, 600), 2),
            "discount_pct": rand.choice((0, 0, 10, 20, 30)),
            "in_stock": rand.random() < 0.75,
            "score": rand.random(),
        }
        for i in range(300)
    ]


def people(rand: random.Random, n: int) -> list[Person]:
    return [
        Person(f"v_{i:032x}", rand.choice(COLORS), rand.choice(BRANDS), rand.choice(SIZES))
        for i in range(1, n + 1)
    ]


def session_lines(
    person: Person, number: int, items: list[dict[str, Any]], seed: int, strength: float = 1.0
) -> list:
    """Session ``number`` of ``person``: the same for a given seed, whatever N.
    ``strength`` multiplies the colour's and the brand's weights in the click utility
    (1: the generator as built; ``bench/taste_fast.py --strength`` sweeps it)."""
    rand = random.Random(f"verify:{seed}:{person.pid}:{number}")
    offset = random.Random(f"verify-offset:{seed}:{person.pid}").gauss(0, 0.4)
    at = START + timedelta(days=number, minutes=rand.randrange(800))
    w = Writer(person, number)
    for _ in range(rand.randint(2, 4)):
        at += timedelta(seconds=rand.randint(15, 120))
        length, visible = rand.randint(10, 20), rand.choice((4, 5))
        shown = rand.sample(items, length)
        if rand.random() < 0.5:  # the recommender's list: the person's colour a bit higher
            shown.sort(key=lambda it: -(it["score"] + 0.35 * (it["color"] == person.color)))
        else:
            shown.sort(key=lambda it: -it["score"])
        exposure_id = _uuid7(at, rand)
        page = [
            {"pos": p, "ref": it["ref"], "shown": {k: it[k] for k in FIELDS}}
            for p, it in enumerate(shown, 1)
        ]
        w.add(at, {"interaction": {
            "kind": "presented", "exposure_id": exposure_id, "list_id": f"v-{exposure_id[:8]}",
            "list_kind": "search_products", "delivered_at": _ts(at), "visible_k": visible,
            "items": page,
        }})  # fmt: skip
        depth = min(length, visible + int(rand.expovariate(1 / 4)))
        if rand.random() < 0.5:
            at += timedelta(seconds=rand.randint(2, 20))
            w.add(at, {"interaction": {"kind": "seen", "exposure_id": exposure_id,
                                       "max_index_seen": depth}})  # fmt: skip
        clicked = []
        for pos, it in enumerate(shown[:depth], 1):
            if pos > visible and rand.random() > 0.88 ** (pos - visible):
                continue  # scrolled past without looking
            utility = (
                -3.2
                + offset
                + 1.7 * strength * (it["color"] == person.color)
                + 1.4 * strength * (it["brand"] == person.brand)
                + rand.gauss(0, 0.6)
            )
            if rand.random() < 1 / (1 + math.exp(-utility)):
                clicked.append((pos, it))
        if rand.random() < 0.25:
            pos = rand.randint(1, visible)
            clicked.append((pos, shown[pos - 1]))
        for pos, it in clicked:
            at += timedelta(seconds=rand.randint(3, 40))
            engaged = {"kind": "engaged", "exposure_id": exposure_id, "ref": it["ref"], "pos": pos}
            w.add(at, {"interaction": engaged | {"action": "click"}})
            liked = it["color"] == person.color or it["brand"] == person.brand
            if rand.random() < (0.4 if liked else 0.15):
                at += timedelta(seconds=rand.randint(3, 40))
                w.add(at, {"interaction": engaged | {"action": "cart"}})
                if rand.random() < 0.2:
                    bought = at + timedelta(minutes=rand.randint(2, 60))
                    order = f"o3-{person.pid[-6:]}-{number}-{w.n}"
                    w.add(bought, {"outcome": "purchase", "ref": it["ref"], "order_id": order,
                                   "exposure_token": _token(exposure_id, pos),
                                   "attrs": {"size": person.size}}, kind="outcome")  # fmt: skip
    return w.lines
