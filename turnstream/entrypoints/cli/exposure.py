"""``turnstream exposure``: signed exposure tokens for producers in other languages and tests."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from turnstream.config import exposure_keys_variable
from turnstream.entrypoints.cli.common import ConfigOpt, err, out, settings_from

__all__ = ["exposure_app"]

exposure_app = typer.Typer(
    help="Exposures: sign a position of an exposure as the SDK does.", no_args_is_help=True
)


@exposure_app.command("token")
def token(
    exposure_id: Annotated[str, typer.Argument(help="The exposure's id (a UUIDv7).")],
    pos: Annotated[int, typer.Argument(help="The position in the whole list, from 1.")],
    space: Annotated[str, typer.Option("--space", help="The space whose key signs.")],
    config: ConfigOpt = None,
) -> None:
    """Print nx1.<exposure_id>.<pos>.<verifier>, signed with the space's first exposure key
    (``spaces.S.exposure_keys`` or TURNSTREAM_EXPOSURE_KEYS_S). Exit 2 when the space has
    no key or the id or position cannot be signed."""
    from turnstream.core.exposure_tokens import mint_token

    settings = settings_from(config)
    conf = settings.space(space)
    keys = conf.token_keys() if conf is not None else ()
    if not keys:
        message = (
            f"space {space!r} has no exposure key: set [spaces.{space}] exposure_keys in the "
            f"configuration or {exposure_keys_variable(space)}"
        )
        err.print(f"[red]error:[/red] {escape(message)}")
        raise typer.Exit(2)
    try:
        out.print(mint_token(space, exposure_id, pos, keys[0]), highlight=False)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
