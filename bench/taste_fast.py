"""Taste recovery from folded states: the derivation core alone, no store, in seconds.

    .venv/bin/python bench/taste_fast.py [--people 80] [--sessions 1,2,3,5,10] [--seed 7]
        [--generator ours,heldout,verify,calibrated] [--set name=value ...]
        [--fit-seed 404 [--fit-sessions 10] [--fit-people 80]]
        [--strength 3,9,20,50 [--ceiling]]

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

``--strength``: a sweep over the strength of the signal, for the generators that have
one (``calibrated``: the odds ratio of a match on click and cart, 9 as calibrated;
``verify``: a multiplier of its colour and brand utility weights, 1 as built). Per
strength and N it prints the clicks a person, the share of them on the person's colour
or brand, the share of true values that are strictly the most clicked of their field,
the recall at precision 0.9 of "the most clicked value if it leads by m clicks" with m
chosen knowing the truth (what the clicks allow a count rule; with ``--ceiling``, slower,
the calibrated generator's Bayes ceiling and ``noise-exact``: how many people's noise
``category`` would still pass the bar were it explained away exactly), then derivation's
active ``prefer``
affinities with the defaults (and, with ``--fit-seed``, with field priors fitted on that
seed's population at the same strength): their number, precision, recall and how many
rest on another field.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import taste_calibrated, taste_heldout, taste_recovery, taste_verify
from bench._scoring import best_recall
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive, field_counts, shown_objects
from turnstream.core.derivation.events import events_from_accepted
from turnstream.core.derivation.field_prior import FieldPrior, fit_field_prior
from turnstream.core.derivation.state import ProfileState, fold, resolved
from turnstream.core.derivation.taste import field_posterior
from turnstream.models.object_types import load_types

TYPES = load_types(taste_recovery.TYPES)
GENERATORS: dict[str, Any] = {
    "ours": (taste_recovery.catalogue, taste_recovery.people, taste_recovery.session_lines),
    "heldout": (taste_heldout.catalogue, taste_heldout.people, taste_heldout.session_lines),
    "verify": (
        taste_verify.catalogue,
        taste_verify.people,
        lambda person, n, items, seed, strength=None: taste_verify.session_lines(
            person, n, items, seed, 1.0 if strength is None else strength
        ),
    ),
    "calibrated": (
        taste_calibrated.catalogue,
        taste_calibrated.people,
        lambda person, n, items, seed, strength=None: taste_calibrated.session_lines(
            person, n, items, seed, 9.0 if strength is None else strength
        ),
    ),
}
#: The generators with a strength knob (``--strength``): the calibrated one's is the odds
#: ratio of a match (9 as calibrated), verify's multiplies its utility weights (1 as built).
STRENGTH = {"calibrated", "verify"}
#: The fields an affinity may rest on (the bench's truths); any other is counted apart.
TASTE_FIELDS = {"item_variant.color", "item_variant.brand"}


def population(
    generator: str, people: int, seed: int, strength: float | None = None
) -> tuple[list, Any]:
    """The people and a function (person, session number) -> lines, for ``generator``
    (at ``strength``, for a generator of :data:`STRENGTH`; None: as built)."""
    make_items, make_people, lines = GENERATORS[generator]
    rand = random.Random(seed)
    items = make_items(rand)
    persons = make_people(rand, people)
    if strength is None:
        return persons, lambda person, number: lines(person, number, items, seed)
    if generator not in STRENGTH:
        raise SystemExit(f"generator {generator} has no strength knob")
    return persons, lambda person, number: lines(person, number, items, seed, strength)


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


def clicks(persons: list, lines_of: Any, sessions: int) -> dict[str, float]:
    """What the lines allow, counted from the clicks alone: clicks a person, the share of
    them on the person's colour or brand, the share of true values strictly the most
    clicked of their field, and the recall at precision 0.9 of the rule "the most clicked
    value, if it leads by at least m clicks" with the best m chosen knowing the truth (a
    reference that reads the answers to pick its threshold, not a method)."""
    total = on_true = most = 0
    ranked: list[tuple[float, bool]] = []
    for person in persons:
        shown: dict[str, dict[str, Any]] = {}
        counts: dict[str, dict[str, int]] = {"color": {}, "brand": {}}
        for raw in (raw for n in range(1, sessions + 1) for _, raw in lines_of(person, n)):
            body = json.loads(raw).get("interaction") or {}
            if body.get("kind") == "presented":
                for item in body["items"]:
                    shown[item["ref"]] = item["shown"]
            elif body.get("kind") == "engaged" and body.get("action") != "cart":
                total += 1
                values = shown.get(body["ref"], {})
                mine = (values.get("color"), values.get("brand"))
                on_true += mine[0] == person.color or mine[1] == person.brand
                for field in counts:
                    if (value := values.get(field)) is not None:
                        counts[field][value] = counts[field].get(value, 0) + 1
        for field, truth in (("color", person.color), ("brand", person.brand)):
            top = sorted(counts[field].items(), key=lambda kv: -kv[1])
            if not top:
                continue
            lead = top[0][1] - (top[1][1] if len(top) > 1 else 0)
            if lead > 0:
                most += top[0][0] == truth
                ranked.append((lead + top[0][1] / 1000, top[0][0] == truth))
    recall, _ = best_recall(ranked, 2 * len(persons))
    return {
        "clicks": total / len(persons),
        "on_true": on_true / total if total else 0.0,
        "most": most / (2 * len(persons)),
        "rule": recall,
    }


def noise_reach(
    persons: list, lines_of: Any, sessions: int, config: SignalsConfig, strength: float
) -> int:
    """How many people's ``category`` (the calibrated generator's declared taste field that
    carries no taste) reaches P(favours a value) >= the bar when its counts are explained
    away exactly: each object's exposure scaled by the generator's own click odds for its
    colour and brand matches (what no method knows; the defaults' ``taste_prior``)."""
    field = "item_variant.category"
    reached = 0
    for person in persons:
        bucket = resolved(folded(person, lines_of, sessions, config), config).buckets["self"]
        base = math.log(0.04 / 0.96) + person.offset
        counts: dict[str, tuple[float, float]] = {}
        for values, engaged, exposure in shown_objects(bucket, frozenset(bucket.values)):
            if (value := values.get(field)) is None:
                continue
            matches = (values.get("item_variant.color") == person.color) + (
                values.get("item_variant.brand") == person.brand
            )
            click = taste_calibrated._p
            odds = click(base + math.log(strength) * matches) / click(base)
            n, e = counts.get(value, (0.0, 0.0))
            counts[value] = (n + engaged, e + exposure * odds)
        post = field_posterior(counts, config.taste_prior, config.avoid_prior)
        reached += post is not None and max(post.favour.values()) >= config.affinity_min_confidence
    return reached


def sweep(args: argparse.Namespace, config: SignalsConfig) -> None:
    """Per generator of :data:`STRENGTH`, per strength, per N: what the clicks allow (and
    the calibrated generator's Bayes ceiling with ``--ceiling``), and what derivation finds
    with the defaults (and with field priors fitted on ``--fit-seed``)."""
    for generator in args.generator.split(","):
        print(f"generator {generator}")
        print(
            "strength  sessions  clicks/person  on-true  most-clicked  lead-rule@0.9"
            + ("  ceiling@0.9  noise-exact" if args.ceiling else "")
            + "  ours: affinities precision recall not-taste"
            + ("  fitted: affinities precision recall not-taste" if args.fit_seed else "")
        )
        for strength in (float(x) for x in args.strength.split(",")):
            persons, lines_of = population(generator, args.people, args.seed, strength)
            field_priors = None
            if args.fit_seed is not None:
                history = population(
                    generator, args.fit_people or args.people, args.fit_seed, strength
                )
                field_priors = fit(*history, args.fit_sessions, config)
                fits = ", ".join(
                    f"{a.split('.')[-1]} {f.taste_prior:.2f}" for a, f in field_priors.items()
                )
                print(f"  strength {strength:g}, fit: {fits}")
            for n in (int(x) for x in args.sessions.split(",")):
                c = clicks(persons, lines_of, n)
                line = (
                    f"{strength:>8g}  {n:>8}  {c['clicks']:>13.1f}  {c['on_true']:>7.2f}"
                    f"  {c['most']:>12.3f}  {c['rule']:>13.3f}"
                )
                if args.ceiling:
                    items = GENERATORS[generator][0](random.Random(args.seed))
                    if generator == "calibrated":
                        recall, _ = taste_calibrated.ceiling(
                            persons, items, n, args.seed, strength, oracle=False
                        )
                        reach = noise_reach(persons, lines_of, n, config, strength)
                        line += f"  {recall:>11.3f}  {reach:>11}"
                    else:
                        line += f"  {'-':>11}  {'-':>11}"
                for priors in (None, field_priors) if args.fit_seed else (None,):
                    r = score(persons, lines_of, n, config, priors)
                    line += (
                        f"  {r['affinities']:>5} {r['precision']:>5.3f} {r['recall']:>5.3f}"
                        f" {r['not_taste']}"
                    )
                print(line, flush=True)


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
    parser.add_argument("--strength", help="sweep these strengths (calibrated, verify)")
    parser.add_argument("--ceiling", action="store_true", help="with --strength: Bayes ceiling")
    args = parser.parse_args()
    overrides = dict(pair.split("=", 1) for pair in args.set)
    config = SignalsConfig.model_validate(overrides)
    print(f"{args.people} people, seed {args.seed}, load {os.getloadavg()[0]:.2f}, {overrides}")
    if args.strength:
        sweep(args, config)
        return
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
