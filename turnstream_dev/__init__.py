"""Development tooling, never run by a deployment: a single-node Kafka broker without Docker
(:mod:`.kafka`), a worker in a child process, the sample day, isolated deployments for the
tests and the benchmarks."""

from turnstream_dev.kafka import (
    KAFKA_VERSION,
    InfraError,
    KafkaStatus,
    LocalKafka,
    default_cache_dir,
    ensure_jars,
    free_port,
    free_ports,
    parse_local_broker,
    render_server_properties,
)

__all__ = [
    "KAFKA_VERSION",
    "InfraError",
    "KafkaStatus",
    "LocalKafka",
    "default_cache_dir",
    "ensure_jars",
    "free_port",
    "free_ports",
    "parse_local_broker",
    "render_server_properties",
]
