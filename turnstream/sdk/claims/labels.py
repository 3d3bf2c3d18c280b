"""Labels: numbers that name instead of measuring, by shape, by the word before, and codes."""

from __future__ import annotations

import re

from turnstream.sdk.claims.spans import Taken

__all__ = ["read_codes", "read_labels"]

_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    # Brazilian court case number (CNJ): NNNNNNN-DD.AAAA.J.TR.OOOO
    (
        "case_number",
        re.compile(r"(?<![\w.-])[0-9]{7}-[0-9]{2}\.[0-9]{4}\.[0-9]\.[0-9]{2}\.[0-9]{4}(?![\w-])"),
    ),
    # CPF, CNPJ: identifiers, never amounts
    ("code", re.compile(r"(?<![\w./-])[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}(?![\w-])")),
    ("code", re.compile(r"(?<![\w./-])[0-9]{2}\.[0-9]{3}\.[0-9]{3}/[0-9]{4}-[0-9]{2}(?![\w-])")),
    # phones: +CC ..., (AA) NNNNN-NNNN, NNN-NNN-NNNN, NNNNN-NNNN, 0800 NNN NNNN
    (
        "phone",
        re.compile(
            r"(?<![\w+])\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?)(?:[ .-]?[0-9]{2,5}){1,4}(?![\w-])"
        ),
    ),
    ("phone", re.compile(r"(?<![\w)])\([0-9]{2,3}\)[ ]?[0-9]{3,5}[ .-]?[0-9]{4}(?![\w-])")),
    ("phone", re.compile(r"(?<![\w./-])[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}(?![\w-])")),
    ("phone", re.compile(r"(?<![\w./-])(?:[0-9]{2} )?9[0-9]{4}-[0-9]{4}(?![\w-])")),
    ("phone", re.compile(r"(?<![\w./-])[2-5][0-9]{3}-[0-9]{4}(?![\w-])")),
    ("phone", re.compile(r"(?<![\w./-])0[38]00[ -]?[0-9]{3}[ -]?[0-9]{4}(?![\w-])")),
    # postal codes: CEP 01310-100 (and 01.310-100), ZIP+4 90210-1234
    ("postal_code", re.compile(r"(?<![\w./-])[0-9]{2}\.?[0-9]{3}-[0-9]{3}(?![\w-])")),
    ("postal_code", re.compile(r"(?<![\w./-])[0-9]{5}-[0-9]{4}(?![\w-])")),
    # time of day: 14:30, 14h30, 9 am, 2:30 p.m.
    (
        "time",
        re.compile(
            r"(?<![\w:.,])(?:[01]?[0-9]|2[0-3])(?::[0-5][0-9](?::[0-5][0-9])?|h[0-5][0-9])"
            r"(?:\s?(?:[ap](?:\.m\.|m)(?!\w)|hs?(?!\w)|hrs(?!\w)))?(?![\w:]|[.,][0-9])",
            re.IGNORECASE,
        ),
    ),
    ("time", re.compile(r"(?<![\w:.,])(?:1[0-2]|0?[1-9])\s?[ap](?:\.m\.|m)(?!\w)", re.IGNORECASE)),
]
# "às 15h", "das 9h", "a las 3", "at 3 o'clock": an hour after a word that says "at"
_AT_HOUR = re.compile(
    r"(?<!\w)(?:às|as|das|até as|até às|a partir das|a las|las|desde las|hasta las|at)\s+"
    r"(?P<t>(?:[01]?[0-9]|2[0-3])(?:h|hs|\s?horas|\s?hrs|\s?o'clock|:00)?)(?![\w:]|[.,][0-9])",
    re.IGNORECASE,
)

# The word before says what the number names. Kinds whose word is also a verb or common
# ("order 3 pizzas", "código 7") need a marker (nº, #, number, :) or four characters or more.
_BEFORE: dict[str, str] = {
    "pedido": "order",
    "pedidos": "order",
    "order": "order",
    "orden": "order",
    "encomenda": "order",
    "compra": "order",
    "protocolo": "protocol",
    "protocol": "protocol",
    "ticket": "protocol",
    "chamado": "protocol",
    "atendimento": "protocol",
    "solicitação": "protocol",
    "solicitud": "protocol",
    "reclamação": "protocol",
    "reclamación": "protocol",
    "incidente": "protocol",
    "processo": "case_number",
    "case": "case_number",
    "caso": "case_number",
    "expediente": "case_number",
    "autos": "case_number",
    "art.": "article",
    "arts.": "article",
    "artigo": "article",
    "artigos": "article",
    "article": "article",
    "articles": "article",
    "artículo": "article",
    "artículos": "article",
    "articulo": "article",
    "lei": "article",
    "law": "article",
    "ley": "article",
    "§": "article",
    "inciso": "article",
    "cláusula": "article",
    "clause": "article",
    "súmula": "article",
    "decreto": "article",
    "decree": "article",
    "section": "article",
    "seção": "article",
    "sección": "article",
    "parágrafo": "article",
    "paragraph": "article",
    "párrafo": "article",
    "tamanho": "size",
    "tam.": "size",
    "size": "size",
    "talla": "size",
    "numeração": "size",
    "calço": "size",
    "calzo": "size",
    "página": "page",
    "páginas": "page",
    "page": "page",
    "pages": "page",
    "pág.": "page",
    "págs.": "page",
    "pg.": "page",
    "p.": "page",
    "pp.": "page",
    "nº": "code",
    "n.º": "code",
    "n°": "code",
    "no.": "code",
    "nr.": "code",
    "núm.": "code",
    "número": "code",
    "numero": "code",
    "number": "code",
    "#": "code",
    "código": "code",
    "code": "code",
    "sku": "code",
    "ref.": "code",
    "referência": "code",
    "reference": "code",
    "referencia": "code",
    "modelo": "code",
    "model": "code",
    "lote": "code",
    "batch": "code",
    "nota fiscal": "code",
    "nf": "code",
    "nf-e": "code",
    "fatura": "code",
    "invoice": "code",
    "factura": "code",
    "versão": "code",
    "version": "code",
    "versión": "code",
    "final": "code",
    "rastreio": "code",
    "tracking": "code",
    "seguimiento": "code",
    "cupom": "code",
    "coupon": "code",
    "cupón": "code",
    "id": "code",
    "cep": "postal_code",
    "zip": "postal_code",
    "zip code": "postal_code",
    "código postal": "postal_code",
    "cp": "postal_code",
    "c.p.": "postal_code",
    "postal code": "postal_code",
    "postcode": "postal_code",
    "tel.": "phone",
    "tel": "phone",
    "telefone": "phone",
    "fone": "phone",
    "phone": "phone",
    "teléfono": "phone",
    "telefono": "phone",
    "celular": "phone",
    "whatsapp": "phone",
    "móvil": "phone",
    "ligue para": "phone",
    "call": "phone",
    "llame al": "phone",
}
_WEAK = frozenset({"order", "protocol", "case_number", "code"})
_KEY_ALT = "|".join(re.escape(k) for k in sorted(_BEFORE, key=len, reverse=True))
_MARKER = r"(?:n\.?\s?[º°o]\.?|nr\.?|n[úu]m(?:ero|\.)?|number|no\.|#|id|ID|:)"
_TOKEN = r"[A-Za-z]{0,5}-?[0-9][0-9A-Za-z]*(?:[-./][0-9A-Za-z]+)*[ºª°]?"
_PHONE = r"\+?\(?[0-9][0-9() .-]{6,}[0-9]"
_BY_WORD = re.compile(
    rf"(?<![\w.])(?P<k>{_KEY_ALT})(?!-)(?P<mk>(?:\s*{_MARKER})*)\s*(?:do|de|del|of|the)?\s*"
    rf"(?P<t>{_PHONE}|{_TOKEN})",
    re.IGNORECASE,
)
_LIST_MORE = re.compile(rf"(?:\s*(?:,|e|and|y|a|to|-|\u2013)\s*)(?P<t>{_TOKEN})", re.IGNORECASE)

_ORDINAL = re.compile(
    r"(?<![\w.,])[0-9]{1,4}(?:\.?[ºª]|°(?![CcFf]\b)|st|nd|rd|th|\.?(?:er|era|ero|do|da|ro|ra|to|ta|vo|va|mo|ma|no|na))(?!\w)"
)
_CODE = re.compile(
    r"(?<![\w-])(?=[\w/.-]*[0-9])(?=[\w/.-]*[A-Za-z])[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*(?![\w-])"
)
_DIGIT_CODE = re.compile(r"(?<![\w./-])[0-9]+(?:(?:[-./][0-9]+){2,}|/[0-9]{4,})(?![\w-]|[.,][0-9])")


def _digits(text: str) -> int:
    return sum(c.isdigit() for c in text)


def read_labels(taken: Taken) -> None:
    """Add the labels by shape (case number, id, phone, postal code, time) and by word before."""
    text = taken.text
    for kind, pattern in _SHAPES:
        for m in pattern.finditer(text):
            if kind == "phone" and not 8 <= _digits(m.group()) <= 15:
                continue
            if kind == "phone" and re.fullmatch(r"(19|20)[0-9]{2}-(19|20)[0-9]{2}", m.group()):
                continue  # 2024-2025 is two years
            taken.label(m.start(), m.end(), kind)
    for m in _AT_HOUR.finditer(text):
        taken.label(m.start("t"), m.end("t"), "time")
    for m in _BY_WORD.finditer(text):
        kind = _BEFORE[m["k"].lower()]
        token = m["t"]
        start = m.start("t")
        if token.rstrip()[-1:] == "." or token.endswith("-"):
            token = token.rstrip(".-")
        end = start + len(token)
        if kind == "phone":
            if not 8 <= _digits(token) <= 15:
                continue
        elif token.startswith(("+", "(")) or " " in token:
            continue
        marked = bool(m["mk"].strip())
        if kind in _WEAK and not marked and len(token) < 4 and token.isdigit():
            continue
        if not taken.label(start, end, kind):
            continue
        if m["k"].lower().endswith("s.") or m["k"].lower() in {
            "artigos",
            "articles",
            "artículos",
            "páginas",
            "pages",
        }:
            pos = end
            while (more := _LIST_MORE.match(text, pos)) and taken.label(
                more.start("t"), more.end("t"), kind
            ):
                pos = more.end("t")


def read_codes(taken: Taken) -> None:
    """Add ordinals (1º, 2ª, 3rd, 2.º, 1er) and codes (SKU-123, X200, 1.2.3) as labels."""
    text = taken.text
    for m in _ORDINAL.finditer(text):
        taken.label(m.start(), m.end(), "ordinal")
    for pattern in (_CODE, _DIGIT_CODE):
        for m in pattern.finditer(text):
            taken.label(m.start(), m.end(), "code")
