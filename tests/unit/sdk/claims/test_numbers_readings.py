"""Readings fixed by rule: phones in groups, postal codes after a verb, "24/7", numbers in a
name, "libras", day-month pairs, days in words, long scales, local currency symbols.

Each rule is checked in every language it applies to, with the reading it replaced.
"""

from __future__ import annotations

import pytest

from tests.unit.sdk.claims.readers import mention, read
from turnstream.sdk.claims.numbers import read_numbers as read_numbers_all


@pytest.mark.parametrize(
    ("lang", "text", "fragment"),
    [
        ("es", "Llámanos al 91 123 45 67 de 9:00 a 18:00.", "91 123 45 67"),
        ("es", "Mi móvil es 612 34 56 78, escríbeme.", "612 34 56 78"),
        ("pt", "O número em Lisboa é 212 345 678 para reservas.", "212 345 678"),
        ("en", "Reach the desk on 415 555 0100 any time.", "415 555 0100"),
    ],
)
def test_a_national_number_grouped_by_spaces_is_a_phone(lang, text, fragment):
    m = mention(text, lang, fragment)
    assert (m.cls, m.kind) == ("label", "phone")


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("es", "Pagaste 123 456 789 € en total", "123 456 789 €", 123456789, "EUR"),
        ("pt", "O lote saiu por R$ 912 345 678 no leilão", "R$ 912 345 678", 912345678, "BRL"),
    ],
)
def test_grouped_digits_with_a_currency_stay_an_amount(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment"),
    [
        ("es", "¿Tu código postal es 28013?", "28013"),
        ("pt", "O CEP é 01310100, certo?", "01310100"),
        ("en", "Your zip code is 94107, right?", "94107"),
        ("es", "Envíalo al CP 28013 de Madrid", "28013"),
    ],
)
def test_a_postal_code_after_its_word_and_a_verb_is_a_postal_code(lang, text, fragment):
    m = mention(text, lang, fragment)
    assert (m.cls, m.kind) == ("label", "postal_code")


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "O suporte atende 24/7, inclusive feriados."),
        ("en", "Our team is available 24/7 for you."),
        ("es", "Atención al cliente 24x7 todo el año."),
    ],
)
def test_twenty_four_seven_is_a_schedule_not_a_date(lang, text):
    [m] = [m for m in read_numbers_all(text, lang) if m.text.startswith("24")]
    assert (m.cls, m.kind) == ("label", "schedule")


@pytest.mark.parametrize(
    ("lang", "text", "value"),
    [
        ("pt", "A entrega fica para até 24/7.", "--07-24"),
        ("es", "Llega el 24/7 por la tarde.", "--07-24"),
        ("en", "It ships by 24/7 at the latest.", "--07-24"),
    ],
)
def test_twenty_four_seven_after_a_date_word_is_the_24th_of_july(lang, text, value):
    assert mention(text, lang, "24/7").value == value


@pytest.mark.parametrize(
    ("lang", "text", "fragment"),
    [
        ("pt", "O iPhone 15 Pro custa R$ 7.000 hoje", "15"),
        ("en", "The PlayStation 5 Slim is back in stock", "5"),
        ("es", "El Galaxy 24 Ultra llega mañana", "24"),
    ],
)
def test_a_number_inside_a_name_is_a_label_not_a_count(lang, text, fragment):
    m = mention(text, lang, fragment)
    assert (m.cls, m.kind) == ("label", "name")


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Temos 3 cores em estoque", "3", 3),
        ("en", "Buy 2 shirts today", "2", 2),
        ("es", "Quedan 4 unidades", "4", 4),
        ("en", "Shipping 3 items now.", "3", 3),  # a capital that opens the sentence
    ],
)
def test_an_integer_before_a_word_is_still_a_count(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value) == ("count", value)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "value", "unit"),
    [
        ("pt", "Leve 2 libras de carne", "2 libras", "quantity", 2, "lb"),
        ("es", "Usa 5 libras de azúcar", "5 libras", "quantity", 5, "lb"),
        ("en", "Use 2 pounds of beef", "2 pounds", "quantity", 2, "lb"),
        ("pt", "Custa 100 libras esterlinas", "100 libras esterlinas", "money", 100, "GBP"),
        ("es", "Son 20 libras esterlinas", "20 libras esterlinas", "money", 20, "GBP"),
        ("en", "It costs £20 in London", "£20", "money", 20, "GBP"),
    ],
)
def test_libras_weigh_and_sterling_is_money(lang, text, fragment, cls, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == (cls, value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Entrega em 15.03 pela manhã", "15.03", "--03-15"),
        ("pt", "Entrega no dia 15-03 pela manhã", "15-03", "--03-15"),
        ("es", "Llega el 4-22 sin falta", "4-22", "--04-22"),
        ("es", "Entrega 05.01 sin coste", "05.01", "--01-05"),
        ("en", "We ship on 03-15 as planned", "03-15", "--03-15"),
    ],
)
def test_a_dotted_or_hyphenated_day_and_month_is_a_date(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value) == ("date", value)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls"),
    [
        ("pt", "Custa 15.90 no total", "15.90", "money"),  # month 90: two decimals
        ("pt", "Sai por R$ 15.03 hoje", "R$ 15.03", "money"),
        ("es", "Tarda 10-12 días", "10-12 días", "duration"),
        ("en", "It costs 15.03 now", "15.03", "money"),  # a dotted pair in English: a decimal
    ],
)
def test_pairs_that_are_no_dates(lang, text, fragment, cls):
    assert mention(text, lang, fragment).cls == cls


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Volto no primeiro de janeiro.", "primeiro de janeiro", "--01-01"),
        ("pt", "Chega dia dois de março de 2025", "dois de março de 2025", "2025-03-02"),
        ("es", "Abrimos el primero de mayo", "primero de mayo", "--05-01"),
        ("es", "Llega el tres de junio de 2024", "tres de junio de 2024", "2024-06-03"),
        ("en", "Back on the first of May", "first of May", "--05-01"),
        ("en", "Due by March twenty-first, 2026", "March twenty-first, 2026", "2026-03-21"),
    ],
)
def test_a_day_in_words_before_its_month_is_a_date(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.in_words) == ("date", value, True)


@pytest.mark.parametrize(
    ("lang", "text"),
    [("pt", "Um dia eu volto"), ("en", "You may first check the size"), ("es", "Un día más")],
)
def test_words_without_a_month_are_no_date(lang, text):
    assert read(text, lang) == []


@pytest.mark.parametrize(
    ("lang", "text", "value", "unit"),
    [
        ("es", "Una deuda de tres billones de euros", 3 * 10**12, "EUR"),
        ("es", "Unos dos billones quinientos mil millones de pesos", 25 * 10**11, "$"),
        ("es", "Cerca de 2 trillones de dólares", 2 * 10**18, "USD"),
        ("pt", "Uma dívida de três trilhões de reais", 3 * 10**12, "BRL"),
        ("en", "About two quadrillion dollars", 2 * 10**15, "USD"),
    ],
)
def test_long_scales(lang, text, value, unit):
    [m] = read_numbers_all(text, lang)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("en", "Price 9 800 Kč today", "9 800 Kč", 9800, "CZK"),
        ("en", "Only 3,49 zł each", "3,49 zł", 3.49, "PLN"),
        ("en", "Now 3,990 Ft", "3,990 Ft", 3990, "HUF"),
        ("en", "Pris 172 kr", "172 kr", 172, "kr"),  # three crowns: the symbol as written
        ("en", "Total 419 \u0440\u0443\u0431. with tax", "419 \u0440\u0443\u0431.", 419, "RUB"),
        ("es", "Cuesta 135 lei en Bucarest", "135 lei", 135, "RON"),
        ("pt", "Custa Rp 31.500 em Bali", "Rp 31.500", 31500, "IDR"),
    ],
)
def test_local_currency_symbols(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "unit"),
    [
        ("en", "The board is 10 ft long", "10 ft", "quantity", "ft"),  # lower case: feet
        ("pt", "A lei 8.078 protege você", "8.078", "label", None),  # "lei" before: a law
    ],
)
def test_local_symbols_keep_their_case_and_side(lang, text, fragment, cls, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.unit) == (cls, unit)


@pytest.mark.parametrize(
    ("lang", "text", "first", "second"),
    [
        ("pt", "R$ 139,99 R$ 135,99", "R$ 139,99", "R$ 135,99"),
        ("es", "3,49 zł 1,75 zł", "3,49 zł", "1,75 zł"),
        ("en", "$ 791.00 $ 479.00", "$ 791.00", "$ 479.00"),
    ],
)
def test_two_prices_side_by_side_keep_their_own_currency(lang, text, first, second):
    assert [m[0] for m in read(text, lang)] == [first, second]
