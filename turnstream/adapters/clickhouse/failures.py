"""Which store errors a retry can fix: classified by ClickHouse error code and driver class.

Three kinds, each with its own treatment (see ``writer.py`` and ``bisect.py``):

* **transient**: the store, or the way to it, fails now (connection, timeout, memory,
  disk, too many parts, a file it cannot open): retry with back-off, offsets held, so an
  outage only delays.
* **broken**: the store refuses every statement until an operator acts (a table or
  column that does not exist, a user without the right): retried with back-off too, and
  shown as failing; never blamed on the data, so nothing is dead-lettered for it.
* **refused**: the store refuses this data and will refuse it again, identically (a value
  the column type cannot hold, a parse error, a limit, a violated constraint): retrying
  cannot help, so the ingest writer splits the batch until the refused messages are
  isolated and dead-letters them.

A ClickHouse code in neither list is taken as refused: an error that the same input
repeats would otherwise halt ingestion forever, and the bisect dead-letters only the
messages the store refuses on their own. A store that refused every message for a reason
listed nowhere would see them all dead-lettered (their bytes stay on the dead-letter
topic, to send again): its code belongs in :data:`BROKEN_CODES`. Pure: no store, no
clock.
"""

from __future__ import annotations

from enum import StrEnum

from turnstream.errors import StoreError

__all__ = ["BROKEN_CODES", "TRANSIENT_CODES", "Failure", "classify", "short_message"]


class Failure(StrEnum):
    """What a store error means for the batch that met it."""

    transient = "transient"
    broken = "broken"
    refused = "refused"


#: ClickHouse error codes of a store (or a road to it) that fails now and may not later.
TRANSIENT_CODES: dict[int, str] = {
    3: "UNEXPECTED_END_OF_FILE",
    32: "ATTEMPT_TO_READ_AFTER_EOF",
    74: "CANNOT_READ_FROM_FILE_DESCRIPTOR",
    75: "CANNOT_WRITE_TO_FILE_DESCRIPTOR",
    76: "CANNOT_OPEN_FILE",
    77: "CANNOT_CLOSE_FILE",
    159: "TIMEOUT_EXCEEDED",
    160: "TOO_SLOW",
    198: "DNS_ERROR",
    202: "TOO_MANY_SIMULTANEOUS_QUERIES",
    203: "NO_FREE_CONNECTION",
    209: "SOCKET_TIMEOUT",
    210: "NETWORK_ERROR",
    225: "NO_ZOOKEEPER",
    236: "ABORTED",
    241: "MEMORY_LIMIT_EXCEEDED",
    242: "TABLE_IS_READ_ONLY",
    243: "NOT_ENOUGH_SPACE",
    252: "TOO_MANY_PARTS",
    279: "ALL_CONNECTION_TRIES_FAILED",
    285: "TOO_FEW_LIVE_REPLICAS",
    286: "UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE",
    319: "UNKNOWN_STATUS_OF_INSERT",
    373: "SESSION_IS_LOCKED",
    394: "QUERY_WAS_CANCELLED",
    425: "SYSTEM_ERROR",
    439: "CANNOT_SCHEDULE_TASK",
    458: "CANNOT_UNLINK",
    473: "DEADLOCK_AVOIDED",
    999: "KEEPER_EXCEPTION",
    1000: "POCO_EXCEPTION",
    # chDB reports a file-system failure (a directory it may not write, as in the store
    # outage fault test) as a C++ std::exception.
    1001: "STD_EXCEPTION",
}

#: ClickHouse error codes of a store that refuses every statement until an operator acts.
BROKEN_CODES: dict[int, str] = {
    8: "THERE_IS_NO_COLUMN",
    10: "NOT_FOUND_COLUMN_IN_BLOCK",
    16: "NO_SUCH_COLUMN_IN_TABLE",
    47: "UNKNOWN_IDENTIFIER",
    60: "UNKNOWN_TABLE",
    81: "UNKNOWN_DATABASE",
    115: "UNKNOWN_SETTING",
    164: "READONLY",
    192: "UNKNOWN_USER",
    193: "WRONG_PASSWORD",
    194: "REQUIRED_PASSWORD",
    195: "IP_ADDRESS_NOT_ALLOWED",
    291: "DATABASE_ACCESS_DENIED",
    497: "ACCESS_DENIED",
    516: "AUTHENTICATION_FAILED",
}

#: TOO_MANY_PARTS also names an insert block spread over too many partitions: that one
#: is the data's (the same block is refused again), not a store that merges too slowly.
_PARTITIONS_PER_BLOCK = "partitions for single insert block"


def classify(error: StoreError) -> Failure:
    """Whether retrying ``error`` can help (transient, broken) or not (refused)."""
    code = error.code
    if code is not None:
        if code == 252 and _PARTITIONS_PER_BLOCK in str(error).lower():
            return Failure.refused
        if code in TRANSIENT_CODES:
            return Failure.transient
        if code in BROKEN_CODES:
            return Failure.broken
        return Failure.refused
    # No code: the failure happened in the client or on the way to the store.
    if error.driver == "DataError":
        # clickhouse-connect could not encode a value for its column (5,000,000,000 for
        # a UInt32): the same rows fail the same way.
        return Failure.refused
    if error.driver == "ProgrammingError":
        return Failure.broken
    return Failure.transient


def short_message(text: str, limit: int = 1000) -> str:
    """A store message without chDB's stack trace and ClickHouse's version trailer."""
    head = text.split("\n\n", 1)[0].strip()
    for marker in (" (version ", "\n0. ", "Stack trace"):
        at = head.find(marker)
        if at > 0:
            head = head[:at]
    head = " ".join(head.split())
    return head if len(head) <= limit else head[: limit - 1] + "…"
