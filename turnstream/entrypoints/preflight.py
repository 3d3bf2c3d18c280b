"""What must hold before the worker (or the scheduler) starts, one check per setting or
document; ``turnstream config check`` prints the same report.

Each check takes the loaded :class:`~turnstream.config.Settings`, calls the same function
the worker calls for its setting (``secret_bytes``, ``build_scheduler``, the document
loaders) and says what it found as :class:`Finding` lines; a :class:`TurnstreamError`
it raises becomes an error naming the check's setting. A document the configuration
references adds one line to :data:`CHECKS`: :func:`document` for one path,
:func:`per_space_document` for a path in each space's section.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from aiokafka.conn import collect_hosts
from pydantic import TypeAdapter, ValidationError

from turnstream.adapters.api_key_file import KeyFile
from turnstream.adapters.clickhouse.store import chdb_path, describe_dsn
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.webhooks.egress import destination_refusal
from turnstream.config import (
    Feature,
    Settings,
    SpaceConfig,
    exposure_keys_variable,
    producer_keys_variable,
    webhook_secret_variable,
)
from turnstream.core.access import ALL_SPACES, Role
from turnstream.core.constraints.bindings import BindingsDocument, load_bindings
from turnstream.core.object_types import unbound_fields
from turnstream.errors import TurnstreamError
from turnstream.jobs.scheduler import build_scheduler, scheduled_jobs
from turnstream.models.common import AttrRef
from turnstream.models.measurement import MeasurementDocument, load_measurement
from turnstream.models.object_types import ObjectTypes, load_types
from turnstream.sdk.claims import load_contract

__all__ = [
    "CHECKS",
    "PLACEHOLDER_MARKS",
    "Check",
    "Finding",
    "Level",
    "Report",
    "check_settings",
    "document",
    "per_space_document",
]

D = TypeVar("D")

#: Words that mark a secret as one shipped to be replaced (deploy/secrets/turnstream_secret,
#: examples/turnstream.toml): a worker keyed with it hashes handles with a public key.
PLACEHOLDER_MARKS = ("change-me", "not-a-secret")


class Level(StrEnum):
    info = "info"
    warning = "warning"
    error = "error"


@dataclass(frozen=True)
class Finding:
    """One line of the report: the setting (dotted name) and what was found."""

    setting: str
    text: str
    level: Level = Level.info

    def line(self) -> str:
        """``[level: ]setting: text`` (an error that names its setting already, once)."""
        prefix = "" if self.level is Level.info else f"{self.level}: "
        if self.text.startswith(self.setting):
            return f"{prefix}{self.text}"
        return f"{prefix}{self.setting}: {self.text}"


@dataclass(frozen=True)
class Check:
    """One step: ``run`` returns what it found, or raises naming the problem."""

    setting: str
    run: Callable[[Settings], Iterable[Finding]]


@dataclass(frozen=True)
class Report:
    """Every finding, in the order of the checks."""

    source: Path | None
    findings: tuple[Finding, ...]

    def at(self, level: Level) -> list[Finding]:
        return [f for f in self.findings if f.level is level]

    def would_start(self, strict: bool = False) -> bool:
        """No error (and, when ``strict``, no warning either)."""
        return not self.at(Level.error) and not (strict and self.at(Level.warning))


def check_settings(settings: Settings, checks: Sequence[Check] | None = None) -> Report:
    """Run every check (``CHECKS`` by default) and gather what they found."""
    findings: list[Finding] = []
    for check in CHECKS if checks is None else checks:
        try:
            for finding in check.run(settings):  # what it found before it raised stays
                findings.append(finding)
        except TurnstreamError as exc:
            findings.append(Finding(check.setting, str(exc), Level.error))
    return Report(settings.source, tuple(findings))


def document(
    setting: str,
    path_of: Callable[[Settings], str | None],
    load: Callable[[str], D],
    describe: Callable[[D], str],
) -> Check:
    """A check for one document: load the file ``path_of`` gives (when set) as the worker
    does and describe it."""

    def run(settings: Settings) -> Iterator[Finding]:
        path = path_of(settings)
        yield Finding(setting, f"{path}: {describe(load(path))}" if path else "not set")

    return Check(setting, run)


def per_space_document(field: str, load: Callable[[str], D], describe: Callable[[D], str]) -> Check:
    """A check for a document each space's section may name in ``field``: every space's,
    each error naming ``spaces.<id>.<field>``."""

    def run(settings: Settings) -> Iterator[Finding]:
        for space_id, space in settings.spaces.items():
            path = getattr(space, field)
            if not path:
                continue
            setting = f"spaces.{space_id}.{field}"
            try:
                yield Finding(setting, f"{path}: {describe(load(path))}")
            except TurnstreamError as exc:
                yield Finding(setting, str(exc), Level.error)

    return Check(f"spaces.*.{field}", run)


def _broker(settings: Settings) -> Iterator[Finding]:
    bootstrap = settings.broker.bootstrap
    try:  # aiokafka's own parse of bootstrap_servers: host[:port], comma-separated
        hosts = collect_hosts(bootstrap, randomize=False)
    except ValueError:
        hosts = []
    if not hosts or not all(host for host, _, _ in hosts):
        yield Finding("broker.bootstrap", f"{bootstrap!r} is not host[:port],...", Level.error)
        return
    yield Finding("broker.bootstrap", ", ".join(f"{host}:{port}" for host, port, _ in hosts))


def _store(settings: Settings) -> Iterator[Finding]:
    dsn = settings.store.dsn
    where = f"database {settings.store.database}"
    if chdb_path(dsn) is not None:  # the same parse as the store's; raises for :memory:
        yield Finding("store.dsn", f"{describe_dsn(dsn)} (embedded chDB, {where})")
        return
    parts = urlsplit(dsn)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        yield Finding(
            "store.dsn",
            f"{describe_dsn(dsn)}: give chdb:path (embedded) or http(s)://host:port (a server)",
            Level.error,
        )
        return
    try:
        parts.port  # noqa: B018 -- the parse the driver makes: a port of letters raises
    except ValueError:
        port = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        yield Finding(
            "store.dsn",
            f"{describe_dsn(dsn)}: the port {port!r} is not a number from 1 to 65535",
            Level.error,
        )
        return
    yield Finding("store.dsn", f"{describe_dsn(dsn)} (ClickHouse server, {where})")
    password = (parts.password or "").lower()
    if any(mark in password for mark in PLACEHOLDER_MARKS):
        yield Finding(
            "store.dsn",
            "the password is a placeholder shipped with turnstream "
            "(deploy/secrets/clickhouse_password): set your own",
            Level.warning,
        )


def _secret(settings: Settings) -> Iterator[Finding]:
    secret = settings.secret_bytes().decode()  # the ingest driver's own call: raises unset
    if any(mark in secret.lower() for mark in PLACEHOLDER_MARKS):
        yield Finding(
            "identity.secret",
            "is a placeholder shipped with turnstream: anyone can recompute the profile "
            "ids it hashes; set your own before real data arrives (changing it later "
            "changes every profile id)",
            Level.warning,
        )
    else:
        yield Finding("identity.secret", "set")


_LABELS = TypeAdapter(dict[AttrRef, str])


def _describe_space(space: SpaceConfig) -> str:
    features = ", ".join(sorted(space.features)) or "no features"
    return f"{space.language}; {features}; {len(space.labels)} labels, {len(space.rules)} rules" + (
        f", tool bindings {space.tool_bindings}" if space.tool_bindings else ""
    )


def _spaces(settings: Settings) -> Iterator[Finding]:
    if not settings.spaces:
        yield Finding(
            "spaces",
            "none configured: every item would be dead-lettered as unknown_space",
            Level.warning,
        )
    for space_id, space in settings.spaces.items():
        yield Finding(f"spaces.{space_id}", _describe_space(space))
        try:
            _LABELS.validate_python(space.labels)
        except ValidationError as exc:
            for error in exc.errors():
                yield Finding(
                    f"spaces.{space_id}.labels",
                    f"{error['loc'][0]!r}: a label is for a type.field (item_variant.color)",
                    Level.error,
                )


def _worker(settings: Settings) -> Iterator[Finding]:
    worker = settings.worker
    yield Finding(
        "worker",
        f"app {worker.app_id}, topics {worker.topic_prefix}.*, {worker.partitions} partitions, "
        f"HTTP on {worker.web_host}:{worker.web_port}, Faust data in {settings.faust_dir()}",
    )


def _jobs(settings: Settings) -> Iterator[Finding]:
    build_scheduler(settings)  # the scheduler's own parse of the time zone and crons
    crons = ", ".join(f"{name} '{cron}'" for name, cron in scheduled_jobs(settings).items())
    yield Finding("jobs", f"{crons} ({settings.jobs.timezone})")


def _exposure_keys(settings: Settings) -> Iterator[Finding]:
    """Per space, how many token keys (never the keys); a space with signals and no key
    verifies no token (every outcome reads ``invalid``), and a key shared by two spaces
    lets one space's tokens attribute in the other's."""
    owners: dict[bytes, list[str]] = {}
    for space_id, space in settings.spaces.items():
        setting = f"spaces.{space_id}.exposure_keys"
        keys = space.token_keys()
        for key in keys:
            owners.setdefault(key, []).append(space_id)
        if keys:
            rotation = f", {len(keys) - 1} still verifying" if len(keys) > 1 else ""
            yield Finding(
                setting, f"{len(keys)} key{'s' if len(keys) > 1 else ''} (1 signs{rotation})"
            )
        elif space.has(Feature.signals):
            yield Finding(
                setting,
                f"none: signals are on, so every outcome's token reads 'invalid' and nothing "
                f"is attributed; set {exposure_keys_variable(space_id)} or exposure_keys",
                Level.warning,
            )
    for spaces in owners.values():
        if len(spaces) > 1:
            yield Finding(
                "spaces.*.exposure_keys",
                f"spaces {', '.join(spaces)} share a key: a token one of them minted "
                "verifies in the others",
                Level.warning,
            )


def _webhooks(settings: Settings) -> Iterator[Finding]:
    """Per endpoint, where it sends and what (never the secret, never the URL's path or
    query, which may carry a token); an endpoint without a secret stops the worker."""
    for space_id, space in settings.spaces.items():
        for i, hook in enumerate(space.webhooks):
            setting = f"spaces.{space_id}.webhooks.{i}"
            url = urlsplit(hook.url)
            try:
                port = url.port
            except ValueError:
                yield Finding(f"{setting}.url", f"endpoint {hook.id!r}: not a port", Level.error)
                continue
            where = f"{url.scheme}://{url.hostname}{f':{port}' if port else ''}"
            # The sender's own rule: the host as written and as its HTTP client reads it.
            refused = destination_refusal(hook.url, hook.allow_internal)
            if refused is not None:
                allow = (
                    "" if hook.allow_internal else " (allow_internal = true for your own network)"
                )
                yield Finding(
                    f"{setting}.url",
                    f"endpoint {hook.id!r}: {refused}: webhooks go to public addresses{allow}",
                    Level.error,
                )
                continue
            if hook.secret is None:
                yield Finding(
                    f"{setting}.secret",
                    f"endpoint {hook.id!r} has no secret: set "
                    f"{webhook_secret_variable(space_id, hook.id)} or secret",
                    Level.error,
                )
                continue
            yield Finding(
                setting, f"{hook.id} -> {where} ({', '.join(sorted(hook.events))}), signed"
            )
            if url.scheme == "http" and url.hostname not in ("localhost", "127.0.0.1", "::1"):
                yield Finding(
                    f"{setting}.url",
                    f"endpoint {hook.id!r} is plain http: the events (profile ids, receipts) "
                    "travel unencrypted; the signature proves who sent them, not who read them",
                    Level.warning,
                )


def _measurement_spaces(settings: Settings) -> Iterator[Finding]:
    """Each experiment of the measurement document runs over a configured space: one
    naming another is never assigned, and its results would read as an empty test."""
    path = settings.jobs.measurement
    if not path:
        return
    try:
        doc = load_measurement(path)
    except TurnstreamError:
        return  # said by the document's own check
    for i, experiment in enumerate(doc.experiments):
        if experiment.space_id not in settings.spaces:
            yield Finding(
                "jobs.measurement",
                f"{path}: experiments.{i}.space_id: experiment {experiment.id!r} names space "
                f"{experiment.space_id!r}, which is not configured "
                f"({_configured(settings)})",
                Level.error,
            )


def _configured(settings: Settings) -> str:
    spaces = ", ".join(sorted(settings.spaces))
    return f"configured: {spaces}" if spaces else "no space is configured"


def _stray_variables(settings: Settings) -> Iterator[Finding]:
    """A ``TURNSTREAM_EXPOSURE_KEYS_<SPACE>`` or ``TURNSTREAM_WEBHOOK_SECRET_<SPACE>_<ID>``
    set for no configured space or endpoint: a typo, or a section removed from the file,
    whose keys would silently go unused."""
    for name in settings.stray_variables:
        yield Finding(
            name,
            f"set, but it names no configured space or webhook endpoint ({_configured(settings)})",
            Level.error,
        )


def _key_spaces(settings: Settings) -> Iterator[Finding]:
    """Every active API key is for every space or for a configured one: a key of a space
    removed from the file still authenticates, for nothing the operator meant."""
    path = settings.keys_path()
    try:
        keys = KeyFile(path).list()
    except TurnstreamError as exc:
        yield Finding("api.keys_file", str(exc), Level.error)
        return
    except OSError as exc:
        yield Finding("api.keys_file", f"{path} cannot be read ({exc.strerror})", Level.error)
        return
    active = [k for k in keys if k.active]
    operators = sum(k.space == ALL_SPACES and Role.operator in k.roles for k in active)
    if not active:
        held = "no active key"
    else:
        plural = "" if len(active) == 1 else "s"
        held = f"{len(active)} active key{plural}, {operators or 'none'} an operator's"
    if not operators:
        # Every route but /v1/status refuses; so do the jobs and SQL through the worker.
        held += (": make one with turnstream keys create --space '*' --role analyst,operator"
                 " (Docker: the keys step)")  # fmt: skip
    yield Finding("api.keys_file", f"{path}: {held}")
    for key in keys:
        if key.active and key.space != ALL_SPACES and key.space not in settings.spaces:
            yield Finding(
                "api.keys_file",
                f"{path}: key {key.id} is for space {key.space!r}, which is not configured "
                f"({_configured(settings)}): revoke it (turnstream keys revoke {key.id})",
                Level.error,
            )


def _types(doc: ObjectTypes) -> str:
    fields = sum(len(t.fields) for t in doc.types.values())
    return f"{len(doc.types)} object types, {fields} fields"


def _types_against_spaces(settings: Settings) -> Iterator[Finding]:
    """What the worker checks at start-up (tool bindings name declared fields; a document
    that does not load is reported by its own check), and a space with signals but no
    types document: it infers no affinity and no size."""
    for space_id, space in settings.spaces.items():
        if space.types is None:
            if space.has(Feature.signals):
                yield Finding(
                    f"spaces.{space_id}.types",
                    "none: signals are on, but a field no type declares is never a taste, "
                    "so this space infers no affinity and no size (interests only)",
                    Level.warning,
                )
            continue
        try:
            problems = unbound_fields(space)
        except TurnstreamError:
            continue  # said by the document's own check
        for path, message in problems:
            yield Finding(f"spaces.{space_id}.tool_bindings", f"{path}: {message}", Level.error)


def _experiments(doc: MeasurementDocument) -> str:
    ids = ", ".join(e.id for e in doc.experiments)
    count = len(doc.experiments)
    return f"{count} experiment{'' if count == 1 else 's'} ({ids})" if ids else "no experiments"


def _bindings(doc: BindingsDocument) -> str:
    count = len(doc.bindings)
    return f"{count} tool binding{'' if count == 1 else 's'}"


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _broker_security(settings: Settings) -> Iterator[Finding]:
    """The protocol, mechanism and user (never the password); the TLS files loaded as the
    clients load them; PLAINTEXT to a broker off this machine is a warning."""
    security = settings.broker.security
    client_options(settings)  # a TLS file that cannot be read raises: an error here
    text = security.protocol
    if security.protocol.startswith("SASL_"):
        text += f", {security.mechanism} as {security.username}"
    if security.tls:
        text += f", CA {security.ssl_cafile or 'of the system'}"
        text += ", client certificate" if security.ssl_certfile else ""
    try:
        hosts = {host for host, _, _ in collect_hosts(settings.broker.bootstrap, randomize=False)}
    except ValueError:
        hosts = set()
    if security.protocol == "PLAINTEXT" and hosts - _LOOPBACK:
        yield Finding(
            "broker.security",
            f"{text}: any client that reaches the broker reads and writes every topic; "
            "SASL_SSL outside development (docs/security.md)",
            Level.warning,
        )
        return
    yield Finding("broker.security", text)


def _producer_keys(settings: Settings) -> Iterator[Finding]:
    """Per space, how many producer and erase keys (never the keys); a space without
    producer keys is open, and one without erase keys takes no erase."""
    for space_id, space in settings.spaces.items():
        setting = f"spaces.{space_id}.producer_keys"
        signing, erasing = space.signing_keys(), space.signing_keys(erase=True)
        if not signing:
            text = (
                "none: the space is OPEN, anyone who can write the input topics lands items "
                f"in it; set {producer_keys_variable(space_id)} or producer_keys"
            )
        else:
            text = f"{len(signing)} key{'s' if len(signing) > 1 else ''} (1 signs)"
        if erasing:
            text += f"; erase_keys: {len(erasing)}"
        elif signing:
            text += "; no erase_keys: it takes no erase"
        # An open space is a warning: `config check --strict` refuses it for production.
        yield Finding(setting, text, Level.warning if not signing else Level.info)


#: Every check, in the order the report prints them. A document the configuration
#: references adds its line here (see :func:`document`, :func:`per_space_document`).
CHECKS: tuple[Check, ...] = (
    Check("broker.bootstrap", _broker),
    Check("store.dsn", _store),
    Check("identity.secret", _secret),
    Check("worker", _worker),
    Check("spaces", _spaces),
    per_space_document("types", load_types, _types),
    per_space_document("tool_bindings", load_bindings, _bindings),
    per_space_document("claims_contract", load_contract, lambda c: f"version {c.version}"),
    Check("spaces.*.types", _types_against_spaces),
    Check("spaces.*.exposure_keys", _exposure_keys),
    Check("spaces.*.webhooks", _webhooks),
    Check("jobs", _jobs),
    document("jobs.measurement", lambda s: s.jobs.measurement, load_measurement, _experiments),
    Check("jobs.measurement", _measurement_spaces),
    Check("environment", _stray_variables),
    Check("api.keys_file", _key_spaces),
    Check("broker.security", _broker_security),
    Check("spaces.*.producer_keys", _producer_keys),
)
