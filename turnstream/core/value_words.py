"""The built-in words of common retail values (``value_words.toml``, beside this module:
colours, materials, fits, patterns, letter sizes) in pt, en and es: which value a word
names (``Preto`` and ``negro`` name black). Read by the value a field's value names
(:mod:`turnstream.core.value_ids`), for the block and derivation alike, and by the
block's words for values (:mod:`turnstream.core.constraints.text`). Pure: the file is
package data, read once."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from pathlib import Path

from turnstream.core.folding import normal
from turnstream.models.object_types import LANGUAGES

__all__ = ["by_word", "in_every_language", "known_entries", "known_entry"]

#: The built-in words of common retail values, beside this module.
_LEXICON = Path(__file__).with_name("value_words.toml")


def in_every_language(
    path: Path, table: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, dict[str, str]]]:
    """Each entry of a words file's ``table`` with its words per language; raises
    :class:`ValueError` naming one that lacks a language."""
    for name, per_language in table.items():
        if set(per_language) != set(LANGUAGES):
            raise ValueError(f"{path.name}: {name!r} needs words in pt, en and es")
    return [(name, dict(per_language)) for name, per_language in table.items()]


@functools.cache
def _lexicon() -> dict[str, tuple[dict[str, str], ...]]:
    """``value`` (:func:`~turnstream.core.folding.normal`: without case, accents, ``_``,
    ``-`` or extra white space, so ``poliester`` is ``poliéster``) -> the entries it can
    name, each its words per language, from ``value_words.toml``: a key names its own
    entry alone; a word of an entry in any language (``preto``, ``negro``) names every
    entry that has it, unless it is a key itself."""
    tables = tomllib.loads(_LEXICON.read_text(encoding="utf-8"))
    keys: dict[str, dict[str, str]] = {}
    for table in tables.values():
        for value, per_language in in_every_language(_LEXICON, table):
            keys[normal(value)] = per_language
    return by_word(keys)


def by_word(
    keys: Mapping[str, dict[str, str]],
) -> dict[str, tuple[dict[str, str], ...]]:
    """A words file's entries (key, :func:`~turnstream.core.folding.normal`, -> its words
    per language) by what names them: a key its own entry alone; a word of an entry in
    any language every entry that has it, unless it is a key itself."""
    words: dict[str, list[dict[str, str]]] = {}
    for entry in keys.values():
        for word in entry.values():
            found = words.setdefault(normal(word), [])
            if entry not in found:
                found.append(entry)
    lexicon = {word: tuple(entries) for word, entries in words.items()}
    lexicon.update({key: (entry,) for key, entry in keys.items()})
    return lexicon


def known_entries(value: str) -> tuple[Mapping[str, str], ...]:
    """The built-in entries (each its words per language) ``value`` can name."""
    return _lexicon().get(normal(value), ())


def known_entry(value: str) -> Mapping[str, str] | None:
    """The built-in words (per language) of the one common retail value ``value`` names
    (``Preto`` and ``negro`` name black); ``None`` when it names none or several."""
    entries = known_entries(value)
    return entries[0] if len(entries) == 1 else None
