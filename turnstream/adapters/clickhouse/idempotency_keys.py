"""Which message took an idempotency key first: read from the store, cached in memory.

The keys live in the ``idempotency_keys`` table, written by the same idempotent sink as
the raw rows, so they survive restarts and follow a partition to whichever worker
consumes it next. The keys of the messages the store refused (``core/ingest.refused_key_for``)
are few, and looked for among every message of the same length: they are read once (again
after :meth:`KeyRegistry.forget`) and kept in memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from turnstream.adapters.clickhouse.store import Store
from turnstream.core.ingest import REFUSED_PREFIX, Source

__all__ = ["KeyRegistry"]

#: The session's temporary table that holds the keys of one look-up.
_PROBE = "turnstream_key_probe"


class KeyRegistry:
    """Looks up idempotency keys, remembering the most recent ones. Blocking."""

    def __init__(self, store: Store, cache_size: int = 200_000) -> None:
        self.store = store
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Source] = OrderedDict()
        self._refused: dict[str, Source] | None = None

    def lookup(self, keys: Iterable[str]) -> dict[str, Source]:
        """The first source of each key already taken (keys never seen are absent)."""
        cache = self._cache
        wanted = set(keys)
        # Set operations on the cache's keys (C), not a look-up per key in Python.
        found: dict[str, Source] = {key: cache[key] for key in wanted & cache.keys()}
        missing = list(wanted - cache.keys())
        if not missing:
            return found
        # The keys go to the store as data (a temporary table filled by an insert), never
        # in the SQL text: 5,000 keys of 64 characters in a literal passed ClickHouse's
        # 256 KiB max_query_size and halted ingestion. The insert is also the faster way
        # (bench/key_lookup.py, figures in docs/performance.md).
        self.store.stage(_PROBE, [("k", "String")], [missing], column_oriented=True)
        result = self.store.query(
            "SELECT dedup_key, argMin((_topic, _partition, _offset), ingested_at) "
            f"FROM idempotency_keys WHERE dedup_key IN (SELECT k FROM {_PROBE}) "
            "GROUP BY dedup_key"
        )
        for key, (topic, partition, offset) in result.rows:
            found[key] = Source(topic, int(partition), int(offset))
            self.remember(key, found[key])
        return found

    def refused(self) -> Mapping[str, Source]:
        """The keys of the messages the store refused, and which message took each (read
        from the store at the first call after a start or :meth:`forget`)."""
        if self._refused is None:
            result = self.store.query(
                "SELECT dedup_key, argMin((_topic, _partition, _offset), ingested_at) "
                "FROM idempotency_keys WHERE startsWith(dedup_key, {prefix:String}) "
                "GROUP BY dedup_key",
                {"prefix": REFUSED_PREFIX},
            )
            self._refused = {
                key: Source(topic, int(partition), int(offset))
                for key, (topic, partition, offset) in result.rows
            }
        return self._refused

    def forget(self) -> None:
        """Another worker may have refused messages of the partitions this one gets:
        read the refused keys again at the next :meth:`refused`."""
        self._refused = None

    def drop(self, key: str, source: Source) -> None:
        """Forget that ``source`` took ``key`` (the store refused it after its key was
        taken: the key is left free)."""
        if self._cache.get(key) == source:
            del self._cache[key]

    def remember(self, key: str, source: Source) -> None:
        """Cache a key taken by ``source``."""
        if self._refused is not None and key.startswith(REFUSED_PREFIX):
            self._refused.setdefault(key, source)
        cache = self._cache
        if key in cache:
            cache.move_to_end(key)
        cache[key] = source
        while len(cache) > self.cache_size:
            cache.popitem(last=False)
