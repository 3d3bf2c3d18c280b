"""Field priors on real ClickHouse (chDB), issue 36: a space's history replayed, the
nightly priors job fits each field's prior on the stored states (a noise field near 0, a
taste field high), and a later derivation uses it: a person whose clicks lean on the
noise field gets an affinity on it under the defaults (a space without a fit), none
after the fit."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.clickhouse.priors import latest_field_priors, settled_spaces
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import load_settings
from turnstream.config.settings import Settings
from turnstream.entrypoints.bootstrap import build_replay
from turnstream.jobs.registry import JOBS

pytestmark = pytest.mark.integration

TYPES = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
COLORS = ("black", "navy", "white", "red", "green", "beige", "grey", "pink")
BRANDS = ("aurora", "brisa", "cobalto", "duna", "estrela", "farol")
CATEGORIES = ("sneakers", "running", "boots", "sandals", "loafers")
_EXPOSURES = count()
START = datetime.combine(datetime.now(UTC).date() - timedelta(days=10), datetime.min.time(), UTC)


def _ts(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Lines:
    """Accepted interaction lines of one person, one session at a time."""

    def __init__(self, pid: str) -> None:
        self.pid, self.lines, self.at = pid, [], START

    def add(self, session: int, body: dict[str, Any]) -> None:
        self.at += timedelta(seconds=20)
        self.lines.append(
            json.dumps(
                {
                    "type": "interaction", "space_id": "acme", "profile_id": self.pid,
                    "idempotency_key": f"{self.pid}-{session}-{len(self.lines)}",
                    "source": "web", "conversation_id": f"{self.pid}-s{session}",
                    "occurred_at": _ts(self.at), "interaction": body,
                }
            )
        )  # fmt: skip

    def page(self, session: int, n: int, items: list[dict[str, Any]]) -> str:
        eid = f"0190f5a2-7b3c-7def-8126-{next(_EXPOSURES):012d}"
        self.at = max(self.at, START + timedelta(days=session + 1))
        self.add(session, {"kind": "presented", "exposure_id": eid, "list_id": f"l{session}{n}",
                           "list_kind": "search_products", "delivered_at": _ts(self.at),
                           "visible_k": len(items), "items": items})  # fmt: skip
        self.add(session, {"kind": "seen", "exposure_id": eid, "max_index_seen": len(items)})
        return eid

    def click(self, session: int, eid: str, shown: dict[str, Any]) -> None:
        body = {"kind": "engaged", "exposure_id": eid, "ref": shown["ref"], "pos": shown["pos"]}
        self.add(session, body | {"action": "click"})


def _history(people: int = 30, sessions: int = 5, seed: int = 5, first: int = 0) -> list[str]:
    """People who each favour one colour (clicked 60% of the time it is shown, anything
    else 5%), on items whose category is random: a declared taste field with no taste;
    sessions numbered from ``first``."""
    rand = random.Random(seed)
    lines: list[str] = []
    for i in range(people):
        person, colour = _Lines(f"h_{i:03d}"), rand.choice(COLORS)
        for s in range(first, first + sessions):
            for n in range(2):
                items = [
                    {"pos": pos, "ref": f"item_variant:acme:{rand.randrange(300)}",
                     "shown": {"color": rand.choice(COLORS), "brand": rand.choice(BRANDS),
                               "category": rand.choice(CATEGORIES), "size": "40"}}
                    for pos in range(1, 11)
                ]  # fmt: skip
                eid = person.page(s, n, items)
                for shown in items:
                    odds = 0.6 if shown["shown"]["color"] == colour else 0.05
                    if rand.random() < odds:
                        person.click(s, eid, shown)
        lines += person.lines
    return lines


def _boots_person() -> list[str]:
    """Three sessions of ten items, two of each category; both boots and one other item
    clicked each time: on its own, enough for an affinity on `category` by the defaults."""
    person = _Lines("p_boots")
    for s in range(3):
        items = [
            {"pos": pos, "ref": f"item_variant:acme:9{s}{pos:02d}",
             "shown": {"color": COLORS[(pos + s) % 8], "brand": BRANDS[(pos * 3 + s) % 6],
                       "category": CATEGORIES[pos % 5], "size": "40"}}
            for pos in range(1, 11)
        ]  # fmt: skip
        eid = person.page(s, 0, items)
        for shown in items:
            if shown["shown"]["category"] == "boots" or shown["pos"] == 3 + s:
                person.click(s, eid, shown)
    return person.lines


def _settings(tmp_path: Path, chdb_path: Path, store: Store, first_fit: bool = False) -> Settings:
    """The nightly job's settings: no first fit at the end of a replay, unless asked."""
    config = tmp_path / f"{store.database}.toml"
    config.write_text(
        f'[store]\ndsn = "chdb:{chdb_path}"\ndatabase = "{store.database}"\n'
        '[identity]\nsecret = "field-priors"\n'
        f"[jobs]\nfirst_fit = {str(first_fit).lower()}\n"
        f'[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\ntypes = "{TYPES}"\n'
    )
    return load_settings(config, environ={})


def _replay(settings: Settings, store: Store, lines: list[str], path: Path) -> None:
    path.write_text("\n".join(lines) + "\n")
    build_replay(settings, store).run(path)


def _prefers(store: Store, profile_id: str) -> set[tuple[str, str]]:
    rows = store.query(
        "SELECT attr, value FROM inferences FINAL WHERE profile_id = {p:String} "
        "AND status = 'active' AND kind = 'affinity' AND polarity = 'prefer'",
        {"p": profile_id},
    ).rows
    return {(attr, value) for attr, value in rows}


def test_the_nightly_fit_takes_a_noise_fields_affinity_away(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    # A space without a fit: the defaults give the person an affinity on `category`.
    fresh = store_factory()
    settings = _settings(tmp_path, chdb_path, fresh)
    _replay(settings, fresh, _boots_person(), tmp_path / "person.jsonl")
    assert latest_field_priors(fresh, "acme") == {}
    assert ("item_variant.category", "boots") in _prefers(fresh, "p_boots")

    # A space with a history: the nightly job fits each field on its people's states.
    store = store_factory()
    settings = _settings(tmp_path, chdb_path, store)
    _replay(settings, store, _history(), tmp_path / "history.jsonl")
    report = JOBS["priors"](store, settings, {})
    assert report["field_priors"]["acme"] >= 3
    fitted = latest_field_priors(store, "acme")
    # the people with 8 engaged objects or more (MIN_ENGAGED), of the 30
    assert 20 <= fitted["item_variant.category"].people <= 30
    assert fitted["item_variant.category"].taste_prior < 0.2
    assert fitted["item_variant.color"].taste_prior > 0.7
    # The same run again writes nothing new.
    assert JOBS["priors"](store, settings, {})["unchanged"]

    # A later derivation (a new replay reads the latest fit) gives no `category` affinity.
    _replay(settings, store, _boots_person(), tmp_path / "person2.jsonl")
    assert not {a for a, _ in _prefers(store, "p_boots")} & {"item_variant.category"}


def _active(store: Store) -> set[tuple[Any, ...]]:
    return set(
        store.query(
            "SELECT profile_id, kind, attr, value, polarity FROM inferences FINAL "
            "WHERE status = 'active'"
        ).rows
    )


def test_a_new_space_is_fitted_at_once_as_the_nightly_job_would_fit_it(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join(_history()) + "\n")
    # First fit on (the default): the replay's end fits the new space and derives its
    # people again.
    store = store_factory()
    settings = _settings(tmp_path, chdb_path, store, first_fit=True)
    report = build_replay(settings, store).run(history)
    assert report.first_fit["spaces"] == ["acme"]
    assert report.first_fit["field_priors"]["acme"] >= 3
    assert report.first_fit["rederived"]["changed_people"] > 0
    fitted = latest_field_priors(store, "acme")
    assert fitted["item_variant.category"].taste_prior < 0.2
    assert fitted["item_variant.color"].taste_prior > 0.7

    # The same as a replay without it, then the nightly job counting through today.
    nightly = store_factory()
    off = _settings(tmp_path, chdb_path, nightly)
    assert build_replay(off, nightly).run(history).first_fit == {}
    assert latest_field_priors(nightly, "acme") == {}
    tomorrow = (datetime.now(UTC).date() + timedelta(days=1)).isoformat()
    JOBS["priors"](nightly, off, {"as_of": tomorrow})
    assert latest_field_priors(nightly, "acme") == fitted
    assert _active(nightly) == _active(store)

    # A first fit writes tomorrow's version: the space is not the nightly job's yet, so
    # a restarted worker (or a later replay) fits it again once 10 people are derived;
    # one person derives with the fit (no `category` affinity for the one leaning on it).
    today = datetime.now(UTC).date()
    assert settled_spaces(store, today) == set()
    again = build_replay(settings, store).run(_boots_file(tmp_path))
    assert again.first_fit == {}
    assert not {a for a, _ in _prefers(store, "p_boots")} & {"item_variant.category"}
    refit = build_replay(settings, store).run(_later_file(tmp_path))
    assert refit.first_fit["spaces"] == ["acme"]

    # Tonight's run (as of tomorrow) makes it the nightly job's from tomorrow on.
    assert settled_spaces(nightly, today) == set()
    assert settled_spaces(nightly, today + timedelta(days=1)) == {"acme"}
    JOBS["priors"](nightly, off, {"as_of": today.isoformat()})
    assert settled_spaces(nightly, today) == {"acme"}


def _later_file(tmp_path: Path) -> Path:
    """A sixth session of the history's first 12 people (new keys and exposures)."""
    path = tmp_path / "later.jsonl"
    path.write_text("\n".join(_history(people=12, sessions=1, seed=6, first=5)) + "\n")
    return path


def _boots_file(tmp_path: Path) -> Path:
    path = tmp_path / "person.jsonl"
    path.write_text("\n".join(_boots_person()) + "\n")
    return path
