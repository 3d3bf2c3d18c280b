"""The block as lines for a model, in Portuguese, English or Spanish: what a colleague
would write in a note before handing a customer over.

One line per entry that stands (an entry that lost a conflict is left out): what is
required, what the person prefers or would rather avoid, what they seem to like (said
to be inferred), what they are, the company's rules (their own text) and the questions
to ask. Each field by its label, else its name in words; each operator in words; a list
of values joined the way the language joins them ("navy or beige").

A value reads in the block's language (:class:`ValueWords`): its label in the types
document, else the built-in words of common retail values (``value_words.toml``: colours,
materials, fits, patterns, letter sizes), a number with its field's unit (``64 GB``).

Words that came from outside (an object's name or title in ``shown``, a value neither the
types document nor the built-in words know, stated or shown) are data, never lines of
their own: :func:`one_line` makes them one line, bounded, without control or direction
characters and without markup that closes a prompt's tags, and :func:`quoted` puts them
in quotation marks, so an "ignore previous instructions" in a title or said as a colour
reads as the producer's words it is.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnstream.core.constraints.inputs import Scalar
from turnstream.core.constraints.money import money_or_none
from turnstream.core.digits import plain_number, read_decimal
from turnstream.core.folding import normal
from turnstream.core.value_words import by_word, in_every_language, known_entries

__all__ = [
    "LANGUAGES",
    "MAX_NAMED",
    "ValueWords",
    "change_words",
    "changes_said",
    "field_words",
    "format_value",
    "known_value",
    "language_of",
    "localized_number",
    "one_line",
    "quoted",
    "read_flag",
    "render_text",
    "value_words",
]

_EN: dict[str, str] = {
    "required": "Required:",
    "prefer": "Prefers:",
    "avoid": "Would rather avoid:",
    "affinity": "Seems to like (inferred):",
    "avoid_inferred": "Seems to skip (inferred):",
    "interest": "Showed interest in (inferred):",
    "implicit_negative": "Showed no interest in (inferred):",
    "person": "The person:",
    "person_inferred": "The person, from what they bought (inferred):",
    "ask": "Ask first:",
    "said": "said {what}",
    "earlier": "earlier {what}",
    "inferred": "inferred {what}",
    "for_whom": "who it is for",
    "exclude": "Do not show again:",
    "changed_since": "Changed since they saw it:",
    "price_up": "{field} up from {shown} to {now}",
    "price_down": "{field} down from {shown} to {now}",
    "out_of_stock": "out of stock",
    "back_in_stock": "back in stock",
    "new_value": "{field} now also {values}",
    "value_gone": "{field} no longer {values}",
    "values_changed": "{field}: now also {values}, no longer {gone}",
    "changed": "{field} from {shown} to {now}",
    "yes": "yes",
    "no": "no",
    "more": "and {n} more",
    "items": "{n} items",
    "item": "1 item",
    "or": "or",
    "nor": "or",
    "and": "and",
    "in": "{field} {values}",
    "eq": "{field} {values}",
    "not_in": "{field} other than {values}",
    "ne": "{field} other than {values}",
    "lt": "{field} under {values}",
    "lte": "{field} up to {values}",
    "gt": "{field} over {values}",
    "gte": "{field} from {values}",
    "between": "{field} between {low} and {high}",
    "not_between": "{field} outside {low} to {high}",
}
_PT: dict[str, str] = {
    "required": "Obrigatório:",
    "prefer": "Prefere:",
    "avoid": "Prefere evitar:",
    "affinity": "Parece gostar de (inferido):",
    "avoid_inferred": "Parece não querer (inferido):",
    "interest": "Demonstrou interesse em (inferido):",
    "implicit_negative": "Não demonstrou interesse em (inferido):",
    "person": "A pessoa:",
    "person_inferred": "A pessoa, pelo que comprou (inferido):",
    "ask": "Pergunte antes:",
    "said": "disse {what}",
    "earlier": "antes {what}",
    "inferred": "inferido {what}",
    "for_whom": "para quem é",
    "exclude": "Não mostrar de novo:",
    "changed_since": "Mudou desde que viu:",
    "price_up": "{field} subiu de {shown} para {now}",
    "price_down": "{field} caiu de {shown} para {now}",
    "out_of_stock": "esgotado",
    "back_in_stock": "de volta ao estoque",
    "new_value": "{field} agora também {values}",
    "value_gone": "{field} sem {values}",
    "values_changed": "{field}: agora também {values}, não mais {gone}",
    "changed": "{field} de {shown} para {now}",
    "yes": "sim",
    "no": "não",
    "more": "e mais {n}",
    "items": "{n} itens",
    "item": "1 item",
    "or": "ou",
    "nor": "nem",
    "and": "e",
    "in": "{field} {values}",
    "eq": "{field} {values}",
    "not_in": "{field} que não seja {values}",
    "ne": "{field} que não seja {values}",
    "lt": "{field} abaixo de {values}",
    "lte": "{field} até {values}",
    "gt": "{field} acima de {values}",
    "gte": "{field} a partir de {values}",
    "between": "{field} entre {low} e {high}",
    "not_between": "{field} fora da faixa de {low} a {high}",
}
_ES: dict[str, str] = {
    "required": "Obligatorio:",
    "prefer": "Prefiere:",
    "avoid": "Prefiere evitar:",
    "affinity": "Parece gustarle (inferido):",
    "avoid_inferred": "Parece no querer (inferido):",
    "interest": "Mostró interés en (inferido):",
    "implicit_negative": "No mostró interés en (inferido):",
    "person": "La persona:",
    "person_inferred": "La persona, por lo que compró (inferido):",
    "ask": "Pregunte antes:",
    "said": "dijo {what}",
    "earlier": "antes {what}",
    "inferred": "inferido {what}",
    "for_whom": "para quién es",
    "exclude": "No mostrar de nuevo:",
    "changed_since": "Cambió desde que lo vio:",
    "price_up": "{field} subió de {shown} a {now}",
    "price_down": "{field} bajó de {shown} a {now}",
    "out_of_stock": "agotado",
    "back_in_stock": "de nuevo en stock",
    "new_value": "{field} ahora también {values}",
    "value_gone": "{field} ya sin {values}",
    "values_changed": "{field}: ahora también {values}, ya no {gone}",
    "changed": "{field} de {shown} a {now}",
    "yes": "sí",
    "no": "no",
    "more": "y {n} más",
    "items": "{n} artículos",
    "item": "1 artículo",
    "or": "o",
    "nor": "ni",
    "and": "y",
    "in": "{field} {values}",
    "eq": "{field} {values}",
    "not_in": "{field} que no sea {values}",
    "ne": "{field} que no sea {values}",
    "lt": "{field} por debajo de {values}",
    "lte": "{field} hasta {values}",
    "gt": "{field} por encima de {values}",
    "gte": "{field} desde {values}",
    "between": "{field} entre {low} y {high}",
    "not_between": "{field} fuera de {low} a {high}",
}
#: The words of each language the block renders in.
LANGUAGES: dict[str, dict[str, str]] = {"en": _EN, "pt": _PT, "es": _ES}
#: Soft entries about one object rather than a field: the line names the object.
_ABOUT_AN_OBJECT = frozenset({"interest", "implicit_negative"})
#: Objects a line names at most; the rest are counted.
MAX_NAMED = 3
#: Characters a name or a value from outside keeps at most in ``text`` (then "…").
MAX_CHARS = 80
#: Values one condition lists at most in ``text``, the rest counted (the JSON has all).
MAX_VALUES = 12
_SPACES = re.compile(r"\s+")
#: Markup that could close or open a prompt's tags or a code span: look-alikes instead.
_MARKUP = str.maketrans({"<": "\u2039", ">": "\u203a", "`": "'"})
#: Format characters kept: the joiners of emoji sequences and of scripts that need them.
_JOINERS = frozenset("\u200c\u200d")
#: Quotation marks inside a quoted name: a plain apostrophe instead.
_QUOTES = str.maketrans({"“": "'", "”": "'", '"': "'"})


def one_line(words: str, limit: int | None = MAX_CHARS) -> str:
    """``words`` as data on one line: every run of white space (newlines, tabs, line
    separators) one space; control, direction and other format characters dropped
    (joiners kept); ``<``, ``>`` and backticks as look-alikes; at most ``limit``
    characters, the cut marked with "…"."""
    kept = "".join(
        ch
        for ch in _SPACES.sub(" ", words)
        if ch in _JOINERS or unicodedata.category(ch) not in ("Cc", "Cf", "Cs")
    )
    flat = _SPACES.sub(" ", kept.translate(_MARKUP)).strip()
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip(" \u200c\u200d") + "…"
    return flat


def quoted(name: str) -> str:
    """A name from outside in quotation marks (“Tênis Duna”), one line (:func:`one_line`);
    ``""`` when nothing readable is left."""
    inner = one_line(name.translate(_QUOTES))
    return f"“{inner}”" if inner else ""


def language_of(language: str) -> str:
    """``pt``, ``en`` or ``es`` from a language tag (``pt-BR`` → ``pt``); else ``en``."""
    primary = language.replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else "en"


def field_words(attr: str, labels: Mapping[str, str] | None = None) -> str:
    """``labels[attr]``, else the field part in words, quoted (``health_plan.wire_gauge``
    → ``“wire gauge”``): a name no one gave words to is a producer's word, like a value
    no one labels (``ignore_previous_instructions`` reads as the name it is)."""
    if labels and attr in labels:
        return labels[attr]
    field = attr.split(".", 1)[1] if "." in attr else attr
    return quoted(field.replace("_", " ")) or one_line(field)


#: The built-in words of common field names, beside this module.
_FIELD_WORDS = Path(__file__).with_name("field_words.toml")


@functools.cache
def _field_lexicon() -> dict[str, dict[str, str]]:
    """A field name (:func:`~turnstream.core.folding.normal`: ``título`` is ``titulo``)
    -> its words per language (``field_words.toml``)."""
    table = tomllib.loads(_FIELD_WORDS.read_text(encoding="utf-8"))
    return {normal(name): words for name, words in in_every_language(_FIELD_WORDS, table)}


@functools.cache
def _field_entries() -> dict[str, dict[str, str]]:
    """Any name or word of ``field_words.toml`` (:func:`~turnstream.core.folding.normal`)
    -> its words per language: a name its own entry; a word in any language (``talla``,
    ``título``) the entry that has it, unless entries with other words have it too."""
    return {word: found[0] for word, found in by_word(_field_lexicon()).items() if len(found) == 1}


def builtin_field_labels(attrs: Iterable[str], language: str) -> dict[str, str]:
    """``attr`` -> the built-in words in ``language`` of its field name, for each of
    ``attrs`` whose name ``field_words.toml`` knows, as a name or as its words in any
    language (``person.clothing_size`` → ``talla de ropa`` in es; ``prenda.talla`` →
    ``tamanho`` in pt): the fallback of a field the types document does not label."""
    entries, lang = _field_entries(), language_of(language)
    found = {}
    for attr in attrs:
        entry = entries.get(normal(attr.split(".", 1)[1] if "." in attr else attr))
        if entry is not None:
            found[attr] = entry[lang]
    return found


#: Built-in notions that are one family: a clothing size is what "size" asks.
_FIELD_FAMILIES = {"clothing size": "size"}


@functools.cache
def _field_notions() -> dict[str, str]:
    """Any word of ``field_words.toml`` (a name, or its words in any language) -> the
    notion it names (its English words, or their family)."""
    notions: dict[str, str] = {}
    for name, words in _field_lexicon().items():
        notion = normal(words["en"])
        notion = _FIELD_FAMILIES.get(notion, notion)
        for word in (name, *words.values()):
            notions.setdefault(normal(word), notion)
    return notions


def builtin_field_notion(name: str) -> str | None:
    """The notion a field name (``person.clothing_size``) or a word for one in pt, en or
    es (``talla``, ``cor``) names by the built-in field words, ``None`` if none: how a
    space without a types document tells that ``talla`` asks what a known clothing size
    answers."""
    return _field_notions().get(normal(name.split(".", 1)[1] if "." in name else name))


#: The words of a flag sent as text, any case and surrounding spaces.
_TRUE = frozenset({"true", "yes", "1", "sim", "sí", "si"})
_FALSE = frozenset({"false", "no", "0", "não", "nao"})


def read_flag(value: object) -> bool | None:
    """``value`` as a flag: a boolean, a number (above 0: yes), or a word of one
    (``"true"``, ``"yes"``, ``"sim"``, ``"não"``); ``None`` for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value > 0
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def format_value(value: Scalar) -> str:
    """A value as written in a line: ``700`` for 700.0, ``true`` for True, strings on one
    line (:func:`one_line`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return plain_number(value)
    return one_line(str(value))


#: A value written only in digits and the marks between them (``41``, ``9.5``, ``38-40``).
_NUMERAL = re.compile(r"\d+(?:[.,/-]\d+)*")


def known_value(value: str, language: str) -> str | None:
    """The built-in words of a common retail value in ``language``: ``red`` → ``vermelho``,
    and from another language's word too, ``negro`` → ``preto``; ``None`` when unknown or
    when the word's entries disagree in ``language`` (``liso``: ``plain`` or ``solid``)."""
    entries = known_entries(value)
    said = {entry[language_of(language)] for entry in entries}
    return said.pop() if len(said) == 1 else None


@dataclass(frozen=True)
class ValueWords:
    """How the values of a block read in its language.

    A string value: its label in the types document (``labels``: ``(type.field, value)``
    -> words; a value spelled otherwise by the value ``ids`` says it names), else its
    built-in words (:func:`known_value`), else, when a decimal number (a size ``40.0``),
    as the language writes the number (``40``, ``40,5`` in pt), when written only in
    digits otherwise (``38-40``), as written; anything else is the producer's word, quoted
    (:func:`quoted`). A flag: the language's yes or no (``sim``, ``não``), also a word of
    one sent as text on a field that may be a flag (``flags``: ``"true"``). A number: in
    the language's way (:func:`localized_number`: ``9,5`` in pt and es), a price
    (``money``: the ``type.field`` names of class money) with its cents (``479,90``),
    also when written as text the space's language reads as a price (``"12.50"``,
    ``"R$ 1.299,90"``: :func:`~turnstream.core.constraints.money.read_money`), followed
    by its field's unit (``units``: ``type.field`` -> ``GB``) when the types document
    gives one."""

    language: str = "en"
    labels: Mapping[tuple[str, str], str] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    money: frozenset[str] = frozenset()
    #: ``(type.field, value)`` -> the value the types document declares that it names
    #: (:meth:`~turnstream.core.value_ids.ValueIds.of`: ``APPLE``, ``lana``),
    #: so a value spelled otherwise reads by that value's label.
    ids: Callable[[str, Scalar], Scalar] | None = None
    #: The ``type.field`` names that may be flags (``in_stock``): a word of a flag sent as
    #: text reads as the language's yes or no (``"true"``: ``sim``).
    flags: frozenset[str] = frozenset()

    def word(self, attr: str, value: Scalar, cents: bool = False) -> str:
        """``value`` of ``attr`` in the block's language (see the class); ``cents``: a
        price with its cents even when whole (``3,579.00`` beside ``3,599.50``)."""
        if isinstance(value, str):
            label = self.labels.get((attr, value))
            if label is None and self.ids is not None:
                label = self.labels.get((attr, str(self.ids(attr, value))))
            label = label or known_value(value, self.language)
            if label is not None:
                return label
            flag = read_flag(value) if attr in self.flags and not value.strip().isdigit() else None
            if flag is not None:
                return LANGUAGES[language_of(self.language)]["yes" if flag else "no"]
            written = one_line(value)
            price = money_or_none(value, self.language) if attr in self.money else None
            number = read_decimal(written)  # a size 40.0 or 40,5: 40 and 40,5 in pt
            if price is not None:  # "1.299,90", "$12.50": as any price of the block
                written = localized_number(price, self.language, True, cents)
            elif number is not None:
                written = localized_number(number, self.language)
            elif not _NUMERAL.fullmatch(written):
                return quoted(value)
        elif isinstance(value, bool):
            return LANGUAGES[language_of(self.language)]["yes" if value else "no"]
        elif not isinstance(value, int | float):
            written = format_value(value)
        else:
            written = localized_number(value, self.language, attr in self.money, cents)
        unit = None if isinstance(value, bool) else self.units.get(attr)
        return f"{written} {unit}" if unit else written


def localized_number(value: float, language: str, money: bool = False, cents: bool = False) -> str:
    """A number as the language writes it: a decimal comma in pt and es (``9,5``), a
    point in en; a price (``money``) with its cents unless whole (``479,90``, ``100``;
    with ``cents``, ``100,00``) and its thousands grouped (``1.299,90``; ``1,299.90`` in
    en). Not finite: as written."""
    if not math.isfinite(value):
        return format_value(value)
    if money:
        whole = float(value).is_integer() and not cents
        text = f"{value:,.0f}" if whole else f"{value:,.2f}"
    else:
        text = format_value(value)
    if language_of(language) == "en":
        return text
    return text.translate(_COMMA_POINT)


#: English number marks to those of pt and es: 1,299.90 -> 1.299,90.
_COMMA_POINT = str.maketrans({",": ".", ".": ","})


def value_words(attr: str, value: Scalar, values: ValueWords | None = None) -> str:
    """A value in the block's language (:meth:`ValueWords.word`; English words without
    ``values``)."""
    return (values or ValueWords()).word(attr, value)


def _joined(
    words: Mapping[str, str],
    values: Sequence[Scalar],
    attr: str = "",
    value_labels: ValueWords | None = None,
    link: str = "or",
) -> str:
    """``a``, ``a or b``, ``a, b or c`` (``ou``, ``o``; ``link`` names another word:
    ``nor`` after a negation, ``nem``, ``ni``); past :data:`MAX_VALUES`, the rest counted
    (``a, b, c and 4 more``)."""
    texts = list(dict.fromkeys(value_words(attr, v, value_labels) for v in values))
    if len(texts) > MAX_VALUES:
        rest = words["more"].format(n=len(texts) - MAX_VALUES)
        return f"{', '.join(texts[:MAX_VALUES])} {rest}"
    if len(texts) <= 1:
        return "".join(texts)
    return f"{', '.join(texts[:-1])} {words[link]} {texts[-1]}"


def _condition(
    words: Mapping[str, str],
    field: str,
    op: str,
    values: list[Scalar],
    attr: str = "",
    value_labels: ValueWords | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """A condition in words; on an object field (``type.ref``) the objects by ``names``,
    never a raw ref (:func:`_objects`)."""
    if op in ("between", "not_between"):
        low, high = (value_words(attr, v, value_labels) for v in values[:2])
        return words[op].format(field=field, low=low, high=high)
    if attr.endswith(".ref"):
        return words[op].format(field=field, values=_objects(words, values, names or {}))
    link = "nor" if op in _NEGATED else "or"
    return words[op].format(field=field, values=_joined(words, values, attr, value_labels, link))


#: Conditions whose values are refused: joined by ``nor`` ("que no sea azul ni rojo").
_NEGATED = frozenset({"not_in", "ne"})


def _objects(words: Mapping[str, str], refs: Sequence[Scalar], names: Mapping[str, str]) -> str:
    """At most :data:`MAX_NAMED` objects by name, the rest counted; never a raw ref: an
    object without a name is only counted."""
    named = list(dict.fromkeys(names[str(r)] for r in refs if str(r) in names))
    unnamed = len({str(r) for r in refs if str(r) not in names})
    shown = named[:MAX_NAMED]
    rest = len(named) - len(shown) + unnamed
    if not shown:
        return words["item"] if rest == 1 else words["items"].format(n=rest)
    text = ", ".join(shown)
    return f"{text} {words['more'].format(n=rest)}" if rest else text


def change_words(
    language: str,
    attr: str,
    change: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
    values: ValueWords | None = None,
) -> str:
    """One change of an object in words (``preço subiu de 199,90 para 219,90``);
    ``attr`` is its ``type.field``, ``change`` as ``Change.as_dict`` gives it. Both
    sides of a price in one style: with cents when either has them (``3.579,00 para
    3.599,50``), a price written as text read as the number it is."""
    words = LANGUAGES[language_of(language)]
    values = values or ValueWords(language_of(language))
    shown, now = change["shown"], change["now"]
    cents = False
    if attr in values.money:
        shown, now = _money(shown), _money(now)
        cents = any(isinstance(v, float) and not v.is_integer() for v in (shown, now))
    return words[change["change"]].format(
        field=field_words(attr, labels),
        shown=values.word(attr, shown, cents) if shown is not None else "",
        now=values.word(attr, now, cents) if now is not None else "",
        values=_all(words, change.get("values") or [], attr, values),
    )


def _money(value: Any) -> Any:
    """A price as a number (``"179.90"`` -> 179.9); anything else as it is."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return number if math.isfinite(number) else value
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def changes_said(
    language: str,
    type_name: str,
    changes: Sequence[Mapping[str, Any]],
    labels: Mapping[str, str] | None = None,
    values: ValueWords | None = None,
) -> str:
    """The changes of one object in words, joined by commas (``preço subiu de 199,90
    para 219,90, tamanhos em estoque agora também 41``); a field of many values that
    gained and lost values in one phrase (``tamanhos em estoque: agora também GG, não
    mais P``)."""
    words = LANGUAGES[language_of(language)]
    gone = {c["field"]: c for c in changes if c["change"] == "value_gone"}
    gained = {c["field"] for c in changes if c["change"] == "new_value"}
    said = []
    for c in changes:
        attr = f"{type_name}.{c['field']}"
        if c["change"] == "value_gone" and c["field"] in gained:
            continue  # said with what it gained
        if c["change"] == "new_value" and c["field"] in gone:
            lost = gone[c["field"]].get("values") or []
            said.append(
                words["values_changed"].format(
                    field=field_words(attr, labels),
                    values=_all(words, c.get("values") or [], attr, values),
                    gone=_all(words, lost, attr, values),
                )
            )
            continue
        said.append(change_words(language, attr, c, labels, values))
    return ", ".join(said)


def _all(
    words: Mapping[str, str], items: Sequence[Scalar], attr: str, values: ValueWords | None
) -> str:
    """Values that all hold, joined by "and" (``41 e 42``)."""
    return _joined(words, items, attr, values, "and")


#: The order of kinds of change, the weightiest first (:func:`_change_weight`).
_CHANGE_ORDER = {"out_of_stock": 0, "back_in_stock": 1, "price_up": 2, "price_down": 2}


def _change_weight(changes: Sequence[Mapping[str, Any]]) -> tuple[int, float]:
    """How much an object's changes matter, less first: a stock gone, then back, then a
    price by its relative size (``-0.2`` for 20 %), then values gained or lost, then the
    rest."""

    def one(change: Mapping[str, Any]) -> tuple[int, float]:
        kind = _CHANGE_ORDER.get(change["change"], 3 if change.get("values") else 4)
        shown, now = change.get("shown"), change.get("now")
        if kind != 2 or not all(isinstance(v, int | float) for v in (shown, now)):
            return kind, 0.0
        return kind, -abs(now - shown) / shown if shown else -math.inf

    return min(one(c) for c in changes)


def _standing_about(block: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The objects the person wants (an interest, a stated preference or requirement
    naming them) and those they do not (no interest, a stated avoid), by the block's
    standing entries."""
    wanted: set[str] = set()
    unwanted: set[str] = set()
    for entry in [*_standing(block, "hard"), *_standing(block, "soft")]:
        kind, refs = entry.get("kind"), {str(v) for v in entry.get("values") or ()}
        if kind == "interest":
            wanted |= refs
        elif kind == "implicit_negative":
            unwanted |= refs
        elif str(entry.get("attr")).endswith(".ref"):
            against = entry.get("polarity") == "avoid" or entry.get("op") in ("not_in", "ne")
            (unwanted if against else wanted).update(refs)
    return wanted, unwanted


def _changed_lines(
    words: Mapping[str, str],
    block: Mapping[str, Any],
    labels: Mapping[str, str] | None,
    names: Mapping[str, str],
    language: str,
    values: ValueWords,
) -> list[str]:
    """One line for the presented objects that changed since the person saw them: a few
    at most by name, each with its changes (``“Tênis Duna”: preço subiu de 199,90 para
    219,90``), the objects joined by semicolons; the rest (and an object without a name)
    counted (``e mais 2``, or ``2 itens`` when none is named). The objects the person
    wants first (:func:`_standing_about`), those they showed no interest in last; within
    each, the weightiest change first (:func:`_change_weight`)."""
    changed = [e for e in block.get("already_presented", ()) if e.get("changed")]
    if not changed:
        return []
    wanted, unwanted = _standing_about(block)
    changed.sort(
        key=lambda e: (
            0 if e["ref"] in wanted else 2 if e["ref"] in unwanted else 1,
            _change_weight(e["changed"]),
        )
    )
    named = [e for e in changed if e["ref"] in names][:MAX_NAMED]
    said = [
        f"{names[e['ref']]}: "
        f"{changes_said(language, e['ref'].split(':', 1)[0], e['changed'], labels, values)}"
        for e in named
    ]
    rest = len(changed) - len(named)
    if rest and said:
        said.append(words["more"].format(n=rest))
    elif rest:
        said.append(words["item"] if rest == 1 else words["items"].format(n=rest))
    return [f"{words['changed_since']} {'; '.join(said)}"]


def _standing(block: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [entry for entry in block.get(key, ()) if not entry.get("lost")]


def _soft_lines(
    words: Mapping[str, str],
    entries: list[Mapping[str, Any]],
    labels: Mapping[str, str] | None,
    names: Mapping[str, str],
    value_labels: ValueWords | None,
) -> list[str]:
    """One line per entry on a field; the objects of one kind (interest, no interest)
    together on one line, where the first of them stands, by name (a few at most)."""
    lines: list[str] = []
    objects: dict[str, list[Scalar]] = {}
    at: dict[str, int] = {}
    for entry in entries:
        kind = entry.get("kind", "preference")
        if kind in _ABOUT_AN_OBJECT:
            if kind not in objects:
                at[kind] = len(lines)
                lines.append("")
            objects.setdefault(kind, []).extend(entry["values"])
            continue
        polarity = entry["polarity"]
        if entry.get("label"):  # what a sensitive field's words avoid: its own words
            lines.append(f"{words[polarity]} {entry['label']}")
            continue
        lead = words["affinity"] if kind == "affinity" and polarity == "prefer" else None
        lead = lead or (words["avoid_inferred"] if kind == "affinity" else words[polarity])
        field = field_words(entry["attr"], labels)
        condition = _condition(
            words, field, entry["op"], entry["values"], entry["attr"], value_labels, names
        )
        lines.append(f"{lead} {condition}")
    for kind, refs in objects.items():
        lines[at[kind]] = f"{words[kind]} {_objects(words, refs, names)}"
    return lines


def _what(
    words: Mapping[str, str],
    row: Mapping[str, Any],
    values: ValueWords | None,
    names: Mapping[str, str],
) -> str:
    """What one entry of a conflict says, without its field (``M``, ``que não seja
    preto``), and who said it: the person (the newer, kept), the person before, or an
    inference."""
    if row.get("label"):
        what = str(row["label"])
    elif "value" in row:
        what = value_words(row["attr"], row["value"], values)
    else:
        op = row["op"]
        if row.get("polarity") == "avoid" and op in ("in", "eq"):
            op = "not_in"
        what = _condition(words, "", op, row["values"], row["attr"], values, names).strip()
    who = "inferred" if row.get("inferred") else "earlier" if row.get("lost") else "said"
    return words[who].format(what=what)


def _question(
    words: Mapping[str, str],
    asked: str,
    block: Mapping[str, Any],
    labels: Mapping[str, str] | None,
    values: ValueWords | None,
    names: Mapping[str, str],
) -> str:
    """``Pergunte antes: tamanho``; for the conflicts that name it as their ``ask``, what
    each side says, the standing first (``Pergunte antes: tamanho (disse M; inferido
    XS)``)."""
    about = words["for_whom"] if asked == "for_whom" else field_words(asked, labels)
    question = f"{words['ask']} {about}"
    rows = {r["id"]: r for key in ("hard", "soft", "attributes") for r in block.get(key, ())}
    ids = [i for c in block.get("conflicts", ()) if c.get("ask") == asked for i in c["entries"]]
    sides = sorted(
        (rows[i] for i in dict.fromkeys(ids) if i in rows), key=lambda r: bool(r.get("lost"))
    )
    said = list(dict.fromkeys(_what(words, row, values, names) for row in sides))
    return f"{question} ({'; '.join(said)})" if said else question


def render_text(
    block: Mapping[str, Any],
    language: str,
    labels: Mapping[str, str] | None = None,
    *,
    names: Mapping[str, str] | None = None,
    values: ValueWords | None = None,
    said_by_hard: Collection[str] = (),
) -> str:
    """The lines of ``block`` for a model, joined by newlines; ``""`` when nothing stands.

    Objects by ``names`` (ref -> name), a few at most, the others counted: never a raw
    ref. Values by ``values`` (:class:`ValueWords`; without it, the built-in words in
    the language). A question a conflict names says what each side said. A line said
    twice is said once; an attribute whose id is in ``said_by_hard`` (a hard entry says
    the same value: "Obrigatório: tamanho M") is said by that entry alone."""
    words = LANGUAGES[language_of(language)]
    names = names or {}
    values = values or ValueWords(language_of(language))
    lines: list[str] = []
    for entry in _standing(block, "hard"):
        if entry.get("label"):  # an act of a sensitive field: its own words
            lines.append(f"{words['required']} {entry['label']}")
            continue
        field = field_words(entry["attr"], labels)
        condition = _condition(
            words, field, entry["op"], entry["values"], entry["attr"], values, names
        )
        lines.append(f"{words['required']} {condition}")
    lines.extend(_soft_lines(words, _standing(block, "soft"), labels, names, values))
    for entry in _standing(block, "attributes"):
        if entry["id"] in said_by_hard:
            continue
        lead = words["person_inferred"] if entry.get("inferred") else words["person"]
        value = value_words(entry["attr"], entry["value"], values)
        line = f"{lead} {field_words(entry['attr'], labels)} {value}"
        if entry.get("system"):
            line += f" ({one_line(str(entry['system']))})"
        lines.append(line)
    if block.get("exclude"):
        lines.append(f"{words['exclude']} {_objects(words, block['exclude'], names)}")
    lines.extend(_changed_lines(words, block, labels, names, language, values))
    rules = (one_line(rule["text"], None) for rule in _standing(block, "rules"))
    lines.extend(text for text in rules if text)
    for asked in block.get("ask", ()):
        lines.append(_question(words, asked, block, labels, values, names))
    return "\n".join(dict.fromkeys(lines))
