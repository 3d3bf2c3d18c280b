"""``turnstream sql``'s table prints producers' data escaped: a stored control sequence
or bidi override is shown, never obeyed by the terminal; JSON and CSV keep it exact."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnstream.adapters.clickhouse.store import QueryResult
from turnstream.entrypoints.cli import main
from turnstream.entrypoints.cli.main import app
from turnstream.entrypoints.cli.terminal import visible

#: What a hostile producer stores: a window retitle (OSC ... BEL), a screen clear (CSI),
#: a C1 CSI, a bidi override and an isolate, a NUL, a newline; and plain text around them.
HOSTILE = [
    ("\x1b]0;pwned\x07", r"\x1b]0;pwned\x07"),
    ("\x1b[2Jcleared", r"\x1b[2Jcleared"),
    ("\x9b31mred", r"\x9b31mred"),
    ("invoice\u202efdp.exe", r"invoice\u202efdp.exe"),
    ("\u2066iso\u2069", r"\u2066iso\u2069"),
    ("nul\x00del\x7f", r"nul\x00del\x7f"),
    ("two\nlines\ttab", r"two\nlines\ttab"),
]


@pytest.mark.parametrize(("stored", "shown"), HOSTILE)
def test_visible_escapes_each_unsafe_character(stored: str, shown: str) -> None:
    assert visible(stored) == shown


def test_visible_leaves_printable_text_alone() -> None:
    text = "Preço: R$ 199,90 - ação 😀 [bold]x[/] \\x1b"
    assert visible(text) == text
    ascii_text = "plain [bold]x[/] \\x1b"
    assert visible(ascii_text) is ascii_text
    # A no-break space, an emoji sequence joined by a zero-width joiner, three accents.
    assert visible("R$\u00a0100 👩\u200d💻 e\u0301\u0302\u0303") == (
        "R$\u00a0100 👩\u200d💻 e\u0301\u0302\u0303"
    )


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("a\u200bb", "a\\u200bb"),  # zero width space
        ("a\u200db", "a\\u200db"),  # a joiner between letters
        ("\ufeffref", "\\ufeffref"),  # byte-order mark
        ("a\u200fb\u200ec\u061c", "a\\u200fb\\u200ec\\u061c"),  # bidi marks
        ("x\U000e0041", "x\\U000e0041"),  # a tag character
        ("\u3164\u115f", "\\u3164\\u115f"),  # Hangul fillers
        ("a\ue000b\uffff", "a\\ue000b\\uffff"),  # private use, noncharacter
        ("one\u2028two\u2029", "one\\u2028two\\u2029"),  # line, paragraph separators
        ("e" + "\u0301" * 6, "e" + "\u0301" * 4 + "\\u0301" * 2),  # a stack of accents
        ("\u180e", "\\u180e"),  # Mongolian vowel separator
    ],
)
def test_invisible_characters_are_escaped(stored: str, shown: str) -> None:
    assert visible(stored) == shown


def test_every_control_is_escaped() -> None:
    for cp in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F),
               *range(0x2066, 0x206A)):  # fmt: skip
        assert visible(chr(cp)) in (f"\\x{cp:02x}", f"\\u{cp:04x}", repr(chr(cp))[1:-1])


def _sql(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *options: str) -> str:
    rows: list[tuple[Any, ...]] = [(stored, n) for n, (stored, _) in enumerate(HOSTILE)]
    result = QueryResult(["ref\x1b[8m", "n"], ["String", "UInt8"], rows)
    monkeypatch.setattr(main, "read_query", lambda settings, query: result)
    dsn = f"chdb://{tmp_path}/store"
    out = CliRunner().invoke(app, ["sql", "SELECT ref, n FROM t", "--dsn", dsn, *options])
    assert out.exit_code == 0, out.output
    return out.output


def test_the_table_shows_control_sequences_escaped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    output = _sql(monkeypatch, tmp_path)
    for bad in ("\x1b", "\x07", "\x9b", "\x00", "\x7f", "\u202e", "\u2066", "\u2069"):
        assert bad not in output, repr(bad)
    flat = "".join(output.split())  # the table may wrap a cell over lines
    for _, shown in HOSTILE:
        assert "".join(shown.split()) in flat, shown
    assert r"ref\x1b[8m" in flat  # a column's name too


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_json_and_csv_keep_the_data_exact(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
) -> None:
    output = _sql(monkeypatch, tmp_path, "--format", fmt)
    if fmt == "json":
        stored = [row["ref\x1b[8m"] for row in json.loads(output)]
        assert "\x1b" not in output  # JSON's own escapes: inert on a terminal too
    else:
        stored = [row[0] for row in list(csv.reader(io.StringIO(output)))[1:]]
    assert stored == [s for s, _ in HOSTILE]
