"""Amounts by what stands before or after: money, percent, durations, dosages, quantities,
installments; ranges with each joiner; numbers in words only before a unit."""

from __future__ import annotations

import pytest

from tests.unit.sdk.claims.readers import mention, read


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("pt", "De R$ 249,90 por R$ 199,90.", "R$ 199,90", 199.9, "BRL"),
        ("pt", "Sai por R$1.299,00 à vista", "R$1.299,00", 1299.0, "BRL"),
        ("pt", "Custa US$ 50 lá fora", "US$ 50", 50, "USD"),
        ("pt", "São 25 reais por mês", "25 reais", 25, "BRL"),
        ("pt", "Frete de BRL 15,00", "BRL 15,00", 15.0, "BRL"),
        ("pt", "Investimento de R$ 2 milhões", "R$ 2 milhões", 2_000_000, "BRL"),
        ("pt", "Um prêmio de 3 mil reais", "3 mil reais", 3000, "BRL"),
        ("en", "Now $199.99, was $249.99", "$199.99", 199.99, "$"),
        ("en", "It costs 20 dollars", "20 dollars", 20, "USD"),
        ("en", "A fee of £4.50 applies", "£4.50", 4.5, "GBP"),
        ("en", "Budget: USD 1,200", "USD 1,200", 1200, "USD"),
        ("en", "Raised $2.5 million", "$2.5 million", 2_500_000, "$"),
        ("en", "Only $10k left", "$10k", 10_000, "$"),
        ("es", "Cuesta 45,90 € con IVA", "45,90 €", 45.9, "EUR"),
        ("es", "Cuesta 1.234,50 euros", "1.234,50 euros", 1234.5, "EUR"),
        ("es", "Son MX$ 350 por persona", "MX$ 350", 350, "MXN"),
        ("es", "Son 20 dólares", "20 dólares", 20, "USD"),
        ("es", "Vale €15", "€15", 15, "EUR"),
    ],
)
def test_money(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value"),
    [
        ("pt", "Desconto de 10% hoje", "10%", 10),
        ("pt", "Juros de 2,5 % ao mês", "2,5 %", 2.5),
        ("pt", "Alta de 15 por cento", "15 por cento", 15),
        ("en", "Save 25 percent now", "25 percent", 25),
        ("en", "A drop of -5% this year", "-5%", -5),
        ("es", "Un 30 por ciento menos", "30 por ciento", 30),
        ("es", "IVA del 21%", "21%", 21),
    ],
)
def test_percent(lang, text, fragment, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("percent", value, "%")


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("pt", "Entrega em 7 dias úteis", "7 dias úteis", 7, "business_day"),
        ("pt", "Garantia de 12 meses", "12 meses", 12, "month"),
        ("pt", "Responde em 24h", "24h", 24, "hour"),
        ("pt", "Leva 30 minutos", "30 minutos", 30, "minute"),
        ("pt", "Garantia de 2 anos", "2 anos", 2, "year"),
        ("en", "Ships in 2 business days", "2 business days", 2, "business_day"),
        ("en", "Return within 30 days", "30 days", 30, "day"),
        ("en", "Wait 3 weeks", "3 weeks", 3, "week"),
        ("en", "Takes 45 seconds", "45 seconds", 45, "second"),
        ("es", "Llega en 5 días hábiles", "5 días hábiles", 5, "business_day"),
        ("es", "Tarda 2 horas", "2 horas", 2, "hour"),
        ("es", "Garantía de 3 años", "3 años", 3, "year"),
    ],
)
def test_durations(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("duration", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "value", "unit"),
    [
        ("pt", "Tome 500 mg a cada 8 horas", "500 mg", "dosage", 500, "mg"),
        ("pt", "Dose de 2,5 mg/kg", "2,5 mg/kg", "dosage", 2.5, "mg/kg"),
        ("en", "Take 5 ml twice a day", "5 ml", "dosage", 5, "ml"),
        ("en", "Vitamin D 1000 IU daily", "1000 IU", "dosage", 1000, "iu"),
        ("es", "Tome 400 mcg al día", "400 mcg", "dosage", 400, "mcg"),
        ("es", "Vitamina D 2000 UI", "2000 UI", "dosage", 2000, "ui"),
        ("pt", "Pacote de 1,5 kg", "1,5 kg", "quantity", 1.5, "kg"),
        ("pt", "Garrafa de 2 litros", "2 litros", "quantity", 2, "l"),
        ("en", "A 2.5 kg bag", "2.5 kg", "quantity", 2.5, "kg"),
        ("en", "128 GB of storage", "128 GB", "quantity", 128, "gb"),
        ("en", "It is 3 km away", "3 km", "quantity", 3, "km"),
        ("es", "Mide 30 cm de alto", "30 cm", "quantity", 30, "cm"),
        ("es", "Pesa 500 g", "500 g", "quantity", 500, "g"),
        ("es", "Hace 20°C", "20°C", "quantity", 20, "°c"),
    ],
)
def test_dosages_and_quantities(lang, text, fragment, cls, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == (cls, value, unit)


@pytest.mark.parametrize("lang", ["pt", "en", "es"])
def test_installments(lang):
    m = mention("R$ 1.000 em 10x sem juros", lang, "10x")
    assert (m.cls, m.value, m.unit, m.kind) == ("count", 10, None, "installments")


def test_a_times_sign_between_numbers_is_not_installments():
    assert all(m[1] != "count" or m[0] != "10x" for m in read("Foto 10x15 cm", "pt"))


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "value", "unit"),
    [
        (
            "pt",
            "Entrega de 3 a 5 dias úteis",
            "3 a 5 dias úteis",
            "duration",
            (3, 5),
            "business_day",
        ),
        ("pt", "Chega em 3 até 5 dias", "3 até 5 dias", "duration", (3, 5), "day"),
        ("pt", "De R$ 100 a R$ 200", "R$ 100 a R$ 200", "money", (100, 200), "BRL"),
        ("pt", "Entre R$ 100 e 200", "R$ 100 e 200", "money", (100, 200), "BRL"),
        ("pt", "Desconto de 10%-20%", "10%-20%", "percent", (10, 20), "%"),
        (
            "en",
            "Ships in 3-5 business days",
            "3-5 business days",
            "duration",
            (3, 5),
            "business_day",
        ),
        ("en", "Ships in 3\u20135 days", "3\u20135 days", "duration", (3, 5), "day"),
        ("en", "From $10 to $20", "$10 to $20", "money", (10, 20), "$"),
        ("en", "Open 2 until 4 hours", "2 until 4 hours", "duration", (2, 4), "hour"),
        ("en", "between 10 and 20 percent", "10 and 20 percent", "percent", (10, 20), "%"),
        (
            "es",
            "Llega de 3 a 5 días hábiles",
            "3 a 5 días hábiles",
            "duration",
            (3, 5),
            "business_day",
        ),
        ("es", "De 2 hasta 4 semanas", "2 hasta 4 semanas", "duration", (2, 4), "week"),
        ("es", "Entre 100 y 200 euros", "100 y 200 euros", "money", (100, 200), "EUR"),
    ],
)
def test_ranges_with_each_joiner(lang, text, fragment, cls, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit, m.is_range) == (cls, value, unit, True)
    assert m.as_json()["value"] == list(value)


def test_and_joins_a_range_only_after_between():
    # "3 e 5 dias" without "entre" is a count and a duration, not a range
    assert read("Comprei 3 e 5 dias depois voltei", "pt") == [
        ("3", "count", 3, None),
        ("5 dias", "duration", 5, "day"),
    ]


def test_amounts_of_different_classes_do_not_make_a_range():
    assert read("R$ 50 - 10% de desconto", "pt") == [
        ("R$ 50", "money", 50, "BRL"),
        ("10%", "percent", 10, "%"),
    ]


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "value", "unit"),
    [
        (
            "pt",
            "O prazo é de quinze dias úteis",
            "quinze dias úteis",
            "duration",
            15,
            "business_day",
        ),
        ("pt", "Custa vinte e cinco reais", "vinte e cinco reais", "money", 25, "BRL"),
        (
            "pt",
            "Entrega em três a cinco dias úteis",
            "três a cinco dias úteis",
            "duration",
            (3, 5),
            "business_day",
        ),
        (
            "en",
            "Within fifteen business days",
            "fifteen business days",
            "duration",
            15,
            "business_day",
        ),
        ("en", "Save twenty-five percent", "twenty-five percent", "percent", 25, "%"),
        ("en", "Ships in one business day", "one business day", "duration", 1, "business_day"),
        ("es", "En quince días hábiles", "quince días hábiles", "duration", 15, "business_day"),
        (
            "es",
            "Cuesta doscientos cincuenta euros",
            "doscientos cincuenta euros",
            "money",
            250,
            "EUR",
        ),
    ],
)
def test_numbers_in_words_before_a_unit(lang, text, fragment, cls, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit, m.in_words) == (cls, value, unit, True)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "Quinze pessoas vieram e uma delas voltou"),
        ("pt", "Um dia eu volto, uma semana depois"),
        ("en", "One day you will see, one of them is three"),
        ("en", "I have one question and two ideas"),
        ("es", "Un día llegó con una semana de retraso y dos amigos"),
    ],
)
def test_numbers_in_words_without_a_unit_are_not_read(lang, text):
    assert read(text, lang) == []


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("pt", "A ação subiu 50 centavos", "50 centavos", 0.5, None),
        ("en", "It costs 99 cents", "99 cents", 0.99, None),
        ("es", "Sube 20 céntimos", "20 céntimos", 0.2, None),
        ("pt", "Oscila entre C$ 16,4 milhões", "C$ 16,4 milhões", 16_400_000, "$"),
        ("pt", "Reduziria em USD$ 90 milhões", "USD$ 90 milhões", 90_000_000, "USD"),
        ("pt", "Uma ação de um bilhão de dólares", "um bilhão de dólares", 1_000_000_000, "USD"),
        ("es", "Un premio de dos millones de euros", "dos millones de euros", 2_000_000, "EUR"),
    ],
)
def test_cents_prefixes_before_a_sign_and_scales_in_words(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("es", "Precio: 17 940,00 €", "17 940,00 €", 17940.0, "EUR"),
        ("en", "Now 9 800 ₽ only", "9 800 ₽", 9800, "₽"),
        ("pt", "Apenas € 1 250", "€ 1 250", 1250, "EUR"),
    ],
)
def test_thousands_grouped_by_a_plain_space_with_a_currency(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


def test_a_plain_space_without_a_currency_keeps_two_numbers():
    assert read("Vieram 3 500 pessoas", "pt") == [("500", "count", 500, None)]


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "unit"),
    [("pt", "Custa 1 R$ só", "1 R$", "BRL"), ("es", "Son 20 US$ al mes", "20 US$", "USD")],
)
def test_a_symbol_with_letters_after_the_number(lang, text, fragment, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.unit) == ("money", unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("pt", "O prazo é de 30 (trinta) dias corridos.", "30 (trinta) dias corridos", 30, "day"),
        ("es", "Tiene 15 (quince) días hábiles.", "15 (quince) días hábiles", 15, "business_day"),
        ("en", "Within 10 (ten) business days.", "10 (ten) business days", 10, "business_day"),
    ],
)
def test_a_number_said_again_in_brackets_before_its_unit(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("duration", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("pt", "Um aquário de 10 galões", "10 galões", 10, "gal"),
        ("pt", "Fica a 325 quilometro daqui", "325 quilometro", 325, "km"),
        ("pt", "Uma área de 190 km2", "190 km2", 190, "km²"),
        ("pt", "Um asteroide de uma milha de largura", "uma milha", 1, "mi"),
        ("en", "A 1,171 cc engine", "1,171 cc", 1171, "cm³"),
        ("es", "Produce 500.000 barriles", "500.000 barriles", 500000, "bbl"),
        ("en", "A 16 bits chip", "16 bits", 16, "bit"),
    ],
)
def test_more_quantities(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("quantity", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "cls", "value"),
    [
        ("es", "Cuesta .75 € nada más", ".75 €", "money", 0.75),
        ("pt", "São ,25 ml por dose", ",25 ml", "dosage", 0.25),
        ("pt", "Uma taxa de ,5% ao mês", ",5%", "percent", 0.5),
    ],
)
def test_a_decimal_without_its_leading_zero(lang, text, fragment, cls, value):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value) == (cls, value)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("en", "Now EUR29.66 inc. VAT", "EUR29.66", 29.66, "EUR"),
        ("pt", "Por BRL49,90 à vista", "BRL49,90", 49.9, "BRL"),
    ],
)
def test_a_currency_code_glued_to_the_number(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


def test_letters_glued_to_digits_that_are_no_currency_code_make_a_code():
    assert read("Modelo ABC123 em estoque", "pt") == [("ABC123", "label", "ABC123", None)]


@pytest.mark.parametrize(
    ("text", "fragment", "cls", "value", "unit"),
    [
        ("Enjoy our 30-day returns", "30-day", "duration", 30, "day"),
        ("Comes with a 2-year warranty", "2-year", "duration", 2, "year"),
        ("A 10-gallon water cooler", "10-gallon", "quantity", 10, "gal"),
        ("A three-ton truck", "three-ton", "quantity", 3, "t"),
        ("Export 0.9 trillion cubic feet", "0.9 trillion cubic feet", "quantity", 9e11, "ft³"),
    ],
)
def test_a_unit_after_a_hyphen_in_english(text, fragment, cls, value, unit):
    m = mention(text, "en", fragment)
    assert (m.cls, m.value, m.unit) == (cls, value, unit)


def test_a_sign_after_a_hyphen_starts_the_other_end_of_a_range():
    assert read("Pay $5-$10 today", "en") == [("$5-$10", "money", (5, 10), "$")]


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("es", "Cuesta MXN$ 1,299.00 hoy", "MXN$ 1,299.00", 1299.0, "MXN"),
        ("es", "Sale ARS$ 1.500", "ARS$ 1.500", 1500, "ARS"),
        ("es", "Sale AR$ 1.500", "AR$ 1.500", 1500, "ARS"),
        ("es", "Cuesta U$S 49", "U$S 49", 49, "USD"),
        ("es", "Cuesta S/ 45.90", "S/ 45.90", 45.9, "PEN"),
        ("es", "Cuesta S/. 45,90", "S/. 45,90", 45.9, "PEN"),
        ("pt", "Custa BRL$ 10,00", "BRL$ 10,00", 10.0, "BRL"),
        ("pt", "Custa R $ 10,00", "R $ 10,00", 10.0, "BRL"),
        ("en", "It costs US $49.90", "US $49.90", 49.9, "USD"),
        ("en", "It costs USD$ 49.90", "USD$ 49.90", 49.9, "USD"),
        ("en", "It costs $49.90", "$49.90", 49.9, "$"),  # a bare sign stays "$"
        ("es", "Cuesta XYZ$ 3", "XYZ$ 3", 3, "$"),  # not a code: the sign's reading
    ],
)
def test_prefixes_of_several_letters(lang, text, fragment, value, unit):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "value", "unit"),
    [
        ("es", "El Pro Max cuesta $1,199.", "$1,199", 1199, "$"),
        ("pt", "O Pro Max sai por $1,199 à vista", "$1,199", 1199, "$"),
        ("en", "The Pro Max is $1.199 today", "$1.199", 1199, "$"),
        ("es", "De $1,099 a $1,199", "$1,099 a $1,199", (1099, 1199), "$"),
        # A currency whose price has three decimals keeps them.
        ("en", "The fee is KWD 1.250", "KWD 1.250", 1.25, "KWD"),
        # Two decimals stay decimals; a number that is no price keeps the language's mark.
        ("es", "Cuesta $1,99", "$1,99", 1.99, "$"),
    ],
)
def test_a_price_with_one_mark_before_three_digits_groups_thousands(
    lang, text, fragment, value, unit
):
    """No price but a few currencies' has three decimals: "$1,199" in es is 1199."""
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit) == ("money", value, unit)


def test_a_quantity_with_one_mark_before_three_digits_keeps_the_languages_mark():
    m = mention("Pesa 1,250 kg", "es", "1,250 kg")
    assert m.value == 1.25
