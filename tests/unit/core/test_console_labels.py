"""The console's labels and page: every language complete, hostile inputs inert."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from turnstream.core import console_labels as labels_module
from turnstream.core.console_labels import CONSOLE_LABELS, console_labels
from turnstream.core.constraints.text import LANGUAGES
from turnstream.core.experiment_warnings import CODES
from turnstream.entrypoints.http.console import console_page


def test_every_language_of_the_block_has_every_label() -> None:
    assert set(CONSOLE_LABELS) == set(LANGUAGES) == {"pt", "en", "es"}
    keys = set(CONSOLE_LABELS["en"])
    for lang, labels in CONSOLE_LABELS.items():
        assert set(labels) == keys, lang
        assert all(value.strip() for value in labels.values()), lang
    # Translated, not the English fallback, for what a person reads first.
    for lang in ("pt", "es"):
        for key in ("nav_profile", "delete", "confirm_delete", "no_key", "key_note"):
            assert CONSOLE_LABELS[lang][key] != CONSOLE_LABELS["en"][key], (lang, key)


@pytest.mark.parametrize(
    ("asked", "lang"),
    [("pt", "pt"), ("pt-BR", "pt"), ("ES", "es"), ("fr", "en"), ("", "en"), (None, "en"),
     ("<script>", "en"), ("x" * 10_000, "en")],
)  # fmt: skip
def test_the_language_falls_back_to_english_as_the_block(asked: str | None, lang: str) -> None:
    assert console_labels(asked)[0] == lang
    page, got = console_page(asked, "n0nce")
    assert got == lang and f'<html lang="{lang}">' in page
    assert "<script>" not in page.split('id="labels">', 1)[1].split("</script>", 1)[0]


def test_a_label_cannot_close_the_script_it_travels_in(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = {**CONSOLE_LABELS["en"], "title": "</script><script>alert(1)</script>"}
    monkeypatch.setitem(labels_module.CONSOLE_LABELS, "en", hostile)
    page, _ = console_page("en", "n0nce")
    data = page.split('id="labels">', 1)[1].split("</script>", 1)[0]
    assert "alert(1)" in data and "<" not in data
    # Only the page's own script carries the nonce; nothing of the template is left.
    assert page.count('nonce="n0nce"') == 1
    assert "__" not in page.replace("__proto__", "")


def test_every_label_the_page_asks_for_is_in_the_table() -> None:
    """Element labels, the script's ``t("...")``, table headers, and one per warning code
    (the experiment page names each warning the analysis gives in the page's language)."""
    page = files("turnstream.entrypoints.http").joinpath("console.html").read_text(encoding="utf-8")
    asked = set(re.findall(r'data-l="(\w+)"', page)) | set(re.findall(r'\bt\("(\w+)"\)', page))
    for headers in re.findall(r"\btable\(\s*\[([^\]]*)\]", page):
        asked |= set(re.findall(r'"(\w+)"', headers))
    assert "L[`warn_${w.code}`]" in page
    asked |= {f"warn_{code}" for code in CODES}
    assert len(asked) > 50, "the patterns found too little: the test would prove nothing"
    assert asked <= set(CONSOLE_LABELS["en"]), asked - set(CONSOLE_LABELS["en"])
    for lang in ("pt", "es"):
        for key in ("nav_experiments", "rate_chart", "warnings", "warn_small_arm"):
            assert CONSOLE_LABELS[lang][key] != CONSOLE_LABELS["en"][key], (lang, key)
