"""JSONL files of items: their numbered lines, and each validated without a broker.

What ``turnstream publish`` (and ``--dry-run``) and ``turnstream replay`` read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from turnstream.errors import InvalidItem
from turnstream.models import Item, parse_item

__all__ = ["BadLine", "read_lines", "validate_lines"]


@dataclass(frozen=True)
class BadLine:
    line: int
    errors: list[tuple[str, str]]

    def __str__(self) -> str:
        return f"line {self.line}: " + "; ".join(f"{p or '<item>'}: {m}" for p, m in self.errors)


def read_lines(path: Path) -> Iterable[tuple[int, bytes]]:
    """Non-blank lines of a JSONL file with their 1-based numbers."""
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            stripped = line.strip()
            if stripped:
                yield number, stripped


def validate_lines(lines: Iterable[tuple[int, bytes]]) -> tuple[list[Item], list[BadLine]]:
    """Validate every line without a broker."""
    items, bad = [], []
    for number, raw in lines:
        try:
            items.append(parse_item(raw))
        except InvalidItem as exc:
            bad.append(BadLine(number, exc.errors))
    return items, bad
