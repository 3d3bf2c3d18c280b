"""Labels: numbers that name instead of measuring, by shape, by the word before, and codes.

Every pattern here is tried only where a run of digits starts (one anchored match each), not
over the whole text: a scan of 2 kB costs ~80 us a pattern, an anchored try ~1 us.
"""

from __future__ import annotations

import re

from turnstream.sdk.claims.mention import Language
from turnstream.sdk.claims.spans import Taken

__all__ = ["read_codes", "read_labels"]

_PATTERNS: list[tuple[str, str]] = [
    # Brazilian court case number (CNJ): NNNNNNN-DD.AAAA.J.TR.OOOO
    ("case_number", r"[0-9]{7}-[0-9]{2}\.[0-9]{4}\.[0-9]\.[0-9]{2}\.[0-9]{4}(?![\w-])"),
    # CPF, CNPJ: identifiers, never amounts
    ("code", r"[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}(?![\w-])"),
    ("code", r"[0-9]{2}\.[0-9]{3}\.[0-9]{3}/[0-9]{4}-[0-9]{2}(?![\w-])"),
    # phones: +CC ..., (AA) NNNNN-NNNN, NNN-NNN-NNNN, NNNNN-NNNN, 0800 NNN NNNN
    ("phone", r"\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?)(?:[ .-]?[0-9]{2,5}){1,4}(?![\w-])"),
    ("phone", r"\([0-9]{2,3}\) ?[0-9]{3,5}[ .-]?[0-9]{4}(?![\w-])"),
    ("phone", r"(?:1[ .-])?[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}(?![\w-])"),
    ("phone", r"(?:[0-9]{2} )?9[0-9]{4}-[0-9]{4}(?![\w-])"),
    ("phone", r"[2-5][0-9]{3}-[0-9]{4}(?![\w-])"),
    ("phone", r"0[38]00[ -]?[0-9]{3}[ -]?[0-9]{4}(?![\w-])"),
    # national numbers grouped by spaces: 91 123 45 67 and 612 34 56 78 (Spain), 912 345 678
    # (Spain, Portugal), 555 123 4567 (North America); never before a currency or a unit
    # ("123 456 789 €" is an amount in the SI style), checked in _shape
    ("spaced_phone", r"[6-9][0-9] [0-9]{3} [0-9]{2} [0-9]{2}(?![\w-]|[.,][0-9]| [0-9])"),
    ("spaced_phone", r"[6-9][0-9]{2}(?: [0-9]{2}){3}(?![\w-]|[.,][0-9]| [0-9])"),
    ("spaced_phone", r"[2-9][0-9]{2} [0-9]{3} [0-9]{3,4}(?![\w-]|[.,][0-9]| [0-9])"),
    # "24/7", "24x7": every hour of every day, a schedule (never 24 July, unless a word that
    # introduces a date stands before it: checked in _shape)
    ("schedule", r"24 ?[/x\u00d7] ?7(?![\w/]|[.,][0-9])"),
    # postal codes: CEP 01310-100 (and 01.310-100), ZIP+4 90210-1234
    ("postal_code", r"[0-9]{2}\.?[0-9]{3}-[0-9]{3}(?![\w-])"),
    ("postal_code", r"[0-9]{5}-[0-9]{4}(?![\w-])"),
    # time of day: 14:30, 14h30, 9 am, 2:30 p.m.
    (
        "time",
        r"(?:[01]?[0-9]|2[0-3])(?::[0-5][0-9](?::[0-5][0-9])?|h[0-5][0-9])"
        r"(?:\s?(?:[ap](?:\.m\.|m)(?!\w)|hs?(?!\w)|hrs(?!\w)))?(?![\w:]|[.,][0-9])",
    ),
    ("time", r"(?:1[0-2]|0?[1-9])\s?[ap](?:\.m\.|m)(?!\w)"),
]
# One pattern, one named group per shape ("phone__3"): one anchored try per candidate.
_SHAPE = re.compile(
    "|".join(f"(?P<{kind}__{i}>{p})" for i, (kind, p) in enumerate(_PATTERNS)), re.IGNORECASE
)
_HOUR = re.compile(
    r"(?:[01]?[0-9]|2[0-3])(?P<sfx>h|hs|\s?horas|\s?hrs|\s?o'clock|:00)?(?![\w:]|[.,][0-9])",
    re.IGNORECASE,
)
# "às 15", "a las 3" name an hour alone; "as", "das", "las", "at" (also articles and
# prepositions) only with a suffix: "das 9h", "at 3 o'clock".
_AT_BARE = frozenset({"às", "a las"})
_AT_SUFFIXED = frozenset({"as", "das", "las", "at", "até as", "desde las", "hasta las"})

# The word before says what the number names.
_KEYWORDS: dict[str, str] = {
    "order": "pedido|pedidos|order|orden|encomenda|compra",
    "protocol": "protocolo|protocol|ticket|chamado|atendimento|solicitação|solicitud|"
    "reclamação|reclamación|incidente|incident",
    "case_number": "processo|case|caso|expediente|autos",
    "article": "art.|arts.|artigo|artigos|article|articles|artículo|artículos|articulo|lei|law|"
    "ley|§|inciso|cláusula|clause|súmula|decreto|decree|section|seção|sección|parágrafo|"
    "paragraph|párrafo",
    "size": "tamanho|tam.|size|talla|numeração|calço|calzo",
    "page": "página|páginas|page|pages|pág.|págs.|pg.|p.|pp.",
    "code": "número|numero|number|código|code|sku|ref.|referência|reference|referencia|"
    "modelo|model|lote|batch|nota fiscal|nf|nf-e|fatura|invoice|factura|versão|version|"
    "versión|final|rastreio|tracking|seguimiento|cupom|coupon|cupón",
    "postal_code": "cep|zip|zip code|código postal|cp|c.p.|postal code|postcode",
    "phone": "tel.|tel|telefone|fone|phone|teléfono|telefono|celular|whatsapp|móvil|"
    "ligue para|call|llame al|ligue",
}
_BEFORE = {word: kind for kind, words in _KEYWORDS.items() for word in words.split("|")}
# Markers between the word and the number; alone ("nº 123", "#123") they name a code.
_MARKERS = frozenset(
    {
        "nº",
        "n°",
        "n.º",
        "n.°",
        "n.o",
        "no.",
        "nr.",
        "nr",
        "nro.",
        "núm.",
        "número",
        "numero",
        "number",
        "#",
        "id",
        "n",
    }
)
_LINKS = frozenset({"do", "da", "de", "del", "of", "the", "o", "el"})
# A verb between the keyword and the number: "O CEP é 01310100", "¿Tu código postal es
# 28013?", "Your zip code is 94107". Like a link, it counts only after a keyword.
_COPULAS = frozenset({"é", "es", "is", "era", "was", "são", "son", "are", "será"})
# Words that introduce a date: after them "24/7" is 24 July.
_DATE_WORDS = frozenset(
    {"dia", "em", "até", "ate", "desde", "el", "día", "hasta", "on", "by", "until", "from"}
)
_PLURAL = frozenset({"arts.", "artigos", "articles", "artículos", "páginas", "pages", "págs."})
# Kinds whose word is also a verb or common ("order 3 pizzas", "código 7") need a marker,
# or four characters or more.
# The last words before a number that may make it a label: keywords (and the last word of
# the two-word ones), markers, the words before an hour, links ("número do pedido").
_RELEVANT = frozenset(
    {key.split()[-1] for key in _BEFORE}
    | _MARKERS
    | {"às", "as", "das", "las", "at"}
    | {"do", "da", "de", "del", "of", "the", "o", "el", ""}
    | _COPULAS
    | {f"{key}nº" for key in _BEFORE}
    | {f"{key}n°" for key in _BEFORE}
)
_KEY_LAST = frozenset(key.split()[-1] for key in _BEFORE) | _MARKERS
_WEAK = frozenset({"order", "protocol", "case_number", "code"})
_TOKEN = re.compile(r"[A-Za-z]{0,5}-?[0-9][0-9A-Za-z]*(?:[-./][0-9A-Za-z]+)*[ºª°]?")
_PHONE = re.compile(r"\+?\(?[0-9][0-9() .-]{6,}[0-9]")
_LIST_MORE = re.compile(
    r"(?:\s*(?:,|e|and|y|a|to|-|\u2013)\s*)([0-9][0-9A-Za-z]*[ºª°]?)", re.IGNORECASE
)
_OPENERS = "([{\"'\u201c\u00ab\u00bf\u00a1"

_ORDINAL = re.compile(
    r"[0-9]{1,4}(?:\.?[ºª]|°(?![CcFf](?!\w))|st|nd|rd|th"
    r"|\.?(?:er|era|ero|do|da|ro|ra|to|ta|vo|va|mo|ma|no|na))(?!\w)"
)
_CODE = re.compile(r"[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*(?![\w-])")
_DIGIT_CODE = re.compile(r"[0-9]+(?:(?:[-./][0-9]+){2,}|/[0-9]{4,})(?![\w-]|[.,][0-9])")


_ZIP4 = re.compile(r"[0-9]{5}-[0-9]{4}")


def _digits(text: str) -> int:
    return sum(c.isdigit() for c in text)


def _glued(text: str, start: int) -> bool:
    """True when the character before ``start`` ties it to a word or a number."""
    if start == 0:
        return False
    before = text[start - 1]
    if before.isalnum() or before == "_":
        return True
    return before in ".,-/" and start > 1 and text[start - 2].isalnum()


def read_labels(taken: Taken, runs: list[tuple[int, int]], lang: Language) -> None:
    """Add the labels by shape (case number, id, phone, postal code, time) and by word before.

    ``runs`` are the (start, end) of the runs of digits of the text.
    """
    text = taken.text
    mask = taken.mask
    for start, stop in runs:
        if mask[start]:
            continue
        before = text[start - 1] if start else " "
        if before in "+(":
            if not _glued(text, start - 1) and _shape(taken, start - 1, lang):
                continue
        elif before.isspace() or not _glued(text, start):
            if _may_have_shape(text, stop) and _shape(taken, start, lang):
                continue
        elif (at := _token_start_before(text, start)) < start and not _glued(text, at):
            _by_word(taken, at, _words_before(text, at))
            continue
        else:
            continue
        # the words before matter only after a space or a marker ("às 15h", "nº 123", "#5"),
        # and only when the last one can say something (most runs: no, at one set look-up)
        if not (before.isspace() or before in ":#ºª°§"):
            continue
        last = _last_word(text, start)
        if last not in _RELEVANT:
            continue
        words = _words_before(text, start)
        if (last in _LINKS or last in _COPULAS) and not (len(words) > 1 and _key_word(words[-2])):
            continue  # "de 3 a 5", "el 15", "é 20": a link after no keyword
        if not _at_hour(taken, start, words):
            _by_word(taken, start, words)


def _may_have_shape(text: str, stop: int) -> bool:
    """Whether a shape can start at the run of digits ending at ``stop``: every shape goes on
    after its first run with a separator, "h", or a space and a digit or am/pm."""
    after = text[stop : stop + 1]
    if after == " ":
        return text[stop + 1 : stop + 2] in _SPACE_THEN
    return after != "" and after in _SHAPE_GOES_ON


def _last_word(text: str, start: int) -> str:
    """The word just before ``start`` (lower case, without ':' '#' or an opening bracket)."""
    words = text[max(0, start - 32) : start].rsplit(None, 1)
    return words[-1].lower().rstrip(":#").lstrip(_OPENERS) if words else ""


_SHAPE_GOES_ON = frozenset("-.:/)hHaApPx\u00d7")
_SPACE_THEN = frozenset("0123456789aApP")


def _shape(taken: Taken, at: int, lang: Language) -> bool:
    text = taken.text
    m = _SHAPE.match(text, at)
    if m is None:
        return False
    kind = (m.lastgroup or "").partition("__")[0]
    found = m.group()
    if kind == "phone" and (
        not 8 <= _digits(found) <= 15 or re.fullmatch(r"(19|20)[0-9]{2}-(19|20)[0-9]{2}", found)
    ):
        return False  # too short or long for a phone; "2024-2025" is two years
    if kind == "phone" and lang == "en" and _ZIP4.fullmatch(found):
        kind = "postal_code"  # 90210-1234: a ZIP+4 in English, a mobile number in Brazil
    if kind == "spaced_phone":
        if _amount_around(text, at, m.end()):
            return False
        kind = "phone"
    if kind == "schedule" and _last_word(text, at) in _DATE_WORDS:
        return False  # "até 24/7": the 24th of July
    return taken.label(at, m.end(), kind)


def _amount_around(text: str, start: int, end: int) -> bool:
    """Whether a currency stands before ``start`` or a unit after ``end``."""
    from turnstream.sdk.claims.units import currency_before, unit_after

    return currency_before(text, start) is not None or unit_after(text, end) is not None


def _key_word(word: str) -> bool:
    return word.rstrip(":#").lstrip(_OPENERS) in _KEY_LAST


def _words_before(text: str, start: int) -> list[str]:
    return text[max(0, start - 40) : start].lower().split()[-4:]


def _at_hour(taken: Taken, start: int, words: list[str]) -> bool:
    if not words:
        return False
    last, two = words[-1], " ".join(words[-2:])
    bare = last in _AT_BARE or two in _AT_BARE
    if not bare and last not in _AT_SUFFIXED and two not in _AT_SUFFIXED:
        return False
    m = _HOUR.match(taken.text, start)
    if m is None or (not bare and not m["sfx"]):
        return False
    return taken.label(start, m.end(), "time")


def _token_start_before(text: str, start: int) -> int:
    """Where a token that ends in the digits at ``start`` begins: "A1234", "BR-123"."""
    i = start
    if i > 0 and text[i - 1] == "-":
        i -= 1
    j = i
    while j > 0 and i - j < 5 and text[j - 1].isascii() and text[j - 1].isalpha():
        j -= 1
    return j if j < i else start


def _keyword(text: str, start: int, words: list[str]) -> tuple[str, bool] | None:
    """The kind the words before ``start`` give, and whether a marker (nº, #, :) stood there."""
    if start and not text[start - 1].isspace() and text[start - 1] not in ":#ºª°§":
        return None
    words = list(words)
    marked = numbered = False
    while words:
        word = words[-1]
        if word in _MARKERS:
            marked = numbered = True
            words.pop()
        elif len(word) > 1 and word[-1] in ":#":
            marked = True
            numbered = numbered or word[-1] == "#"
            words[-1] = word[:-1]
        elif len(word) > 2 and word.endswith(("nº", "n°")) and word[:-2] in _BEFORE:
            marked = True
            words[-1] = word[:-2]
        else:
            break
    if len(words) > 1 and (words[-1] in _LINKS or words[-1] in _COPULAS):
        words.pop()
    for n in (2, 1):
        if len(words) >= n:
            key = " ".join(words[-n:]).lstrip(_OPENERS)
            if key in _BEFORE:
                return _BEFORE[key], marked
    return ("code", True) if numbered else None


def _by_word(taken: Taken, start: int, words: list[str]) -> None:
    text = taken.text
    found = _keyword(text, start, words)
    if found is None:
        return
    kind, marked = found
    m = (_PHONE if kind == "phone" else _TOKEN).match(text, start)
    if m is None:
        return
    token = m.group().rstrip(".-")
    end = start + len(token)
    if kind == "phone" and not 8 <= _digits(token) <= 15:
        return
    if kind in _WEAK and not marked and len(token) < 4 and token.isdigit():
        return
    if not taken.label(start, end, kind):
        return
    if not _PLURAL.isdisjoint(w.rstrip(":") for w in words[-3:]):
        pos = end
        while (more := _LIST_MORE.match(text, pos)) and taken.label(
            more.start(1), more.end(1), kind
        ):
            pos = more.end(1)


def read_codes(taken: Taken, runs: list[int]) -> None:
    """Add ordinals (1º, 2ª, 3rd, 2.º, 1er) and codes (SKU-123, X200, 1.2.3) as labels."""
    text = taken.text
    for start in runs:
        if not taken.free(start, start + 1):
            continue
        if not _glued(text, start) and (m := _ORDINAL.match(text, start)):
            taken.label(start, m.end(), "ordinal")
            continue
        at = start
        while (
            at > 0 and text[at - 1].isascii() and (text[at - 1].isalnum() or text[at - 1] in "-_")
        ):
            at -= 1
        if _glued(text, at):
            continue
        m = _CODE.match(text, at)
        if m is not None and m.end() > start and not m.group().isdigit():
            token = m.group()
            if any(c.isalpha() for c in token):
                taken.label(at, m.end(), "code")
                continue
        if at == start and (m := _DIGIT_CODE.match(text, start)):
            taken.label(start, m.end(), "code")
