"""The contract document: what loads, and each refusal with its field path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turnstream.sdk.claims import ContractError, load_contract, parse_contract
from turnstream.sdk.claims.contract import MAX_CATEGORIES

from .builders import DEADLINE, PRICE, PROMISE, doc


def refusal(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as info:
        parse_contract(data)
    return info.value.errors


def paths(data: Any) -> list[str]:
    return [p for p, _ in refusal(data)]


def test_the_documented_example_loads_with_its_defaults() -> None:
    c = parse_contract(doc())
    assert [x.id for x in c.categories] == ["price", "deadline", "action_promise"]
    assert c.categories[0].detect.roles["price_sale"] == ["por", "sai por", "com desconto", "now"]
    assert c.categories[1].natures.quoted == "verbatim"  # the default
    assert c.categories[1].natures.computed == "check"
    assert c.categories[2].evidence.kind == "tool_any"
    assert c.is_mutable("chat") and not c.is_mutable("proposal") and not c.is_mutable(None)
    assert not c.is_mutable("chat", immutable=True)


def test_json_and_toml_files_give_the_same_contract(tmp_path: Path) -> None:
    as_json = tmp_path / "c.json"
    as_json.write_text(json.dumps(doc(DEADLINE)))
    as_toml = tmp_path / "c.toml"
    as_toml.write_text(
        'version = "v1"\nlanguages = ["pt", "en", "es"]\n'
        '[outputs]\nmutable = ["chat"]\nimmutable = ["proposal", "invoice"]\n'
        '[negative_corpus]\nversion = "neg-3"\nphrases = ["we are not sure about the deadline"]\n'
        '[[categories]]\nid = "deadline"\nagents = []\n'
        '[categories.detect]\nclasses = ["date", "duration"]\n'
        'terms = ["entrega", "chega", "delivery", "arrives", "entrega en"]\n'
        '[categories.evidence]\ntool = "shipping_quote"\n'
        '[categories.actions]\ndefault = "warn"\n'
    )
    a, b = load_contract(as_json), load_contract(as_toml)
    assert a.categories == b.categories and a.outputs == b.outputs


def test_64_categories_hold_and_a_65th_is_refused() -> None:
    many = [dict(DEADLINE, id=f"c{i}") for i in range(MAX_CATEGORIES)]
    assert len(parse_contract(doc(*many)).categories) == 64
    errors = refusal(doc(*many, dict(DEADLINE, id="c64")))
    assert errors[0][0] == "categories"
    assert "64" in errors[0][1]


def test_categories_without_a_negative_corpus_are_refused() -> None:
    data = doc()
    del data["negative_corpus"]
    assert refusal(data) == [("negative_corpus", "required when there are categories")]
    data["categories"] = []
    assert parse_contract(data).categories == []  # no categories: no corpus needed


def test_rewrite_if_unequivocal_is_never_the_default() -> None:
    price = dict(PRICE, actions={"default": "rewrite_if_unequivocal"})
    assert paths(doc(price)) == ["categories.0.actions.default"]


def test_rewrite_if_unequivocal_only_for_contexts_listed_as_mutable() -> None:
    for ctx in ("proposal", "email"):  # immutable, and not listed at all
        price = dict(
            PRICE, actions={"default": "warn", "contexts": {ctx: "rewrite_if_unequivocal"}}
        )
        errors = refusal(doc(price))
        assert errors[0][0] == f"categories.0.actions.contexts.{ctx}"
        assert "outputs.mutable" in errors[0][1]


@pytest.mark.parametrize(
    "evidence",
    [{}, {"tool": "a", "tool_any": ["b"]}, {"value": {}, "anchor": {}}],
    ids=["none", "tool+tool_any", "value+anchor"],
)
def test_evidence_names_exactly_one_kind(evidence: dict[str, Any]) -> None:
    errors = refusal(doc(dict(PROMISE, evidence=evidence)))
    assert errors[0][0] == "categories.0.evidence"
    assert "exactly one" in errors[0][1]


def test_unknown_classes_patterns_and_fields_are_refused_with_their_path() -> None:
    bad_class = dict(DEADLINE, detect={"classes": ["date", "weight"], "terms": ["entrega"]})
    assert paths(doc(bad_class)) == ["categories.0.detect.classes.1"]
    label = dict(DEADLINE, detect={"classes": ["label"]})
    errors = refusal(doc(label))
    assert errors[0][0] == "categories.0.detect.classes" and "label" in errors[0][1]
    bad_pattern = dict(PROMISE, detect={"patterns": ["statute_citation"]})
    assert paths(doc(bad_pattern)) == ["categories.0.detect.patterns.0"]
    extra = dict(PROMISE, detection={"terms": ["x"]})
    assert paths(doc(extra)) == ["categories.0.detection"]
    assert paths(doc(colour="blue")) == ["colour"]
    bad_nature = dict(PRICE, natures={"model": "rewrite"})
    assert paths(doc(bad_nature)) == ["categories.0.natures.model"]
    bad_language = doc(languages=["pt", "fr"])
    assert paths(bad_language) == ["languages.1"]


def test_other_rules_across_fields() -> None:
    assert paths(doc(dict(PROMISE, id="internal_text"))) == ["categories.0.id"]
    assert paths(doc(PROMISE, PROMISE)) == ["categories.1.id"]
    blocking = dict(DEADLINE, actions={"default": "block"})
    assert paths(doc(blocking)) == ["categories.0.replace_with"]  # a mutable context exists
    assert parse_contract(doc(dict(blocking, replace_with="(ask us)")))
    discard = dict(DEADLINE, actions={"default": "discard_anchor_and_count"})
    assert paths(doc(discard)) == ["categories.0.actions"]
    nothing = dict(PROMISE, detect={})
    assert paths(doc(nothing)) == ["categories.0.detect"]
    both = doc(outputs={"mutable": ["chat"], "immutable": ["chat"]})
    assert paths(both) == ["outputs"]
    twice = dict(PRICE, detect={"classes": ["money"], "roles": {"a": ["de"], "b": ["De"]}})
    assert paths(doc(twice)) == ["categories.0.detect.roles.b"]
    fingerprints = doc(internal_text={"n": 8, "fingerprints": ["not-hex"]})
    assert paths(fingerprints) == ["internal_text.fingerprints.0"]


def test_a_broken_file_says_which(tmp_path: Path) -> None:
    broken = tmp_path / "c.json"
    broken.write_text("{")
    with pytest.raises(ContractError) as info:
        load_contract(broken)
    assert str(broken) in str(info.value)
    with pytest.raises(ContractError):
        load_contract(tmp_path / "missing.json")
