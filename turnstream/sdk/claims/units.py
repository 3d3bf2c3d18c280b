"""What may stand before or after a number: currencies (from babel's locale data) and units."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from babel import Locale
from babel.numbers import list_currencies

from turnstream.sdk.claims.currency_symbols import AFTER_ONLY, LOCAL_SYMBOLS
from turnstream.sdk.claims.mention import NumberClass

__all__ = ["Unit", "currency_at", "currency_before", "is_currency_code", "unit_after"]


@dataclass(frozen=True, slots=True)
class Unit:
    """What a number measures: its class, the normalized unit and, for counts, a kind."""

    cls: NumberClass
    unit: str | None
    kind: str | None = None


# Locales whose currency symbols an output in pt, en or es may use. "$" alone stays "$":
# it is the dollar and the peso of half the locales here.
_LOCALES = (
    "pt_BR",
    "pt_PT",
    "pt_AO",
    "en_US",
    "en_GB",
    "en_CA",
    "en_AU",
    "en_IN",
    "es_ES",
    "es_MX",
    "es_AR",
    "es_CO",
    "es_CL",
    "es_PE",
    "es_US",
)


@cache
def _symbols() -> dict[str, str]:
    """Currency symbol (and ISO 4217 code) -> ISO code, from babel's CLDR data."""
    table: dict[str, str] = {code: code for code in list_currencies()}
    seen: dict[str, set[str]] = {}
    for name in _LOCALES:
        for code, symbol in Locale.parse(name).currency_symbols.items():
            if symbol != code and not symbol.isalpha():
                seen.setdefault(symbol, set()).add(code)
    for symbol, codes in seen.items():
        table[symbol] = codes.pop() if len(codes) == 1 else symbol
    table["$"] = "$"
    table.setdefault("US$", "USD")
    table.setdefault("R$", "BRL")
    table.setdefault("S/", "PEN")
    table.setdefault("S/.", "PEN")
    return table


# A currency before the number: an ISO code or a symbol (one to three letters then a sign).
_SIGNS = "$€£¥₹₩₽₺₴₦₱₪₫₤₶₡₲₵₸₼₾฿₭₮₳"
_SPACES = frozenset(" \u00a0\u202f")
_BEFORE = re.compile(
    rf"(?<![^\W\d_])(U\$S|S/\.?|[A-Z]{{3}}|[A-Za-z]{{0,3}}[{_SIGNS}])[ \u00a0\u202f]?\Z"
)
# "US $49.90", "R $ 10,00": the country's letters, a space, then the sign.
_SPACED_PREFIX = re.compile(r"(?<![^\W\d_])(US|R|MX|CA|AU|NZ|HK)[ \u00a0]\Z")


# Prefixes of several letters before "$" that shops write and CLDR does not list.
_DOLLAR_PREFIXES = {
    "U$S": "USD",
    "U$": "USD",
    "AR$": "ARS",
    "CL$": "CLP",
    "CO$": "COP",
    "COL$": "COP",
    "UY$": "UYU",
    "RD$": "DOP",
    "Mex$": "MXN",
}


def _code(symbol: str) -> str | None:
    """The ISO code of a symbol: an ISO code before a sign ("MXN$", "BRL$", "USD$") is that
    code; another unknown prefix before a sign keeps the sign's reading ("$")."""
    code = _symbols().get(symbol) or _DOLLAR_PREFIXES.get(symbol)
    if code is None and symbol[-1] in _SIGNS:
        head = symbol[:-1]
        if len(head) == 3 and head.isupper() and _symbols().get(head) == head:
            return head
        code = _symbols().get(symbol[-1], symbol[-1])
    return code


def is_currency_code(word: str) -> bool:
    """True for an ISO 4217 code (upper case) babel knows."""
    return len(word) == 3 and word.isupper() and _symbols().get(word) == word


def currency_before(text: str, start: int) -> tuple[int, str] | None:
    """The currency written just before ``start``: (where it starts, its ISO code or "$")."""
    # Every symbol ends in a sign or an upper-case letter (of a code): test that first, one
    # character, before searching the window (most numbers have no currency before them).
    last = text[start - 1 : start]
    if last in _SPACES:
        last = text[start - 2 : start - 1]
    if not last:
        return None
    if last in _SIGNS or "A" <= last <= "Z" or last in "/.":
        m = _BEFORE.search(text, max(0, start - 6), start)
        code = None if m is None else _code(m.group(1))
        if m is not None and code is not None:
            if code == "$" and (p := _SPACED_PREFIX.search(text, max(0, m.start() - 4), m.start())):
                return p.start(), _code(p.group(1) + "$") or "$"
            return m.start(), code
    if last in _LOCAL_LAST or last == ".":
        head = text[max(0, start - 6) : start].rstrip(" \u00a0\u202f").rstrip(".")
        # the symbol is the last 2 to 4 letters: three dict look-ups before any search
        if head[-2:] in _BEFORE_LOCAL or head[-3:] in _BEFORE_LOCAL or head[-4:] in _BEFORE_LOCAL:
            return _local_before(text, start)
    return None


_LOCAL_BEFORE = re.compile(r"(?<![^\W\d_])([^\W\d_]{2,4})\.?[ \u00a0\u202f]?\Z")
# Symbols that may stand before a number, and their last letters: one set look-up rules out
# most numbers (those after a word ending in another letter).
_BEFORE_LOCAL = {s: code for s, code in LOCAL_SYMBOLS.items() if s not in AFTER_ONLY}
_LOCAL_LAST = frozenset(s[-1] for s in _BEFORE_LOCAL)


def _local_before(text: str, start: int) -> tuple[int, str] | None:
    """A local symbol before the number ("Rp 31.500", "Rs164.00"), when it is one."""
    m = _LOCAL_BEFORE.search(text, max(0, start - 6), start)
    code = None if m is None else _BEFORE_LOCAL.get(m.group(1))
    return None if m is None or code is None else (m.start(), code)


def _entries() -> dict[str, Unit]:
    money = {
        "reais": "BRL",
        "real": "BRL",
        "dólares": "USD",
        "dólar": "USD",
        "dolares": "USD",
        "dollars": "USD",
        "dollar": "USD",
        "bucks": "USD",
        "euros": "EUR",
        "euro": "EUR",
        "pesos": "$",
        "peso": "$",
        "€": "EUR",
        "£": "GBP",
        "dólares americanos": "USD",
        "dólares estadounidenses": "USD",
        "us dollars": "USD",
        "libras esterlinas": "GBP",
        "libra esterlina": "GBP",
        "pounds sterling": "GBP",
        "reales": "BRL",
    }
    time = {
        "business_day": "dias úteis|dia útil|dias uteis|dia util|business days|business day|"
        "working days|working day|días hábiles|día hábil|dias habiles|dia habil|"
        "días laborables|día laborable",
        "day": "dias corridos|dias|dia|days|day|días|día|calendar days|días naturales|"
        "días corridos",
        "hour": "horas|hora|hours|hour|hrs|hr|h|hs",
        "minute": "minutos|minuto|minutes|minute|mins|min",
        "second": "segundos|seconds|second|secs|sec|seg",
        "week": "semanas|semana|weeks|week",
        "month": "meses|mês|mes|months|month",
        "year": "anos|ano|years|year|años|año|yrs",
    }
    percent = (
        "%|por cento|percent|per cent|por ciento|pontos percentuais|percentage points|"
        "puntos porcentuales|pp"
    )
    dosage = {
        "mg": "mg|miligramas|miligrama|milligrams|milligram|miligramos|miligramo",
        "mcg": "mcg|µg|μg|microgramas|micrograms|microgramos",
        "ml": "ml|mililitros|mililitro|milliliters|millilitres|milliliter",
        "ui": "ui|unidades internacionais|unidades internacionales",
        "iu": "iu|international units",
        "mg/kg": "mg/kg",
        "mg/ml": "mg/ml",
        "mg/dia": "mg/dia",
        "mg/day": "mg/day",
        "gotas": "gotas",
        "drops": "drops",
    }
    quantity = {
        "kg": "kg|quilos|quilo|kilos|kilo|quilogramas|kilograms|kilogramos|kgs",
        "g": "g|gramas|grama|grams|gram|gramos|gramo|gr",
        "t": "toneladas|tonelada|tons|ton|tonnes|tonne|metric tons|metric ton|"
        "toneladas métricas|tonelada métrica",
        "ft³": "cubic feet|cubic foot|pés cúbicos|pies cúbicos",
        "km": "km|quilômetros|quilometros|quilômetro|quilometro|kilometers|kilometres|"
        "kilometer|kilometre|kilómetros|kilometros|kilómetro|kilometro",
        "km²": "km²|km2|quilômetros quadrados|square kilometers|kilómetros cuadrados",
        "cm²": "cm²|cm2",
        "cm³": "cm³|cm3|cc",
        "m": "m|metros|metro|meters|metres|meter|metre",
        "cm": "cm|centímetros|centimetros|centimeters|centimetres",
        "mm": "mm|milímetros|milimetros|millimeters|millimetres",
        "l": "l|litros|litro|liters|litres|liter|litre|lt|lts",
        "km/h": "km/h|kmh",
        "m²": "m²|m2|metros quadrados|square meters|metros cuadrados",
        "m³": "m³|m3",
        "gb": "gb",
        "mb": "mb",
        "tb": "tb",
        "kb": "kb",
        "ghz": "ghz",
        "mhz": "mhz",
        "w": "w|watts",
        "kw": "kw",
        "kwh": "kwh",
        "v": "v|volts",
        "mah": "mah",
        "mbps": "mbps",
        "gbps": "gbps",
        "°c": "°c|ºc|graus celsius",
        "°f": "°f|ºf",
        "in": "polegadas|polegada|inches|inch|pulgadas|pulgada",
        "ft": "ft|feet|foot|pés|pé|pies|pie",
        "gal": "gal|galões|galoes|galão|galao|gallons|gallon|galones|galón",
        "acre": "acres|acre",
        "bbl": "barris|barril|barrels|barrel|barriles",
        "bit": "bits|bit",
        "byte": "bytes|byte",
        "mph": "mph|milhas por hora|miles per hour|millas por hora",
        # "libra(s)" alone weighs, as "pounds" does in English (and as Recognizers-Text's
        # Portuguese dimensions read "duas libras"); the currency is "libras esterlinas" or £
        "lb": "lb|lbs|pounds|pound|libras|libra",
        "oz": "oz|onças|onça|onzas|onza|ounces|ounce",
        "mp": "mp|megapixels",
        "kcal": "kcal|calorias|calories|calorías",
        "mi": "miles|mile|millas|milla|milhas|milha",
    }
    table: dict[str, Unit] = {}
    for word, code in money.items():
        table[word] = Unit("money", code)
    for unit, words in time.items():
        for word in words.split("|"):
            table[word] = Unit("duration", unit)
    for word in percent.split("|"):
        table[word] = Unit("percent", "%")
    for cls, groups in (("dosage", dosage), ("quantity", quantity)):
        for unit, words in groups.items():
            for word in words.split("|"):
                table[word] = Unit(cls, unit)  # type: ignore[arg-type]
    for word in ("centavos", "centavo", "cents", "cent", "céntimos", "céntimo"):
        table[word] = Unit("money", None, "cents")  # a hundredth of an unnamed currency
    for word in (
        "x",
        "\u00d7",
        "parcelas",
        "prestações",
        "installments",
        "cuotas",
        "mensualidades",
    ):
        table[word] = Unit("count", None, "installments")
    return table


_UNITS = _entries()
# The next one or two words (or a sign) after the number, looked up in the table: one
# anchored match and two dict look-ups; an alternation of the 250 spellings took 19 us a
# number, this takes about 1.
_NEXT = re.compile(
    r"[ \u00a0\u202f]?(?P<sign>[%\u00d7]|[€£¥₹₩₽₺₴₦₱₪₫₤₶₡₲₵₸₼₾฿₭₮₳$]|[°º][CcFf](?!\w))"
    # a word unit may also follow a hyphen: "30-day returns", "a 10-gallon cooler"
    r"|[ \u00a0\u202f-]?(?P<w1>[^\W\d_]+(?:[23](?!\w))?)(?:(?P<sep>[ /])(?P<w2>[^\W\d_]+))?"
)
_GLUED = frozenset({"x", "\u00d7"})  # "10x" is installments; "10 x 20 cm" is not


def unit_after(text: str, end: int) -> tuple[int, Unit] | None:
    """The unit written just after ``end``: (where it ends, what it measures)."""
    m = _NEXT.match(text, end)
    if m is None:
        return None
    if m["w1"] and text[m.end("w1") : m.end("w1") + 1] == "$" and not m["w2"]:
        code = _code(m["w1"] + "$")  # "1 R$", "20 US$": a symbol after the number
        return (m.end("w1") + 1, Unit("money", code)) if code else None
    if m["sign"]:
        word, stop = m["sign"].lower(), m.end("sign")
        if word in _SIGNS and word not in _UNITS:  # any currency sign after the number
            return stop, Unit("money", _symbols().get(word, word))
    else:
        w1 = m["w1"]
        if m["w2"] and (two := f"{w1}{m['sep']}{m['w2']}".lower()) in _UNITS:
            return m.end("w2"), _UNITS[two]
        word, stop = w1.lower(), m.end("w1")
        if word in _UNITS and w1 != word and w1 in LOCAL_SYMBOLS:
            word = ""  # "3,990 Ft" is forints; "10 ft" feet (the symbol's case decides)
        if word not in _UNITS:
            if len(w1) == 3 and w1.isupper() and w1 in _symbols():
                return stop, Unit("money", w1)
            local = LOCAL_SYMBOLS.get(w1)
            if local is not None:  # "299 Kč", "3,49 zł", "172 kr", "419 rub."
                return stop + (text[stop : stop + 1] == "."), Unit("money", local)
            return None
    if word in _GLUED and (
        m.start() != m.start("sign" if m["sign"] else "w1") or text[stop : stop + 1].isdigit()
    ):
        return None
    unit = _UNITS.get(word)
    return None if unit is None else (stop, unit)


_AT = re.compile(rf"(U\$S|S/\.?|[A-Z]{{3}}|[A-Za-z]{{0,3}}[{_SIGNS}])[ \u00a0\u202f]?(?=[0-9])")


def currency_at(text: str, start: int) -> tuple[int, str] | None:
    """A currency written at ``start`` before a number: (where the number starts, its code)."""
    m = _AT.match(text, start)
    if m is None:
        return None
    code = _code(m.group(1))
    return None if code is None else (m.end(), code)
