"""The start-up checks: one per setting or document, errors naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnstream.config import Settings, load_settings
from turnstream.entrypoints.preflight import (
    CHECKS,
    Check,
    Finding,
    Level,
    check_settings,
    document,
    per_space_document,
)
from turnstream.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _settings(tmp_path: Path, text: str, secret: str = "a-real-secret") -> Settings:
    config = tmp_path / "t.toml"
    config.write_text(text)
    return load_settings(config, environ={"TURNSTREAM_SECRET": secret} if secret else {})


def _errors(settings: Settings) -> dict[str, str]:
    return {f.setting: f.text for f in check_settings(settings).at(Level.error)}


def test_the_examples_configuration_would_start_and_says_what_it_holds(tmp_path: Path) -> None:
    settings = load_settings(EXAMPLES / "turnstream.toml", environ={"TURNSTREAM_SECRET": "s3"})
    report = check_settings(settings)
    assert report.would_start(strict=True), [f.line() for f in report.findings]
    lines = [f.line() for f in report.findings]
    assert (
        "spaces.acme: pt; claims, signals, turns; 0 labels, 0 rules, "
        "tool bindings examples/tool_bindings.json" in lines
    )
    assert "spaces.acme.claims_contract: examples/claims/retail.json: version retail-2026-11" in (
        lines
    )
    assert "identity.secret: set" in lines
    assert "jobs.measurement: not set" in lines
    assert any(line.startswith("jobs: priors '15 3 * * *'") for line in lines)


def test_no_secret_is_an_error_naming_identity_secret(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "[spaces.acme]\n", secret="")
    report = check_settings(settings)
    assert not report.would_start()
    assert _errors(settings)["identity.secret"].startswith("identity.secret is not set")


@pytest.mark.parametrize("secret", ["CHANGE-ME-replace-this", "dev-only-not-a-secret"])
def test_a_placeholder_secret_warns_and_fails_only_strict(tmp_path: Path, secret: str) -> None:
    keyed = '[spaces.acme]\nproducer_keys = ["k-acme-00000000000"]\n'
    report = check_settings(_settings(tmp_path, keyed, secret=secret))
    assert [f.setting for f in report.at(Level.warning)] == ["identity.secret"]
    assert report.would_start() and not report.would_start(strict=True)
    assert all(secret not in f.text for f in report.findings)


def test_no_spaces_is_a_warning(tmp_path: Path) -> None:
    report = check_settings(_settings(tmp_path, ""))
    assert [f.line() for f in report.at(Level.warning)] == [
        "warning: spaces: none configured: every item would be dead-lettered as unknown_space"
    ]


def test_a_label_not_for_a_type_field_is_an_error(tmp_path: Path) -> None:
    text = '[spaces.acme]\nlabels = { "item_variant.color" = "cor", "Color" = "cor" }\n'
    assert _errors(_settings(tmp_path, text)) == {
        "spaces.acme.labels": "'Color': a label is for a type.field (item_variant.color)"
    }


def test_tool_bindings_are_loaded_for_each_space_naming_the_space(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"bindings": []}))
    text = (
        f'[spaces.acme]\ntool_bindings = "{good}"\n'
        f'[spaces.lumen]\ntool_bindings = "{tmp_path / "missing.json"}"\n'
    )
    settings = _settings(tmp_path, text)
    errors = _errors(settings)
    assert list(errors) == ["spaces.lumen.tool_bindings"]
    assert "missing.json" in errors["spaces.lumen.tool_bindings"]
    lines = [f.line() for f in check_settings(settings).findings]
    assert f"spaces.acme.tool_bindings: {good}: 0 tool bindings" in lines


def test_the_measurement_document_is_loaded_as_the_experiments_job_does(tmp_path: Path) -> None:
    bad = tmp_path / "m.toml"
    bad.write_text('[[experiments]]\nid = "x"\n')
    errors = _errors(_settings(tmp_path, f'[spaces.acme]\n[jobs]\nmeasurement = "{bad}"\n'))
    assert list(errors) == ["jobs.measurement"]
    assert errors["jobs.measurement"].startswith(f"invalid measurement document {bad}")


def test_a_cron_or_time_zone_the_scheduler_refuses_is_an_error(tmp_path: Path) -> None:
    errors = _errors(_settings(tmp_path, '[spaces.acme]\n[jobs]\npriors_cron = "61 * * * *"\n'))
    assert list(errors) == ["jobs"] and errors["jobs"].startswith("jobs.priors_cron:")
    errors = _errors(_settings(tmp_path, '[spaces.acme]\n[jobs]\ntimezone = "Mars/Olympus"\n'))
    assert errors["jobs"].startswith("jobs.timezone: unknown time zone")


@pytest.mark.parametrize(
    ("dsn", "error"),
    [
        ("http://u:pw@clickhouse:8123", None),
        ("postgres://db:5432", "give chdb:path"),
        ("chdb::memory:", "cannot be shared"),
    ],
)
def test_the_store_dsn_is_shown_masked_or_refused(
    tmp_path: Path, dsn: str, error: str | None
) -> None:
    settings = _settings(tmp_path, f'[spaces.acme]\n[store]\ndsn = "{dsn}"\n')
    report = check_settings(settings)
    store = [f for f in report.findings if f.setting == "store.dsn"]
    assert len(store) == 1 and "pw" not in store[0].text
    if error is None:
        assert (
            store[0].text == "http://u:***@clickhouse:8123 (ClickHouse server, database turnstream)"
        )
    else:
        assert store[0].level is Level.error and error in store[0].text


@pytest.mark.parametrize(
    ("bootstrap", "shown"),
    [("kafka:9092,kafka2", "kafka:9092, kafka2:9092"), ("kafka:x", None), (" , ", None)],
)
def test_the_broker_is_read_as_the_kafka_client_reads_it(
    tmp_path: Path, bootstrap: str, shown: str | None
) -> None:
    settings = _settings(tmp_path, f'[spaces.acme]\n[broker]\nbootstrap = "{bootstrap}"\n')
    broker = [f for f in check_settings(settings).findings if f.setting == "broker.bootstrap"]
    if shown is None:
        assert broker == [
            Finding("broker.bootstrap", f"{bootstrap!r} is not host[:port],...", Level.error)
        ]
    else:
        assert broker == [Finding("broker.bootstrap", shown)]


def test_a_document_registers_one_check_and_its_errors_name_its_setting(tmp_path: Path) -> None:
    """How another document joins: one line, for a global path or a per-space one."""

    def load(path: str) -> list[str]:
        if "bad" in path:
            raise ConfigError(f"object types {path}: 'sku' is declared twice")
        return ["item", "sku"]

    settings = _settings(tmp_path, "[spaces.acme]\n[spaces.lumen]\n[jobs]\nmeasurement = 'bad'\n")
    checks = (
        document("jobs.measurement", lambda s: s.jobs.measurement, load, lambda d: f"{len(d)}"),
        per_space_document("language", load, lambda d: f"{len(d)} types"),
    )
    findings = check_settings(settings, checks).findings
    assert findings == (
        Finding("jobs.measurement", "object types bad: 'sku' is declared twice", Level.error),
        Finding("spaces.acme.language", "en: 2 types"),
        Finding("spaces.lumen.language", "en: 2 types"),
    )


def test_a_check_that_raises_becomes_an_error_and_the_others_still_run(tmp_path: Path) -> None:
    def broken(settings: Settings) -> list[Finding]:
        raise ConfigError("exposure.keys.acme: no current key")

    settings = _settings(tmp_path, "[spaces.acme]\n")
    report = check_settings(settings, (Check("exposure.keys", broken), *CHECKS))
    assert report.findings[0] == Finding(
        "exposure.keys", "exposure.keys.acme: no current key", Level.error
    )
    assert report.findings[0].line() == "error: exposure.keys.acme: no current key"
    # Every other check ran.
    assert {f.setting for f in report.findings[1:]} == {
        "broker.bootstrap",
        "store.dsn",
        "identity.secret",
        "worker",
        "spaces.acme",
        "jobs",
        "jobs.measurement",
        "broker.security",
        "spaces.acme.producer_keys",
        "api.keys_file",
    }


def test_exposure_keys_are_counted_never_shown(tmp_path: Path) -> None:
    keys = ["first-key-0123456789", "older-key-0123456789"]
    text = f'[spaces.acme]\nfeatures = ["signals"]\nexposure_keys = {json.dumps(keys)}\n'
    report = check_settings(_settings(tmp_path, text))
    lines = [f.line() for f in report.findings]
    assert "spaces.acme.exposure_keys: 2 keys (1 signs, 1 still verifying)" in lines
    assert not [f for f in report.at(Level.warning) if f.setting.endswith("exposure_keys")]
    assert all(key not in line for key in keys for line in lines)


def test_a_space_with_signals_and_no_exposure_key_warns_naming_its_variable(
    tmp_path: Path,
) -> None:
    text = '[spaces.shop-2]\nfeatures = ["signals"]\n[spaces.quiet]\nfeatures = ["turns"]\n'
    report = check_settings(_settings(tmp_path, text))
    warnings = {f.setting: f.text for f in report.at(Level.warning)}
    assert [w for w in warnings if w.endswith("exposure_keys")] == ["spaces.shop-2.exposure_keys"]
    assert "TURNSTREAM_EXPOSURE_KEYS_SHOP_2" in warnings["spaces.shop-2.exposure_keys"]
    assert report.would_start() and not report.would_start(strict=True)


def test_a_key_shared_by_two_spaces_warns(tmp_path: Path) -> None:
    key = json.dumps(["shared-key-0123456789"])
    text = f"[spaces.a]\nexposure_keys = {key}\n[spaces.b]\nexposure_keys = {key}\n"
    warnings = check_settings(_settings(tmp_path, text)).at(Level.warning)
    shared = [f for f in warnings if f.setting.endswith("exposure_keys")]
    assert [(f.setting, "a, b" in f.text) for f in shared] == [("spaces.*.exposure_keys", True)]


def test_the_types_document_is_loaded_and_a_signals_space_without_one_warns(
    tmp_path: Path,
) -> None:
    text = (
        f'[spaces.acme]\nfeatures = ["signals"]\ntypes = "{EXAMPLES / "types.toml"}"\n'
        '[spaces.bare]\nfeatures = ["signals"]\n'
    )
    report = check_settings(_settings(tmp_path, text))
    lines = {f.setting: f for f in report.findings}
    assert "object types" in lines["spaces.acme.types"].text
    assert lines["spaces.acme.types"].level is Level.info
    assert lines["spaces.bare.types"].level is Level.warning


def test_a_broken_types_document_is_an_error_naming_the_space(tmp_path: Path) -> None:
    broken = tmp_path / "types.toml"
    broken.write_text("[types.item]\n")  # a type with no fields
    settings = _settings(tmp_path, f'[spaces.acme]\ntypes = "{broken}"\n')
    errors = [f for f in check_settings(settings).at(Level.error)]
    assert [f.setting for f in errors] == ["spaces.acme.types"]  # said once
    assert str(broken) in errors[0].text


def test_a_binding_naming_an_undeclared_field_is_an_error(tmp_path: Path) -> None:
    bindings = tmp_path / "b.json"
    binding = {"tool": "search", "args": [{"attr": "item_variant.flavour", "param": "f"}]}
    bindings.write_text(json.dumps({"bindings": [binding]}))
    text = f'[spaces.acme]\ntypes = "{EXAMPLES / "types.toml"}"\ntool_bindings = "{bindings}"\n'
    errors = _errors(_settings(tmp_path, text))
    assert "item_variant.flavour" in errors["spaces.acme.tool_bindings"]


def test_a_broken_claims_contract_is_an_error_naming_the_space(tmp_path: Path) -> None:
    contract = tmp_path / "contract.json"
    contract.write_text('{"version": "v1"}')
    settings = _settings(tmp_path, f'[spaces.acme]\nclaims_contract = "{contract}"\n')
    assert "spaces.acme.claims_contract" in _errors(settings)


_WEBHOOK = """
[spaces.acme]
features = ["signals"]

[[spaces.acme.webhooks]]
id = "support-desk"
url = "https://desk.example.com/hooks/turnstream?token=abc"
"""


def test_a_webhook_without_a_secret_stops_the_worker_naming_its_variable(tmp_path: Path) -> None:
    errors = _errors(_settings(tmp_path, _WEBHOOK))
    assert "TURNSTREAM_WEBHOOK_SECRET_ACME_SUPPORT_DESK" in errors["spaces.acme.webhooks.0.secret"]


def test_a_webhook_secret_from_the_environment_is_used_and_never_printed(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(_WEBHOOK + 'secret = "file-secret-0123456789"\n')
    secret = "env-secret-9876543210abcdef"
    environ = {"TURNSTREAM_SECRET": "s", "TURNSTREAM_WEBHOOK_SECRET_ACME_SUPPORT_DESK": secret}
    settings = load_settings(config, environ=environ)
    [hook] = settings.spaces["acme"].webhooks
    assert hook.secret is not None and hook.secret.get_secret_value() == secret
    report = check_settings(settings)
    assert report.would_start()
    text = "\n".join(f.line() for f in report.findings)
    assert "support-desk -> https://desk.example.com" in text and "signed" in text
    assert secret not in text and "file-secret" not in text and "token=abc" not in text


def test_a_plain_http_webhook_warns_and_a_short_secret_is_refused(tmp_path: Path) -> None:
    text = _WEBHOOK.replace("https://desk.example.com", "http://desk.example.com")
    settings = _settings(tmp_path, text + 'secret = "long-enough-secret-123"\n')
    warnings = {f.setting: f.text for f in check_settings(settings).at(Level.warning)}
    assert "unencrypted" in warnings["spaces.acme.webhooks.0.url"]
    with pytest.raises(ConfigError, match="webhook secret has at least 16"):
        _settings(tmp_path, _WEBHOOK + 'secret = "short"\n')
    twice = _WEBHOOK + 'secret = "long-enough-secret-123"\n' + _WEBHOOK.split("\n", 4)[4]
    with pytest.raises(ConfigError, match="each endpoint id may appear once"):
        _settings(tmp_path, twice.replace("[spaces.acme]\n", "", 1))


def test_a_webhook_url_with_a_bad_port_is_an_error(tmp_path: Path) -> None:
    text = _WEBHOOK.replace("desk.example.com", "desk.example.com:http")
    errors = _errors(_settings(tmp_path, text + 'secret = "long-enough-secret-123"\n'))
    assert "not a port" in errors["spaces.acme.webhooks.0.url"]
