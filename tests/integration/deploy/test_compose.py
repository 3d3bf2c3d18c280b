"""docker-compose.yml starts as written: each service built from this repository passes
`turnstream config check` with its environment, mounts and secrets, and runs a real
turnstream command. The same harness fails on the compose file before issue #19."""

from __future__ import annotations

import dataclasses
import http.server
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from tests.fixtures.compose import ContainerView, interpolate, read_compose, services_built_here
from turnstream.adapters.api_key_file import KeyFile
from turnstream.config import load_settings
from turnstream.core.access import Role, authenticate, hash_key
from turnstream.entrypoints.cli.main import app

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"
BEFORE = ROOT / "tests" / "fixtures" / "compose"
PLACEHOLDER = ROOT / "deploy" / "secrets" / "turnstream_secret"
STORE_PASSWORD = ROOT / "deploy" / "secrets" / "clickhouse_password"

SERVICES = {view.name: view for view in services_built_here(COMPOSE)}


def _check(view: ContainerView, root: Path, *options: str) -> subprocess.CompletedProcess:
    return view.run(["turnstream", "config", "check", *options], root)


def test_the_keys_step_the_worker_and_the_scheduler_are_built_here() -> None:
    assert set(SERVICES) == {"keys", "worker", "scheduler"}


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_each_service_passes_config_check_as_the_container_sees_it(
    name: str, tmp_path: Path
) -> None:
    result = _check(SERVICES[name], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the worker would start" in result.stdout
    # It read the mounted file and the documents it names, from the image's /app.
    assert "spaces.acme: pt;" in result.stdout
    assert "jobs.measurement: examples/measurement.toml: 1 experiment" in result.stdout
    if name == "keys":  # it never opens the store: no password
        assert "store.dsn: http://clickhouse:8123" in result.stdout
    else:  # the store's password comes from the secret clickhouse_password, masked
        assert "store.dsn: http://turnstream:***@clickhouse:8123 (ClickHouse" in result.stdout
        assert "warning: store.dsn: the password is a placeholder" in result.stdout
    # The shipped secret passes, loudly; it is never printed.
    assert "warning: identity.secret: is a placeholder" in result.stdout
    assert "warning: spaces.acme.exposure_keys: none" in result.stdout
    for placeholder in (PLACEHOLDER, STORE_PASSWORD):
        assert placeholder.read_text().strip() not in result.stdout + result.stderr


def test_strict_refuses_the_placeholder_secret(tmp_path: Path) -> None:
    result = _check(SERVICES["worker"], tmp_path, "--strict")
    assert result.returncode == 1
    assert "warning: identity.secret" in result.stdout
    assert "warning: spaces.acme.exposure_keys" in result.stdout
    assert "warning: store.dsn: the password is a placeholder" in result.stdout
    # No producer key set where compose runs: the space is open, refused by --strict.
    assert "warning: spaces.acme.producer_keys: none: the space is OPEN" in result.stdout
    assert "the worker would not start: 4 warnings and --strict" in result.stdout


def test_a_secret_from_the_environment_beats_the_secret_file(tmp_path: Path) -> None:
    # `TURNSTREAM_SECRET=... docker compose up`: compose interpolates it into the service.
    keys = "acme-key-from-the-shell-1,acme-key-from-the-shell-0"
    env = {
        "TURNSTREAM_SECRET": "a-real-one-from-the-shell",
        "TURNSTREAM_EXPOSURE_KEYS_ACME": keys,
        "TURNSTREAM_PRODUCER_KEYS_ACME": "acme-producer-key-from-the-shell",
    }
    view = {v.name: v for v in services_built_here(COMPOSE, env=env)}["worker"]
    password = tmp_path / "clickhouse_password"
    password.write_text("a-real-store-password\n")  # the operator's own, in the secret's file
    links = {**view.links, PurePosixPath("/run/secrets/clickhouse_password"): password}
    result = _check(dataclasses.replace(view, links=links), tmp_path / "root", "--strict")
    assert result.returncode == 0, result.stdout
    assert "identity.secret: set" in result.stdout
    assert "a-real-store-password" not in result.stdout
    assert "spaces.acme.exposure_keys: 2 keys (1 signs, 1 still verifying)" in result.stdout
    assert (
        "a-real-one-from-the-shell" not in result.stdout and "from-the-shell-1" not in result.stdout
    )


@pytest.mark.parametrize(
    "dockerfile", [BEFORE / "Dockerfile.before-issue-19", ROOT / "Dockerfile"], ids=["old", "new"]
)
def test_the_compose_file_before_issue_19_fails_naming_identity_secret(
    dockerfile: Path, tmp_path: Path
) -> None:
    views = services_built_here(
        BEFORE / "docker-compose.before-issue-19.yml", project=ROOT, dockerfile=dockerfile
    )
    assert {v.name for v in views} == {"worker", "scheduler"}
    for view in views:
        result = _check(view, tmp_path / view.name)
        assert result.returncode == 1, result.stdout
        assert "error: identity.secret is not set" in result.stdout
        assert "the worker would not start" in result.stdout


def test_before_issue_19_the_image_had_no_configuration_so_no_spaces(tmp_path: Path) -> None:
    view = services_built_here(
        BEFORE / "docker-compose.before-issue-19.yml",
        project=ROOT,
        dockerfile=BEFORE / "Dockerfile.before-issue-19",
    )[0]
    result = _check(view, tmp_path)
    assert "configuration file: none" in result.stdout
    assert "warning: spaces: none configured" in result.stdout


def _subcommand(argv: list[str]) -> list[str]:
    """The turnstream command ``argv`` runs (its path), its options parsed; LookupError
    when turnstream has no such command or option."""
    if argv[0] != "turnstream":
        raise LookupError(f"not a turnstream command: {argv[0]}")
    command = typer.main.get_command(app)
    args, path = list(argv[1:]), ["turnstream"]
    while isinstance(command, TyperGroup) and args and not args[0].startswith("-"):
        name = args.pop(0)
        sub = command.get_command(typer.Context(command), name)
        if sub is None:
            raise LookupError(f"{' '.join(path)} has no command {name!r}")
        path.append(name)
        command = sub
    if isinstance(command, TyperGroup):
        raise LookupError(f"{' '.join(path)} is a group of commands, not one")
    try:
        command.make_context(" ".join(path), args)
    except Exception as exc:  # typer's own copy of click's UsageError: not importable
        raise LookupError(f"{' '.join(path)}: {exc}") from exc
    return path


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_each_service_command_is_a_turnstream_subcommand(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the service's environment: options may come from it (keys bootstrap's file).
    for variable, value in SERVICES[name].environment.items():
        monkeypatch.setenv(variable, value)
    expected = ["turnstream", "keys", "bootstrap"] if name == "keys" else ["turnstream", name]
    assert _subcommand(SERVICES[name].command) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["turnstream", "wroker"],
        ["turnstream", "priors"],
        ["turnstream", "worker", "--no-such-option"],
        ["faust", "worker"],
    ],
)
def test_the_command_check_refuses_what_turnstream_would_not_run(argv: list[str]) -> None:
    with pytest.raises(LookupError):
        _subcommand(argv)
    if argv[0] == "turnstream":  # and turnstream itself refuses it too (its app, in this
        # process: a start of python -m turnstream is 2-8 s)
        assert CliRunner().invoke(app, argv[1:]).exit_code != 0


def test_the_configuration_is_mounted_read_only_and_the_scheduler_runs_once() -> None:
    for view in SERVICES.values():
        assert (
            "./deploy/turnstream.toml:/etc/turnstream/turnstream.toml:ro"
            in (view.service["volumes"])
        )
        assert view.service["secrets"][0] == "turnstream_secret"
    assert SERVICES["keys"].service["secrets"] == ["turnstream_secret", "turnstream_operator_key"]
    assert SERVICES["scheduler"].service["deploy"]["replicas"] == 1
    assert "healthcheck" not in SERVICES["scheduler"].service


OPERATOR_KEY = PurePosixPath("/run/secrets/turnstream_operator_key")
OPERATOR_KEY_FILE = ROOT / "deploy" / "secrets" / "turnstream_operator_key"


def _keys_file(view: ContainerView, scratch: Path) -> PurePosixPath:
    """Where the service's configuration puts the API keys file, inside the container."""
    workdir, env = view.materialize(scratch)
    path = workdir / load_settings(None, environ=env).keys_path()
    return PurePosixPath("/") / path.relative_to(scratch)


def test_the_keys_step_runs_once_before_the_worker_on_the_workers_keys_volume(
    tmp_path: Path,
) -> None:
    keys, worker = SERVICES["keys"], SERVICES["worker"]
    compose = read_compose(COMPOSE)
    assert keys.service["restart"] == "no"  # one-shot: it exits, and stays exited
    assert keys.service["depends_on"] == {}  # it needs no broker or store
    assert worker.service["depends_on"]["keys"] == {"condition": "service_completed_successfully"}
    assert "keys" not in SERVICES["scheduler"].service["depends_on"]
    assert compose["secrets"]["turnstream_operator_key"] == {
        "file": "./deploy/secrets/turnstream_operator_key"
    }
    # Both see the keys file at the same place, on the same named volume.
    inside = _keys_file(worker, tmp_path / "worker")
    assert _keys_file(keys, tmp_path / "keys") == inside
    for view in (keys, worker):
        mounted = [v for v in view.service["volumes"] if v.endswith(f":{inside.parent}")]
        assert mounted == [f"api-keys:{inside.parent}"], view.service["volumes"]
    assert "api-keys" in compose["volumes"]


def test_the_keys_step_as_shipped_adds_nothing(tmp_path: Path) -> None:
    assert OPERATOR_KEY_FILE.read_text() == ""  # no known key ships with the repository
    view = SERVICES["keys"]
    result = view.run(view.command, tmp_path / "run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no operator key: " in result.stdout and "is empty" in result.stdout
    inside = _keys_file(view, tmp_path / "scratch")
    assert KeyFile(tmp_path / "run" / inside.relative_to("/")).list() == []


def _with_operator_key(view: ContainerView, secret: Path) -> ContainerView:
    return dataclasses.replace(view, links={**view.links, OPERATOR_KEY: secret})


def _restart(view: ContainerView, runs: Path, volume: PurePosixPath) -> list:
    """Run the service twice, the second time on the first one's volume (a restart)."""
    first = view.run(view.command, runs / "first")
    kept = runs / "second" / volume.relative_to("/")
    shutil.copytree(runs / "first" / volume.relative_to("/"), kept)
    return [first, view.run(view.command, runs / "second")]


def test_the_keys_step_adds_the_operators_key_once_hashed(tmp_path: Path) -> None:
    key = "tsk_5e1f00d0beef_" + "Qx-_9" * 8 + "abc"
    secret = tmp_path / "operator_key"
    secret.write_text(key + "\n")  # as `printf ... > file` or an editor leaves it
    view = _with_operator_key(SERVICES["keys"], secret)
    inside = _keys_file(view, tmp_path / "scratch")
    first, second = _restart(view, tmp_path, inside.parent)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.strip().startswith("added the operator key 5e1f00d0beef to ")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "5e1f00d0beef is already in" in second.stdout and "nothing to do" in second.stdout
    path = tmp_path / "second" / inside.relative_to("/")
    text = path.read_text()
    assert key not in text and hash_key(key) in text
    (record,) = KeyFile(path).list()
    assert record.space == "*" and Role.operator in record.roles and record.active
    assert authenticate(f"Bearer {key}", KeyFile(path).current()) == record
    for result in (first, second):
        assert key not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("tsk_5e1f00d0beef_short", "60 characters); this one has 22"),
        ("5e1f00d0beef_" + "Q" * 47, "a key starts with 'tsk_'"),
        ("tsk_5E1F00D0BEEF_" + "Q" * 43, "another character in its id or secret"),
    ],
)
def test_the_keys_step_stops_the_stack_on_a_malformed_key(
    tmp_path: Path, content: str, problem: str
) -> None:
    secret = tmp_path / "operator_key"
    secret.write_text(content)
    view = _with_operator_key(SERVICES["keys"], secret)
    result = view.run(view.command, tmp_path / "run")
    assert result.returncode == 2  # the worker waits for this step to succeed
    said = " ".join((result.stdout + result.stderr).split())  # rich wraps long lines
    assert "turnstream_operator_key: the operator key is malformed" in said
    assert problem in said
    assert content not in said


class _Status(http.server.BaseHTTPRequestHandler):
    code = 200

    def do_GET(self) -> None:
        self.send_response(self.code if self.path == "/v1/status" else 404)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def status_server() -> Iterator[http.server.HTTPServer]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Status)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_worker_healthcheck_asks_v1_status_on_the_configured_port(
    tmp_path: Path, status_server: http.server.HTTPServer
) -> None:
    worker = SERVICES["worker"]
    kind, program, flag, snippet = worker.service["healthcheck"]["test"]
    assert (kind, program, flag) == ("CMD", "python", "-c")  # the image has python, no curl
    url = re.search(r"http://(127\.0\.0\.1|localhost):(\d+)(/[^'\"]*)", snippet)
    assert url is not None, snippet
    _, env = worker.materialize(tmp_path)
    settings = load_settings(None, environ=env)
    assert url[3] == "/v1/status"
    assert int(url[2]) == settings.worker.web_port
    assert settings.worker.web_host in ("127.0.0.1", "0.0.0.0")

    def probe(port: int) -> int:
        here = snippet.replace(f":{url[2]}/", f":{port}/")
        return subprocess.run([sys.executable, "-c", here], capture_output=True).returncode

    port = status_server.server_address[1]
    assert probe(port) == 0
    _Status.code = 503  # a worker that answers with an error is not healthy
    try:
        assert probe(port) != 0
    finally:
        _Status.code = 200
    status_server.shutdown()
    status_server.server_close()
    assert probe(port) != 0  # nothing answers


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("${DSN:-http://clickhouse:8123}", {}, "http://clickhouse:8123"),
        ("${DSN:-http://clickhouse:8123}", {"DSN": ""}, "http://clickhouse:8123"),
        ("${DSN-http://clickhouse:8123}", {"DSN": ""}, ""),
        ("${DSN:-x}", {"DSN": "http://ch:8123"}, "http://ch:8123"),
        ("${A:-${B:-deep}}", {}, "deep"),
        ("${A:+on}|${B:+on}", {"A": "1"}, "on|"),
        ("$$HOME and $USER", {"USER": "me"}, "$HOME and me"),
        ("${UNSET}", {}, ""),
    ],
)
def test_interpolation_reads_variables_as_compose_does(
    text: str, env: dict[str, str], expected: str
) -> None:
    assert interpolate(text, env) == expected


def test_a_required_variable_stops_interpolation() -> None:
    with pytest.raises(ValueError, match="SECRET is required"):
        interpolate("${SECRET:?set it}", {})
