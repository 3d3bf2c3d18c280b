"""A job asked with a bad parameter is refused before it touches the store, naming the
parameter (jobs/registry.py): an unknown one, a value that is not text, a day that is
not a date or is in the future, a space the configuration does not have."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from turnstream.config import Settings
from turnstream.errors import BadJobParameter
from turnstream.jobs.registry import JOBS

SETTINGS = Settings.model_validate(
    {"identity": {"secret": "k"}, "spaces": {"acme": {"language": "pt"}}}
)
TODAY = datetime.now(UTC).date()


class NoStore:
    """A store no refused job may touch."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the job used the store ({name}) before checking its parameters")


@pytest.mark.parametrize(
    ("job", "params", "parameter", "says"),
    [
        ("priors", {"as_of": "2026-13-45"}, "as_of", "not a date"),
        ("priors", {"as_of": (TODAY + timedelta(days=2)).isoformat()}, "as_of", "future"),
        ("priors", {"as_of": "2099-01-01"}, "as_of", "future"),
        ("priors", {"spaces": "acme,nope"}, "spaces", "'nope'"),
        ("priors", {"as_off": "2026-01-01"}, "as_off", "unknown parameter"),
        ("priors", {"as_of": 20260101}, "as_of", "text"),
        ("retention", {"as_of": (TODAY + timedelta(days=1)).isoformat()}, "as_of", "future"),
        ("retention", {"as_of": "2099-01-01", "fold": "0"}, "as_of", "future"),
        ("retention", {"fold": "maybe"}, "fold", "0 or 1"),
        ("experiments", {"as_of": "nope"}, "as_of", "not a date"),
        ("experiments", {"space": "acme"}, "space", "unknown parameter"),
    ],
)
def test_a_bad_parameter_is_refused_naming_it_before_the_store_is_touched(
    job: str, params: dict, parameter: str, says: str
) -> None:
    with pytest.raises(BadJobParameter, match=says) as refused:
        JOBS[job](NoStore(), SETTINGS, params)  # type: ignore[arg-type]
    assert refused.value.parameter == parameter
    assert str(refused.value).startswith(f"{parameter}")
