"""The priors derivation reads: the latest version of each space, under every spelling the
derivation rules may use for a value, and its fields' fitted priors, cached so the
nightly job's new version is picked up without a restart. The job that writes them is
:mod:`turnstream.jobs.priors`."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from turnstream.adapters.clickhouse.store import Store
from turnstream.core.derivation.field_prior import FieldPrior

__all__ = [
    "PriorsCache",
    "engine_keys",
    "latest_field_priors",
    "latest_priors",
    "priors_by_key",
    "settled_spaces",
]


def engine_keys(value: str) -> tuple[str, ...]:
    """The keys the signals rules may use for a stored value, the value itself first.

    A number stored as ClickHouse writes it (``200``, ``1.5e-7``) is also given as
    Python's JSON writes the same number as a float (``200.0``, ``1.5e-07``) and, when
    whole, as an integer.
    """
    try:
        number = json.loads(value)
    except ValueError:
        return (value,)
    if isinstance(number, bool) or not isinstance(number, int | float):
        return (value,)
    keys = [value]
    as_float = float(number)
    if math.isfinite(as_float):
        keys.append(json.dumps(as_float))
        if as_float.is_integer():
            keys.append(json.dumps(number if isinstance(number, int) else int(as_float)))
    return tuple(dict.fromkeys(keys))


def priors_by_key(rows: Iterable[Sequence[Any]]) -> dict[tuple[str, str], float]:
    """``(attr, value) -> prior`` from ``(attr, value, prior)`` rows, under every spelling.

    A spelling that is some row's own value wins over the same spelling derived from
    another row's number.
    """
    rows = list(rows)
    out: dict[tuple[str, str], float] = {}
    for attr, value, prior in rows:
        for key in engine_keys(value)[1:]:
            out.setdefault((attr, key), float(prior))
    for attr, value, prior in rows:
        out[(attr, value)] = float(prior)
    return out


def latest_priors(store: Store, space_id: str) -> dict[tuple[str, str], float]:
    """The latest priors of a space: ``(attr, value) -> prior``, under every spelling
    the signals rules may use for the value (see :func:`engine_keys`)."""
    rows = store.query(
        "SELECT attr, value, prior FROM priors_latest WHERE space_id = {space_id:String}",
        {"space_id": space_id},
    ).rows
    return priors_by_key(rows)


def latest_field_priors(store: Store, space_id: str) -> dict[str, FieldPrior]:
    """The latest fitted prior of each field of a space (``type.field`` -> prior); a
    field without one takes the configured ``taste_prior``."""
    rows = store.query(
        "SELECT attr, taste_prior, lifts, weights, people FROM field_priors_latest "
        "WHERE space_id = {space_id:String} ORDER BY attr",
        {"space_id": space_id},
    ).rows
    return {
        attr: FieldPrior(float(pi), tuple(map(float, lifts)), tuple(map(float, weights)), people)
        for attr, pi, lifts, weights, people in rows
    }


def settled_spaces(store: Store, today: date) -> set[str]:
    """The spaces a nightly run of the priors job wrote priors or field priors for (a
    version as of ``today`` or before): the nightly job's, no first fit
    (:mod:`turnstream.core.derivation.first_fit`). A first fit writes tomorrow's version,
    so a space only first-fitted is not settled: a restarted worker fits it again."""
    rows = store.query(
        "SELECT DISTINCT space_id FROM priors WHERE version <= toYYYYMMDD({today:Date}) "
        "UNION DISTINCT "
        "SELECT DISTINCT space_id FROM field_priors WHERE version <= toYYYYMMDD({today:Date})",
        {"today": today},
    ).rows
    return {space_id for (space_id,) in rows}


class PriorsCache:
    """The latest priors and field priors of each space, read again after
    ``ttl_seconds`` (the nightly job writes a new version; derivation picks it up without
    a restart). Blocking."""

    def __init__(self, store: Store, ttl_seconds: float = 600.0) -> None:
        self.store = store
        self.ttl_seconds = ttl_seconds
        self._cache: dict[
            str, tuple[float, dict[tuple[str, str], float], dict[str, FieldPrior]]
        ] = {}

    def _hit(
        self, space_id: str
    ) -> tuple[float, dict[tuple[str, str], float], dict[str, FieldPrior]]:
        now = time.monotonic()
        hit = self._cache.get(space_id)
        if hit is None or now - hit[0] > self.ttl_seconds:
            hit = (
                now,
                latest_priors(self.store, space_id),
                latest_field_priors(self.store, space_id),
            )
            self._cache[space_id] = hit
        return hit

    def forget(self, space_id: str) -> None:
        """Read the space's priors again at next use (the job just wrote new ones)."""
        self._cache.pop(space_id, None)

    def get(self, space_id: str) -> dict[tuple[str, str], float]:
        """The space's latest priors."""
        return self._hit(space_id)[1]

    def fields(self, space_id: str) -> dict[str, FieldPrior]:
        """The space's latest field priors (read with its priors)."""
        return self._hit(space_id)[2]
