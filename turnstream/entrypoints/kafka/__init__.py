"""The consumer side: the one batch loop and the two drivers that run on it (ingest,
derivation), the prepare stage, fan-out, the singleton's task. They hand their work to the
use cases; the rules live in :mod:`turnstream.core`, the store in
:mod:`turnstream.adapters.clickhouse`."""
