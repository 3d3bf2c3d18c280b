"""Store errors classified by ClickHouse code and driver class: what a retry can fix."""

from __future__ import annotations

import pytest

from turnstream.adapters.clickhouse.failures import (
    BROKEN_CODES,
    TRANSIENT_CODES,
    Failure,
    classify,
    short_message,
)
from turnstream.errors import StoreError


def _error(message: str = "x", code: int | None = None, driver: str | None = None) -> StoreError:
    return StoreError(message, code=code, driver=driver)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (210, Failure.transient),  # NETWORK_ERROR
        (209, Failure.transient),  # SOCKET_TIMEOUT
        (241, Failure.transient),  # MEMORY_LIMIT_EXCEEDED
        (243, Failure.transient),  # NOT_ENOUGH_SPACE
        (1001, Failure.transient),  # chDB's file-system errors (the store outage test)
        (60, Failure.broken),  # UNKNOWN_TABLE
        (497, Failure.broken),  # ACCESS_DENIED
        (16, Failure.broken),  # NO_SUCH_COLUMN_IN_TABLE
        (62, Failure.refused),  # SYNTAX_ERROR, "Max query size exceeded" among them
        (469, Failure.refused),  # VIOLATED_CONSTRAINT
        (321, Failure.refused),  # VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
        (131, Failure.refused),  # TOO_LARGE_STRING_SIZE
        (27, Failure.refused),  # CANNOT_PARSE_INPUT_ASSERTION_FAILED
        (4242, Failure.refused),  # a code nobody listed: deterministic until shown otherwise
    ],
)
def test_codes(code: int, expected: Failure) -> None:
    assert classify(_error(code=code, driver="DatabaseError")) is expected


def test_too_many_parts_is_transient_unless_one_block_spans_too_many_partitions() -> None:
    merges = "Code: 252. DB::Exception: Too many parts (3000). Merges are processing slower"
    assert classify(_error(merges, code=252)) is Failure.transient
    block = "Code: 252. DB::Exception: Too many partitions for single INSERT block (more than 100)"
    assert classify(_error(block, code=252)) is Failure.refused


@pytest.mark.parametrize(
    ("driver", "expected"),
    [
        ("DataError", Failure.refused),  # a value clickhouse-connect cannot encode
        ("ProgrammingError", Failure.broken),
        ("OperationalError", Failure.transient),
        ("ConnectionRefusedError", Failure.transient),
        (None, Failure.transient),
    ],
)
def test_errors_without_a_code_by_driver_class(driver: str | None, expected: Failure) -> None:
    assert classify(_error(driver=driver)) is expected


def test_the_lists_do_not_overlap() -> None:
    assert not set(TRANSIENT_CODES) & set(BROKEN_CODES)


def test_short_message_drops_the_stack_trace_and_the_version() -> None:
    chdb = (
        "Code: 469. DB::Exception: Constraint `c` is violated at row 1. (VIOLATED_CONSTRAINT) "
        "(version 26.9.2.1)\n\n0. ? @ 0x000000000e87006c\n1. ? @ 0x0000000018b37735\n"
    )
    assert short_message(chdb) == (
        "Code: 469. DB::Exception: Constraint `c` is violated at row 1. (VIOLATED_CONSTRAINT)"
    )
    assert short_message("a\n  b   c") == "a b c"
    long = short_message("x" * 5000, limit=100)
    assert len(long) == 100 and long.endswith("…")
