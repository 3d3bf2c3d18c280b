"""Taste recovery from folded states: the derivation core alone, no store, in seconds.

    .venv/bin/python bench/taste_fast.py [--people 80] [--sessions 1,2,3,5,10] [--seed 7]
        [--generator ours,heldout,verify] [--set name=value ...]

The same generators as bench/taste_recovery.py (``ours``, ``heldout``) and
bench/taste_verify.py (``verify``, never used to choose a threshold). Each person's first
N sessions are folded into a :class:`ProfileState` (``fold``, as the worker does) and
derived once (``derive``, no priors). Against the hidden colour and brand it prints the
active ``prefer`` affinities' precision and recall, how many rest on any other field
(state, attribute, noise), and how many ``avoid`` affinities name a true taste.
``--set`` overrides a ``[signals]`` setting (a tuning run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import taste_heldout, taste_recovery, taste_verify
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive
from turnstream.core.derivation.events import events_from_accepted
from turnstream.core.derivation.state import ProfileState, fold
from turnstream.models.object_types import load_types

TYPES = load_types(taste_recovery.TYPES)
GENERATORS: dict[str, Any] = {
    "ours": (taste_recovery.catalogue, taste_recovery.people, taste_recovery.session_lines),
    "heldout": (taste_heldout.catalogue, taste_heldout.people, taste_heldout.session_lines),
    "verify": (taste_verify.catalogue, taste_verify.people, taste_verify.session_lines),
}


def population(generator: str, people: int, seed: int) -> tuple[list, Any]:
    """The people and a function (person, session number) -> lines, for ``generator``."""
    make_items, make_people, lines = GENERATORS[generator]
    rand = random.Random(seed)
    items = make_items(rand)
    persons = make_people(rand, people)
    return persons, lambda person, number: lines(person, number, items, seed)


def score(persons: list, lines_of: Any, sessions: int, config: SignalsConfig) -> dict[str, Any]:
    """Affinity precision and recall of colour and brand after ``sessions`` sessions."""
    hits = claimed = not_taste = bad_avoids = avoids = 0
    for person in persons:
        state = ProfileState()
        lines = [raw for n in range(1, sessions + 1) for _, raw in lines_of(person, n)]
        for raw in lines:
            for event in events_from_accepted(json.loads(raw)):
                fold(state, event, config)
        truth = {("item_variant.color", person.color), ("item_variant.brand", person.brand)}
        for inf in derive(state, {}, config, TYPES):
            if inf.status != "active" or inf.kind != "affinity":
                continue
            if inf.polarity == "avoid":
                avoids += 1
                bad_avoids += (inf.attr, inf.value) in truth
                continue
            claimed += 1
            hits += (inf.attr, inf.value) in truth
            not_taste += inf.attr not in {"item_variant.color", "item_variant.brand"}
    return {
        "sessions": sessions,
        "affinities": claimed,
        "precision": hits / claimed if claimed else float("nan"),
        "recall": hits / (2 * len(persons)),
        "not_taste": not_taste,
        "avoids": f"{bad_avoids}/{avoids}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=80)
    parser.add_argument("--sessions", default="1,2,3,5,10")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--generator", default="ours,heldout,verify")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    config = SignalsConfig.model_validate(overrides)
    print(f"{args.people} people, seed {args.seed}, load {os.getloadavg()[0]:.2f}, {overrides}")
    for generator in args.generator.split(","):
        persons, lines_of = population(generator, args.people, args.seed)
        print(f"generator {generator}")
        print("sessions  affinities  precision  recall  not-taste  bad-avoid/avoid")
        for n in (int(x) for x in args.sessions.split(",")):
            r = score(persons, lines_of, n, config)
            print(
                f"{r['sessions']:>8}  {r['affinities']:>10}  {r['precision']:>9.3f}"
                f"  {r['recall']:>6.3f}  {r['not_taste']:>9}  {r['avoids']:>15}"
            )


if __name__ == "__main__":
    main()
