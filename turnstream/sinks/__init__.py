"""ClickHouse only: the client (chDB or a server), migrations, the rows and the idempotent
writers (raw tables, derivations), the reads (profiles, priors, review requests,
reports), erasure. Imports no :mod:`turnstream.streams` (an import-linter contract checks
it)."""
