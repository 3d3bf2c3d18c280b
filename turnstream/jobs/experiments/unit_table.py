"""Unit-level rows from a CSV file, for ``turnstream experiments analyze``.

One row per person: a column naming the arm, a numeric metric column and, optionally, a
numeric covariate column (the same metric before assignment, for CUPED). Every problem
is a :class:`~turnstream.errors.DataError` naming the file, the line and the column.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from turnstream.errors import DataError

__all__ = ["UnitTable", "parse_allocation", "read_units"]

_SHOWN = 40  # characters of a bad cell quoted back


@dataclass(frozen=True)
class UnitTable:
    """Metric values (and covariates) per arm, arms in order of first appearance."""

    values: dict[str, list[float]]
    covariates: dict[str, list[float]] | None
    rows: int
    #: Further numeric columns asked for (more covariates, a ratio's denominator):
    #: column -> arm -> values, in the rows' order.
    extra: dict[str, dict[str, list[float]]] | None = None


def _number(text: str, where: str) -> float:
    cell = text.strip()
    if not cell:
        raise DataError(f"{where}: empty (every row needs a number)")
    try:
        value = float(cell)
    except ValueError:
        shown = cell if len(cell) <= _SHOWN else cell[:_SHOWN] + "..."
        raise DataError(f"{where}: not a number: {shown!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: not a finite number: {cell!r}")
    return value


def read_units(
    path: str | Path,
    arm_column: str,
    metric: str,
    covariate: str | None = None,
    extra: Sequence[str] = (),
) -> UnitTable:
    """Read ``path`` (CSV with a header line, UTF-8) into values per arm; ``extra``: more
    numeric columns to read (each in ``UnitTable.extra``)."""
    file = Path(path)
    more = [c for c in dict.fromkeys(extra) if c not in (arm_column, metric, covariate)]
    wanted = [arm_column, metric] + ([covariate] if covariate else []) + more
    extras: dict[str, dict[str, list[float]]] = {c: {} for c in more}
    try:
        handle = file.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise DataError(f"{file}: cannot read: {exc.strerror or exc}") from None
    values: dict[str, list[float]] = {}
    covariates: dict[str, list[float]] = {}
    rows = 0
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if not header or not any(h.strip() for h in header):
                raise DataError(f"{file}: no header line (the first line names the columns)")
            names = [h.strip() for h in header]
            repeated = sorted(n for n, k in Counter(names).items() if k > 1 and n in wanted)
            if repeated:
                raise DataError(f"{file} line 1: column {repeated[0]!r} appears more than once")
            missing = [w for w in wanted if w not in names]
            if missing:
                raise DataError(
                    f"{file} line 1: no column {missing[0]!r} (columns: {', '.join(names)})"
                )
            at = {w: names.index(w) for w in wanted}
            for record in reader:
                line = reader.line_num
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue  # a blank line
                if len(record) != len(names):
                    raise DataError(
                        f"{file} line {line}: {len(record)} field{'s' * (len(record) != 1)}, "
                        f"the header has {len(names)}"
                    )
                arm = record[at[arm_column]].strip()
                if not arm:
                    raise DataError(f"{file} line {line}, column {arm_column!r}: empty arm")
                value = _number(record[at[metric]], f"{file} line {line}, column {metric!r}")
                values.setdefault(arm, []).append(value)
                if covariate:
                    x = _number(record[at[covariate]], f"{file} line {line}, column {covariate!r}")
                    covariates.setdefault(arm, []).append(x)
                for column in more:
                    x = _number(record[at[column]], f"{file} line {line}, column {column!r}")
                    extras[column].setdefault(arm, []).append(x)
                rows += 1
        except UnicodeDecodeError as exc:
            raise DataError(f"{file}: not UTF-8 text ({exc.reason})") from None
        except csv.Error as exc:
            raise DataError(f"{file} line {reader.line_num}: {exc}") from None
    if not rows:
        raise DataError(f"{file}: no rows after the header")
    return UnitTable(values, covariates if covariate else None, rows, extras or None)


def parse_allocation(text: str | None, arms: list[str]) -> dict[str, float] | None:
    """``"control=10,full=45"`` as weights per arm (None: equal); every arm needs one."""
    if not text:
        return None
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            value = float(weight) if sep else math.nan
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise DataError(f"--allocation: {part.strip()!r} is not NAME=WEIGHT (WEIGHT > 0)")
        weights[name.strip()] = value
    unknown = sorted(set(weights) - set(arms))
    if unknown:
        raise DataError(f"--allocation: no arm {unknown[0]!r} in the data ({', '.join(arms)})")
    absent = [a for a in arms if a not in weights]
    if absent:
        raise DataError(f"--allocation: no weight for arm {absent[0]!r}")
    return weights
