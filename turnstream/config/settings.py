"""One frozen, validated settings object; the product reads the environment only here
(the development tools in :mod:`turnstream_dev` read their own: the jar cache, Java)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationError,
    model_validator,
)

from turnstream.config.derivation import SignalsConfig
from turnstream.errors import ConfigError

__all__ = [
    "MAX_BATCH_SIZE",
    "WEBHOOK_EVENTS",
    "ApiSettings",
    "BrokerSecurity",
    "BrokerSettings",
    "Feature",
    "IdentitySettings",
    "JobsSettings",
    "RuleConfig",
    "Settings",
    "SpaceConfig",
    "SqlSettings",
    "StoreSettings",
    "WebhookConfig",
    "WorkerSettings",
    "exposure_keys_variable",
    "load_settings",
    "producer_keys_variable",
    "webhook_secret_variable",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Feature(StrEnum):
    """A space's features: each is off unless listed."""

    signals = "signals"
    claims = "claims"
    turns = "turns"


class RuleConfig(_Section):
    """One of the company's own rules, delivered with the constraints block."""

    id: str
    rank: int = Field(ge=0)
    origin: str = Field(pattern=r"^(code|db:.+|prompt:.+|policy:.+)$")
    text: str
    attr: str | None = None
    op: str | None = None
    values: tuple[str | int | float | bool, ...] = ()


#: At least 16 characters: shorter keys are within reach of a search (HMAC's strength is
#: the key's).
_MIN_KEY_CHARS = 16


def _long_enough(key: SecretStr) -> SecretStr:
    if len(key.get_secret_value()) < _MIN_KEY_CHARS:
        raise ValueError(f"an exposure key has at least {_MIN_KEY_CHARS} characters")
    return key


ExposureKey = Annotated[SecretStr, AfterValidator(_long_enough)]


def _long_secret(key: SecretStr) -> SecretStr:
    if len(key.get_secret_value()) < _MIN_KEY_CHARS:
        raise ValueError(f"a webhook secret has at least {_MIN_KEY_CHARS} characters")
    return key


WebhookSecret = Annotated[SecretStr, AfterValidator(_long_secret)]


def _long_producer_key(key: SecretStr) -> SecretStr:
    if len(key.get_secret_value()) < _MIN_KEY_CHARS:
        raise ValueError(f"a producer or erase key has at least {_MIN_KEY_CHARS} characters")
    return key


ProducerKey = Annotated[SecretStr, AfterValidator(_long_producer_key)]


#: The events a webhook endpoint may take (``turnstream.core.webhooks.EVENT_TYPES``).
WEBHOOK_EVENTS = frozenset({"review_request.created", "review_request.resolved"})


class WebhookConfig(_Section):
    """One receiver of a space's review-request events (``[[spaces.<id>.webhooks]]``)."""

    #: Names the endpoint (and its secret's variable, :func:`webhook_secret_variable`).
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
    url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s/]+(/\S*)?$", max_length=2048)]
    #: The HMAC-SHA256 key of the signatures (16+ characters; 32 random bytes advised);
    #: ``TURNSTREAM_WEBHOOK_SECRET_<SPACE>_<ID>`` beats the file.
    secret: WebhookSecret | None = None
    events: frozenset[Literal["review_request.created", "review_request.resolved"]] = WEBHOOK_EVENTS
    #: The endpoint may be on the operator's own network: its host may be or resolve to a
    #: loopback, private or link-local address (refused otherwise, at config check and at
    #: every attempt). A cloud metadata address is refused whatever this says.
    allow_internal: bool = False


class SpaceConfig(_Section):
    """One tenant's features document, its rules and its tool bindings."""

    language: Literal["pt", "en", "es"] = "en"
    features: frozenset[Feature] = frozenset()
    rules: tuple[RuleConfig, ...] = ()
    #: A tool-bindings document (JSON) for ``POST /v1/constraints`` with ``tool`` and for
    #: ``GET /v1/sdk/profile`` (the SDK's bound tools).
    tool_bindings: str | None = None
    #: The claim contract (JSON) the space's agents check with: ``GET /v1/sdk/profile``
    #: serves it without the negative corpus's phrases (only its version).
    claims_contract: str | None = None
    #: Field labels for the block's text, by ``type.field``; they win over the types
    #: document's labels.
    labels: dict[str, str] = Field(default_factory=dict)
    #: The object types document (TOML or JSON; several spaces may share one): every
    #: field's labels, claim class and role in derivation. Without one, nothing is a
    #: taste: no affinity, no inferred size (docs/signals.md, "Object types").
    types: str | None = None
    #: Keys of the space's exposure tokens (HMAC-SHA256): the first signs, every one
    #: verifies (rotation: put the new key first and keep the old one until the tokens it
    #: signed are no longer expected). ``TURNSTREAM_EXPOSURE_KEYS_<SPACE>`` (comma-separated)
    #: beats the file. Not ``identity.secret``: a token key may be handed to an agent's
    #: process, the identity secret never.
    exposure_keys: tuple[ExposureKey, ...] = ()
    #: Receivers of the space's review-request events (signed, retried, recorded).
    webhooks: tuple[WebhookConfig, ...] = ()
    #: Keys of the space's producers (HMAC-SHA256 over each record's value, in the
    #: ``turnstream-sig`` header): the first signs, every one verifies (rotation). With
    #: none, the space is OPEN: anyone who can write the input topics lands items in it
    #: (docs/security.md). ``TURNSTREAM_PRODUCER_KEYS_<SPACE>`` (comma-separated) beats
    #: the file.
    producer_keys: tuple[ProducerKey, ...] = ()
    #: Keys that sign the space's ``erase`` commands (a producer key never does). A space
    #: with producer keys and no erase keys refuses every erase from Kafka.
    #: ``TURNSTREAM_ERASE_KEYS_<SPACE>`` beats the file.
    erase_keys: tuple[ProducerKey, ...] = ()

    @model_validator(mode="after")
    def _webhook_ids_differ(self) -> SpaceConfig:
        ids = [w.id for w in self.webhooks]
        if len(set(ids)) != len(ids):
            raise ValueError("webhooks: each endpoint id may appear once in a space")
        return self

    def has(self, feature: Feature) -> bool:
        """Whether ``feature`` is on for this space."""
        return feature in self.features

    def token_keys(self) -> tuple[bytes, ...]:
        """The exposure-token keys as bytes, the signing key first."""
        return tuple(k.get_secret_value().encode() for k in self.exposure_keys)

    def signing_keys(self, erase: bool = False) -> tuple[bytes, ...]:
        """The producer keys (``erase``: the erase keys) as bytes, the signing key first."""
        keys = self.erase_keys if erase else self.producer_keys
        return tuple(k.get_secret_value().encode() for k in keys)


class BrokerSecurity(_Section):
    """How every Kafka client of this process (the worker's loops, the producer, the CLI)
    authenticates to the broker and protects the connection (``[broker.security]``).
    ``PLAINTEXT`` is for a development broker on loopback only (docs/security.md)."""

    #: ``SASL_SSL`` in production; ``SASL_PLAINTEXT`` on a trusted network or loopback.
    protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "SCRAM-SHA-512"
    #: The SASL user; ``TURNSTREAM_KAFKA_USERNAME`` beats the file.
    username: str | None = None
    #: ``TURNSTREAM_KAFKA_PASSWORD`` beats ``TURNSTREAM_KAFKA_PASSWORD_FILE`` (a Docker
    #: secret), which beats the file.
    password: SecretStr | None = None
    #: The CA certificates (PEM) that signed the broker's; None: the system's.
    ssl_cafile: str | None = None
    #: A client certificate and its key (PEM), for brokers that ask for one (mutual TLS).
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: SecretStr | None = None
    #: Whether the broker's certificate must name the host in ``bootstrap``.
    ssl_check_hostname: bool = True

    @model_validator(mode="after")
    def _sasl_has_credentials(self) -> BrokerSecurity:
        sasl = self.protocol.startswith("SASL_")
        if sasl and (not self.username or self.password is None):
            raise ValueError(
                f"{self.protocol} needs a username and a password (username, "
                "TURNSTREAM_KAFKA_USERNAME; password, TURNSTREAM_KAFKA_PASSWORD or _FILE)"
            )
        if not sasl and (self.username or self.password is not None):
            raise ValueError(f"username/password are set but protocol {self.protocol} sends none")
        if (self.ssl_keyfile is None) != (self.ssl_certfile is None):
            raise ValueError("ssl_certfile and ssl_keyfile go together")
        return self

    @property
    def tls(self) -> bool:
        """Whether connections are encrypted."""
        return self.protocol in ("SSL", "SASL_SSL")


class BrokerSettings(_Section):
    bootstrap: str = "127.0.0.1:9092"
    security: BrokerSecurity = BrokerSecurity()


class StoreSettings(_Section):
    #: ``chdb:///path`` (embedded, the default) or ``http(s)://user:pass@host:port``.
    dsn: str = "chdb://var/store"
    database: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] = "turnstream"


class IdentitySettings(_Section):
    #: Key of the keyed hash that turns a handle into a profile id.
    secret: SecretStr | None = None


#: The largest ``worker.batch_size``: the largest batch the fault tests write (20,000
#: idempotency keys of 256 characters in one batch, tests/chaos/test_long_keys.py). A
#: bigger batch holds a rebalance longer (partitions move only once the batches in
#: flight are written and committed: ~1 s each at 20,000) for little: the store's fixed
#: cost per batch is ~10 µs an item at 20,000.
MAX_BATCH_SIZE = 20_000

#: The most prepare children ``"auto"`` starts: the parent (the store's inserts, the
#: fan-out, derivation) stays one process, so past a few children it is the bound.
MAX_PREPARE_CHILDREN = 4


class WorkerSettings(_Section):
    app_id: str = "turnstream"
    topic_prefix: str = "turnstream"
    partitions: int = Field(default=4, ge=1)
    web_host: str = "127.0.0.1"
    web_port: int = Field(default=6066, ge=1, le=65535)
    #: Messages per batch, at most :data:`MAX_BATCH_SIZE`. A batch is what the fetch
    #: returned within ``batch_seconds``: this many only with a backlog. Each batch costs
    #: the store ~200 ms of CPU whatever its size (docs/performance.md, round nine).
    batch_size: int = Field(default=20_000, ge=1, le=MAX_BATCH_SIZE)
    batch_seconds: float = Field(default=0.5, gt=0)
    #: Faust's own data directory; default: ``<store path>.faust`` beside an embedded
    #: store, ``var/faust`` with a server.
    data_dir: str | None = None
    #: Seconds before the broker gives a silent worker's partitions to another one; short,
    #: so that a restarted worker gets its partitions back quickly after a crash.
    session_timeout: float = Field(default=10.0, ge=6.0)
    #: Where batches are prepared (validation, rows, fan-out messages): ``true``, in a
    #: child process, on a second core; ``false``, on a thread of the worker (one GIL for
    #: every stage); ``"auto"`` (the default), in the child when this process may run on
    #: two CPUs or more (:meth:`prepares_in_child`). On the quiet 2-core machine the child
    #: drains a backlog ~1.25x as fast; with no core free (other load) it cost 0.81x
    #: (docs/performance.md, rounds four and eight).
    prepare_process: bool | Literal["auto"] = "auto"
    #: How many child processes prepare batches when ``prepare_process`` puts them in
    #: children: a batch of 2,000 messages or more is split into that many contiguous
    #: chunks, prepared side by side and joined in order. ``"auto"`` (the default): one
    #: per CPU this process may run on, at most :data:`MAX_PREPARE_CHILDREN`. On the
    #: 2-core machine two children drained a sustained backlog x1.15 to x1.24 as fast as one
    #: (docs/performance.md, round ten); each child is ~130 MiB of memory.
    prepare_children: Annotated[int, Field(ge=1, le=16)] | Literal["auto"] = "auto"
    #: Seconds a loop may retry (or the store not answer) before ``/v1/status`` answers
    #: 503: longer than one store back-off step (30 s at most) and a rebalance, so a
    #: blip leaves a healthcheck green and an outage turns it red.
    status_grace: float = Field(default=45.0, ge=0)
    #: Seconds an item's ``occurred_at`` may be ahead of the time its batch was received
    #: (producers' clocks drift; a local time sent as UTC is up to 14 h ahead). Further
    #: ahead, the item goes to the dead letters as ``ahead_of_clock`` (docs/limits.md);
    #: a presented list's ``delivered_at`` is held to the same. At most ten years.
    occurred_at_max_ahead: float = Field(default=86_400.0, ge=0, le=10 * 366 * 86_400)

    def prepares_in_child(self) -> bool:
        """Whether batches are prepared in a child process: ``prepare_process``, where
        ``"auto"`` means when this process may run on at least two CPUs."""
        if self.prepare_process == "auto":
            return _usable_cpus() >= 2
        return self.prepare_process

    def prepare_children_count(self) -> int:
        """How many prepare children: ``prepare_children``, where ``"auto"`` means one
        per usable CPU, at most :data:`MAX_PREPARE_CHILDREN`."""
        if self.prepare_children == "auto":
            return max(1, min(_usable_cpus(), MAX_PREPARE_CHILDREN))
        return self.prepare_children


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class JobsSettings(_Section):
    """When the scheduler runs each job (crontab expressions) and in which time zone."""

    timezone: str = "UTC"
    priors_cron: str = "15 3 * * *"
    retention_cron: str = "45 3 * * *"
    experiments_cron: str = "30 4 * * *"
    #: The measurement document (experiments); none: no experiment job.
    measurement: str | None = None
    #: The priors' floor of distinct people: never lower than 10, at most 64 (the most
    #: the daily aggregates count exactly).
    priors_floor: int = Field(default=10, ge=10, le=64)
    #: Bytes of memory one query of the priors job may use (the store's
    #: ``max_memory_usage``); half of it is held by a GROUP BY or a sort before spilling
    #: to disk. Past it the job fails with a message saying so, and the process lives.
    priors_max_memory: int = Field(default=2 << 30, ge=64 << 20)
    #: A space with more value-day rows than this in the window runs one attribute at a
    #: time, so its largest attribute, not the whole space, sets the job's memory.
    priors_split_rows: int = Field(default=2_000_000, ge=1)
    #: After the priors, a space's people whose priors changed are derived again (the
    #: fit applies at once, docs/signals.md): only those whose newest event is within
    #: this many days before the as-of day (the raw window); 0: no one (each person gets
    #: the new priors at their next derivation).
    rederive_days: int = Field(default=45, ge=0)
    #: A space the priors job never ran for gets its priors and field priors at once
    #: when 10 of its people have been derived, again each time its derivations double
    #: (up to 10,000), then nightly (``core/derivation/first_fit.py``); false: nightly.
    first_fit: bool = True


class ApiSettings(_Section):
    """The HTTP API's keys: where the worker reads them, and the key this process sends."""

    #: The keys file (hashes only; ``turnstream keys``); default: beside an embedded
    #: store (``<store path>.keys.json``), ``var/keys.json`` with a server.
    keys_file: str | None = None
    #: The key this process presents to a worker (``turnstream sql``, the jobs through
    #: the worker, ``status``); better in ``TURNSTREAM_API_KEY`` than in the file.
    key: SecretStr | None = None


class SqlSettings(_Section):
    """Analysts' SQL (``POST /v1/sql``, ``turnstream sql``): its limits, and its
    connections of their own (docs/analysts.md)."""

    #: Seconds a query may run (``max_execution_time``).
    timeout: float = Field(default=30.0, gt=0, le=3600)
    #: Bytes of memory a query may take (``max_memory_usage``).
    max_memory: int = Field(default=1 << 30, ge=16 << 20)
    #: Rows and bytes of an answer (``max_result_rows``/``max_result_bytes``); beyond
    #: them the query fails (400) rather than answer a cut result.
    max_rows: int = Field(default=100_000, ge=1)
    max_bytes: int = Field(default=64 << 20, ge=1 << 20)
    #: Threads of one query (``max_threads``), at nice +``niceness`` (``os_thread_priority``):
    #: the ingest path keeps the CPU it needs (19: an analyst's query takes what is idle).
    max_threads: int = Field(default=1, ge=1, le=64)
    niceness: int = Field(default=19, ge=0, le=19)
    #: Queries at once, each on its own connection and thread; more wait their turn.
    concurrency: int = Field(default=2, ge=1, le=16)
    #: Seconds a query waits for a free connection before the worker answers 503 (one
    #: analyst's stream of queries cannot hold the others back without end).
    wait: float = Field(default=30.0, gt=0, le=3600)
    #: With a ClickHouse server: the DSN of the read-only user analysts' queries use
    #: (``turnstream sql-user`` prints the SQL that makes it); ``TURNSTREAM_SQL_DSN``
    #: beats the file. Without it they use the store's DSN, on a session of their own.
    dsn: SecretStr | None = None


class Settings(_Section):
    """Everything turnstream is configured with."""

    broker: BrokerSettings = BrokerSettings()
    store: StoreSettings = StoreSettings()
    identity: IdentitySettings = IdentitySettings()
    worker: WorkerSettings = WorkerSettings()
    signals: SignalsConfig = SignalsConfig()
    jobs: JobsSettings = JobsSettings()
    api: ApiSettings = ApiSettings()
    sql: SqlSettings = SqlSettings()
    spaces: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")], SpaceConfig
    ] = Field(default_factory=dict)
    #: Where the file came from (None: built-in defaults).
    source: Path | None = None
    #: ``TURNSTREAM_EXPOSURE_KEYS_*`` and ``TURNSTREAM_WEBHOOK_SECRET_*`` variables set (not
    #: empty) that name no configured space or endpoint (``config check`` refuses them).
    stray_variables: tuple[str, ...] = ()

    def sensitive_names(self) -> frozenset[str]:
        """The sensitive types and ``type.field`` names ``[signals] sensitive`` lists: never
        aggregated by value, never inferred. The object types documents add their markings
        in :func:`turnstream.core.object_types.sensitive_names`, which the aggregates'
        writers read (config cannot import the documents' loader)."""
        return self.signals.sensitive

    @model_validator(mode="after")
    def _each_key_has_one_space_and_one_use(self) -> Settings:
        # A key shared by two spaces, or by producing and erasing, would let one
        # credential act for the other: each key has one space and one use.
        secret = self.identity.secret.get_secret_value() if self.identity.secret else None
        owner: dict[str, str] = {}
        for space_id, space in self.spaces.items():
            for use in ("producer_keys", "erase_keys"):
                for i, key in enumerate(getattr(space, use)):
                    value = key.get_secret_value()
                    where = f"spaces.{space_id}.{use}.{i}"
                    if secret and value == secret:
                        raise ValueError(
                            f"{where}: a producer or erase key may not be identity.secret"
                        )
                    if value in owner:
                        raise ValueError(f"{where}: the same key is already {owner[value]}")
                    owner[value] = where
        # An exposure key is handed to the agents' processes, which must not hold the
        # identity secret; one that is also a producer or erase key would let an agent
        # write another space, or erase.
        for space_id, space in self.spaces.items():
            for i, key in enumerate(space.exposure_keys):
                value = key.get_secret_value()
                if secret and value == secret:
                    refused = "identity.secret"
                elif value in owner:
                    refused = f"a producer or erase key (it is {owner[value]})"
                else:
                    continue
                raise ValueError(
                    f"spaces.{space_id}.exposure_keys.{i}: an exposure key may not be {refused}"
                )
        return self

    def space(self, space_id: str) -> SpaceConfig | None:
        """The space's features document, or None for a space not configured."""
        return self.spaces.get(space_id)

    def faust_dir(self) -> Path:
        """Where Faust keeps its local data."""
        if self.worker.data_dir:
            return Path(self.worker.data_dir)
        dsn = self.store.dsn
        if dsn.startswith("chdb:"):
            path = dsn[len("chdb:") :].removeprefix("//")
            return Path(path + ".faust")
        return Path("var/faust")

    def keys_path(self) -> Path:
        """The API keys file."""
        if self.api.keys_file:
            return Path(self.api.keys_file)
        path = self._embedded_path()
        return Path(path + ".keys.json") if path is not None else Path("var/keys.json")

    def api_key(self) -> str | None:
        """The key this process sends to a worker, if one is configured."""
        return self.api.key.get_secret_value() if self.api.key is not None else None

    def _embedded_path(self) -> str | None:
        dsn = self.store.dsn
        return dsn[len("chdb:") :].removeprefix("//") if dsn.startswith("chdb:") else None

    def secret_bytes(self) -> bytes:
        """The hashing secret; a clear error when it is not configured."""
        if self.identity.secret is None or not self.identity.secret.get_secret_value():
            raise ConfigError(
                "identity.secret is not set: put it in the config file's [identity] section, "
                "in TURNSTREAM_SECRET or in a file named by TURNSTREAM_SECRET_FILE"
            )
        return self.identity.secret.get_secret_value().encode()


def _secret_file(env: Mapping[str, str]) -> str | None:
    """The secret in the file ``TURNSTREAM_SECRET_FILE`` names (a Docker secret is mounted
    as ``/run/secrets/<name>``), without the whitespace around it: an editor's final
    newline is not part of the key."""
    name = env.get("TURNSTREAM_SECRET_FILE")
    if not name:
        return None
    try:
        secret = Path(name).read_text(encoding="utf-8").strip()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"identity.secret: TURNSTREAM_SECRET_FILE names {name}, which cannot be read ({reason})"
        ) from None
    if not secret:
        raise ConfigError(f"identity.secret: TURNSTREAM_SECRET_FILE names {name}, which is empty")
    return secret


def _variable(prefix: str, *ids: str) -> str:
    """An environment variable named after configured ids (upper case, ``-`` becomes ``_``)."""
    return prefix + "_".join(ids).upper().replace("-", "_")


def exposure_keys_variable(space_id: str) -> str:
    """The environment variable holding a space's exposure keys."""
    return _variable("TURNSTREAM_EXPOSURE_KEYS_", space_id)


def producer_keys_variable(space_id: str, erase: bool = False) -> str:
    """The environment variable holding a space's producer (``erase``: erase) keys."""
    return _variable("TURNSTREAM_ERASE_KEYS_" if erase else "TURNSTREAM_PRODUCER_KEYS_", space_id)


def _from_env_or_file(env: Mapping[str, str], name: str) -> str | None:
    """``name``'s value, else the content of the file ``<name>_FILE`` names (a Docker
    secret), without the whitespace around it."""
    value = env.get(name)
    if value:
        return value
    path = env.get(name + "_FILE")
    if not path:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"{name}_FILE names {path}, which cannot be read ({reason})") from None
    if not text:
        raise ConfigError(f"{name}_FILE names {path}, which is empty")
    return text


def _kafka_overrides(data: dict, env: Mapping[str, str]) -> None:
    """The Kafka credentials and the producer and erase keys from the environment."""
    broker = data.setdefault("broker", {})
    if not isinstance(broker, dict):
        return
    for key, name in (
        ("username", "TURNSTREAM_KAFKA_USERNAME"),
        ("password", "TURNSTREAM_KAFKA_PASSWORD"),
        ("protocol", "TURNSTREAM_KAFKA_PROTOCOL"),
        ("mechanism", "TURNSTREAM_KAFKA_MECHANISM"),
        ("ssl_cafile", "TURNSTREAM_KAFKA_CAFILE"),
    ):
        value = _from_env_or_file(env, name)
        if value:
            security = broker.setdefault("security", {})
            if isinstance(security, dict):
                security[key] = value
    spaces = data.get("spaces")
    for space_id, space in spaces.items() if isinstance(spaces, dict) else ():
        for use, erase in (("producer_keys", False), ("erase_keys", True)):
            keys = _from_env_or_file(env, producer_keys_variable(str(space_id), erase))
            if keys and isinstance(space, dict):
                space[use] = [k.strip() for k in keys.split(",") if k.strip()]


def webhook_secret_variable(space_id: str, endpoint_id: str) -> str:
    """The environment variable holding a webhook endpoint's secret."""
    return _variable("TURNSTREAM_WEBHOOK_SECRET_", space_id, endpoint_id)


def _store_password_file(env: Mapping[str, str]) -> str | None:
    """The store's password in the file ``TURNSTREAM_STORE_PASSWORD_FILE`` names (a Docker
    secret), without the whitespace around it."""
    name = env.get("TURNSTREAM_STORE_PASSWORD_FILE")
    if not name:
        return None
    try:
        password = Path(name).read_text(encoding="utf-8").strip()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"store.dsn: TURNSTREAM_STORE_PASSWORD_FILE names {name}, which cannot be read "
            f"({reason})"
        ) from None
    if not password:
        raise ConfigError(f"store.dsn: TURNSTREAM_STORE_PASSWORD_FILE names {name}, which is empty")
    return password


def dsn_with_password(dsn: str, password: str) -> str:
    """``dsn`` (a server's, ``http(s)://user@host:port``) with ``password`` in it, quoted;
    a DSN that has one already, or an embedded store's, is a configuration error."""
    parts = urlsplit(dsn)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            "store.dsn: TURNSTREAM_STORE_PASSWORD_FILE is for a server's DSN "
            "(http(s)://user@host:port), not this one"
        )
    if parts.password is not None:
        raise ConfigError(
            "store.dsn: a password in the DSN and in TURNSTREAM_STORE_PASSWORD_FILE: keep one"
        )
    user = parts.username or "default"
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _stray_variables(env: Mapping[str, str], spaces: Mapping[object, object]) -> tuple[str, ...]:
    """The exposure-key and webhook-secret variables set for no space or endpoint of
    ``spaces`` (the file's sections, before validation)."""
    known = set()
    for space_id, space in spaces.items():
        known.add(exposure_keys_variable(str(space_id)))
        hooks = space.get("webhooks") if isinstance(space, dict) else None
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                known.add(webhook_secret_variable(str(space_id), hook["id"]))
    prefixes = ("TURNSTREAM_EXPOSURE_KEYS_", "TURNSTREAM_WEBHOOK_SECRET_")
    return tuple(
        sorted(
            name
            for name, value in env.items()
            if name.startswith(prefixes) and value.strip() and name not in known
        )
    )


def load_settings(
    path: str | Path | None = None,
    *,
    dsn: str | None = None,
    broker: str | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Read the TOML file (``path``, ``TURNSTREAM_CONFIG`` or ``./turnstream.toml``).

    Explicit ``dsn``/``broker`` beat ``TURNSTREAM_DSN``/``TURNSTREAM_BROKER``, which beat
    the file; ``TURNSTREAM_SECRET`` beats ``TURNSTREAM_SECRET_FILE`` (a file holding the
    secret, such as a Docker secret), which beats the file's secret; ``TURNSTREAM_API_KEY``
    beats ``[api] key``; ``TURNSTREAM_EXPOSURE_KEYS_<SPACE>`` a configured space's
    ``exposure_keys``; and ``TURNSTREAM_WEBHOOK_SECRET_<SPACE>_<ID>`` a webhook's secret.
    ``TURNSTREAM_STORE_PASSWORD_FILE`` (a Docker secret) puts a password in a server's DSN.
    """
    env = os.environ if environ is None else environ
    chosen = path or env.get("TURNSTREAM_CONFIG")
    if chosen is None and Path("turnstream.toml").is_file():
        chosen = "turnstream.toml"
    data: dict = {}
    if chosen is not None:
        file = Path(chosen)
        try:
            data = tomllib.loads(file.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {file} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {file} is not valid TOML: {exc}") from None
        data["source"] = file.resolve()
    overrides = {
        ("store", "dsn"): dsn or env.get("TURNSTREAM_DSN"),
        ("broker", "bootstrap"): broker or env.get("TURNSTREAM_BROKER"),
        ("identity", "secret"): env.get("TURNSTREAM_SECRET") or _secret_file(env),
        ("api", "key"): env.get("TURNSTREAM_API_KEY"),
        ("sql", "dsn"): env.get("TURNSTREAM_SQL_DSN"),
    }
    for (section, key), value in overrides.items():
        if value:
            data.setdefault(section, {})[key] = value
    store_password = _store_password_file(env)
    if store_password is not None:
        store = data.setdefault("store", {})
        store["dsn"] = dsn_with_password(str(store.get("dsn", StoreSettings().dsn)), store_password)
    spaces = data.get("spaces")
    for space_id, space in spaces.items() if isinstance(spaces, dict) else ():
        keys = env.get(exposure_keys_variable(str(space_id)))
        if keys and isinstance(space, dict):
            space["exposure_keys"] = [k.strip() for k in keys.split(",") if k.strip()]
        hooks = space.get("webhooks") if isinstance(space, dict) else None
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                secret = env.get(webhook_secret_variable(str(space_id), hook["id"]))
                if secret:
                    hook["secret"] = secret.strip()
    data["stray_variables"] = _stray_variables(env, spaces if isinstance(spaces, dict) else {})
    _kafka_overrides(data, env)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        where = f" in {chosen}" if chosen else ""
        problems = "; ".join(
            ".".join(str(p) for p in e["loc"]) + f": {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid configuration{where}: {problems}") from None
