"""Names the evidence does not hold: "The Zephyr Trail is $99.90." when no tool of the turn
returned a Zephyr Trail.

Such a number is about an object the turn knows nothing of; another object's $99.90 must
not make it right. A run of capitalised words (joined by spaces or hyphens) names an
unlisted object when it holds a capitalised word that no string value of the evidence
holds (and that is no day, month, holiday, payment brand, greeting or acronym of three
letters or fewer: "USD") and:

- it goes on after a name the evidence holds with a model's word ("City Flex Pro",
  "Max", "Plus", "Ultra", "Kids": another model; "City Flex Sneaker" or "Masculino" is
  the held product described), or
- it stands after a definite article, a possessive or a contraction of one ("the",
  "our", "o", "do", "el", "del", ...; not "a", "um", "un": "it's a Great Deal"), or
- it opens the sentence with two such words ("Zephyr Trail costs ...").

A run that describes a held name right before it names nothing: in apposition ("the City
Flex, our Best Seller,"), after a copula ("é o nosso Mais Vendido") or "of"/"de" ("da Linha
Performance"), or as a tagline after a dash ending the sentence ("— o Presente Perfeito!").

The sentence's first word is capitalised anyway: alone, it names nothing. Unknown words
before a held name are its brand or a qualifier ("Nimbus City Flex"). Not found: a name in
lower case, a one-word name opening the sentence, a name after another word ("Our pick:
Zephyr, $99.90").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MODEL_WORDS", "Unlisted", "unlisted_runs"]


@dataclass(frozen=True, slots=True)
class Unlisted:
    """An object the output names that the evidence does not hold."""

    #: The name as written.
    name: str


_DETERMINERS = frozenset(
    (
        "the", "a", "an", "this", "that", "these", "those", "our", "my", "your", "its", "their",
        "o", "os", "as", "um", "uma", "este", "esta", "estes", "estas", "esse", "essa", "esses",
        "essas", "aquele", "aquela", "nosso", "nossa", "meu", "minha", "seu", "sua", "teu", "tua",
        "do", "da", "dos", "das", "no", "na", "nos", "nas", "pelo", "pela", "pelos", "pelas",
        "ao", "aos", "el", "la", "los", "las", "un", "una", "ese", "esa", "esos", "esas",
        "nuestro", "nuestra", "mi", "tu", "su", "del", "al"
    )
)  # fmt: skip
#: The determiners that name an object: not the indefinite ones ("it's a Great Deal").
_NAMING = _DETERMINERS - {"a", "an", "um", "uma", "un", "una"}
# Capitalised words that name no product (folded): days, months, holidays, payment brands,
# greetings, and the small words a title-cased line capitalises ("Shop The City Flex Now
# For $99.90").
_COMMON = frozenset(
    (
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
        "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december", "segunda", "terca", "quarta", "quinta", "sexta", "sabado",
        "domingo", "feira", "janeiro", "fevereiro", "marco", "abril", "maio", "junho", "julho",
        "agosto", "setembro", "outubro", "novembro", "dezembro", "lunes", "martes", "miercoles",
        "jueves", "viernes", "enero", "febrero", "marzo", "mayo", "junio", "julio", "agosto",
        "septiembre", "octubre", "noviembre", "diciembre", "black", "cyber", "christmas", "natal",
        "navidad", "easter", "pascoa", "pascua", "visa", "mastercard", "amex", "paypal", "pix",
        "boleto", "hello", "hi", "hey", "dear", "ola", "oi", "hola", "buenos", "buenas", "bom",
        "boa", "querido", "querida", "estimado", "estimada", "good", "thanks", "obrigado",
        "obrigada", "gracias",
        "at", "for", "now", "only", "just", "from", "by", "in", "on", "with", "and", "or", "to",
        "is", "are", "was", "new", "today", "sale", "shop", "buy", "get", "off", "price",
        "por", "em", "com", "ou", "para", "de", "so", "apenas", "agora", "hoje", "preco",
        "en", "con", "y", "ahora", "solo", "hoy", "precio", "oferta", "compre", "leve"
    )
)  # fmt: skip
#: Words that make a held name another model ("City Flex Pro", "Galaxy S24 FE", "RTX 4070
#: Ti"), folded; any other word after a held name describes it ("City Flex Sneaker",
#: "Aero Runner Masculino").
MODEL_WORDS = frozenset(
    (
        "pro", "max", "plus", "lite", "mini", "ultra", "neo", "evo", "elite", "prime",
        "turbo", "next", "junior", "kids", "infantil", "slim", "fe", "ti", "super", "se", "xl",
        "air"
    )
)  # fmt: skip
#: Words (lower case, accents kept: "é" is, "e" is and) that link a held name to the
#: phrase that describes it: a copula ("is our Best Seller") or "of" ("of the Urban Line").
_LINKS = frozenset(("is", "are", "é", "são", "es", "son", "of", "de"))
#: What may stand between a held name and its description besides those words.
_APPOSITION = re.compile(r"[^\S\n]*[,(\u2013\u2014][^\S\n]*")
#: The rest of a title-cased phrase: capitalised words, up to two small words before each
#: ("Campeão de Vendas", "Ideal para o Dia a Dia"); then what closes an apposition (a
#: comma, a parenthesis, a dash, the sentence's end), never a clause's words ("our Zephyr
#: Trail is $99.90"); and what may end a sentence after a tagline.
_REST = (
    r"(?:(?:[^\S\n]+[a-z\u00df-\u00ff][^\W\d_]*){0,2}"
    r"[^\S\n]+[A-Z\u00c0-\u00d6\u00d8-\u00de][^\W\d_]*)*"
)
_CLOSING = re.compile(_REST + r"[^\S\n]*(?:[,)\u2013\u2014.!?;:]|$)")
_ENDING = re.compile(_REST + r"[^\w\n]*$")
_DASH = re.compile(r"[^\S\n]*[\u2013\u2014][^\S\n]*|[^\S\n]+-[^\S\n]+")
#: The first letter of a word, in upper case (Latin: the reading made look-alikes Latin).
_CAPITAL = re.compile(r"(?<![^\W_])[A-Z\u00c0-\u00d6\u00d8-\u00de]")
_JOIN = re.compile(r"[^\S\n]+|[^\S\n]*-[^\S\n]*")


def _capital(original: str, token: re.Match[str]) -> bool:
    """A capitalised word that may be part of a name (no article: "The", "El")."""
    word = original[token.start() : token.end()]
    return (
        len(word) > 1
        and word[0].isupper()
        and not (word.isupper() and len(word) <= 3)
        and token.group() not in _DETERMINERS
    )


def _joined(original: str, a: re.Match[str], b: re.Match[str]) -> bool:
    return _JOIN.fullmatch(original, a.end(), b.start()) is not None


def _describes(
    original: str,
    tokens: Sequence[re.Match[str]],
    owners: Sequence[object | None],
    vocabulary: frozenset[str],
    i: int,
    end: int,
) -> int | None:
    """Where the description ends when the run at token ``i`` (after a determiner; it
    ends at character ``end``) describes the held name right before it: "the City Flex,
    our Best Seller,", "o City Flex é o nosso Mais Vendido", "el City Flex de la Línea
    Performance". At most two linking words or articles between; after a comma or a
    parenthesis (apposition), the phrase closes ("the City Flex, the Zephyr Trail is
    $99.90" is a list, "Compared with the City Flex, our Zephyr Trail is $99.90." goes on);
    the description's later runs are part of it ("o Tênis Ideal para o Dia a Dia,")."""
    h = i - 2
    while h > i - 4 and h >= 0:
        word = original[tokens[h].start() : tokens[h].end()].lower()
        if word not in _LINKS and word not in _NAMING:
            break
        h -= 1
    if h < 0 or (owners[h] is None and tokens[h].group() not in vocabulary):
        return None
    apposition = False
    for a, b in zip(tokens[h : i - 1], tokens[h + 1 : i], strict=True):
        if _JOIN.fullmatch(original, a.end(), b.start()) is None:
            if _APPOSITION.fullmatch(original, a.end(), b.start()) is None:
                return None
            apposition = True
    if not apposition:
        return end
    closed = _CLOSING.match(original, end)
    return None if closed is None else closed.end()


def _tagline(
    original: str,
    tokens: Sequence[re.Match[str]],
    owners: Sequence[object | None],
    i: int,
    end: int,
) -> int | None:
    """The sentence's end when the run at token ``i`` (after a determiner; it ends at
    ``end``) is a tagline: after a dash, it ends a sentence that names a held object before
    it ("O City Flex sai por R$ 99,90 — o Presente Perfeito!")."""
    tagline = (
        i >= 2
        and _DASH.fullmatch(original, tokens[i - 2].end(), tokens[i - 1].start()) is not None
        and _ENDING.match(original, end) is not None
        and any(owners[k] is not None for k in range(i - 1))
    )
    return len(original) if tagline else None


def unlisted_runs(
    original: str,
    tokens: Sequence[re.Match[str]],
    owners: Sequence[object | None],
    vocabulary: frozenset[str],
) -> list[tuple[int, int, Unlisted]]:
    """The runs of ``tokens`` (words of the folded ``original``, a sentence) that name an
    unlisted object, as (first, end, object) token indices; ``owners`` holds each token's
    object (None for a word that names none) and ``vocabulary`` every folded word the
    evidence's strings hold."""

    def unknown(k: int) -> bool:
        word = tokens[k].group()
        return owners[k] is None and word not in vocabulary and word not in _COMMON

    # Only capitalised words start or continue a run; a sentence whose only capital opens
    # it (most) has none.
    starts = [m.start() for m in _CAPITAL.finditer(original)]
    if not tokens or all(at == tokens[0].start() for at in starts):
        return []
    at_start = {t.start(): k for k, t in enumerate(tokens)}
    capital = {
        k for at in starts if (k := at_start.get(at)) is not None and _capital(original, tokens[k])
    }
    out: list[tuple[int, int, Unlisted]] = []
    end = -1
    described = -1  # where a description of a held name ends (its runs name nothing)
    for i in sorted(capital):
        if i < end or tokens[i].start() < described:
            continue  # inside the run before, or inside a description
        end = i + 1
        while end in capital and _joined(original, tokens[end - 1], tokens[end]):
            end += 1
        strange = [k for k in range(i, end) if k > 0 and unknown(k)]
        known = [k for k in range(i, end) if owners[k] is not None]
        if strange:
            after_known = bool(known) and any(
                k > min(known) and tokens[k].group() in MODEL_WORDS for k in strange
            )
            determined = i > 0 and tokens[i - 1].group() in _NAMING
            opening = i == 0 and unknown(0)
            if determined and not known:
                stop = tokens[end - 1].end()
                upto = _describes(original, tokens, owners, vocabulary, i, stop)
                if upto is None:
                    upto = _tagline(original, tokens, owners, i, stop)
                if upto is not None:
                    described, determined = upto, False
            if after_known or (not known and (determined or opening)):
                name = original[tokens[i].start() : tokens[end - 1].end()]
                out.append((i, end, Unlisted(name)))
    return out
