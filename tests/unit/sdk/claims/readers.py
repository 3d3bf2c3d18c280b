"""Helpers for the number reader's tests: the mentions as tuples, one mention by its text."""

from __future__ import annotations

from turnstream.sdk.claims.numbers import Language, Mention, read_numbers


def read(text: str, lang: Language) -> list[tuple[str, str, object, str | None]]:
    """(text, class, value, unit) of every mention, in order."""
    return [(m.text, m.cls, m.value, m.unit) for m in read_numbers(text, lang)]


def mention(text: str, lang: Language, fragment: str) -> Mention:
    """The one mention whose text is ``fragment``; fails listing what was read otherwise."""
    found = [m for m in read_numbers(text, lang) if m.text == fragment]
    assert len(found) == 1, f"{fragment!r} not read alone in {text!r}: {read(text, lang)}"
    return found[0]
