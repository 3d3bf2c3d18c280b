"""The named patterns: citations of articles and of precedents, in pt, en and es.

Each pattern is one compiled regex over the original text; every match is a claim whose
value is the citation as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["PATTERNS", "find_pattern"]

_NUM = r"\d+(?:[.,]\d+)*(?:[º°ª]|-?[A-Z](?!\w))?"
_NUMS = rf"{_NUM}(?:\s*(?:,|e|y|and|a|to|-)\s*{_NUM})*"
# What an article belongs to: "da CF", "do Código Civil", "de la Ley 39/2015", "of the GDPR".
_OF = (
    r"(?:,?\s+(?i:d[aoe]s?|de\s+la|del|of(?:\s+the)?)\s+"
    r"(?:(?:[A-ZÁÉÍÓÚÂÊÔÃÕÇÑ][\w./-]*|(?:n[º°.]\s*)?\d[\d./-]*|"
    r"d[aoe]s?|del|la|las|los|el|of|the|y|e|and)\s*){1,8})?"
)
# Qualifiers: ", inciso X", ", § 2º", ", paragraph (b)", ", apartado 3".
_QUAL = (
    r"(?:,?\s*(?i:inciso|incisos|inc\.|§+|par[áa]grafo|paragraph|para\.|al[íi]nea|alínea|apartado|"
    r"letra|item|subsection|clause|num\.|numeral)\s*(?:[\dIVXLC]+[º°ª]?|\(?[a-z]\)?|único)"
    r"(?:\s*\(\w+\))*)*"
)
ARTICLE = re.compile(
    rf"(?<!\w)(?i:arts?\.|artigos?|art[íi]culos?|articles?|sections?|secci[óo]n|se[çc][ãa]o|"
    rf"§+)\s*{_NUMS}{_QUAL}{_OF}"
)

_BR_CLASSES = (
    r"REsp|AREsp|RE|ARE|AgRg|AgInt|EDcl|HC|RHC|MS|RMS|ADI|ADC|ADO|ADPF|Rcl|AI|CC|Pet|Inq|AP|RR|"
    r"AIRR|RO|ED"
)
_BR = (
    rf"(?:(?:AgRg|AgInt|EDcl|ED)\s+(?:n[oa]s?\s+)?)?(?<!\w)(?:{_BR_CLASSES})"
    r"\s+(?:n[º°.]\s*)?\d[\d.\-]*(?:/[A-Z]{2})?(?!\w)"
)
_SUMULA = (
    r"(?i:s[úu]mula)(?:\s+(?i:vinculante))?\s+(?:n[º°.]\s*)?\d+"
    r"(?:\s+d[oa]\s+(?:STF|STJ|TST|TSE|TRF\d?))?"
)
_TEMA = r"(?i:tema)\s+(?:n[º°.]\s*)?\d[\d.]*(?:\s+d[oa]\s+(?:STF|STJ|TST))?"
_NAME = "[A-Z][\\w'\u2019&.-]*"
_VERSUS = (
    r"(?!(?:In|See|Cf|As|The|From|Under|Per|Em|En|Ver|Véase|Segundo|Según)\s)"
    rf"{_NAME}(?:\s+(?:{_NAME}|of|the|and|&))*?\s+v(?:s)?\.\s+{_NAME}"
    rf"(?:\s+(?:(?:of|for|and|&)(?:\s+the)?\s+)?{_NAME})*(?:,\s*\d+\s+[A-Z][\w.]*\s+\d+(?:\s*\(\d{{4}}\))?)?"
)
_REPORTER = (
    r"\d+\s+(?:U\.S\.|S\.\s?Ct\.|F\.(?:2d|3d|4th)?|F\.\s?Supp\.(?:\s?2d|\s?3d)?)\s+\d+"
    r"(?:\s*\(\d{4}\))?"
)
_ES = (
    r"(?:STS|STC|SAP|SAN|STSJ|ATS|AAP|ATC|STJUE)\s+(?:[A-ZÁÉÍÓÚ][a-záéíóúñ]+\s+)?"
    r"(?:n[º°.]\s*)?\d+/\d{2,4}"
)
_SENTENCIA = r"(?i:sentencias?|senten[çc]a|auto|resoluci[óo]n)\s+(?:n[º°.]\s*)?\d+/\d{2,4}"
_CO = r"(?<!\w)(?:C|T|SU)-\d{3,4}(?:/\d{2,4}|\s+de\s+\d{4})"
PRECEDENT = re.compile(
    rf"(?<!\w)(?:{_BR}|{_SUMULA}|{_TEMA}|{_VERSUS}|{_REPORTER}|{_ES}|{_SENTENCIA}|{_CO})"
)

# Connectors left at the end of a match ("del Estatuto de") belong to the next words.
_TRAILING = re.compile(r"(?:[\s,.;]+(?:d[aoe]s?|del|la|las|los|el|of|the|y|e|and))*[\s,.;]*\Z")

#: The named patterns a category may detect.
PATTERNS: dict[str, re.Pattern[str]] = {
    "article_citation": ARTICLE,
    "precedent_citation": PRECEDENT,
}


def find_pattern(name: str, text: str) -> Iterator[tuple[int, int, str]]:
    """Every match of the named pattern in ``text``: ``(start, end, citation)``."""
    for m in PATTERNS[name].finditer(text):
        cite = _TRAILING.sub("", m.group())
        yield m.start(), m.start() + len(cite), cite
