"""``turnstream contract numbers``: JSON lines in, the same lines with mentions out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app

runner = CliRunner()

LINES = [
    {"id": "a", "text": "De R$ 249,90 por R$ 199,90, em até 3 dias úteis."},
    {"id": "b", "text": "Ships in 3-5 business days for $19.99", "lang": "en"},
    {"id": "c", "text": "Llega el 15 de marzo 🚚 por 45,90 €", "lang": "es", "extra": [1, 2]},
    {"id": "d", "text": "sem números"},
]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def test_each_line_comes_back_in_order_with_its_mentions(tmp_path):
    result = runner.invoke(
        app, ["contract", "numbers", "--lang", "pt", str(_write(tmp_path / "in.jsonl", LINES))]
    )
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", "b", "c", "d"]
    for given, got in zip(LINES, out, strict=True):
        assert {k: v for k, v in got.items() if k != "mentions"} == given  # unchanged
    assert out[0]["mentions"] == [
        {
            "start": 3,
            "end": 12,
            "text": "R$ 249,90",
            "class": "money",
            "value": 249.9,
            "unit": "BRL",
        },
        {
            "start": 17,
            "end": 26,
            "text": "R$ 199,90",
            "class": "money",
            "value": 199.9,
            "unit": "BRL",
        },
        {
            "start": 35,
            "end": 47,
            "text": "3 dias úteis",
            "class": "duration",
            "value": 3,
            "unit": "business_day",
        },
    ]
    # a line's own lang overrides --lang: "$19.99" read in English
    assert out[1]["mentions"][0]["value"] == [3, 5]
    assert out[1]["mentions"][1] == {
        "start": 31,
        "end": 37,
        "text": "$19.99",
        "class": "money",
        "value": 19.99,
        "unit": "$",
    }
    text_c = LINES[2]["text"]
    euros = out[2]["mentions"][1]
    assert text_c[euros["start"] : euros["end"]] == "45,90 €"  # code points, past the emoji
    assert out[2]["mentions"][0]["value"] == "--03-15"
    assert out[3]["mentions"] == []


def test_stdin_and_blank_lines(tmp_path):
    data = '\n{"text": "10% off"}\n\n'
    result = runner.invoke(app, ["contract", "numbers", "--lang", "en", "-"], input=data)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["mentions"][0]["class"] == "percent"


def test_empty_input_is_fine():
    result = runner.invoke(app, ["contract", "numbers", "--lang", "es"], input="")
    assert (result.exit_code, result.stdout) == (0, "")


def test_a_bad_line_names_its_number_and_exits_2(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "R$ 10"}\n{"text": 5}\n{"text": "never read"}\n', "utf-8")
    result = runner.invoke(app, ["contract", "numbers", "--lang", "pt", str(path)])
    assert result.exit_code == 2
    assert len(result.stdout.splitlines()) == 1  # the good line before it went out
    assert "line 2" in result.stderr and "text" in result.stderr


def test_bad_json_bad_lang_and_bad_utf8_are_refused(tmp_path):
    for content, words in [
        (b"{not json\n", "not JSON"),
        (b'{"text": "x", "lang": "fr"}\n', "lang"),
        (b'["text"]\n', "object"),
        (b'{"text": "\xff"}\n', "UTF-8"),
    ]:
        path = tmp_path / "bad.jsonl"
        path.write_bytes(content)
        result = runner.invoke(app, ["contract", "numbers", "--lang", "pt", str(path)])
        assert result.exit_code == 2, content
        assert "line 1" in result.stderr and words in result.stderr, result.stderr


def test_a_missing_file_exits_2(tmp_path):
    result = runner.invoke(app, ["contract", "numbers", "--lang", "pt", str(tmp_path / "no")])
    assert result.exit_code == 2


def test_a_pipe_gets_each_answer_before_the_next_line_is_sent(tmp_path):
    """Streaming: the command answers line by line (no broker, store or config needed)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "contract", "numbers", "--lang", "pt"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"text": "Custa R$ 5,00"}\n')
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())  # would block if the command buffered
    assert first["mentions"][0]["value"] == 5.0
    proc.stdin.write(b'{"text": "20%"}\n')
    proc.stdin.close()
    second = json.loads(proc.stdout.readline())
    assert second["mentions"][0]["unit"] == "%"
    assert proc.wait(timeout=30) == 0
