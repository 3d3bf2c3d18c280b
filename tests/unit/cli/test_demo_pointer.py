"""After ``turnstream demo --keep-running``, the store commands run from the same
directory find the demo's config and store without flags (issue #17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnstream.entrypoints.cli.common import DEMO_POINTER, settings_from


@pytest.fixture
def demo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TURNSTREAM_CONFIG", raising=False)
    monkeypatch.delenv("TURNSTREAM_DSN", raising=False)
    config = tmp_path / "demo.toml"
    config.write_text('[spaces.acme]\nlanguage = "pt"\n')
    DEMO_POINTER.parent.mkdir(parents=True)
    DEMO_POINTER.write_text(json.dumps({"config": str(config), "dsn": "chdb:///tmp/demo-st"}))
    return tmp_path


def test_no_flags_reach_the_demos_store(demo_dir: Path) -> None:
    settings = settings_from(None)
    assert settings.store.dsn == "chdb:///tmp/demo-st"
    assert settings.space("acme") is not None


def test_any_configuration_given_wins_over_the_demo(demo_dir: Path) -> None:
    assert settings_from(None, dsn="chdb:///elsewhere").store.dsn == "chdb:///elsewhere"
    (demo_dir / "turnstream.toml").write_text('[store]\ndsn = "chdb:///mine"\n')
    assert settings_from(None).store.dsn == "chdb:///mine"


def test_without_a_running_demo_the_defaults(demo_dir: Path) -> None:
    DEMO_POINTER.unlink()
    assert settings_from(None).store.dsn == "chdb://var/store"
