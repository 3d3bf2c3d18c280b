"""Local infrastructure for development and tests: a single-node Kafka broker without Docker."""

from turnstream.dev.kafka import (
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
