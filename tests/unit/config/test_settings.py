"""The settings loader: the file, the environment, clear errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
        ("[worker]\nbatch_size = 20001\n", "worker.batch_size: Input should be less than"),
        ("[wroker]\n", "wroker"),
        ('[worker]\nprepare_process = "sometimes"\n', "worker.prepare_process"),
        ("[worker]\nprepare_children = 0\n", "worker.prepare_children"),
        ('[worker]\nprepare_children = "many"\n', "worker.prepare_children"),
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
    assert load_settings(config, environ={}).worker.batch_size == MAX_BATCH_SIZE == 20_000


def test_the_secret_is_read_from_the_file_turnstream_secret_file_names(tmp_path: Path) -> None:
    secret = tmp_path / "turnstream_secret"
    secret.write_text("  from-a-docker-secret\n")
    config = tmp_path / "t.toml"
    config.write_text('[identity]\nsecret = "in-the-file"\n')
    env = {"TURNSTREAM_SECRET_FILE": str(secret)}
    # The file beats the config file's secret; the newline an editor adds is not the key's.
    assert load_settings(config, environ=env).secret_bytes() == b"from-a-docker-secret"
    # TURNSTREAM_SECRET beats the file.
    both = {**env, "TURNSTREAM_SECRET": "from-env"}
    assert load_settings(config, environ=both).secret_bytes() == b"from-env"
    # An empty TURNSTREAM_SECRET (compose's ${TURNSTREAM_SECRET:-}) is not set.
    assert load_settings(config, environ={**env, "TURNSTREAM_SECRET": ""}).secret_bytes() == (
        b"from-a-docker-secret"
    )


@pytest.mark.parametrize(("content", "reason"), [(None, "cannot be read"), ("\n", "is empty")])
def test_a_secret_file_missing_or_empty_names_identity_secret(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    secret = tmp_path / "turnstream_secret"
    if content is not None:
        secret.write_text(content)
    with pytest.raises(ConfigError, match=rf"^identity\.secret: TURNSTREAM_SECRET_FILE .*{reason}"):
        load_settings(None, environ={"TURNSTREAM_SECRET_FILE": str(secret)})


def test_no_secret_anywhere_names_identity_secret_and_the_three_places(tmp_path: Path) -> None:
    settings = load_settings(None, environ={})
    with pytest.raises(ConfigError, match=r"identity\.secret is not set") as caught:
        settings.secret_bytes()
    assert "TURNSTREAM_SECRET_FILE" in str(caught.value)


def test_exposure_keys_from_the_file_and_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[spaces.acme-br]\nexposure_keys = ["file-key-0123456789", "file-old-key-012345"]\n'
        "[spaces.lumen]\n"
    )
    settings = load_settings(config, environ={})
    acme = settings.space("acme-br")
    assert acme is not None
    assert acme.token_keys() == (b"file-key-0123456789", b"file-old-key-012345")
    assert "file-key" not in repr(acme)  # SecretStr: never printed
    lumen = settings.space("lumen")
    assert lumen is not None and lumen.token_keys() == ()
    env = {"TURNSTREAM_EXPOSURE_KEYS_ACME_BR": "env-key-0123456789ab, env-old-key-0123456"}
    acme = load_settings(config, environ=env).space("acme-br")
    assert acme is not None
    assert acme.token_keys() == (b"env-key-0123456789ab", b"env-old-key-0123456")


def test_a_short_exposure_key_is_refused_with_its_setting_and_without_its_value(
    tmp_path: Path,
) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[spaces.acme]\nexposure_keys = ["tooshort"]\n')
    with pytest.raises(ConfigError, match=r"spaces\.acme\.exposure_keys\.0") as caught:
        load_settings(config, environ={})
    assert "tooshort" not in str(caught.value)
    assert "at least 16 characters" in str(caught.value)


def test_the_identity_secret_is_never_an_exposure_key(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[spaces.acme]\nexposure_keys = ["same-secret-0123456789"]\n')
    env = {"TURNSTREAM_SECRET": "same-secret-0123456789"}
    with pytest.raises(ConfigError, match=r"may not be identity\.secret") as caught:
        load_settings(config, environ=env)
    assert "same-secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("line", "cpus", "in_child"),
    [
        ("", 1, False),  # the default, "auto": a child only with a second CPU
        ("", 2, True),
        ('prepare_process = "auto"\n', 16, True),
        ("prepare_process = true\n", 1, True),  # asked for: even on one CPU
        ("prepare_process = false\n", 16, False),
    ],
)
def test_where_batches_are_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, cpus: int, in_child: bool
) -> None:
    assert _worker(tmp_path, monkeypatch, line, cpus).prepares_in_child() is in_child


def _worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, cpus: int) -> Any:
    """The ``[worker]`` settings of a config with ``line``, on a machine of ``cpus``."""
    monkeypatch.setattr("turnstream.config.settings._usable_cpus", lambda: cpus)
    config = tmp_path / "t.toml"
    config.write_text(f"[worker]\n{line}")
    return load_settings(config, environ={}).worker


def test_usable_cpus_are_this_process_s() -> None:
    from turnstream.config.settings import _usable_cpus

    assert 1 <= _usable_cpus() <= (os.cpu_count() or 1)


@pytest.mark.parametrize(
    ("line", "cpus", "children"),
    [
        ("", 1, 1),  # the default, "auto": one per usable CPU
        ("", 2, 2),
        ("", 64, 4),  # at most MAX_PREPARE_CHILDREN
        ('prepare_children = "auto"\n', 3, 3),
        ("prepare_children = 1\n", 16, 1),
        ("prepare_children = 6\n", 2, 6),  # asked for: even with fewer CPUs
    ],
)
def test_how_many_children_prepare_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, cpus: int, children: int
) -> None:
    assert _worker(tmp_path, monkeypatch, line, cpus).prepare_children_count() == children
