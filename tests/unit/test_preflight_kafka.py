"""``config check`` on the broker's security and the spaces' producer keys: what it says,
and that it never prints a password or a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.config import Settings, load_settings
from turnstream.entrypoints.preflight import Level, check_settings


def _settings(tmp_path: Path, text: str) -> Settings:
    config = tmp_path / "t.toml"
    config.write_text(text)
    return load_settings(config, environ={"TURNSTREAM_SECRET": "a-real-secret-0000"})


def _lines(settings: Settings) -> dict[str, tuple[Level, str]]:
    return {f.setting: (f.level, f.text) for f in check_settings(settings).findings}


@pytest.mark.parametrize(
    ("bootstrap", "level"),
    [("127.0.0.1:9092", Level.info), ("localhost:9092", Level.info), ("kafka:9092", Level.warning)],
)
def test_plaintext_off_this_machine_is_a_warning(
    tmp_path: Path, bootstrap: str, level: Level
) -> None:
    lines = _lines(_settings(tmp_path, f'[broker]\nbootstrap = "{bootstrap}"\n'))
    assert lines["broker.security"][0] is level


def test_sasl_names_the_mechanism_and_the_user_never_the_password(tmp_path: Path) -> None:
    text = (
        '[broker]\nbootstrap = "kafka:9092"\n[broker.security]\nprotocol = "SASL_PLAINTEXT"\n'
        'username = "worker"\npassword = "hunter2-hunter2"\n'
    )
    settings = _settings(tmp_path, text)
    report = check_settings(settings)
    assert _lines(settings)["broker.security"] == (
        Level.info,
        "SASL_PLAINTEXT, SCRAM-SHA-512 as worker",
    )
    assert not any("hunter2" in f.line() for f in report.findings)


def test_an_unreadable_ca_file_is_an_error(tmp_path: Path) -> None:
    text = f'[broker.security]\nprotocol = "SSL"\nssl_cafile = "{tmp_path}/missing.pem"\n'
    level, message = _lines(_settings(tmp_path, text))["broker.security"]
    assert level is Level.error and "TLS files" in message


def test_open_and_keyed_spaces_are_told_apart(tmp_path: Path) -> None:
    text = (
        '[spaces.open-1]\n[spaces.keyed]\nproducer_keys = ["k-keyed-0000000000", '
        '"k-keyed-000000000x"]\n[spaces.full]\nproducer_keys = ["k-full-00000000000"]\n'
        'erase_keys = ["e-full-00000000000"]\n'
    )
    settings = _settings(tmp_path, text)
    lines = _lines(settings)
    assert "the space is OPEN" in lines["spaces.open-1.producer_keys"][1]
    assert "TURNSTREAM_PRODUCER_KEYS_OPEN_1" in lines["spaces.open-1.producer_keys"][1]
    # Open is a warning (`config check --strict` refuses it); keyed spaces are told.
    assert lines["spaces.open-1.producer_keys"][0] is Level.warning
    assert lines["spaces.keyed.producer_keys"][0] is Level.info
    assert (
        lines["spaces.keyed.producer_keys"][1]
        == "2 keys (1 signs); no erase_keys: it takes no erase"
    )
    assert lines["spaces.full.producer_keys"][1] == "1 key (1 signs); erase_keys: 1"
    assert not any("00000" in f.line() for f in check_settings(settings).findings)
