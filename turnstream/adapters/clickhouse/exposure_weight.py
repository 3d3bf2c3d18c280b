"""The exposure weight in SQL, written once: the summaries' recomputation, new
migrations and the benchmarks take it from here.

It is the same function as :func:`turnstream.core.derivation.exposure.weight_micro`
(``1 / log2(pos + 1)`` in millionths, rounded to an integer); an integration test
evaluates both at positions 1..100 on chDB. Positions below 1 count as 1 here (the
views filter them out; the Python function refuses them).

The migration files (``adapters/clickhouse/migrations/``) hold the text each ran, this expression
among it (a unit test finds every weight there to be this one); a new weight needs a new
migration that re-creates the views, and the recomputation SQL (``schema.SPLIT_VALUES``)
follows it from here.
"""

from __future__ import annotations

__all__ = ["weight_micro_sql"]


def weight_micro_sql(pos: str) -> str:
    """The SQL expression of the weight of position ``pos`` (a column or expression)."""
    return f"toUInt64(round(1 / log2(greatest({pos}, 1) + 1) * 1000000))"
