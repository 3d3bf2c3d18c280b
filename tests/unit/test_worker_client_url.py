"""The CLI asks the configured worker: a worker listening on every interface (as in the
compose stack, ``web_host = "0.0.0.0"``) is asked on loopback, not at 0.0.0.0."""

from __future__ import annotations

import pytest

from turnstream.adapters.worker_client import WorkerClient
from turnstream.config import Settings, WorkerSettings


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("0.0.0.0", "http://127.0.0.1:6066"),
        ("::", "http://[::1]:6066"),
        ("127.0.0.1", "http://127.0.0.1:6066"),
        ("worker", "http://worker:6066"),
    ],
)
def test_a_wildcard_host_is_asked_on_loopback(host: str, url: str) -> None:
    settings = Settings(worker=WorkerSettings(web_host=host, web_port=6066))
    assert WorkerClient.configured(settings).url == url
