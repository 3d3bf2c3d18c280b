"""A number found in an output: its span, class, normalized value and unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Language", "Mention", "NumberClass", "Value"]

NumberClass = Literal[
    "money", "percent", "date", "duration", "quantity", "count", "dosage", "label"
]
Language = Literal["pt", "en", "es"]
Value = float | int | tuple[float, float] | str


@dataclass(frozen=True, slots=True)
class Mention:
    """One number of a text (or a range, or a date) read as one class."""

    start: int  # code-point offset into the text, inclusive
    end: int  # exclusive
    text: str  # text[start:end]
    cls: NumberClass
    value: Value  # number; (low, high) for a range; "YYYY-MM-DD" / "--MM-DD"; a label's text
    unit: str | None  # ISO 4217 or "$", "%", a time unit, a lower-case symbol; None otherwise
    kind: str | None = None  # finer kind: "order", "phone", "ordinal", "installments", ...
    is_range: bool = False
    in_words: bool = False  # written in words ("fifteen business days")

    def as_json(self) -> dict[str, Any]:
        """The docs/contract.md form: start, end, text, class, value ([low, high] for a
        range), unit."""
        value: Any = list(self.value) if isinstance(self.value, tuple) else self.value
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "class": self.cls,
            "value": value,
            "unit": self.unit,
        }
