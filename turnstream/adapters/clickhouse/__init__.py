"""ClickHouse only: the client (chDB or a server), migrations, the idempotent writers (raw
tables, derivations), idempotency keys, the reads (profiles, priors, review requests,
reports), erasure. Imports no :mod:`turnstream.adapters.kafka` (an import-linter contract checks
it)."""
