"""An isolated worker deployment on a broker: its own topics, consumer group, web port and
on-disk store, so tests and benchmarks never see each other's data. Development tooling:
the tests' ``deployment_factory`` fixture and ``bench/`` build on it."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from turnstream.adapters.api_key_file import KeyFile
from turnstream.adapters.clickhouse.summary import table_counts
from turnstream.adapters.kafka.admin import wait_until_drained
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.kafka.topology import Topology, topology_of
from turnstream.adapters.worker_client import read_query
from turnstream.config import Settings, load_settings
from turnstream.core.access import ALL_SPACES, Role
from turnstream_dev import free_port
from turnstream_dev.sample import EXPOSURE_KEYS
from turnstream_dev.worker_process import WorkerProcess

__all__ = [
    "SAMPLE_BINDINGS",
    "SAMPLE_CONTRACT",
    "SAMPLE_TYPES",
    "SPACES",
    "Deployment",
    "new_deployment",
]

_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: The object types of the sample day's spaces (the example documents of the checkout):
#: a clothing store's, and an electronics shop's (lumen's, as in ``make run``).
SAMPLE_TYPES = _EXAMPLES / "types.toml"
ELECTRONICS_TYPES = _EXAMPLES / "types_electronics.toml"
#: The tool bindings and the claim contract of the sample day's spaces.
SAMPLE_BINDINGS = _EXAMPLES / "tool_bindings.json"
SAMPLE_CONTRACT = _EXAMPLES / "claims" / "retail.json"


def _keys(space: str) -> str:
    return json.dumps(list(EXPOSURE_KEYS[space]))


#: The spaces every deployment has: one per language, with different features, and the
#: sample day's exposure keys (so its tokens verify as they do in ``make run``).
SPACES = f"""
[spaces.acme]
language = "pt"
features = ["signals", "claims", "turns"]
types = "{SAMPLE_TYPES}"
tool_bindings = "{SAMPLE_BINDINGS}"
claims_contract = "{SAMPLE_CONTRACT}"
exposure_keys = {_keys("acme")}

[spaces.lumen]
language = "en"
features = ["signals", "turns"]
types = "{ELECTRONICS_TYPES}"
exposure_keys = {_keys("lumen")}

[spaces.vida]
language = "es"
features = ["turns", "claims"]
types = "{SAMPLE_TYPES}"
tool_bindings = "{SAMPLE_BINDINGS}"
exposure_keys = {_keys("vida")}
"""


@dataclass
class Deployment:
    """One isolated turnstream deployment: config, worker process and helpers."""

    settings: Settings
    config: Path
    worker: WorkerProcess

    @property
    def operator_key(self) -> str:
        """The deployment's key for every space with every role (its config's
        ``[api] key``: what ``read_query`` and the jobs send)."""
        key = self.settings.api_key()
        assert key is not None
        return key

    def new_key(self, space: str, *roles: Role) -> str:
        """A narrower key in the deployment's keys file (the worker sees it at once)."""
        key, _ = KeyFile(self.settings.keys_path()).create(space, frozenset(roles), "test")
        return key

    def headers(self, key: str | None = None) -> dict[str, str]:
        """HTTP headers presenting ``key`` (default: the operator's key)."""
        return {"Authorization": f"Bearer {key or self.operator_key}"}

    async def _publish(self, lines: list[bytes]) -> None:
        async with Producer(self.settings) as producer:
            for raw in lines:
                try:
                    await producer.publish(raw)
                except Exception:
                    await producer.publish_raw(raw)

    @property
    def topology(self) -> Topology:
        """The deployment's topics and consumer groups."""
        return topology_of(self.settings)

    def publish(self, lines: list[bytes]) -> None:
        """Publish valid lines keyed by profile, invalid ones as they are."""
        asyncio.run(self._publish(lines))

    def drain(self, timeout: float = 120.0) -> None:
        """Wait until the worker has committed everything published."""
        asyncio.run(
            wait_until_drained(
                self.settings.broker.bootstrap,
                self.topology.ingest.group,
                self.topology.ingest.reads,
                timeout=timeout,
                alive=self.worker.alive,
                options=client_options(self.settings),
            )
        )

    def drain_signals(self, timeout: float = 120.0) -> None:
        """Wait until every accepted item is folded, derived and written."""
        asyncio.run(
            wait_until_drained(
                self.settings.broker.bootstrap,
                self.topology.derivation.group,
                self.topology.derivation.reads,
                timeout=timeout,
                alive=self.worker.alive,
                options=client_options(self.settings),
            )
        )

    def counts(self) -> dict[str, int]:
        """Rows per raw table (through the worker when it runs)."""
        return table_counts(lambda q: read_query(self.settings, q))

    def dead_letters(self) -> dict[str, int]:
        """Dead letters by reason."""
        sql = "SELECT reason, count() FROM dead_letters GROUP BY reason"
        return {r: int(n) for r, n in read_query(self.settings, sql).rows}


def _in_jobs(toml: str, line: str) -> str:
    """``toml`` with ``line`` in its ``[jobs]`` table (added at the end when it has none)."""
    header = "[jobs]\n"
    if header in toml:
        return toml.replace(header, f"{header}{line}\n", 1)
    return f"{toml}\n{header}{line}\n"


def new_deployment(
    kafka_broker: str,
    parent: Path,
    batch_size: int = 200,
    batch_seconds: float = 0.2,
    extra: str = "",
    worker_extra: str = "",
    first_fit: bool = False,
) -> Deployment:
    """A deployment with its own topics, group, port and store under ``parent``;
    ``extra``: TOML after the rest, ``worker_extra``: lines of its ``[worker]`` table.
    ``first_fit``: a new space's field priors fitted once 10 people are derived (the
    product's default); off here unless asked, so that a test's inferences do not
    change under it while it reads them (tests of the first fit turn it on)."""
    if not first_fit:
        extra = _in_jobs(extra, "first_fit = false")
    name = f"t{uuid.uuid4().hex[:10]}"
    home = parent / name
    home.mkdir()
    port = free_port()
    keys_file = home / "keys.json"
    operator_key, _ = KeyFile(keys_file).create(ALL_SPACES, frozenset(Role), "deployment")
    config = home / "turnstream.toml"
    config.write_text(
        f"""
[broker]
bootstrap = "{kafka_broker}"

[store]
dsn = "chdb://{home / "store"}"

[identity]
secret = "test-secret"

[worker]
app_id = "{name}"
topic_prefix = "{name}"
partitions = 4
web_port = {port}
data_dir = "{home / "faust"}"
batch_size = {batch_size}
batch_seconds = {batch_seconds}
{worker_extra}

[api]
keys_file = "{keys_file}"
key = "{operator_key}"
{SPACES}
{extra}"""
    )
    settings = load_settings(config, environ={})
    worker = WorkerProcess(
        config=config, log_path=home / "worker.log", web_port=port, key=operator_key
    )
    return Deployment(settings, config, worker)
