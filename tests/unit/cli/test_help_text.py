"""Every command's ``--help`` shows its text whole: the CLI renders help with rich markup,
which takes ``[sql]`` or ``[worker]`` for a style tag and drops it from the page."""

from __future__ import annotations

import re

import click
import typer.main

from turnstream.entrypoints.cli.main import app

# What rich would read as a tag: a bracketed word not escaped with a backslash.
_TAG = re.compile(r"(?<!\\)\[[A-Za-z_][A-Za-z0-9_.{} -]*\]")


def _commands(command: click.Command, path: str) -> list[tuple[str, click.Command]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, f"{path} {name}")
    return found


def test_no_help_text_holds_what_rich_drops_as_a_tag() -> None:
    dropped = []
    for path, command in _commands(typer.main.get_command(app), "turnstream"):
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        dropped += [f"{path}: {m.group(0)}" for text in texts for m in _TAG.finditer(text)]
    assert dropped == []
