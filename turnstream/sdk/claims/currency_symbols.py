"""Currency symbols made of letters, as written after (or before) a number.

Each territory's own currency symbol in each CLDR locale (babel 2.19.0: for every locale with
a territory, the symbol of the territory's first currency, when it is letters only and not
the ISO code itself), plus the Cyrillic abbreviations shops still write for roubles,
hryvnias and leva, "TL" for the Turkish lira, "lei" for the Romanian leu and "đ" for the
dong. Left out: one-letter symbols ("R", "K") and those that are a unit, a word or an
abbreviation of pt/en/es ("KM", "den", "Le", "Ar", "CF", "FC", "UM", "SR", "DA", "DT").
A symbol of several currencies ("kr", "Rs", "Br") stays as written, like "$".

A table here rather than read from babel at import: reading the 755 locales took 2-9 s.
``tests/unit/sdk/claims/test_currency_symbols.py`` checks a sample against babel.
"""

from __future__ import annotations

__all__ = ["AFTER_ONLY", "LOCAL_SYMBOLS"]

#: Symbol (case counts) -> ISO 4217 code, or the symbol itself when several currencies share it.
LOCAL_SYMBOLS: dict[str, str] = {
    "Kz": "AOA",
    "Afl": "AWG",
    "FBu": "BIF",
    "Bs": "BOB",
    "Br": "Br",
    "Fdj": "DJF",
    "Nfk": "ERN",
    "FG": "GNF",
    "Ft": "HUF",
    "Rp": "IDR",
    "Ksh": "KES",
    "Rf": "MVR",
    "MK": "MWK",
    "RM": "MYR",
    "MTn": "MZN",
    "Gs": "PYG",
    "LEI": "RON",
    "Lei": "RON",
    "lei": "RON",
    "RF": "RWF",
    "Rs": "Rs",
    "Db": "STN",
    "LS": "SYP",
    "TL": "TRY",
    "TSh": "TZS",
    "USh": "UGX",
    "VT": "VUV",
    "FCFA": "XAF",
    "Cg": "XCG",
    "FCFP": "XPF",
    "kr": "kr",
    "Lekë": "ALL",
    "\u043b\u0432": "BGN",  # lv (lev)
    "Kč": "CZK",
    "\u1265\u122d": "ETB",  # birr
    "\u0631\u06cc\u0627\u0644": "IRR",  # rial
    "\u0441\u043e\u043c": "KGS",  # som
    "\u0434\u0435\u043d": "MKD",  # den (denar)
    "zł": "PLN",
    "\u0420": "RUB",  # R (rouble)
    "\u0440": "RUB",  # r. (rouble)
    "\u0440\u0443\u0431": "RUB",  # rub.
    "\u0440\u0443\u0431\u043b\u0435\u0439": "RUB",  # rublei
    "\u0433\u0440\u043d": "UAH",  # hrn. (hryvnia)
    "so\u02bbm": "UZS",
    "\u0441\u045e\u043c": "UZS",  # sum
    "đ": "VND",
}

#: Symbols read only after a number: before one they are words ("lei 8.078" is a law).
AFTER_ONLY = frozenset({"lei", "Lei", "LEI", "kr", "\u0440", "\u0420", "TL", "đ", "Br", "Bs", "Db"})
