"""Dates: day first in pt and es, month first in en; numeric, ISO and with the month written."""

from __future__ import annotations

import pytest

from tests.unit.sdk.claims.readers import mention, read


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Chega em 15 de março de 2025.", "15 de março de 2025", "2025-03-15"),
        ("pt", "Chega em 15 de março.", "15 de março", "--03-15"),
        ("pt", "Feriado em 1º de maio", "1º de maio", "--05-01"),
        ("pt", "Vence 15 mar. 2025", "15 mar. 2025", "2025-03-15"),
        ("pt", "Vence 5 de fev", "5 de fev", "--02-05"),
        ("es", "Llega el 15 de marzo del 2025", "15 de marzo del 2025", "2025-03-15"),
        ("es", "Llega el 3 de septiembre", "3 de septiembre", "--09-03"),
        ("es", "Vence el 3 de sept. de 2026", "3 de sept. de 2026", "2026-09-03"),
        ("en", "Arrives March 15, 2025.", "March 15, 2025", "2025-03-15"),
        ("en", "Arrives Mar. 15th", "Mar. 15th", "--03-15"),
        ("en", "Arrives on the 3rd of April", "3rd of April", "--04-03"),
        ("en", "Arrives 15 March 2025", "15 March 2025", "2025-03-15"),
        ("en", "Due Sept 30", "Sept 30", "--09-30"),
    ],
)
def test_dates_with_the_month_written(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("date", value, None)


@pytest.mark.parametrize(
    ("lang", "text", "value"),
    [
        ("pt", "03/04/2025", "2025-04-03"),  # day first
        ("es", "03/04/2025", "2025-04-03"),
        ("en", "03/04/2025", "2025-03-04"),  # month first
        ("pt", "03/04", "--04-03"),
        ("en", "03/04", "--03-04"),
        ("pt", "15.03.2025", "2025-03-15"),
        ("es", "15-03-25", "2025-03-15"),
        ("en", "12/25/99", "1999-12-25"),
        ("en", "25/12/2025", "2025-12-25"),  # no 25th month: day first after all
        ("pt", "2025-03-15", "2025-03-15"),
        ("en", "2025-03-15T10:00:00Z", "2025-03-15"),
        ("es", "2025/03/15", "2025-03-15"),
    ],
)
def test_numeric_and_iso_dates(lang, text, value):
    assert read(f"Data: {text} ok", lang) == [(text, "date", value, None)]


def test_an_impossible_date_is_no_date():
    assert all(cls != "date" for _, cls, _, _ in read("Dia 31/02 não existe", "pt"))


def test_a_day_range_before_a_month_is_two_dates():
    assert read("Fechado de 10 a 15 de março", "pt") == [
        ("10", "date", "--03-10", None),
        ("15 de março", "date", "--03-15", None),
    ]
    assert read("Closed March 10-15", "en") == [
        ("March 10", "date", "--03-10", None),
        ("15", "date", "--03-15", None),
    ]


def test_a_fraction_before_a_unit_is_not_a_date():
    assert read("Use 1/2 kg de farinha", "pt") != [("1/2", "date", "--02-01", None)]
    assert all(cls != "date" for _, cls, _, _ in read("Use 1/2 kg de farinha", "pt"))


def test_a_full_stop_after_a_month_name_stays_out():
    assert mention("Chega em 4 de março.", "pt", "4 de março").end == len("Chega em 4 de março")


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("en", "Delivered on 5-Mar-2026.", "5-Mar-2026", "2026-03-05"),
        ("en", "Delivered on Mar-05-2026.", "Mar-05-2026", "2026-03-05"),
        ("en", "Delivered on 05-Mar-26.", "05-Mar-26", "2026-03-05"),
        ("en", "Delivered on 5/Mar/2026.", "5/Mar/2026", "2026-03-05"),
        ("en", "Delivered on 5.Mar.2026 at noon", "5.Mar.2026", "2026-03-05"),
        ("en", "Due Mar. 6, '26 at the latest", "Mar. 6, '26", "2026-03-06"),
        ("pt", "Chega em março 5, 2026.", "março 5, 2026", "2026-03-05"),
        ("pt", "Chega em mar-05-2026.", "mar-05-2026", "2026-03-05"),
        ("es", "Llega el marzo 5, 2026.", "marzo 5, 2026", "2026-03-05"),
        ("es", "Llega el 5.mar.2026 temprano", "5.mar.2026", "2026-03-05"),
        ("en", "Posted 2026-Mar-05 by staff", "2026-Mar-05", "2026-03-05"),
        ("en", "Posted 2026 March 5 by staff", "2026 March 5", "2026-03-05"),
        ("en", "Due 5 March '26 at the latest", "5 March '26", "2026-03-05"),
        ("es", "Abre el 1ro de mayo", "1ro de mayo", "--05-01"),
    ],
)
def test_month_names_with_separators_and_month_first(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value) == ("date", value)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "Em março 5 lojas abriram."),  # month first without a year: no date in pt
        ("es", "En marzo 5 tiendas abrieron."),
    ],
)
def test_month_first_needs_its_year_in_pt_and_es(lang, text):
    assert [m for m in read(text, lang) if m[1] == "date"] == []


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Entrega em 05/03-2026.", "05/03-2026", "2026-03-05"),
        ("pt", "Entrega em 5-3/2026.", "5-3/2026", "2026-03-05"),
        ("en", "Shipped on 2026/03-05.", "2026/03-05", "2026-03-05"),
        ("es", "Llega el 05.03/2026.", "05.03/2026", "2026-03-05"),
    ],
)
def test_mixed_separators(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value) == ("date", value)


def test_mixed_separators_need_a_four_digit_year():
    # a decimal then a hyphen: a range of doses, never 2 May 2010
    assert [r for r in read("Tome 2.5-10 mg por dia.", "pt") if r[1] == "date"] == []
