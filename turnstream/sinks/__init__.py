"""ClickHouse: the client (embedded chDB or a server), migrations, rows and the idempotent writer."""
