"""`turnstream infra up`'s SASL users: which names it takes, and in which role."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnstream_dev.infra import infra_app
from turnstream_dev.kafka import InfraError, LocalKafka


class _Stop(InfraError):
    pass


@pytest.fixture
def started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[LocalKafka]:
    """The brokers `up` would start (none is): it stops at ``LocalKafka.up``."""
    monkeypatch.chdir(tmp_path)
    seen: list[LocalKafka] = []

    def up(self: LocalKafka, *_args: object, **_kwargs: object) -> None:
        seen.append(self)
        raise _Stop("not started")

    monkeypatch.setattr(LocalKafka, "up", up)
    return seen


def _up(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(infra_app, ["up", "--home", str(tmp_path / "kafka"), *args])
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("option", ["--user", "--producer"])
def test_the_broker_s_own_user_is_refused_as_a_worker_or_a_producer(
    tmp_path: Path, started: list[LocalKafka], option: str
) -> None:
    code, output = _up(tmp_path, "--sasl", option, "broker")
    assert code == 2 and "'broker' is the broker's own (super) user" in output
    assert started == [] and not (tmp_path / "kafka" / "users").exists()


@pytest.mark.parametrize(
    "args", [("--sasl", "--producer", "turnstream"), ("--user", "w2", "--producer", "w2")]
)
def test_a_name_given_as_a_worker_and_as_a_producer_is_refused(
    tmp_path: Path, started: list[LocalKafka], args: tuple[str, ...]
) -> None:
    code, output = _up(tmp_path, *args)
    name = args[-1]
    assert code == 2 and f"'{name}' named both as a worker user" in output
    assert "producer user (--producer): pick one" in output
    assert started == []


def test_sasl_adds_its_worker_user_to_those_of_user(
    tmp_path: Path, started: list[LocalKafka]
) -> None:
    code, output = _up(tmp_path, "--sasl", "--user", "w2", "--user", "turnstream")
    assert code == 2 and "not started" in output
    assert started[0].sasl_users == ("w2", "turnstream")
    _up(tmp_path, "--user", "w2")
    assert started[1].sasl_users == ("w2",)
