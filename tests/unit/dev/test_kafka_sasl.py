"""The local broker's SASL: its properties and its users' password files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from turnstream_dev.kafka import BROKER_USER, InfraError, LocalKafka, render_server_properties


def test_without_users_the_listener_is_plaintext() -> None:
    text = render_server_properties(9092, 9093, "/d")
    assert "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093" in text
    assert "sasl" not in text


def test_with_users_the_client_listener_takes_sasl_only() -> None:
    text = render_server_properties(9092, 9093, "/d", {BROKER_USER: "bpw", "alice": "apw"})
    assert "listeners=SASL_PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093" in text
    assert "PLAINTEXT://127.0.0.1:9092" not in text.replace("SASL_PLAINTEXT", "")
    assert "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" in text
    assert 'user_alice="apw"' in text and 'username="broker" password="bpw"' in text


@pytest.mark.parametrize("password", ['a"b', "a\\b", "a\nb"])
def test_a_password_that_would_break_the_jaas_line_is_refused(password: str) -> None:
    with pytest.raises(InfraError, match="quotes or newlines"):
        render_server_properties(9092, 9093, "/d", {BROKER_USER: "x", "alice": password})


def test_users_get_a_password_file_each_readable_by_the_owner_only(tmp_path: Path) -> None:
    kafka = LocalKafka(home=tmp_path, sasl_users=("alice",))
    users = kafka.users()
    assert set(users) == {"alice", BROKER_USER}
    assert len(users["alice"]) >= 32 and users["alice"] != users[BROKER_USER]
    mode = stat.S_IMODE(kafka.password_file("alice").stat().st_mode)
    assert mode == 0o600
    # Kept: a later process (status, down, another up) reads the same passwords back.
    assert LocalKafka(home=tmp_path).users() == users
    assert LocalKafka(home=tmp_path).client_options()["sasl_plain_username"] == BROKER_USER


def test_no_users_no_sasl(tmp_path: Path) -> None:
    kafka = LocalKafka(home=tmp_path)
    assert kafka.users() == {} and kafka.client_options() == {}


@pytest.mark.parametrize("name", ["", "a b", "../x", "x" * 65, "a=b"])
def test_a_bad_user_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InfraError, match="SASL user name"):
        LocalKafka(home=tmp_path, sasl_users=(name,)).users()


def test_with_tls_the_listener_is_sasl_ssl_or_ssl() -> None:
    tls = (Path("/h/tls/broker-keystore.pem"), Path("/h/tls/ca.pem"))
    both = render_server_properties(9092, 9093, "/d", {BROKER_USER: "b"}, tls)
    assert "listeners=SASL_SSL://127.0.0.1:9092," in both
    assert "listener.name.sasl_ssl.plain.sasl.jaas.config=" in both
    assert "ssl.keystore.location=/h/tls/broker-keystore.pem" in both
    assert "ssl.truststore.location=/h/tls/ca.pem" in both
    only_tls = render_server_properties(9092, 9093, "/d", None, tls)
    assert "listeners=SSL://127.0.0.1:9092," in only_tls and "sasl" not in only_tls
