"""`config check` refuses each broken configuration issue 38 names, naming the field:
a DSN whose port is not a number, a measurement document naming a space not configured,
an exposure-key or webhook-secret variable for no configured space or endpoint, an API
key of a space no longer configured. The shipped examples still pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnstream.adapters.api_key_file import KeyFile
from turnstream.config import load_settings
from turnstream.core.access import ALL_SPACES, Role
from turnstream.entrypoints.cli.main import app
from turnstream.entrypoints.preflight import Level, check_settings
from turnstream.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _config(tmp_path: Path, text: str) -> Path:
    config = tmp_path / "t.toml"
    config.write_text('[identity]\nsecret = "a-real-secret"\n' + text)
    return config


def _errors(config: Path, environ: dict[str, str] | None = None) -> dict[str, list[str]]:
    report = check_settings(load_settings(config, environ=environ or {}))
    errors: dict[str, list[str]] = {}
    for finding in report.at(Level.error):
        errors.setdefault(finding.setting, []).append(finding.text)
    return errors


def _check(config: Path, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["config", "check", "--config", str(config)], env=env)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CONFIG", "SECRET", "SECRET_FILE", "DSN", "BROKER", "STORE_PASSWORD_FILE"):
        monkeypatch.delenv(f"TURNSTREAM_{name}", raising=False)
    monkeypatch.chdir(tmp_path)


# -- a DSN with a port that is not a number ------------------------------------------------


@pytest.mark.parametrize(
    ("dsn", "port"),
    [
        ("http://clickhouse:81x3", "81x3"),
        ("http://u:pw@clickhouse:http", "http"),
        ("https://clickhouse:99999", "99999"),
        ("http://clickhouse:-1", "-1"),
    ],
)
def test_a_dsn_whose_port_is_not_a_number_is_refused_naming_store_dsn(
    tmp_path: Path, dsn: str, port: str
) -> None:
    config = _config(tmp_path, f'[spaces.acme]\n[store]\ndsn = "{dsn}"\n')
    [text] = _errors(config)["store.dsn"]
    assert f"the port {port!r} is not a number" in text
    assert "pw" not in text  # the password stays masked
    result = _check(config)
    assert result.exit_code == 1 and "error: store.dsn: " in result.output


@pytest.mark.parametrize("dsn", ["http://clickhouse:8123", "http://clickhouse", "https://ch:443/"])
def test_a_dsn_with_a_numeric_port_or_none_passes(tmp_path: Path, dsn: str) -> None:
    config = _config(tmp_path, f'[spaces.acme]\n[store]\ndsn = "{dsn}"\n')
    assert "store.dsn" not in _errors(config)


# -- the store's password from a file (compose's Docker secret) ----------------------------


def test_the_store_password_file_goes_into_the_dsn_quoted_and_masked(tmp_path: Path) -> None:
    secret = tmp_path / "clickhouse_password"
    secret.write_text("p@ss:w/rd#1\n")
    config = _config(tmp_path, '[spaces.acme]\n[store]\ndsn = "http://ts@ch:8123"\n')
    env = {"TURNSTREAM_STORE_PASSWORD_FILE": str(secret)}
    settings = load_settings(config, environ=env)
    assert settings.store.dsn == "http://ts:p%40ss%3Aw%2Frd%231@ch:8123"
    report = check_settings(settings)
    [store] = [f for f in report.findings if f.setting == "store.dsn"]
    assert store.text.startswith("http://ts:***@ch:8123") and store.level is Level.info
    assert "p@ss" not in store.text and "p%40ss" not in store.text


@pytest.mark.parametrize(
    ("dsn", "content", "message"),
    [
        ("http://ts:inline@ch:8123", "from-file", "a password in the DSN and in"),
        ("chdb:var/store", "from-file", "is for a server's DSN"),
        ("http://ts@ch:8123", "  \n", "which is empty"),
    ],
)
def test_a_store_password_file_that_cannot_apply_is_refused(
    tmp_path: Path, dsn: str, content: str, message: str
) -> None:
    secret = tmp_path / "pw"
    secret.write_text(content)
    config = _config(tmp_path, f'[store]\ndsn = "{dsn}"\n')
    with pytest.raises(ConfigError, match=r"store\.dsn: ") as raised:
        load_settings(config, environ={"TURNSTREAM_STORE_PASSWORD_FILE": str(secret)})
    assert message in str(raised.value) and "from-file" not in str(raised.value)
    missing = {"TURNSTREAM_STORE_PASSWORD_FILE": str(tmp_path / "nope")}
    with pytest.raises(ConfigError, match="cannot be read"):
        load_settings(_config(tmp_path, '[store]\ndsn = "http://ch:8123"\n'), environ=missing)


# -- a measurement document naming a space that is not configured --------------------------

_EXPERIMENT = """
[[experiments]]
id = "{id}"
space_id = "{space}"
starts_at = "2026-01-01T00:00:00Z"
arms = [{{ name = "control", allocation = 1 }},
        {{ name = "no_soft_signals", drops = ["soft_signals"], allocation = 1 }}]
"""


def test_an_experiment_of_a_space_not_configured_is_refused_naming_its_field(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "measurement.toml"
    doc.write_text(
        _EXPERIMENT.format(id="known", space="acme")
        + _EXPERIMENT.format(id="ghost", space="globex")
    )
    config = _config(tmp_path, f'[spaces.acme]\n[jobs]\nmeasurement = "{doc}"\n')
    [text] = _errors(config)["jobs.measurement"]
    assert "experiments.1.space_id" in text and "'ghost'" in text and "'globex'" in text
    assert "configured: acme" in text
    result = _check(config)
    assert result.exit_code == 1 and "the worker would not start: 1 error" in result.output
    # The same document with globex configured passes.
    config.write_text(config.read_text() + "[spaces.globex]\n")
    assert "jobs.measurement" not in _errors(config)


def test_the_example_measurement_document_passes_with_the_example_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    errors = _errors(EXAMPLES / "turnstream.toml", {"TURNSTREAM_SECRET": "a-real-one"})
    assert errors == {}


# -- environment variables for a space or endpoint that is not configured ------------------


@pytest.mark.parametrize(
    "variable",
    [
        "TURNSTREAM_EXPOSURE_KEYS_GLOBEX",
        "TURNSTREAM_EXPOSURE_KEYS_ACM",  # a typo of ACME
        "TURNSTREAM_WEBHOOK_SECRET_ACME_NO_SUCH_DESK",
        "TURNSTREAM_WEBHOOK_SECRET_GLOBEX_SUPPORT_DESK",
    ],
)
def test_a_variable_for_no_configured_space_or_endpoint_is_refused_naming_it(
    tmp_path: Path, variable: str
) -> None:
    config = _config(
        tmp_path,
        '[spaces.acme]\n[[spaces.acme.webhooks]]\nid = "support-desk"\n'
        'url = "https://desk.example.com/hook"\nsecret = "long-enough-secret-123"\n',
    )
    env = {variable: "a-key-of-sixteen-or-more-chars"}
    [text] = _errors(config, env)[variable]
    assert "names no configured space or webhook endpoint" in text and "configured: acme" in text
    assert "sixteen" not in text  # never the value
    result = _check(config, env)
    assert result.exit_code == 1 and f"error: {variable}: set, but" in result.output


def test_variables_of_configured_spaces_and_empty_ones_pass(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        '[spaces.acme]\n[spaces.two-words]\n[[spaces.acme.webhooks]]\nid = "support-desk"\n'
        'url = "https://desk.example.com/hook"\n',
    )
    env = {
        "TURNSTREAM_EXPOSURE_KEYS_ACME": "a-key-of-sixteen-or-more-chars",
        "TURNSTREAM_EXPOSURE_KEYS_TWO_WORDS": "another-key-of-sixteen-chars",
        "TURNSTREAM_WEBHOOK_SECRET_ACME_SUPPORT_DESK": "long-enough-secret-123",
        "TURNSTREAM_EXPOSURE_KEYS_GLOBEX": "",  # compose passes unset ones empty
    }
    assert _errors(config, env) == {}


# -- an API key of a space no longer configured -------------------------------------------


def test_an_active_key_of_a_space_no_longer_configured_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys.json"
    file = KeyFile(keys)
    _, kept = file.create("acme", frozenset({Role.agent}))
    file.create(ALL_SPACES, frozenset({Role.operator}))
    _, gone = file.create("globex", frozenset({Role.agent}))
    _, revoked = file.create("initech", frozenset({Role.agent}))
    file.revoke(revoked.id)
    config = _config(tmp_path, f'[spaces.acme]\n[api]\nkeys_file = "{keys}"\n')
    [text] = _errors(config)["api.keys_file"]
    assert f"key {gone.id} is for space 'globex', which is not configured" in text
    assert f"turnstream keys revoke {gone.id}" in text
    assert kept.id not in text and revoked.id not in text
    result = _check(config)
    assert result.exit_code == 1 and "error: api.keys_file: " in result.output
    file.revoke(gone.id)  # revoked: it reaches nothing, and the check passes
    assert "api.keys_file" not in _errors(config)


def test_a_damaged_keys_file_is_refused_naming_the_setting(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"id": "x"}]}))
    config = _config(tmp_path, f'[spaces.acme]\n[api]\nkeys_file = "{keys}"\n')
    [text] = _errors(config)["api.keys_file"]
    assert "is damaged" in text


# -- webhooks to addresses that are not public -------------------------------------------


def _hook(tmp_path: Path, host: str, allow: str = "") -> Path:
    return _config(
        tmp_path,
        f'[spaces.acme]\n[[spaces.acme.webhooks]]\nid = "desk"\nurl = "https://{host}/hook"\n'
        f'secret = "long-enough-secret-123"\n{allow}',
    )


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "2852039166",  # the same, in decimal
        "127.0.0.1:8443",
        "0x7f000001",
        "0177.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "10.0.0.8",
        "192.168.0.10",
        "localhost",
        "metadata.google.internal",
        "desk.example.com@169.254.169.254",  # the host is after the @
        "①②⑦.0.0.1",  # IDNA maps it to 127.0.0.1, as the HTTP client does
        "127。0。0。1",
        "①⑥⑨.②⑤④.①⑥⑨.②⑤④",
        "127.0.0.1\\\\@desk.example.com",  # urllib reads desk.example.com; aiohttp, no URL
    ],
)
def test_a_webhook_to_a_host_that_is_not_public_is_refused_naming_its_url(
    tmp_path: Path, host: str
) -> None:
    [text] = _errors(_hook(tmp_path, host))["spaces.acme.webhooks.0.url"]
    assert text.startswith("endpoint 'desk': ") and "webhooks go to public addresses" in text
    assert "allow_internal = true" in text


@pytest.mark.parametrize("host", ["127.0.0.1:8443", "10.0.0.8", "[fd12::1]", "localhost"])
def test_an_endpoint_allowed_the_internal_network_passes(tmp_path: Path, host: str) -> None:
    assert _errors(_hook(tmp_path, host, "allow_internal = true\n")) == {}


@pytest.mark.parametrize("host", ["169.254.169.254", "0xa9fea9fe", "metadata.google.internal"])
def test_a_metadata_service_is_refused_even_to_an_internal_endpoint(
    tmp_path: Path, host: str
) -> None:
    [text] = _errors(_hook(tmp_path, host, "allow_internal = true\n"))["spaces.acme.webhooks.0.url"]
    assert "metadata" in text


def test_a_public_webhook_host_passes(tmp_path: Path) -> None:
    assert _errors(_hook(tmp_path, "desk.example.com")) == {}


def test_the_keys_file_is_shown_with_its_active_keys_and_whether_an_operator_has_one(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys.json"
    config = _config(tmp_path, f'[spaces.acme]\n[api]\nkeys_file = "{keys}"\n')
    result = _check(config)
    # A fresh deployment: no key yet, so every route but /v1/status refuses. Said, not failed.
    assert result.exit_code == 0, result.output
    assert f"api.keys_file: {keys}: no active key" in result.output
    assert "turnstream keys create --space '*' --role analyst,operator" in result.output
    file = KeyFile(keys)
    file.create("acme", frozenset({Role.agent}))
    _, revoked = file.create(ALL_SPACES, frozenset({Role.operator}))
    file.revoke(revoked.id)
    assert "1 active key, none an operator's" in _check(config).output
    file.create(ALL_SPACES, frozenset({Role.operator, Role.analyst}))
    output = _check(config).output
    assert "2 active keys, 1 an operator's" in output and "keys create" not in output
