"""ClickHouse: the client (chDB or a server), migrations, rows and the idempotent writer."""
