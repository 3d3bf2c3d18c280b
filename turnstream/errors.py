"""One root for every error turnstream raises; drivers' errors are wrapped at the edges."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DataError",
    "InvalidItem",
    "StoreError",
    "TurnstreamError",
]


class TurnstreamError(Exception):
    """Root of every turnstream error."""


class ConfigError(TurnstreamError):
    """The configuration file or an option is wrong."""


class DataError(TurnstreamError):
    """A data file given to a command is malformed (the message names the line and column)."""


class StoreError(TurnstreamError):
    """ClickHouse (server or embedded chDB) refused or failed an operation."""


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
