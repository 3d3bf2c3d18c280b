"""Sentence boundaries per language: abbreviations, initials, acronyms, line breaks."""

from __future__ import annotations

from turnstream.sdk.claims.sentences import sentence_spans


def sentences(text: str, lang: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text, lang)]


def test_portuguese_abbreviations_do_not_end_a_sentence() -> None:
    text = "O Sr. Silva pagou. Conforme o art. 5º da CF. Veja a p. 12! Ok?"
    assert sentences(text, "pt") == [
        "O Sr. Silva pagou.",
        "Conforme o art. 5º da CF.",
        "Veja a p. 12!",
        "Ok?",
    ]


def test_english_titles_initials_and_quotes() -> None:
    text = 'Mr. J. Smith said "it arrives Monday." Then he left... Done.'
    assert sentences(text, "en") == [
        'Mr. J. Smith said "it arrives Monday."',
        "Then he left...",
        "Done.",
    ]


def test_spanish_openers_and_line_breaks() -> None:
    text = "La Sra. Pérez llamó. ¿Llega el lunes? ¡Sí!\n- envío gratis\n- 10x sin interés"
    assert sentences(text, "es") == [
        "La Sra. Pérez llamó.",
        "¿Llega el lunes?",
        "¡Sí!",
        "- envío gratis",
        "- 10x sin interés",
    ]


def test_decimals_and_a_lower_case_continuation_stay_in_the_sentence() -> None:
    text = "Custa R$ 1.299,90 e. g. hoje. Fim"
    assert sentences(text, "pt") == ["Custa R$ 1.299,90 e. g. hoje.", "Fim"]
