"""The block of a Spanish department store through the real route (a trial of the block
on a scenario it was not tuned on: clothes and groceries, a types document written in
Spanish): objects named by the ``nombre`` or ``titulo`` they showed, kept in the store
and read back; a value written without its accents is the value it names; what changed
since seen (by the block, and by the SDK's read in a turn that names no language) and a
diet said, in Spanish."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.http.test_read_side_http import Person
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation
from turnstream_dev.deployment import new_deployment

pytestmark = pytest.mark.integration

REF = re.compile(r"\b[a-z_]+:[A-Za-z0-9_-]+:[A-Za-z0-9_.-]+")


def _field(es: str, en: str, role: str, **more: Any) -> str:
    extra = "".join(f", {k} = {json.dumps(v)}" for k, v in more.items())
    return f'labels = {{ pt = "{es}", en = "{en}", es = "{es}" }}\nrole = "{role}"{extra}\n'


#: A Spanish store's types document, its field names in Spanish.
TYPES = f"""
[types.prenda]
labels = {{ pt = "peça", en = "garment", es = "prenda" }}
[types.prenda.fields.nombre]
{_field("nombre", "name", "identifier")}
[types.prenda.fields.color]
{_field("color", "colour", "taste")}
[types.prenda.fields.material]
{_field("material", "material", "taste")}
[types.alimento]
labels = {{ pt = "alimento", en = "food", es = "alimento" }}
[types.alimento.fields.titulo]
{_field("título", "title", "identifier")}
[types.alimento.fields.precio]
{_field("precio", "price", "state")}class = "money"
[types.person]
labels = {{ pt = "pessoa", en = "person", es = "persona" }}
[types.person.fields.dieta]
{_field("dieta", "diet", "attribute")}family = "diet"
sensitive = true
[types.person.fields.dieta.acts.sin_gluten]
labels = {{ pt = "sem glúten", en = "gluten-free", es = "sin gluten" }}
said = ["celíaco", "celíaca"]
"""


@pytest.fixture(scope="module")
def worker(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("tienda")
    types = home / "tipos.toml"
    types.write_text(TYPES, encoding="utf-8")
    extra = (
        "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"
        f'[spaces.tienda]\nlanguage = "es"\nfeatures = ["signals", "turns"]\ntypes = "{types}"\n'
    )
    deployment = new_deployment(kafka_broker, Path(home), extra=extra)
    deployment.worker.start()
    yield deployment
    deployment.worker.stop()


def _presented(person: Person, minutes: float, shown: dict[str, dict[str, Any]]) -> bytes:
    interaction = {
        "kind": "presented", "exposure_id": "0190f1d2-7b3c-7a4e-8f00-00000000e501",
        "list_id": "l1", "list_kind": "search", "visible_k": len(shown),
        "delivered_at": person.t0.isoformat(),
        "items": [{"pos": i + 1, "ref": r, "shown": s} for i, (r, s) in enumerate(shown.items())],
    }  # fmt: skip
    return person.item(minutes, type="interaction", interaction=interaction)


def test_a_spanish_store_names_its_objects_and_reads_its_values(worker) -> None:  # type: ignore[no-untyped-def]
    ana = Person(worker, "tienda", "p_ana_tienda")
    skirts = {f"prenda:tienda:{i}": {"nombre": f"Falda {i}", "color": "azul"} for i in range(3)}
    blouse = {"prenda:tienda:9": {"nombre": "Blusa", "material": "poliester"}}
    bread = {"alimento:tienda:7": {"titulo": "Pan de molde", "precio": 2.35}}
    oil = {"alimento:tienda:8": {"titulo": "Aceite de oliva", "precio": "8,95"}}
    shown = skirts | blouse | bread | oil
    clicks = [ana.engaged(1 + n / 10, ref) for n, ref in enumerate([*skirts, *blouse] * 2)]
    refused = ana.preference(2, attr="prenda.material", op="not_in", values=["poliéster"],
                             strength="must_not")  # fmt: skip
    dislike = ana.item(3, type="interaction", interaction={
        "kind": "feedback", "ref": "alimento:tienda:7", "polarity": "dislike"})  # fmt: skip
    said = {"kind": "attribute", "attr": "person.dieta", "value": "soy celíaca",
            "source": "stated"}  # fmt: skip
    diet = ana.item(4, type="interaction", interaction=said)
    ana.publish(_presented(ana, 0, shown), *clicks, refused, dislike, diet)
    status, block = ana.block(current={"alimento:tienda:8": {"precio": "7,50 €"}})
    assert status == 200, block
    lines = block["text"].split("\n")
    assert "Obligatorio: material que no sea poliéster" in lines, lines
    assert "Obligatorio: sin gluten" in lines, lines
    [interest] = [ln for ln in lines if ln.startswith("Mostró interés en (inferido): ")]
    names = interest.removeprefix("Mostró interés en (inferido): ").replace(" y ", ", ")
    assert sorted(names.split(", ")) == ["“Falda 0”", "“Falda 1”", "“Falda 2”"], lines
    assert "No mostrar de nuevo: “Pan de molde”" in lines, lines
    assert "Cambió desde que lo vio: “Aceite de oliva”: precio bajó de 8,95 a 7,50" in lines
    assert not REF.search(block["text"]) and len(lines) == len(set(lines))
    served = json.dumps(block, ensure_ascii=False).lower()
    assert "celíac" not in served
    # The blouse shows a refused material (however spelled): no interest in it.
    assert "prenda:tienda:9" not in {
        e["values"][0] for e in block["soft"] if e["kind"] == "interest"
    }
    # An SDK turn that names no language reads the cited block's: Spanish, as the block.
    assert block["language"] == "es"
    types = load_types(worker.settings.space("tienda").types)
    conversation = Conversation(space="tienda", source="web", agent="a",
                                profile_id=ana.profile_id, recorder=lambda _: None,
                                types=types)  # fmt: skip
    with conversation.turn() as frame:
        frame.cite_block(ana.block()[1])
        seen = frame.record_read("alimento:tienda:8", [{"field": "precio", "value": "7,50 €"}],
                                 type="alimento")  # fmt: skip
    assert seen.text == "Cambió desde que lo vio: precio bajó de 8,95 a 7,50"
