"""Codes and ordinals, the rest rules, the decimal mark, one mention per number, spans."""

from __future__ import annotations

import pytest

from tests.unit.sdk.claims.readers import mention, read
from turnstream.sdk.claims.mention import Mention
from turnstream.sdk.claims.numbers import read_numbers
from turnstream.sdk.claims.numerals import parse_digits


@pytest.mark.parametrize(
    ("lang", "text", "fragment"),
    [
        ("pt", "Ficou em 1º lugar", "1º"),
        ("pt", "Na 2ª feira", "2ª"),
        ("pt", "O 1.º andar", "1.º"),
        ("en", "Our 3rd store and the 21st edition", "3rd"),
        ("en", "Our 3rd store and the 21st edition", "21st"),
        ("es", "El 1er piso y la 2da planta", "1er"),
        ("es", "El 1er piso y la 2da planta", "2da"),
        ("es", "En el 3.º lugar", "3.º"),
    ],
)
def test_ordinals_are_labels(lang, text, fragment):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit, m.kind) == ("label", fragment, None, "ordinal")


@pytest.mark.parametrize(
    ("lang", "text", "fragment"),
    [
        ("pt", "Modelo SKU-12345 esgotado", "SKU-12345"),
        ("en", "The X200 is back", "X200"),
        ("en", "Firmware v1.2.3 fixes it", "v1.2.3"),
        ("es", "Referencia AB12CD en stock", "AB12CD"),
        ("pt", "Série 123-456-789 registrada", "123-456-789"),
    ],
)
def test_codes_are_labels(lang, text, fragment):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.kind) == ("label", fragment, "code")


@pytest.mark.parametrize("lang", ["pt", "en", "es"])
def test_the_rest(lang):
    text = "Em 2025 vendemos 150000 peças, 3 lojas, preço 19,90 e nota 4.5 e 7."
    got = {m.text: (m.cls, m.kind, m.value) for m in read_numbers(text, lang)}
    assert got["2025"] == ("label", "year", "2025")  # a year is a label
    assert got["150000"] == ("label", "long_number", "150000")  # five digits or more
    assert got["3"] == ("count", None, 3)  # an integer before a word
    assert got["19,90"] == ("money", None, 19.9)  # two decimals: money without a currency
    assert "4.5" not in got and "7" not in got  # nothing says what they are


def test_a_count_with_a_scale_word():
    assert read("Mais de 2 mil pessoas", "pt") == [("2 mil", "count", 2000, None)]
    assert read("Over 3 million people", "en") == [("3 million", "count", 3_000_000, None)]


@pytest.mark.parametrize(
    ("raw", "lang", "value"),
    [
        ("1.234,56", "pt", 1234.56),  # both: the last is the decimal mark
        ("1,234.56", "pt", 1234.56),
        ("1.234,56", "en", 1234.56),
        ("1,234.56", "en", 1234.56),
        ("1.234", "pt", 1234),  # one separator, three digits after: grouping by language
        ("1.234", "es", 1234),
        ("1,234", "en", 1234),
        ("1,234", "pt", 1.234),
        ("1.234", "en", 1.234),
        ("12,5", "pt", 12.5),  # not three digits after: the decimal mark, in any language
        ("12,5", "en", 12.5),
        ("511.06", "pt", 511.06),
        ("1.234.567", "pt", 1234567),  # used twice: grouping
        ("1,234,567", "es", 1234567),
        ("0,500", "pt", 0.5),  # a lone 0 never leads a group of thousands
        ("1\u00a0234,56", "es", 1234.56),  # a no-break space groups
    ],
)
def test_the_decimal_mark(raw, lang, value):
    assert parse_digits(raw, lang)[0] == value


def test_r_dollar_with_a_point_and_two_digits_is_decimal_in_portuguese():
    assert mention("Total: R$ 511.06", "pt", "R$ 511.06").value == 511.06


@pytest.mark.parametrize("lang", ["pt", "en", "es"])
def test_each_number_lands_in_at_most_one_mention(lang):
    text = (
        "Pedido nº 12345 de 15/03/2025: R$ 1.234,56 em 10x, 3 a 5 dias úteis, 20% off, "
        "CEP 01310-100, (11) 91234-5678, 2 itens, 1º lugar, SKU-99, 500 mg, 2,5 kg, 14:30."
    )
    mentions = read_numbers(text, lang)
    covered: set[int] = set()
    for m in mentions:
        span = set(range(m.start, m.end))
        assert not covered & span, f"{m.text!r} overlaps another mention"
        covered |= span
        assert text[m.start : m.end] == m.text
    digits = {i for i, c in enumerate(text) if c.isdigit()}
    assert digits <= covered  # and every digit here is read
    assert [m.start for m in mentions] == sorted(m.start for m in mentions)


def test_spans_are_code_points_with_accents_emoji_and_combining_marks():
    text = "Olá 👋🏽! Ação: café\u0301 por R$ 9,90 — até 3 dias úteis 🚚"
    price = mention(text, "pt", "R$ 9,90")
    days = mention(text, "pt", "3 dias úteis")
    assert text[price.start : price.end] == "R$ 9,90"
    assert price.start == text.index("R$")
    assert text[days.start : days.end] == "3 dias úteis"
    # UTF-16 or UTF-8 offsets would be larger: the emoji take 2 units / 4 bytes each
    assert price.start < len(text[: price.start].encode("utf-16-le")) // 2


def test_odd_spacing_no_break_spaces_and_line_breaks():
    text = "Preço:\u00a0R$\u00a0199,90\nPrazo:\t3\u00a0dias úteis\r\n20\u202f%"
    assert read(text, "pt") == [
        ("R$\u00a0199,90", "money", 199.9, "BRL"),
        ("3\u00a0dias úteis", "duration", 3, "business_day"),
        ("20\u202f%", "percent", 20, "%"),
    ]


def test_a_long_output_is_read_whole():
    block = "Item {i}: R$ {i},90 em até {i} dias úteis. "
    text = "".join(block.format(i=i) for i in range(1, 401))  # ~18 kB
    mentions = read_numbers(text, "pt")
    money = [m for m in mentions if m.cls == "money"]
    assert len(money) == 400
    assert money[-1].value == 400.9
    assert sum(m.cls == "duration" for m in mentions) == 400


def test_as_json_is_the_contract_form():
    m = Mention(3, 12, "R$ 199,90", "money", 199.9, "BRL")
    assert m.as_json() == {
        "start": 3,
        "end": 12,
        "text": "R$ 199,90",
        "class": "money",
        "value": 199.9,
        "unit": "BRL",
    }


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="pt, en or es"):
        read_numbers("10%", "fr")  # type: ignore[arg-type]


def test_text_without_numbers_reads_nothing():
    assert read_numbers("", "pt") == []
    assert read_numbers("Sem números aqui, obrigado!", "pt") == []


@pytest.mark.parametrize("lang", ["pt", "en", "es"])
def test_digits_inside_links_and_e_mail_addresses_are_not_numbers(lang):
    text = (
        "See https://shop.example/p/998877?ref=%2810%29 or www.loja.com.br/12345, "
        "ana2024@mail.com; 10% off"
    )
    assert read(text, lang) == [("10%", "percent", 10, "%")]
