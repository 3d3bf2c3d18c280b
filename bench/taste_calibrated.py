"""Taste recovery on a generator calibrated to the issue's own check (issue #36).

    .venv/bin/python bench/taste_calibrated.py [--checkout DIR] [--strength 6] [--seed 101]
        [--sessions 1,2,3,5,10] [--people 80] [--signal key=value ...]
        [--fit-seed 404 [--fit-sessions 10] [--no-field-fit]] [--no-first-fit]

The issue's judges measured, with a simulation not in the repository (80 people, one
true colour and one true brand each, three sessions of lists, clicks and carts), the
round-2 method (49ab1d8) at precision 1.000 and recall 0.056 after 3 sessions, 0.569
after 10. This generator has the same shape and a strength knob; the strength is chosen
so that the round-2 method gives about those figures (``--checkout`` a worktree of
49ab1d8, docs/signals.md), then the current method is measured at that strength on
other seeds.

The generator: a catalogue of 300 items (8 colours, 6 brands, a `category` declared
taste with random values that no one has a taste for, an undeclared `badge` (noise),
the `size` attribute and state fields `price_sale`, `price_list`, `in_stock`); per
session 2 to 4 lists of 10 to 20 items ranked by a popularity score, 4 to 6 visible,
`seen` (`max_index_seen`, the scroll depth) on half of them; examination falls as
0.85 per position past the first and stops at the depth; a looked-at item is clicked
with odds ``base * S^(colour is theirs) * S^(brand is theirs)`` (``S`` the strength,
base 4% with a per-person offset); a click is carted with odds ``0.15 * S^(matches/2)``;
one list in four gets a noise click on a random visible item.

Each N of ``--sessions``: the first N sessions of everyone into a file, run through
``python -m turnstream replay`` with the checkout on PYTHONPATH (its own
``examples/types.toml``) into a fresh embedded store, then the active affinities read
in a subprocess (``inferences`` FINAL): precision of the `prefer` ones, recall of the
true colours and brands (2 per person), how many rest on a noise, state or attribute
field, and how many `avoid` name a true taste. ``--fit-seed``: the store first gets a
history, another population (that seed, other ids, ``--fit-sessions`` sessions each)
replayed and ``turnstream priors recompute`` run on it (value priors and the field priors
fitted on its people, docs/signals.md), and each N is replayed into a copy of that store;
``--no-field-fit`` drops the field priors after the job (the same history and value
priors, the defaults for fields). ``--no-first-fit``: the replay without its fit of the new
space at the end (``[jobs] first_fit = false``; ``bench/taste_live.py`` measures the same
generator through a broker and a worker). Imports nothing from the checkout, so the
same lines run on any tree (49ab1d8 imports `edlib`, which the venv lacks, for claims
only: ``--extra-path`` a directory holding a stub ``edlib.py``). ``--ceiling`` prints
instead what the Bayes classifier that knows the click model reaches from the lines
(and an oracle that also knows what was looked at and which clicks were noise), at
precision 0.9. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._scoring import best_recall, score_affinities

ROOT = Path(__file__).resolve().parents[1]
COLORS = ("black", "navy", "white", "red", "green", "beige", "grey", "pink")
BRANDS = ("aurora", "brisa", "cobalto", "duna", "estrela", "farol")
CATEGORIES = ("sneakers", "running", "boots", "sandals", "loafers")
BADGES = ("new", "sale", "trending", "none")
SIZES = ("36", "38", "40", "42", "44")
TASTES = ("color", "brand")
#: Fields no affinity may rest on: the noise ones, the attribute and the state fields.
NOT_TASTES = ("category", "badge", "size", "price_sale", "price_list", "in_stock")
START = datetime.combine(datetime.now(UTC).date() - timedelta(days=14), datetime.min.time(), UTC)


@dataclass(frozen=True)
class Person:
    pid: str
    color: str
    brand: str
    offset: float


def catalogue(rand: random.Random) -> list[dict[str, Any]]:
    items = []
    for i in range(300):
        price = round(rand.uniform(40, 400), 1)
        items.append(
            {
                "ref": f"item_variant:acme:{30000 + i}",
                "color": rand.choice(COLORS),
                "brand": rand.choice(BRANDS),
                "category": rand.choice(CATEGORIES),
                "badge": rand.choice(BADGES),
                "size": rand.choice(SIZES),
                "price_sale": price,
                "price_list": round(price * 1.2, 1),
                "in_stock": rand.random() < 0.8,
                "score": rand.random(),
            }
        )
    return items


def people(rand: random.Random, n: int) -> list[Person]:
    return [
        Person(f"c_{i:032x}", rand.choice(COLORS), rand.choice(BRANDS), rand.gauss(0, 0.4))
        for i in range(1, n + 1)
    ]


def _ts(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _uuid7(at: datetime, rand: random.Random) -> str:
    ms = int(at.timestamp() * 1000)
    value = ms << 80 | 0x7 << 76 | rand.getrandbits(12) << 64 | 0b10 << 62
    return str(uuid.UUID(int=value | rand.getrandbits(62)))


def _p(logit: float) -> float:
    return 1 / (1 + math.exp(-logit))


def session_lines(
    person: Person,
    number: int,
    items: list[dict[str, Any]],
    seed: int,
    strength: float,
    trace: list[tuple[dict[str, Any], bool, bool]] | None = None,
) -> list[tuple[datetime, str]]:
    """Session ``number`` (1-based) of ``person``: the same for a seed, whatever N.
    ``trace`` gets each looked-at item, whether it was clicked and carted (no noise click)."""
    rand = random.Random(f"cal:{seed}:{person.pid}:{number}")
    at = START + timedelta(days=number, minutes=rand.randrange(600))
    lines: list[tuple[datetime, str]] = []

    def add(when: datetime, interaction: dict[str, Any]) -> None:
        key = f"{person.pid}-s{number}-{len(lines) + 1}"
        item = {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": key,
            "profile_id": person.pid,
            "source": "web",
            "conversation_id": f"{person.pid}-s{number}",
            "occurred_at": _ts(when),
            "interaction": interaction,
        }
        lines.append((when, json.dumps(item, separators=(",", ":"))))

    log_s = math.log(strength)
    base = math.log(0.04 / 0.96) + person.offset
    for _ in range(rand.randint(2, 4)):
        at += timedelta(seconds=rand.randint(15, 120))
        length, visible = rand.randint(10, 20), rand.randint(4, 6)
        shown = sorted(rand.sample(items, length), key=lambda it: -it["score"])
        exposure_id = _uuid7(at, rand)
        page = [
            {"pos": p, "ref": it["ref"], "shown": {k: v for k, v in it.items() if k != "score"}}
            for p, it in enumerate(shown, 1)
        ]
        add(at, {"kind": "presented", "exposure_id": exposure_id,
                 "list_id": f"c-{exposure_id[:8]}", "list_kind": "search_products",
                 "delivered_at": _ts(at), "visible_k": visible, "items": page})  # fmt: skip
        depth = min(length, visible + int(rand.expovariate(1 / 4)))
        if rand.random() < 0.5:
            at += timedelta(seconds=rand.randint(2, 20))
            add(at, {"kind": "seen", "exposure_id": exposure_id, "max_index_seen": depth})
        clicked = []
        looked = []
        for pos, it in enumerate(shown[:depth], 1):
            if rand.random() > 0.85 ** (pos - 1):
                continue  # not looked at
            matches = (it["color"] == person.color) + (it["brand"] == person.brand)
            looked.append(it)
            if rand.random() < _p(base + log_s * matches):
                clicked.append((pos, it, matches))
        modelled = len(clicked)
        if rand.random() < 0.25:
            pos = rand.randint(1, visible)
            clicked.append((pos, shown[pos - 1], 0))
        carted = set()
        for pos, it, matches in clicked:
            at += timedelta(seconds=rand.randint(3, 40))
            engaged = {"kind": "engaged", "exposure_id": exposure_id, "ref": it["ref"], "pos": pos}
            add(at, engaged | {"action": "click"})
            if rand.random() < _p(math.log(0.15 / 0.85) + log_s * matches / 2):
                at += timedelta(seconds=rand.randint(3, 40))
                add(at, engaged | {"action": "cart"})
                carted.add(pos)
        if trace is not None:
            real = {id(it): pos for pos, it, _ in clicked[:modelled]}
            for it in looked:
                hit = id(it) in real
                trace.append((it, hit, hit and real[id(it)] in carted))
    return lines


def _observed(
    person: Person, items: list[dict[str, Any]], sessions: int, seed: int, strength: float
) -> list[tuple[dict[str, Any], float, float, bool, bool]]:
    """What the lines show: per shown item, the chance it was looked at (0.85 a position
    past the first, times the chance the scroll reached it: known where `seen` says, else
    ``exp(-(pos - visible) / 4)``), the noise click's rate there, clicked, carted."""
    by_ref = {it["ref"]: it for it in items}
    out = []
    for n in range(1, sessions + 1):
        lists: dict[str, dict[str, Any]] = {}
        for _, raw in session_lines(person, n, items, seed, strength):
            body = json.loads(raw)["interaction"]
            if body["kind"] == "presented":
                lists[body["exposure_id"]] = {"page": body, "depth": None, "hit": {}}
            elif body["kind"] == "seen":
                lists[body["exposure_id"]]["depth"] = body["max_index_seen"]
            else:
                hit = lists[body["exposure_id"]]["hit"]
                hit[body["pos"]] = hit.get(body["pos"], False) or body["action"] == "cart"
        for one in lists.values():
            visible, depth = one["page"]["visible_k"], one["depth"]
            for shown in one["page"]["items"]:
                pos = shown["pos"]
                reach = (pos <= depth) if depth else min(1.0, math.exp(-(pos - visible) / 4))
                noise = 0.25 / visible if pos <= visible else 0.0
                hit = pos in one["hit"]
                out.append(
                    (by_ref[shown["ref"]], 0.85 ** (pos - 1) * reach, noise, hit,
                     one["hit"].get(pos, False))
                )  # fmt: skip
    return out


def ceiling(
    persons: list[Person],
    items: list[dict[str, Any]],
    sessions: int,
    seed: int,
    strength: float,
    oracle: bool,
) -> tuple[float, float]:
    """Taste recall at precision >= 0.9 of the Bayes classifier that knows the click
    model (the person's offset too) and reads the lines; with ``oracle``, it also knows
    which items were looked at and which clicks were noise. No method beats either."""
    log_s = math.log(strength)
    ranked: list[tuple[float, bool]] = []
    for person in persons:
        if oracle:
            trace: list[tuple[dict[str, Any], bool, bool]] = []
            for n in range(1, sessions + 1):
                session_lines(person, n, items, seed, strength, trace)
            seen = [(it, 1.0, 0.0, hit, cart) for it, hit, cart in trace]
        else:
            seen = _observed(person, items, sessions, seed, strength)
        base = math.log(0.04 / 0.96) + person.offset
        cart0 = math.log(0.15 / 0.85)
        log_like = {}
        for colour in COLORS:
            for brand in BRANDS:
                total = 0.0
                for it, looked, noise, hit, cart in seen:
                    m = (it["color"] == colour) + (it["brand"] == brand)
                    q = min(0.99, looked * _p(base + log_s * m) + noise)
                    total += math.log(q if hit else 1 - q)
                    if hit:
                        c = _p(cart0 + log_s * m / 2)
                        total += math.log(c if cart else 1 - c)
                log_like[(colour, brand)] = total
        top = max(log_like.values())
        post = {k: math.exp(v - top) for k, v in log_like.items()}
        z = sum(post.values())
        for index, truth, names in ((0, person.color, COLORS), (1, person.brand, BRANDS)):
            marginal = {v: sum(p for k, p in post.items() if k[index] == v) / z for v in names}
            best = max(marginal, key=marginal.__getitem__)
            ranked.append((marginal[best], best == truth))
    return best_recall(ranked, len(ranked))


def write_config(
    home: Path, checkout: Path, signals: dict[str, str], first_fit: bool = True
) -> Path:
    """The acme space (pt) with the checkout's own types document; ``first_fit`` false:
    ``[jobs] first_fit = false`` (no fit at the end of the replay)."""
    extra = "".join(f"{k} = {v}\n" for k, v in signals.items())
    jobs = "" if first_fit else "[jobs]\nfirst_fit = false\n"
    path = home / "turnstream.toml"
    path.write_text(
        f'[store]\ndsn = "chdb:{home / "store"}"\n[identity]\nsecret = "bench-calibrated"\n'
        f"[signals]\n{extra}{jobs}"
        '[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\n'
        f'types = "{checkout / "examples" / "types.toml"}"\n'
    )
    return path


READ = """
import json, sys, clickhouse_connect
client = clickhouse_connect.get_client(interface="chdb", path=sys.argv[1], database="turnstream")
rows = client.query(
    "SELECT profile_id, attr, value, polarity FROM inferences FINAL"
    " WHERE status = 'active' AND kind = 'affinity' AND `for` = 'self'"
).result_rows
print(json.dumps([list(r) for r in rows]))
"""


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, check=True, capture_output=True, text=True
    )


def population_lines(
    seed: int, n: int, sessions: int, strength: float, pid: str = "h_{:032x}"
) -> list[str]:
    """The lines of ``n`` people of ``seed`` over ``sessions`` sessions, in time order;
    ``pid`` formats each person's number (1-based) as their profile id."""
    rand = random.Random(seed)
    items = catalogue(rand)
    persons = [replace(p, pid=pid.format(i)) for i, p in enumerate(people(rand, n), 1)]
    pairs = sorted(
        (pair for p in persons for number in range(1, sessions + 1)
         for pair in session_lines(p, number, items, seed, strength)),
        key=lambda pair: pair[0],
    )  # fmt: skip
    return [raw for _, raw in pairs]


def history(args: argparse.Namespace, home: Path, env: dict[str, str]) -> Path:
    """A store holding the space's history (the ``--fit-seed`` population replayed, the
    priors job run on it); its directory, copied for each measure."""
    lines = population_lines(args.fit_seed, args.people, args.fit_sessions, args.strength)
    events = home / "history.jsonl"
    events.write_text("\n".join(lines) + "\n")
    signals = dict(s.split("=", 1) for s in args.signal)
    config = write_config(home, Path(args.checkout).resolve(), signals)
    dsn = f"chdb://{home / 'store'}"
    _run(["-m", "turnstream", "replay", "--config", str(config), "--dsn", dsn, str(events)],
         env, home)  # fmt: skip
    out = _run(["-m", "turnstream", "priors", "recompute", "--config", str(config), "--dsn", dsn],
               env, home)  # fmt: skip
    print(f"history: seed {args.fit_seed}, {args.fit_sessions} sessions; {out.stdout.strip()}")
    if args.no_field_fit:
        _run(["-c", DROP_FIT, str(home / "store")], env, home)
    else:
        print(_run(["-c", SHOW_FIT, str(home / "store")], env, home).stdout.rstrip())
    return home / "store"


DROP_FIT = """
import sys, clickhouse_connect
client = clickhouse_connect.get_client(interface="chdb", path=sys.argv[1], database="turnstream")
client.command("TRUNCATE TABLE field_priors")
"""
SHOW_FIT = """
import sys, clickhouse_connect
client = clickhouse_connect.get_client(interface="chdb", path=sys.argv[1], database="turnstream")
for row in client.query(
    "SELECT attr, people, round(taste_prior, 3), weights FROM field_priors_latest ORDER BY attr"
).result_rows:
    print("  fit", *row)
"""


def truth_of(persons: list[Person]) -> dict[str, set[tuple[str, str]]]:
    """Per person, their true (field, value) tastes: a colour and a brand."""
    return {p.pid: {("color", p.color), ("brand", p.brand)} for p in persons}


def measure(
    persons: list[Person],
    items: list[dict[str, Any]],
    sessions: int,
    args: argparse.Namespace,
    base: Path | None = None,
) -> dict[str, Any]:
    """Replay the first ``sessions`` sessions on the checkout (into a copy of ``base``, a
    store with a history, if given); score its affinities."""
    lines = [
        pair
        for person in persons
        for n in range(1, sessions + 1)
        for pair in session_lines(person, n, items, args.seed, args.strength)
    ]
    lines.sort(key=lambda pair: pair[0])
    checkout = Path(args.checkout).resolve()
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(checkout), *args.extra_path])}
    signals = dict(s.split("=", 1) for s in args.signal)
    with tempfile.TemporaryDirectory(prefix="tastecal-") as tmp:
        home = Path(tmp)
        if base is not None:
            shutil.copytree(base, home / "store", symlinks=True)
        events = home / "events.jsonl"
        events.write_text("\n".join(raw for _, raw in lines) + "\n")
        config = write_config(home, checkout, signals, not args.no_first_fit)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "turnstream", "replay", "--config", str(config),
             "--dsn", f"chdb://{home / 'store'}", str(events)],
            env=env, cwd=home, check=True, capture_output=True,
        )  # fmt: skip
        took = time.perf_counter() - started
        out = subprocess.run(
            [sys.executable, "-c", READ, str(home / "store")],
            env=env, cwd=home, check=True, capture_output=True, text=True,
        )  # fmt: skip
    return {
        "sessions": sessions,
        "lines": len(lines),
        **score_affinities(json.loads(out.stdout), truth_of(persons), NOT_TASTES),
        "replay_s": took,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", default=str(ROOT), help="the tree whose method runs")
    parser.add_argument("--strength", type=float, default=6.0, help="odds ratio of a match")
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--people", type=int, default=80)
    parser.add_argument("--sessions", default="1,2,3,5,10")
    parser.add_argument("--signal", action="append", default=[], help="[signals] key=value")
    parser.add_argument("--ceiling", action="store_true", help="the oracle's bound only")
    parser.add_argument("--extra-path", action="append", default=[], help="more PYTHONPATH")
    parser.add_argument("--fit-seed", type=int, help="replay this seed's history first")
    parser.add_argument("--fit-sessions", type=int, default=10)
    parser.add_argument("--no-field-fit", action="store_true", help="drop the field priors")
    parser.add_argument(
        "--no-first-fit", action="store_true", help="no fit at the end of each replay"
    )
    args = parser.parse_args()
    rand = random.Random(args.seed)
    items = catalogue(rand)
    persons = people(rand, args.people)
    print(
        f"checkout {args.checkout}, strength {args.strength}, seed {args.seed}, "
        f"{args.people} people, signals {args.signal}, load {os.getloadavg()[0]:.1f}"
    )
    keep = tempfile.TemporaryDirectory(prefix="tastehist-")
    base = None
    if args.fit_seed is not None and not args.ceiling:
        checkout = Path(args.checkout).resolve()
        env = os.environ | {"PYTHONPATH": os.pathsep.join([str(checkout), *args.extra_path])}
        base = history(args, Path(keep.name), env)
    if not args.ceiling:
        print("sessions  lines  affinities  precision  recall  off-field  bad-avoid  replay s")
    for n in (int(x) for x in args.sessions.split(",")):
        if args.ceiling:
            for oracle in (False, True):
                recall, precision = ceiling(persons, items, n, args.seed, args.strength, oracle)
                name = "oracle" if oracle else "ceiling"
                print(f"{n:>8}  {name}: recall {recall:.3f} at precision {precision:.3f}")
            continue
        r = measure(persons, items, n, args, base)
        print(
            f"{r['sessions']:>8}  {r['lines']:>5}  {r['affinities']:>10}  {r['precision']:>9.3f}"
            f"  {r['recall']:>6.3f}  {r['off_field']:>9}  {r['avoids']:>9}  {r['replay_s']:>8.1f}",
            flush=True,
        )
    keep.cleanup()


if __name__ == "__main__":
    main()
