"""One root for every error turnstream raises; drivers' errors are wrapped at the edges."""

from __future__ import annotations

__all__ = [
    "BadJobParameter",
    "ConfigError",
    "DataError",
    "InvalidItem",
    "SqlRefused",
    "StoreError",
    "TurnstreamError",
    "UnknownJob",
    "WorkerFailing",
]


class TurnstreamError(Exception):
    """Root of every turnstream error."""


class ConfigError(TurnstreamError):
    """The configuration file or an option is wrong."""


class BadJobParameter(ConfigError):
    """A job was asked with a parameter it does not take or a value it cannot use;
    ``parameter`` names it (the worker's 400 names it as the field)."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}")
        self.parameter = parameter


class DataError(TurnstreamError):
    """A data file given to a command is malformed (the message names the line and column)."""


class StoreError(TurnstreamError):
    """ClickHouse (server or embedded chDB) refused or failed an operation.

    ``code`` is ClickHouse's error code when the store gave one (``None`` for a failure
    on the way to it, or in the client); ``driver`` names the driver's exception class;
    ``table`` the table an insert was for. :func:`turnstream.adapters.clickhouse.failures.classify`
    tells from them whether a retry can help.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        driver: str | None = None,
        table: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.driver = driver
        self.table = table


class UnknownJob(TurnstreamError):
    """No job of that name (the message lists the jobs there are)."""


class InvalidItem(TurnstreamError):
    """An item broke the wire contract.

    ``errors`` holds one ``(field_path, message)`` pair per problem, e.g.
    ``("interaction.items[0].pos", "must be greater than or equal to 1")``.
    """

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{path or '<item>'}: {msg}" for path, msg in errors))

    @property
    def field_path(self) -> str:
        """The first offending field path ('' for the whole item)."""
        return self.errors[0][0] if self.errors else ""


class WorkerFailing(TurnstreamError):
    """The worker answers but its ingest loop keeps failing (``turnstream wait`` exits 3)."""


class SqlBusy(TurnstreamError):
    """Every connection of analysts' SQL stayed busy for ``[sql] wait`` seconds; the
    worker answers 503 with ``Retry-After``."""


class SqlRefused(TurnstreamError):
    """An analyst's statement that the SQL gate refuses (the message names what:
    ``turnstream.core.sql_gate``); the worker answers it 400."""
