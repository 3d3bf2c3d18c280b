"""The console's labels and page: every language complete, hostile inputs inert."""

from __future__ import annotations

import pytest

from turnstream.core import console_labels as labels_module
from turnstream.core.console_labels import CONSOLE_LABELS, console_labels
from turnstream.core.constraints.text import LANGUAGES
from turnstream.streams.console import console_page


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
