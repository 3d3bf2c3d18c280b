"""Pure parts of turnstream_dev.kafka: config rendering, broker parsing, helpers."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from turnstream.errors import TurnstreamError
from turnstream_dev import (
    InfraError,
    LocalKafka,
    default_cache_dir,
    free_ports,
    parse_local_broker,
    render_server_properties,
)
from turnstream_dev.kafka import _new_cluster_id, _parse_java_major, _port_in_use


def _props(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")
    return dict(pairs)


def test_server_properties_listeners_and_ports(tmp_path: Path) -> None:
    props = _props(render_server_properties(29092, 29093, tmp_path / "data"))
    assert props["process.roles"] == "broker,controller"
    assert props["node.id"] == "1"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:29093"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:29092"
    assert props["controller.listener.names"] == "CONTROLLER"
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["log.dirs"] == str(tmp_path / "data")
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["transaction.state.log.replication.factor"] == "1"
    assert props["transaction.state.log.min.isr"] == "1"
    assert props["num.partitions"] == "4"
    assert props["auto.create.topics.enable"] == "true"


@pytest.mark.parametrize(
    ("value", "port"),
    [("127.0.0.1:9092", 9092), ("localhost:19092", 19092), ("PLAINTEXT://127.0.0.1:9192", 9192)],
)
def test_parse_local_broker_accepts_local(value: str, port: int) -> None:
    assert parse_local_broker(value) == ("127.0.0.1", port)


@pytest.mark.parametrize(
    "value",
    ["kafka:9092", "10.0.0.5:9092", "0.0.0.0:9092", "example.com:9092"],
)
def test_parse_local_broker_rejects_non_local_host(value: str) -> None:
    with pytest.raises(InfraError, match=r"127\.0\.0\.1 or localhost"):
        parse_local_broker(value)


@pytest.mark.parametrize(
    "value", ["127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:65535", "127.0.0.1:0", ":9092"]
)
def test_parse_local_broker_rejects_malformed(value: str) -> None:
    with pytest.raises(InfraError):
        parse_local_broker(value)


def test_infra_error_is_a_turnstream_error() -> None:
    assert issubclass(InfraError, TurnstreamError)


def test_local_kafka_paths(tmp_path: Path) -> None:
    kafka = LocalKafka(home=tmp_path, port=29092, controller_port=29093)
    assert kafka.bootstrap == "127.0.0.1:29092"
    assert kafka.data_dir == tmp_path.resolve() / "data"
    assert kafka.log_path.name == "kafka.log"
    with pytest.raises(InfraError):
        LocalKafka(home=tmp_path, port=29092, controller_port=29092)


def test_status_without_broker(tmp_path: Path) -> None:
    port, controller_port = free_ports(2)
    st = LocalKafka(home=tmp_path, port=port, controller_port=controller_port).status()
    assert not st.running and not st.answering and st.pid is None


def test_up_refuses_a_port_taken_by_someone_else(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        assert _port_in_use(taken)
        kafka = LocalKafka(home=tmp_path, port=taken, controller_port=free_ports(1)[0])
        with pytest.raises(InfraError, match="already in use"):
            kafka.up(timeout=5)


def test_free_ports_are_distinct() -> None:
    ports = free_ports(3)
    assert len(set(ports)) == 3
    assert not any(_port_in_use(p) for p in ports)


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TURNSTREAM_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("TURNSTREAM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "turnstream"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "turnstream"


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('java version "1.8.0_402"', 8),
        ('openjdk version "21" 2023-09-19', 21),
        ("garbage", None),
    ],
)
def test_parse_java_major(output: str, major: int | None) -> None:
    assert _parse_java_major(output) == major


def test_cluster_id_shape() -> None:
    cid = _new_cluster_id()
    assert len(cid) == 22 and not cid.startswith("-")
