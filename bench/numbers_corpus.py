"""The number reader against public corpora written by others, per language and class.

    .venv/bin/python bench/numbers_corpus.py [--split tune|holdout|all|unseen] [--misses N]

``unseen`` is bench/corpora/unseen.jsonl: lines written for issue 37 in the style of shop
pages, invoices and news, never tuned on (no rule was changed after reading its errors);
``all`` leaves it out so that the other figures stay comparable.

Corpora: bench/corpora/*.jsonl (sources, licences and mapping in bench/corpora/README.md).
A prediction is counted only in the classes its corpus annotates (a price list says
nothing about counts). Span match: a mention of the expected class whose span covers the
expected number (for a date, overlaps the expected date); value match: the same, and the
value equal. Prints precision and recall for both, then the excluded cases by reason.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from turnstream.sdk.claims.numbers import Mention, read_numbers

CORPORA = Path(__file__).parent / "corpora"


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _covers(m: Mention, exp: dict) -> bool:
    if m.cls != exp["class"] and m.cls not in exp.get("alt", ()):
        return False
    if exp.get("loose"):
        return m.start < exp["end"] and exp["start"] < m.end
    return m.start <= exp["start"] and exp["end"] <= m.end


def score(cases: list[dict], misses: list[str]) -> dict[tuple[str, str], collections.Counter]:
    """Counts per (lang, class): expected, predicted, span hits, value hits."""
    counts: dict[tuple[str, str], collections.Counter] = collections.defaultdict(
        collections.Counter
    )
    for case in cases:
        mentions = read_numbers(case["text"], case["lang"])
        ignore = case.get("ignore", [])
        for cls in case["classes"]:
            if cls == "dosage" and "quantity" in case["classes"]:
                continue  # scored with quantity: a corpus's "ml" is either
            c = counts[(case["lang"], cls)]
            both = {cls, "dosage"} if cls == "quantity" else {cls}
            preds = [
                m
                for m in mentions
                if m.cls in both and not any(m.start < e and s < m.end for s, e in ignore)
            ]
            expected = [e for e in case["expect"] if e["class"] == cls]
            c["expected"] += len(expected)
            c["predicted"] += len(preds)
            used: set[int] = set()
            for exp in expected:
                hit = next(
                    (i for i, m in enumerate(preds) if i not in used and _covers(m, exp)), None
                )
                if hit is None:
                    misses.append(
                        f"miss {case['lang']} {cls:8s} {case['text']!r} expected {exp['value']!r}"
                    )
                    continue
                used.add(hit)
                c["span"] += 1
                if _same(preds[hit].value, exp["value"]):
                    c["value"] += 1
                else:
                    misses.append(
                        f"value {case['lang']} {cls:8s} {case['text']!r} got "
                        f"{preds[hit].value!r} expected {exp['value']!r}"
                    )
            for i, m in enumerate(preds):
                if i not in used:
                    misses.append(f"extra {case['lang']} {cls:8s} {case['text']!r} read {m.text!r}")
    return counts


def _ratio(a: int, b: int) -> str:
    return f"{a / b:6.3f}" if b else "     -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["tune", "holdout", "all", "unseen"], default="all")
    parser.add_argument("--misses", type=int, default=0, help="print this many errors")
    args = parser.parse_args()
    misses: list[str] = []
    print(f"split: {args.split}")
    header = "corpus          lang class      exp  pred  P(span) R(span) P(value) R(value)"
    totals: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for path in sorted(CORPORA.glob("*.jsonl")):
        if path.stem.startswith("excluded"):
            continue
        cases = [json.loads(line) for line in path.open(encoding="utf-8")]
        if args.split != "all":
            cases = [c for c in cases if c["split"] == args.split]
        else:
            cases = [c for c in cases if c["split"] != "unseen"]
        if not cases:
            continue
        print(f"\n{header}")
        for (lang, cls), c in sorted(score(cases, misses).items()):
            totals[lang].update(c)
            print(
                f"{path.stem:15s} {lang:4s} {cls:9s} {c['expected']:5d} {c['predicted']:5d}"
                f"  {_ratio(c['span'], c['predicted'])}  {_ratio(c['span'], c['expected'])}"
                f"   {_ratio(c['value'], c['predicted'])}   {_ratio(c['value'], c['expected'])}"
            )
    print("\nper language, all corpora (F1: of value matches):")
    for lang, c in sorted(totals.items()):
        p = c["value"] / c["predicted"] if c["predicted"] else 0.0
        r = c["value"] / c["expected"] if c["expected"] else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(
            f"{'all':15s} {lang:4s} {'all':9s} {c['expected']:5d} {c['predicted']:5d}"
            f"  {_ratio(c['span'], c['predicted'])}  {_ratio(c['span'], c['expected'])}"
            f"   {_ratio(c['value'], c['predicted'])}   {_ratio(c['value'], c['expected'])}"
            f"   F1 {f1:.3f}"
        )
    excluded = [
        json.loads(line)
        for path in sorted(CORPORA.glob("excluded*.jsonl"))
        for line in path.open(encoding="utf-8")
    ]
    print(f"\nexcluded cases: {len(excluded)}")
    for reason, n in collections.Counter(e["reason"] for e in excluded).most_common():
        print(f"  {n:4d}  {reason}")
    for line in misses[: args.misses]:
        print(line)


if __name__ == "__main__":
    main()
