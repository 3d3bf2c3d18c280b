"""What a trial of the block on a Spanish department store found (clothes and groceries,
a types document written in Spanish): an object is named by the name or title it
showed in any of the block's languages (``nombre``, ``título``, ``titulo``, or a field
the document labels "name"), never counted as "3 artículos" beside look-alikes; a value
written without its accents (``poliester``, ``algodon``) is the value it names, in the
block's words and wherever the block compares values."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.core.constraints.builders import block, inference, pref
from turnstream.core.constraints.block import object_names
from turnstream.core.constraints.text import known_value
from turnstream.core.value_ids import value_ids
from turnstream.models.object_types import ObjectTypes, parse_types

MATERIAL = "prenda.material"


def _field(pt: str, en: str, es: str, role: str, **more: Any) -> dict[str, Any]:
    return {"labels": {"pt": pt, "en": en, "es": es}, "role": role, **more}


#: A Spanish store's document: field names in Spanish, an identifier ``nom`` labelled
#: "name", and a sensitive field labelled as a name would be.
TYPES: ObjectTypes = parse_types(
    {
        "types": {
            "prenda": {
                "labels": {"pt": "peça", "en": "garment", "es": "prenda"},
                "fields": {
                    "nombre": _field("nome", "name", "nombre", "identifier"),
                    "color": _field("cor", "colour", "color", "taste"),
                    "material": _field("material", "material", "material", "taste"),
                    "precio": _field("preço", "price", "precio", "state", **{"class": "money"}),
                },
            },
            "alimento": {
                "labels": {"pt": "alimento", "en": "food", "es": "alimento"},
                "fields": {
                    "nom": _field("designação", "name", "denominación", "identifier"),
                    "titular": _field("nome", "name", "nombre", "identifier", sensitive=True),
                    "marca": _field("marca", "brand", "marca", "taste"),
                },
            },
        }
    }
)  # fmt: skip


@pytest.mark.parametrize(
    ("ref", "shown", "name"),
    [
        ("prenda:t:1", {"nombre": "Camiseta Brisa", "color": "azul"}, "“Camiseta Brisa”"),
        ("prenda:t:2", {"título": "Jersey Nórdico", "color": "azul"}, "“Jersey Nórdico”"),
        ("prenda:t:3", {"titulo": "Falda Lino", "material": "lino"}, "“Falda Lino”"),
        ("prenda:t:4", {"nome": "Saia", "color": "azul"}, "“Saia”"),
        # Declared and labelled "name" in English: the document says what it is.
        ("alimento:t:5", {"nom": "Pan de molde", "marca": "Bimbo"}, "“Pan de molde”"),
        # A name before a title, whatever the language of each.
        ("prenda:t:6", {"titulo": "Oferta", "nombre": "Abrigo"}, "“Abrigo”"),
        # The object's ref sent as its name is no name: a raw ref never reads.
        ("prenda:t:8", {"name": " prenda:t:8 ", "color": "azul"}, "prenda (azul)"),
        # A sensitive field never names an object, whatever its label says.
        ("alimento:t:7", {"titular": "Ana Ruiz", "marca": "Bimbo"}, "alimento (“Bimbo”)"),
    ],
)
def test_an_object_is_named_by_its_name_in_any_language(
    ref: str, shown: dict[str, Any], name: str
) -> None:
    assert object_names([ref], {ref: shown}, TYPES, "es") == {ref: name}


#: A sensitive type: every field of it is sensitive, declared or not.
SENSITIVE_TYPE: ObjectTypes = parse_types(
    {
        "types": {
            "receta": {
                "labels": {"pt": "receita", "en": "prescription", "es": "receta"},
                "sensitive": True,
                "fields": {"marca": _field("marca", "brand", "marca", "taste")},
            }
        }
    }
)


@pytest.mark.parametrize("key", ["name", "nombre", "título"])
def test_a_field_of_a_sensitive_type_never_names_its_object(key: str) -> None:
    """A field the document does not declare, of a type marked sensitive, is sensitive as
    a declared one is: its text is no name for the block to say."""
    ref = "receta:t:1"
    assert object_names([ref], {ref: {key: "Ana Ruiz", "marca": "X"}}, SENSITIVE_TYPE, "es") == {}


def test_look_alikes_with_names_of_their_own_are_named_not_counted() -> None:
    """Three blue skirts, each with its ``nombre``: named, never "3 artículos"."""
    shown = {f"prenda:t:{i}": {"nombre": f"Falda {i}", "color": "azul"} for i in range(3)}
    interests = [inference(f"i{i}", "interest", "prenda.ref", ref) for i, ref in enumerate(shown)]
    text = block(inferences=interests, shown=shown, types=TYPES, language="es")["text"]
    assert text == "Mostró interés en (inferido): “Falda 0”, “Falda 1”, “Falda 2”"


@pytest.mark.parametrize(
    ("said", "es", "pt"),
    [("poliester", "poliéster", "poliéster"), ("algodon", "algodón", "algodão"),
     ("MARRON", "marrón", "marrom"), ("Poliéster", "poliéster", "poliéster")],
)  # fmt: skip
def test_a_value_without_its_accents_reads_in_the_language(said: str, es: str, pt: str) -> None:
    assert (known_value(said, "es"), known_value(said, "pt")) == (es, pt)


def test_a_value_without_its_accents_is_the_value_it_names() -> None:
    """A hard "material que no sea poliéster" refuses an object shown ``poliester``: no
    interest in it, and the stated value reads with its accent."""
    ids = value_ids(TYPES)
    assert ids.key(MATERIAL, "poliester") == ids.key(MATERIAL, "Poliéster")
    ref = "prenda:t:9"
    shown = {ref: {"nombre": "Blusa", "material": "poliester"}}
    said = pref("p", MATERIAL, "not_in", ("poliéster",), "must_not")
    liked = inference("i", "interest", "prenda.ref", ref)
    got = block([said], inferences=[liked], shown=shown, types=TYPES, language="es")
    assert [e for e in got["soft"] if e["kind"] == "interest"] == []
    assert got["text"] == "Obligatorio: material que no sea poliéster"


def test_a_word_that_is_another_value_in_another_language_is_not_guessed() -> None:
    """ "Zapatillas de tela": fabric in a Spanish catalogue, mesh in a Portuguese one; the
    block quotes it rather than tell a Spanish agent "malla"."""
    assert known_value("tela", "es") is None and known_value("tela", "pt") is None
    assert (known_value("mesh", "es"), known_value("fabric", "es")) == ("malla", "tela")
    said = pref("p", MATERIAL, "in", ("tela",), "prefer")
    assert block([said], types=TYPES, language="es")["text"] == "Prefiere: material “tela”"


def test_a_stated_value_without_its_accent_absorbs_the_same_value_inferred() -> None:
    """ "Prefiere: material algodon" said, cotton inferred as "algodón": one line."""
    said = pref("p", MATERIAL, "in", ("Algodon",), "prefer")
    liked = inference("a", "affinity", MATERIAL, "algodón", weight=0.9)
    got = block([said], inferences=[liked], types=TYPES, language="es")
    assert got["text"] == "Prefiere: material algodón"
