"""The migrations, one SQL file each, loaded in the order of their numbers.

A file is ``NNNN_words.sql``: its first line ``-- name: <what it does>``, then its
statements, each ending with ``;`` at the end of a line, run one by one. Comment lines
(``--``) between statements say why; they are not sent. The files are history: the text
each migration ran, never rewritten (a change to a table is a new file; the current
tables are declared in ``core/tables.py``). A new migration takes the next number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

__all__ = ["Migration", "load_migrations", "parse_migration"]

_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql\Z")
_NAME = "-- name: "


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def parse_migration(version: int, text: str, source: str = "") -> Migration:
    """One migration from its file's text. ValueError naming ``source`` when the text
    has no name line, no statement, or a statement without its ``;``."""
    first, *lines = text.split("\n")
    if not first.startswith(_NAME):
        raise ValueError(f"{source}: the first line is not '{_NAME}<what it does>'")
    statements: list[str] = []
    pending: list[str] = []
    for line in lines:
        if not pending and (line.startswith("--") or not line.strip()):
            continue  # a comment or a blank line between statements
        if line.rstrip().endswith(";"):
            statements.append("\n".join([*pending, line.rstrip()[:-1]]))
            pending = []
        else:
            pending.append(line)
    if pending:
        raise ValueError(f"{source}: the last statement does not end with ';'")
    if not statements:
        raise ValueError(f"{source}: no statement")
    return Migration(version, first[len(_NAME) :].strip(), tuple(statements))


def load_migrations(directory: Traversable | None = None) -> tuple[Migration, ...]:
    """Every migration of ``directory`` (this package's), by version. ValueError for a
    ``.sql`` file not named ``NNNN_words.sql`` and for two files of the same number."""
    folder = directory if directory is not None else files(__name__)
    found: dict[int, Migration] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        match = _FILE.match(entry.name)
        if match is None:
            raise ValueError(f"{entry.name}: a migration file is named NNNN_words.sql")
        version = int(match[1])
        if version in found:
            raise ValueError(f"{entry.name}: another migration has the number {version}")
        found[version] = parse_migration(version, entry.read_text(encoding="utf-8"), entry.name)
    return tuple(found[v] for v in sorted(found))
