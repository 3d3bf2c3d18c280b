"""Integration tests: the session's Kafka broker, chDB stores and worker deployments.

The fixtures live in tests/fixtures; importing them here makes them visible to
tests/integration only (unit tests run without a broker or a store).
"""

from tests.fixtures.kafka import kafka_broker, own_broker, sasl_broker, tls_broker
from tests.fixtures.store import chdb_path, migrated_template, store, store_factory
from tests.fixtures.worker import deployment_factory, own_deployment

__all__ = [
    "chdb_path",
    "deployment_factory",
    "kafka_broker",
    "migrated_template",
    "own_broker",
    "own_deployment",
    "sasl_broker",
    "store",
    "store_factory",
    "tls_broker",
]
