"""The settings loader: the file, the environment, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.config import MAX_BATCH_SIZE, Feature, load_settings
from turnstream.errors import ConfigError


def test_settings_from_toml_with_overrides(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[store]\ndsn = "chdb:var/x"\n[identity]\nsecret = "file"\n'
        '[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\n'
    )
    env = {"TURNSTREAM_DSN": "http://ch:8123", "TURNSTREAM_SECRET": "env"}
    settings = load_settings(config, environ=env)
    assert settings.store.dsn == "http://ch:8123"
    assert settings.secret_bytes() == b"env"
    acme = settings.space("acme")
    assert acme is not None and acme.language == "pt"
    assert acme.has(Feature.signals) and not acme.has(Feature.claims)
    assert settings.space("other") is None
    assert load_settings(config, dsn="chdb:///y", environ=env).store.dsn == "chdb:///y"


def test_features_are_off_unless_listed(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text("[spaces.acme]\n")
    acme = load_settings(config, environ={}).space("acme")
    assert acme is not None and not any(acme.has(f) for f in Feature)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[spaces.acme]\nfeatures = ["telepathy"]\n', "spaces.acme.features"),
        ('[spaces.acme]\nlanguage = "de"\n', "spaces.acme.language"),
        ("[worker]\npartitions = 0\n", "worker.partitions"),
        ("[worker]\nbatch_size = 10001\n", "worker.batch_size: Input should be less than"),
        ("[wroker]\n", "wroker"),
        ("not toml at all [", "not valid TOML"),
    ],
)
def test_bad_config_names_the_setting(tmp_path: Path, text: str, fragment: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.").replace("[", r"\[")):
        load_settings(config, environ={})


def test_a_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", environ={})


def test_the_largest_batch_size_is_accepted(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(f"[worker]\nbatch_size = {MAX_BATCH_SIZE}\n")
    assert load_settings(config, environ={}).worker.batch_size == MAX_BATCH_SIZE == 10_000
