"""``[broker.security]`` and the producer and erase keys: the file, the environment,
secret files, and the errors that name the setting without its value."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from turnstream.adapters.kafka.auth import client_options
from turnstream.config import load_settings
from turnstream.errors import ConfigError

KEY_A = "producer-key-aaaaaaaaaaaaaaaa"
KEY_B = "producer-key-bbbbbbbbbbbbbbbb"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "turnstream.toml"
    path.write_text(text)
    return path


def test_plaintext_by_default_gives_the_clients_nothing(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, ""), environ={})
    assert settings.broker.security.protocol == "PLAINTEXT"
    assert client_options(settings) == {}


def test_sasl_credentials_from_the_file(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        '[broker.security]\nprotocol = "SASL_PLAINTEXT"\nmechanism = "PLAIN"\n'
        'username = "worker"\npassword = "pw-from-file"\n',
    )
    options = client_options(load_settings(config, environ={}))
    assert options == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "worker",
        "sasl_plain_password": "pw-from-file",
    }


def test_the_environment_and_a_secret_file_beat_the_file(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        '[broker.security]\nprotocol = "SASL_PLAINTEXT"\nusername = "f"\npassword = "file"\n',
    )
    secret = tmp_path / "kafka_password"
    secret.write_text("from-a-docker-secret\n")
    env = {"TURNSTREAM_KAFKA_USERNAME": "env-user", "TURNSTREAM_KAFKA_PASSWORD_FILE": str(secret)}
    security = load_settings(config, environ=env).broker.security
    assert security.username == "env-user"
    assert security.password is not None
    assert security.password.get_secret_value() == "from-a-docker-secret"
    env["TURNSTREAM_KAFKA_PASSWORD"] = "from-env"
    security = load_settings(config, environ=env).broker.security
    assert security.password is not None and security.password.get_secret_value() == "from-env"
    assert "from-env" not in repr(security)  # a SecretStr


def test_the_protocol_and_credentials_from_the_environment_alone(tmp_path: Path) -> None:
    env = {
        "TURNSTREAM_KAFKA_PROTOCOL": "SASL_PLAINTEXT",
        "TURNSTREAM_KAFKA_MECHANISM": "SCRAM-SHA-256",
        "TURNSTREAM_KAFKA_USERNAME": "u",
        "TURNSTREAM_KAFKA_PASSWORD": "p",
    }
    options = client_options(load_settings(None, environ=env))
    assert options["sasl_mechanism"] == "SCRAM-SHA-256"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('protocol = "SASL_SSL"\nusername = "u"', "needs a username and a password"),
        ('protocol = "SASL_PLAINTEXT"\npassword = "p"', "needs a username and a password"),
        ('username = "u"\npassword = "p"', "protocol PLAINTEXT sends none"),
        (
            'protocol = "SASL_SSL"\nmechanism = "GSSAPI"\nusername = "u"\npassword = "p"',
            "mechanism",
        ),
        ('protocol = "TLS"', "protocol"),
        ('protocol = "SSL"\nssl_certfile = "c.pem"', "go together"),
        ('protocol = "SSL"\ntruststore = "x"', "truststore"),
    ],
)
def test_a_bad_security_section_names_the_setting(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=r"broker\.security") as caught:
        load_settings(_config(tmp_path, f"[broker.security]\n{text}\n"), environ={})
    assert fragment in str(caught.value)


def test_a_missing_password_file_names_the_variable(tmp_path: Path) -> None:
    env = {"TURNSTREAM_KAFKA_PASSWORD_FILE": str(tmp_path / "nope")}
    with pytest.raises(ConfigError, match="TURNSTREAM_KAFKA_PASSWORD_FILE"):
        load_settings(None, environ=env)


def test_tls_options_carry_a_verifying_context(tmp_path: Path) -> None:
    config = _config(tmp_path, '[broker.security]\nprotocol = "SSL"\n')
    options = client_options(load_settings(config, environ={}))
    context = options["ssl_context"]
    assert options["security_protocol"] == "SSL"
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname


def test_an_unreadable_ca_file_is_a_clear_error(tmp_path: Path) -> None:
    config = _config(
        tmp_path, f'[broker.security]\nprotocol = "SSL"\nssl_cafile = "{tmp_path}/none.pem"\n'
    )
    with pytest.raises(ConfigError, match="TLS files"):
        client_options(load_settings(config, environ={}))


def test_producer_and_erase_keys_from_the_file_and_the_environment(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        f'[spaces.acme-br]\nproducer_keys = ["{KEY_A}"]\n[spaces.b]\nproducer_keys = ["{KEY_B}"]\n',
    )
    acme = load_settings(config, environ={}).space("acme-br")
    assert acme is not None and acme.signing_keys() == (KEY_A.encode(),)
    assert acme.signing_keys(erase=True) == ()
    keys = tmp_path / "erase"
    keys.write_text("erase-key-new-00000000, erase-key-old-00000000\n")
    env = {
        "TURNSTREAM_PRODUCER_KEYS_ACME_BR": "rotated-key-0000000000",
        "TURNSTREAM_ERASE_KEYS_ACME_BR_FILE": str(keys),
    }
    acme = load_settings(config, environ=env).space("acme-br")
    assert acme is not None
    assert acme.signing_keys() == (b"rotated-key-0000000000",)
    assert acme.signing_keys(erase=True) == (b"erase-key-new-00000000", b"erase-key-old-00000000")


@pytest.mark.parametrize(
    ("spaces", "fragment"),
    [
        (
            f'[spaces.a]\nproducer_keys = ["{KEY_A}"]\n[spaces.b]\nproducer_keys = ["{KEY_A}"]',
            "already",
        ),
        (f'[spaces.a]\nproducer_keys = ["{KEY_A}"]\nerase_keys = ["{KEY_A}"]', "already"),
        ('[spaces.a]\nproducer_keys = ["short"]', "at least 16"),
        ('[spaces.a]\nerase_keys = ["identity-secret-0000"]', "identity.secret"),
        # An exposure key goes to the agents' processes: as an erase or a producer key
        # (of any space) it would let an agent erase, or write another space.
        (f'[spaces.a]\nerase_keys = ["{KEY_A}"]\nexposure_keys = ["{KEY_A}"]', "exposure key"),
        (
            f'[spaces.a]\nexposure_keys = ["{KEY_A}"]\n[spaces.b]\nproducer_keys = ["{KEY_A}"]',
            "exposure key",
        ),
    ],
)
def test_a_key_has_one_space_and_one_use(tmp_path: Path, spaces: str, fragment: str) -> None:
    config = _config(tmp_path, f'[identity]\nsecret = "identity-secret-0000"\n{spaces}\n')
    with pytest.raises(ConfigError, match=fragment) as caught:
        load_settings(config, environ={})
    assert KEY_A not in str(caught.value)


@pytest.mark.parametrize(
    ("spaces", "message"),
    [
        (
            '[spaces.a]\n[spaces.b]\nexposure_keys = ["identity-secret-0000"]',
            "spaces.b.exposure_keys.0: an exposure key may not be identity.secret",
        ),
        (
            f'[spaces.a]\nerase_keys = ["{KEY_A}"]\n[spaces.b]\n'
            f'exposure_keys = ["exposure-key-bbbbbbbbbbbb", "{KEY_A}"]',
            "spaces.b.exposure_keys.1: an exposure key may not be a producer or erase key "
            "(it is spaces.a.erase_keys.0)",
        ),
    ],
)
def test_an_exposure_key_is_refused_as_the_secret_or_a_signing_key_by_its_setting(
    tmp_path: Path, spaces: str, message: str
) -> None:
    """One check of each exposure key (config/settings.py), whichever use it collides with."""
    config = _config(tmp_path, f'[identity]\nsecret = "identity-secret-0000"\n{spaces}\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config, environ={})
    assert message in str(caught.value)
    assert KEY_A not in str(caught.value) and "identity-secret-0000" not in str(caught.value)
