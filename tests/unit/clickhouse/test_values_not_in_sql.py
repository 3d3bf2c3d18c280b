"""The reads of adapters/clickhouse/ send producer values as query parameters, never in the SQL
text.

Some of these reads moved in issue #11 (the review request look-up from the routes to
``adapters/clickhouse/review_requests.py``, the latest priors from ``jobs/priors.py`` to
``adapters/clickhouse/priors.py``) with their values still quoted into the text; issue #18 made
every
value a ``{name:Type}`` parameter. A store that records what it is asked checks it: a
value written back into the text fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.adapters.clickhouse.derivations import load_state, load_states
from turnstream.adapters.clickhouse.erasure import tables_with_profiles
from turnstream.adapters.clickhouse.priors import latest_priors
from turnstream.adapters.clickhouse.profile_reads import load_inferences, load_inputs
from turnstream.adapters.clickhouse.review_requests import ReviewNotFound, resolve_review
from turnstream.adapters.clickhouse.store import QueryResult
from turnstream.models.requests import ResolveRequest

#: Values a producer may send: quotes, a backslash, SQL of their own. Each holds a word
#: that no escaping changes, which the SQL text must not hold either.
SPACE = "acme' OR spaceword --"
PROFILE = "p\\'); DROP TABLE profileword; --"
REQUEST = "rr_'requestword'"
FOR = "someone' OR forword"
WORDS = {SPACE: "spaceword", PROFILE: "profileword", REQUEST: "requestword", FOR: "forword"}


class RecordingStore:
    """Answers every query with no rows and keeps what it was asked."""

    database = "db_databaseword"

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def query(
        self,
        sql: str,
        parameters: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> QueryResult:
        self.asked.append((sql, dict(parameters or {})))
        return QueryResult([], [], [])

    def scalar(self, sql: str, parameters: dict[str, Any] | None = None) -> Any:
        self.asked.append((sql, dict(parameters or {})))
        return None

    def stage(self, name: str, columns: Any, rows: list[list[Any]]) -> None:
        """Values staged as data count as passed (the table's name is the only text)."""
        data = {f"{n}.{c}": value for n, row in enumerate(rows) for c, value in enumerate(row)}
        self.asked.append((name, data))


def _check(store: RecordingStore, *values: str) -> None:
    assert store.asked, "nothing was asked"
    for sql, _ in store.asked:
        for value in values:
            assert WORDS.get(value, value) not in sql, sql
    passed = {v for _, parameters in store.asked for v in parameters.values()}
    assert set(values) <= passed


def test_the_review_request_look_up() -> None:
    store = RecordingStore()
    # The space is validated (a slug); the profile id and the request id come from the URL.
    body = ResolveRequest(space_id="acme", decision="upheld")
    with pytest.raises(ReviewNotFound):
        resolve_review(store, PROFILE, REQUEST, body)  # type: ignore[arg-type]
    _check(store, PROFILE, REQUEST)


def test_the_latest_priors_of_a_space() -> None:
    store = RecordingStore()
    assert latest_priors(store, SPACE) == {}  # type: ignore[arg-type]
    _check(store, SPACE)


def test_a_saved_derivation_state() -> None:
    store = RecordingStore()
    assert load_state(store, SPACE, PROFILE) is None  # type: ignore[arg-type]
    _check(store, SPACE, PROFILE)


def test_the_saved_states_of_a_firing() -> None:
    store = RecordingStore()
    assert load_states(store, [(SPACE, PROFILE), (SPACE, FOR)]) == {}  # type: ignore[arg-type]
    _check(store, SPACE, PROFILE, FOR)


def test_the_reviewable_profile_and_the_constraints_inputs() -> None:
    store = RecordingStore()
    assert load_inferences(store, SPACE, PROFILE) == []  # type: ignore[arg-type]
    inputs = load_inputs(store, SPACE, PROFILE, FOR)  # type: ignore[arg-type]
    assert inputs.preferences == [] and inputs.presented == [] and inputs.disliked == []
    _check(store, SPACE, PROFILE, FOR)


def test_the_tables_an_erasure_considers() -> None:
    store = RecordingStore()
    assert tables_with_profiles(store) == []  # type: ignore[arg-type]
    _check(store, RecordingStore.database)
