"""Labels first: by shape (case number, postal code, phone, time) and by the word before."""

from __future__ import annotations

import pytest

from tests.unit.sdk.claims.readers import mention, read
from turnstream.sdk.claims.numbers import read_numbers


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "kind"),
    [
        (
            "pt",
            "Processo 0001234-56.2024.8.26.0100 em andamento",
            "0001234-56.2024.8.26.0100",
            "case_number",
        ),
        ("pt", "Seu CEP é 01310-100?", "01310-100", "postal_code"),
        ("pt", "Entrega no CEP 01.310-100.", "01.310-100", "postal_code"),
        ("en", "Ship to ZIP 90210-1234 today", "90210-1234", "postal_code"),
        ("en", "zip code: 90210", "90210", "postal_code"),
        ("es", "Envío al C.P. 28013 en Madrid", "28013", "postal_code"),
        ("pt", "Ligue (11) 91234-5678 agora", "(11) 91234-5678", "phone"),
        ("pt", "WhatsApp +55 11 91234-5678.", "+55 11 91234-5678", "phone"),
        ("en", "Call 555-123-4567 for help", "555-123-4567", "phone"),
        ("en", "Call us at 1-800-555-0199, Mon-Fri", "1-800-555-0199", "phone"),
        ("es", "Llame al 912 345 678 hoy", "912 345 678", "phone"),
        ("pt", "Central 0800 123 4567, grátis", "0800 123 4567", "phone"),
        ("pt", "A loja abre às 10h e fecha 22:30", "22:30", "time"),
        ("pt", "Retire a partir das 14h30 na loja", "14h30", "time"),
        ("pt", "Chega às 15 no balcão", "15", "time"),
        ("en", "The store opens at 9 am and closes 9:30 p.m. sharp", "9 am", "time"),
        ("en", "The store opens at 9 am and closes 9:30 p.m. sharp", "9:30 p.m.", "time"),
        ("es", "Abrimos a las 3 de la tarde", "3", "time"),
        ("es", "Cerramos a las 20:00 h", "20:00 h", "time"),
    ],
)
def test_labels_by_shape(lang, text, fragment, kind):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit, m.kind) == ("label", fragment, None, kind)


@pytest.mark.parametrize(
    ("lang", "text", "fragment", "kind"),
    [
        ("pt", "Seu pedido nº 48291 saiu para entrega", "48291", "order"),
        ("pt", "Pedido: 7781 confirmado", "7781", "order"),
        ("en", "Order #A1234 has shipped", "A1234", "order"),
        ("en", "Your order number 55219 is on its way", "55219", "order"),
        ("es", "El pedido 98765 llega mañana", "98765", "order"),
        ("pt", "Protocolo 2024123456 registrado", "2024123456", "protocol"),
        ("en", "Your protocol no. 7788 is open", "7788", "protocol"),
        ("es", "Su protocolo 445566 fue atendido", "445566", "protocol"),
        ("pt", "Conforme o art. 49 do CDC, você pode desistir", "49", "article"),
        ("pt", "O artigo 5º garante", "5º", "article"),
        ("en", "Under article 17 of the GDPR", "17", "article"),
        ("es", "Según el artículo 1.101 del Código Civil", "1.101", "article"),
        ("pt", "Temos o tamanho 42 em estoque", "42", "size"),
        ("en", "We have size 10 in black", "10", "size"),
        ("es", "Queda la talla 38 en azul", "38", "size"),
        ("pt", "Veja a página 12 do manual", "12", "page"),
        ("en", "See page 3 of the guide", "3", "page"),
        ("es", "Vea la página 7 del folleto", "7", "page"),
        ("pt", "Nota fiscal nº 3345 emitida", "3345", "code"),
        ("en", "Ticket #88 was closed", "88", "protocol"),
        ("es", "Factura nº 2024-77 pagada", "2024-77", "code"),
        ("pt", "O item nº 7 da lista", "7", "code"),
    ],
)
def test_labels_by_the_word_before(lang, text, fragment, kind):
    m = mention(text, lang, fragment)
    assert (m.cls, m.value, m.unit, m.kind) == ("label", fragment, None, kind)


def test_a_plural_keyword_labels_the_whole_list():
    assert read("Veja os arts. 6, 7 e 8 do CDC.", "pt") == [
        ("6", "label", "6", None),
        ("7", "label", "7", None),
        ("8", "label", "8", None),
    ]


def test_a_verb_order_with_a_small_number_is_not_an_order_label():
    # "order" is also a verb: a bare 1-3 digit number after it is a count, not an id
    assert read("I will order 3 pizzas", "en") == [("3", "count", 3, None)]


def test_a_bare_hour_after_an_article_is_not_a_time():
    # "as" is also the article: "as 3 camisas" counts shirts
    assert read("Levei as 3 camisas", "pt") == [("3", "count", 3, None)]


def test_two_years_with_a_hyphen_are_not_a_phone():
    assert all(m.kind != "phone" for m in read_numbers("Coleção 2024-2025", "pt"))


def test_five_and_four_digits_are_a_zip_in_english_and_a_mobile_in_portuguese():
    assert mention("ZIP 90210-1234", "en", "90210-1234").kind == "postal_code"
    assert mention("Cel 91234-5678", "pt", "91234-5678").kind == "phone"
