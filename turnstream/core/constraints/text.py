"""The block as lines for a model, in Portuguese, English or Spanish.

One line per entry that stands (an entry that lost a conflict is left out): hard entries,
then soft ones, attributes, the company's rules (their own text) and the questions to
ask. Each field by its label, else its name in words; each operator in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from turnstream.core.constraints.inputs import Scalar

__all__ = ["LANGUAGES", "field_words", "format_value", "language_of", "render_text"]

_EN: dict[str, str] = {
    "required": "required:",
    "preferred": "preferred:",
    "avoid": "avoid:",
    "person": "the person:",
    "ask": "ask first:",
    "for_whom": "for whom it is",
    "in": "one of {values}",
    "not_in": "not {values}",
    "eq": "= {values}",
    "ne": "not {values}",
    "lt": "under {values}",
    "lte": "at most {values}",
    "gt": "over {values}",
    "gte": "at least {values}",
    "between": "between {low} and {high}",
    "not_between": "not between {low} and {high}",
}
_PT: dict[str, str] = {
    "required": "exigido:",
    "preferred": "preferido:",
    "avoid": "evitar:",
    "person": "a pessoa:",
    "ask": "pergunte antes:",
    "for_whom": "para quem é",
    "in": "um de {values}",
    "not_in": "sem {values}",
    "eq": "igual a {values}",
    "ne": "diferente de {values}",
    "lt": "abaixo de {values}",
    "lte": "no máximo {values}",
    "gt": "acima de {values}",
    "gte": "no mínimo {values}",
    "between": "entre {low} e {high}",
    "not_between": "fora de {low} a {high}",
}
_ES: dict[str, str] = {
    "required": "requerido:",
    "preferred": "preferido:",
    "avoid": "evitar:",
    "person": "la persona:",
    "ask": "pregunte antes:",
    "for_whom": "para quién es",
    "in": "uno de {values}",
    "not_in": "sin {values}",
    "eq": "igual a {values}",
    "ne": "distinto de {values}",
    "lt": "menos de {values}",
    "lte": "como máximo {values}",
    "gt": "más de {values}",
    "gte": "como mínimo {values}",
    "between": "entre {low} y {high}",
    "not_between": "fuera de {low} a {high}",
}
#: The words of each language the block renders in.
LANGUAGES: dict[str, dict[str, str]] = {"en": _EN, "pt": _PT, "es": _ES}


def language_of(language: str) -> str:
    """``pt``, ``en`` or ``es`` from a language tag (``pt-BR`` → ``pt``); else ``en``."""
    primary = language.replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else "en"


def field_words(attr: str, labels: Mapping[str, str] | None = None) -> str:
    """``labels[attr]``, else the field part in words (``health_plan.monthly_price`` →
    ``monthly price``)."""
    if labels and attr in labels:
        return labels[attr]
    field = attr.split(".", 1)[1] if "." in attr else attr
    return field.replace("_", " ")


def format_value(value: Scalar) -> str:
    """A value as written in a line: ``700`` for 700.0, ``true`` for True, strings as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _condition(words: Mapping[str, str], op: str, values: list[Scalar]) -> str:
    if op in ("between", "not_between"):
        return words[op].format(low=format_value(values[0]), high=format_value(values[1]))
    return words[op].format(values=", ".join(format_value(v) for v in values))


def _standing(block: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [entry for entry in block.get(key, ()) if not entry.get("lost")]


def render_text(
    block: Mapping[str, Any], language: str, labels: Mapping[str, str] | None = None
) -> str:
    """The lines of ``block`` for a model, joined by newlines; ``""`` when nothing stands."""
    words = LANGUAGES[language_of(language)]
    lines: list[str] = []
    for entry in _standing(block, "hard"):
        condition = _condition(words, entry["op"], entry["values"])
        lines.append(f"{words['required']} {field_words(entry['attr'], labels)} {condition}")
    for entry in _standing(block, "soft"):
        prefix = words["avoid"] if entry["polarity"] == "avoid" else words["preferred"]
        condition = _condition(words, entry["op"], entry["values"])
        lines.append(f"{prefix} {field_words(entry['attr'], labels)} {condition}")
    for entry in _standing(block, "attributes"):
        line = f"{words['person']} {field_words(entry['attr'], labels)} "
        line += format_value(entry["value"])
        if entry.get("system"):
            line += f" ({entry['system']})"
        lines.append(line)
    lines.extend(rule["text"] for rule in _standing(block, "rules") if rule["text"])
    for question in block.get("ask", ()):
        lines.append(f"{words['ask']} {words.get(question, question.replace('_', ' '))}")
    return "\n".join(lines)
