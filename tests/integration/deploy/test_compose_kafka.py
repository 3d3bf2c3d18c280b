"""The compose stack's Kafka takes SASL clients only, and its clients authenticate: the
broker's listeners, its users' file and the clients' settings agree (without Docker)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fixtures.compose import read_compose, services_built_here

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"


def test_no_client_listener_is_plaintext() -> None:
    kafka = read_compose(COMPOSE)["services"]["kafka"]["environment"]
    protocols = dict(
        pair.split(":") for pair in kafka["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")
    )
    listeners = [entry.split("://")[0] for entry in kafka["KAFKA_LISTENERS"].split(",")]
    clients = [name for name in listeners if name != kafka["KAFKA_CONTROLLER_LISTENER_NAMES"]]
    assert clients and all(protocols[name] == "SASL_PLAINTEXT" for name in clients)
    assert "java.security.auth.login.config=/run/secrets/kafka_server_jaas" in kafka["KAFKA_OPTS"]


def test_the_clients_password_is_the_one_the_broker_knows() -> None:
    compose = read_compose(COMPOSE)
    jaas = (ROOT / compose["secrets"]["kafka_server_jaas"]["file"]).read_text()
    password = (ROOT / compose["secrets"]["kafka_turnstream_password"]["file"]).read_text()
    users = dict(re.findall(r'user_(\w+)="([^"]*)"', jaas))
    assert users["turnstream"] == password.strip()
    assert re.search(r'username="broker"\s+password="([^"]*)"', jaas)[1] == users["broker"]  # type: ignore[index]


def test_the_worker_and_the_scheduler_authenticate(tmp_path: Path) -> None:
    for view in services_built_here(COMPOSE):
        if view.name == "keys":  # writes the keys file; never talks to Kafka
            continue
        assert "kafka_turnstream_password" in view.service["secrets"]
        result = view.run(["turnstream", "config", "check"], tmp_path / view.name)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "broker.security: SASL_PLAINTEXT, PLAIN as turnstream" in result.stdout


def test_the_controller_takes_the_broker_alone_and_acls_decide() -> None:
    compose = read_compose(COMPOSE)
    kafka = compose["services"]["kafka"]["environment"]
    protocols = dict(
        pair.split(":") for pair in kafka["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")
    )
    assert protocols[kafka["KAFKA_CONTROLLER_LISTENER_NAMES"]] == "SASL_PLAINTEXT"
    assert kafka["KAFKA_SASL_MECHANISM_CONTROLLER_PROTOCOL"] == "PLAIN"
    # The controller's listener reads the JAAS file's section named for it (lower case).
    jaas = (ROOT / compose["secrets"]["kafka_server_jaas"]["file"]).read_text()
    section = f"{kafka['KAFKA_CONTROLLER_LISTENER_NAMES'].lower()}.KafkaServer"
    controller = re.search(re.escape(section) + r"\s*\{(.*?)\};", jaas, re.DOTALL)
    assert controller is not None
    assert re.findall(r"user_(\w+)=", controller[1]) == ["broker"]
    assert kafka["KAFKA_AUTHORIZER_CLASS_NAME"].endswith("authorizer.StandardAuthorizer")
    assert kafka["KAFKA_ALLOW_EVERYONE_IF_NO_ACL_FOUND"] == "false"
    assert kafka["KAFKA_SUPER_USERS"].split(";") == ["User:broker", "User:turnstream"]
