"""The local broker's SASL: its properties, its users' password files and their ACLs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from turnstream.adapters.kafka.topology import TopicNames
from turnstream_dev.infra import _worker_names
from turnstream_dev.kafka import BROKER_USER, InfraError, LocalKafka, render_server_properties
from turnstream_dev.kafka_acls import Operation, Pattern, Resource, acls_of


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


def test_with_users_the_controller_takes_the_broker_alone_and_acls_decide() -> None:
    text = render_server_properties(9092, 9093, "/d", {BROKER_USER: "bpw", "alice": "apw"})
    assert "listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT," in text
    assert ",CONTROLLER:SASL_PLAINTEXT\n" in text
    controller = next(
        line for line in text.splitlines() if line.startswith("listener.name.controller.plain.")
    )
    assert 'username="broker" password="bpw" user_broker="bpw";' in controller
    assert "alice" not in controller
    assert "sasl.mechanism.controller.protocol=PLAIN" in text
    assert "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" in text
    assert "super.users=User:broker\n" in text
    assert "allow.everyone.if.no.acl.found=false" in text
    # Without users: no authorizer (nobody to grant anything to).
    assert "authorizer" not in render_server_properties(9092, 9093, "/d")


def test_a_worker_gets_its_topics_and_groups_a_producer_writes_the_inputs() -> None:
    names = TopicNames("shop")
    acls = acls_of(names, "shop-app", workers=["w"], producers=["p"])
    assert {(a.principal, a.resource, a.name, a.pattern, a.operation) for a in acls} == {
        ("User:w", Resource.TOPIC, "shop.", Pattern.PREFIXED, Operation.ALL),
        ("User:w", Resource.GROUP, "shop-app", Pattern.PREFIXED, Operation.READ),
        *(
            ("User:p", Resource.TOPIC, topic, Pattern.LITERAL, op)
            for topic in names.inputs
            for op in (Operation.WRITE, Operation.DESCRIBE)
        ),
    }
    assert names.accepted not in {a.name for a in acls if a.user == "p"}


def test_producers_are_kept_until_named_as_users(tmp_path: Path) -> None:
    LocalKafka(home=tmp_path, producers=("bob",)).producers_path.write_text("bob\ncarol\n")
    assert LocalKafka(home=tmp_path).producer_users() == {"bob", "carol"}
    assert LocalKafka(home=tmp_path, producers=("dan",)).producer_users() == {
        "bob",
        "carol",
        "dan",
    }
    assert LocalKafka(home=tmp_path, sasl_users=("bob",)).producer_users() == {"carol"}


def test_up_takes_the_acls_names_from_the_configuration_before_its_password_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "turnstream.toml"
    config.write_text('[worker]\ntopic_prefix = "shop"\napp_id = "shop-app"\n')
    # The variables `up` prints, set before the first `up` made the password file.
    monkeypatch.setenv("TURNSTREAM_KAFKA_PROTOCOL", "SASL_PLAINTEXT")
    monkeypatch.setenv("TURNSTREAM_KAFKA_USERNAME", "turnstream")
    monkeypatch.setenv("TURNSTREAM_KAFKA_PASSWORD_FILE", str(tmp_path / "users" / "turnstream"))
    worker = _worker_names(config)
    assert (worker.topic_prefix, worker.app_id) == ("shop", "shop-app")
    with pytest.raises(InfraError, match="topic prefix and app id"):
        _worker_names(tmp_path / "missing.toml")


def test_plain_users_are_those_the_broker_started_with(tmp_path: Path) -> None:
    kafka = LocalKafka(home=tmp_path, sasl_users=("alice",))
    users = kafka.users()
    kafka.config_path.write_text(render_server_properties(9092, 9093, "/d", users))
    assert kafka.plain_users() == users == kafka.kept_users()
    # A rotated password file: the running broker's PLAIN still takes the old one.
    kafka.password_file("alice").write_text("rotated\n")
    assert kafka.plain_users()["alice"] == users["alice"] != kafka.kept_users()["alice"]
