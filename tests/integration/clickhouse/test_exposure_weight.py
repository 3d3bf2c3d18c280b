"""The exposure weight is one function: the SQL the views run equals the Python the
derivation runs, position for position."""

from __future__ import annotations

from pathlib import Path

from turnstream.adapters.clickhouse.exposure_weight import weight_micro_sql
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.derivation import weight_micro


def test_the_sql_weight_equals_the_python_weight_at_positions_1_to_100(chdb_path: Path) -> None:
    store = Store(f"chdb://{chdb_path}", "t_exposure_weight")
    try:
        rows = store.query(
            f"SELECT pos, {weight_micro_sql('pos')} FROM"
            " (SELECT toUInt64(number) AS pos FROM numbers(1, 100)) ORDER BY pos"
        ).rows
    finally:
        store.close()
    assert [(int(pos), int(micro)) for pos, micro in rows] == [
        (pos, weight_micro(pos)) for pos in range(1, 101)
    ]


def test_a_position_below_one_weighs_as_position_one_in_sql(chdb_path: Path) -> None:
    store = Store(f"chdb://{chdb_path}", "t_exposure_weight")
    try:
        [(micro,)] = store.query(f"SELECT {weight_micro_sql('toUInt64(0)')}").rows
    finally:
        store.close()
    assert int(micro) == weight_micro(1)
