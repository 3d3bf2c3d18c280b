"""``turnstream keys create | list | revoke``: the HTTP API's keys, in the keys file the
worker reads at each request (no restart: a revoked key is refused from the next one)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turnstream.adapters.api_key_file import KeyFile
from turnstream.config import Settings
from turnstream.core.access import ALL_SPACES, Role
from turnstream.entrypoints.cli.common import (
    ConfigOpt,
    DsnOpt,
    Format,
    FormatOpt,
    guarded,
    out,
    print_rows,
    settings_from,
)
from turnstream.errors import ConfigError

__all__ = ["bootstrap_operator_key", "create_key", "keys_app"]

keys_app = typer.Typer(
    help="API keys: each for one space (or '*', every space) and some roles.",
    no_args_is_help=True,
)


def _roles(values: list[str]) -> frozenset[Role]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    try:
        return frozenset(Role(n) for n in names)
    except ValueError:
        known = ", ".join(r.value for r in Role)
        raise ConfigError(f"--role takes some of {known}") from None


def create_key(settings: Settings, space: str, roles: frozenset[Role], note: str = "") -> str:
    """Create a key in the configured keys file; the key (shown once)."""
    if space != ALL_SPACES and settings.space(space) is None:
        raise ConfigError(f"space {space!r} is not in the configuration ('*': every space)")
    if not roles:
        raise ConfigError("a key needs at least one --role")
    key, _ = KeyFile(settings.keys_path()).create(space, roles, note)
    return key


@keys_app.command("create")
def create(
    space: Annotated[str, typer.Option(help="The key's space, or '*' for every space.")],
    role: Annotated[
        list[str],
        typer.Option(help="security, integration, agent, analyst, operator (repeat, or a,b)."),
    ],
    note: Annotated[str, typer.Option(help="Who holds it, for the list.")] = "",
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
) -> None:
    """Create a key and print it once (only its SHA-256 is kept)."""
    settings = settings_from(config, dsn)
    key = guarded(lambda: create_key(settings, space, _roles(role), note))
    typer.echo(key)


def bootstrap_operator_key(settings: Settings, key_file: Path) -> str:
    """Add the operator key held in ``key_file`` to the configured keys file unless it
    has an operator key already; a line saying what happened (never the key). An empty
    ``key_file`` asks for nothing (the repository ships it empty)."""
    try:
        key = key_file.read_text().strip()
    except OSError as exc:
        raise ConfigError(
            f"the operator key file {key_file} cannot be read ({exc.strerror})"
        ) from None
    keys = KeyFile(settings.keys_path())
    if not key:
        return (
            f"no operator key: {key_file} is empty (keys in {keys.path}: {len(keys.list())}); "
            "put one there to have it added"
        )
    try:
        done, record = keys.bootstrap_operator(key)
    except ConfigError as exc:
        raise ConfigError(f"{key_file}: {exc}") from None
    return {
        "added": f"added the operator key {record.id} to {keys.path}",
        "present": f"the operator key {record.id} is already in {keys.path}: nothing to do",
        "revoked": f"the operator key {record.id} was revoked: it stays revoked, nothing added",
        "other": f"{keys.path} has an operator key ({record.id}): nothing added",
    }[done]


@keys_app.command("bootstrap")
def bootstrap(
    key_file: Annotated[
        Path,
        typer.Option(
            envvar="TURNSTREAM_OPERATOR_KEY_FILE",
            help="The file holding the operator's first key (a compose secret).",
        ),
    ],
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
) -> None:
    """Add an operator key (every space; operator, analyst) from a file, once: nothing
    when the keys file has an operator key or this key already (restarts change nothing)."""
    settings = settings_from(config, dsn)
    typer.echo(guarded(lambda: bootstrap_operator_key(settings, key_file)))


@keys_app.command("list")
def list_keys(config: ConfigOpt = None, dsn: DsnOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Every key: id, space, roles, created, revoked (never the key)."""
    settings = settings_from(config, dsn)
    keys = guarded(lambda: KeyFile(settings.keys_path()).list())
    rows = [
        (k.id, k.space, ",".join(sorted(r.value for r in k.roles)), k.created_at,
         k.revoked_at or "", k.note)
        for k in keys
    ]  # fmt: skip
    print_rows(["id", "space", "roles", "created_at", "revoked_at", "note"], rows, fmt)


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (turnstream keys list).")],
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
) -> None:
    """Revoke a key: the running worker refuses it from its next request on."""
    settings = settings_from(config, dsn)
    key = guarded(lambda: KeyFile(settings.keys_path()).revoke(key_id))
    out.print(f"revoked {key.id} ({key.space}: {', '.join(sorted(r.value for r in key.roles))})")
