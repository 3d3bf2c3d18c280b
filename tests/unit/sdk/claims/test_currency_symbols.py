"""The table of local currency symbols agrees with babel's CLDR data."""

from __future__ import annotations

import pytest
from babel import Locale
from babel.numbers import get_territory_currencies

from turnstream.sdk.claims.currency_symbols import AFTER_ONLY, LOCAL_SYMBOLS


@pytest.mark.parametrize("locale", ["cs_CZ", "pl_PL", "hu_HU", "id_ID", "sq_AL", "ms_MY"])
def test_a_territory_symbol_is_the_one_babel_gives(locale: str) -> None:
    loc = Locale.parse(locale)
    code = get_territory_currencies(loc.territory)[0]
    assert LOCAL_SYMBOLS[loc.currency_symbols[code]] == code


@pytest.mark.parametrize("locale", ["sv_SE", "da_DK", "nb_NO"])
def test_a_symbol_of_several_currencies_stays_as_written(locale: str) -> None:
    loc = Locale.parse(locale)
    symbol = loc.currency_symbols[get_territory_currencies(loc.territory)[0]].rstrip(".")
    assert LOCAL_SYMBOLS[symbol] == symbol


def test_words_and_units_of_the_three_languages_are_left_out() -> None:
    assert {"KM", "den", "Le", "Ar", "R", "K"}.isdisjoint(LOCAL_SYMBOLS)
    assert set(LOCAL_SYMBOLS) >= AFTER_ONLY
