"""Taste recovery from folded states: the derivation core alone, no store, in seconds.

    .venv/bin/python bench/taste_fast.py [--people 80] [--sessions 1,2,3,5,10] [--seed 7]
        [--generator ours,heldout,verify,calibrated] [--set name=value ...]
        [--fit-seed 404 [--fit-sessions 10] [--fit-people 80]]

The same generators as bench/taste_recovery.py (``ours``, ``heldout``),
bench/taste_verify.py (``verify``, never used to choose a threshold) and
bench/taste_calibrated.py at strength 9 (``calibrated``). Each person's first
N sessions are folded into a :class:`ProfileState` (``fold``, as the worker does) and
derived once (``derive``, no value priors). Against the hidden colour and brand it prints
the active ``prefer`` affinities' precision and recall, how many rest on any other field
(state, attribute, noise; per field), and how many ``avoid`` affinities name a true
taste. ``--set`` overrides a ``[signals]`` setting (a tuning run).

``--fit-seed``: first the space's history, another population of the same generator
(that seed, ``--fit-people`` people, ``--fit-sessions`` sessions each), gives each field
its prior fitted across people (``field_counts`` then ``fit_field_prior``, as the
nightly priors job does from the stored states); the population of ``--seed`` is then
derived with those field priors.
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

from bench import taste_calibrated, taste_heldout, taste_recovery, taste_verify
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive, field_counts
from turnstream.core.derivation.events import events_from_accepted
from turnstream.core.derivation.field_prior import FieldPrior, fit_field_prior
from turnstream.core.derivation.state import ProfileState, fold
from turnstream.models.object_types import load_types

TYPES = load_types(taste_recovery.TYPES)
GENERATORS: dict[str, Any] = {
    "ours": (taste_recovery.catalogue, taste_recovery.people, taste_recovery.session_lines),
    "heldout": (taste_heldout.catalogue, taste_heldout.people, taste_heldout.session_lines),
    "verify": (taste_verify.catalogue, taste_verify.people, taste_verify.session_lines),
    "calibrated": (
        taste_calibrated.catalogue,
        taste_calibrated.people,
        lambda person, n, items, seed: taste_calibrated.session_lines(person, n, items, seed, 9.0),
    ),
}
#: The fields an affinity may rest on (the bench's truths); any other is counted apart.
TASTE_FIELDS = {"item_variant.color", "item_variant.brand"}


def population(generator: str, people: int, seed: int) -> tuple[list, Any]:
    """The people and a function (person, session number) -> lines, for ``generator``."""
    make_items, make_people, lines = GENERATORS[generator]
    rand = random.Random(seed)
    items = make_items(rand)
    persons = make_people(rand, people)
    return persons, lambda person, number: lines(person, number, items, seed)


def folded(person: Any, lines_of: Any, sessions: int, config: SignalsConfig) -> ProfileState:
    """The person's state after their first ``sessions`` sessions."""
    state = ProfileState()
    for raw in (raw for n in range(1, sessions + 1) for _, raw in lines_of(person, n)):
        for event in events_from_accepted(json.loads(raw)):
            fold(state, event, config)
    return state


def fit(
    persons: list, lines_of: Any, sessions: int, config: SignalsConfig
) -> dict[str, FieldPrior]:
    """Each taste field's prior fitted across ``persons`` after ``sessions`` sessions."""
    by_field: dict[str, list[dict[str, tuple[float, float]]]] = {}
    for person in persons:
        for attr, counts in field_counts(
            folded(person, lines_of, sessions, config), {}, config, TYPES
        ).items():
            by_field.setdefault(attr, []).append(counts)
    return {a: f for a, c in sorted(by_field.items()) if (f := fit_field_prior(c)) is not None}


def score(
    persons: list,
    lines_of: Any,
    sessions: int,
    config: SignalsConfig,
    field_priors: dict[str, FieldPrior] | None = None,
) -> dict[str, Any]:
    """Affinity precision and recall of colour and brand after ``sessions`` sessions."""
    hits = claimed = bad_avoids = avoids = 0
    not_taste: dict[str, int] = {}
    for person in persons:
        state = folded(person, lines_of, sessions, config)
        truth = {("item_variant.color", person.color), ("item_variant.brand", person.brand)}
        for inf in derive(state, {}, config, TYPES, field_priors):
            if inf.status != "active" or inf.kind != "affinity":
                continue
            if inf.polarity == "avoid":
                avoids += 1
                bad_avoids += (inf.attr, inf.value) in truth
                continue
            claimed += 1
            hits += (inf.attr, inf.value) in truth
            if inf.attr not in TASTE_FIELDS:
                field = inf.attr.split(".", 1)[-1]
                not_taste[field] = not_taste.get(field, 0) + 1
    return {
        "sessions": sessions,
        "affinities": claimed,
        "precision": hits / claimed if claimed else float("nan"),
        "recall": hits / (2 * len(persons)),
        "not_taste": " ".join(f"{k}:{v}" for k, v in sorted(not_taste.items())) or "0",
        "avoids": f"{bad_avoids}/{avoids}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=80)
    parser.add_argument("--sessions", default="1,2,3,5,10")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--generator", default="ours,heldout,verify")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--fit-seed", type=int, help="fit field priors on this seed first")
    parser.add_argument("--fit-sessions", type=int, default=10)
    parser.add_argument("--fit-people", type=int)
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    config = SignalsConfig.model_validate(overrides)
    print(f"{args.people} people, seed {args.seed}, load {os.getloadavg()[0]:.2f}, {overrides}")
    for generator in args.generator.split(","):
        persons, lines_of = population(generator, args.people, args.seed)
        print(f"generator {generator}")
        field_priors = None
        if args.fit_seed is not None:
            history = population(generator, args.fit_people or args.people, args.fit_seed)
            field_priors = fit(*history, args.fit_sessions, config)
            for attr, f in field_priors.items():
                weights = " ".join(f"{w:.2f}" for w in f.weights)
                print(f"  fit {attr}: pi {f.taste_prior:.3f}, lift {f.lift:.1f} ({weights}), "
                      f"{f.people} people")  # fmt: skip
        print("sessions  affinities  precision  recall  bad-avoid/avoid  not-taste")
        for n in (int(x) for x in args.sessions.split(",")):
            r = score(persons, lines_of, n, config, field_priors)
            print(
                f"{r['sessions']:>8}  {r['affinities']:>10}  {r['precision']:>9.3f}"
                f"  {r['recall']:>6.3f}  {r['avoids']:>15}  {r['not_taste']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
