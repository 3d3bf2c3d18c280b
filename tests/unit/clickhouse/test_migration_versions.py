"""Migrations are applied by version: two branches taking the same number would skip one."""

from turnstream.adapters.clickhouse.schema import MIGRATIONS


def test_versions_are_unique_and_increasing() -> None:
    versions = [migration.version for migration in MIGRATIONS]
    assert versions == sorted(set(versions)), versions
    assert versions[0] == 1
