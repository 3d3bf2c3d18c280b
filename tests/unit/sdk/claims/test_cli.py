"""``turnstream contract check`` and ``turnstream contract test``: output and exit codes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app
from turnstream.models.turns import Claim, Turn

ROOT = Path(__file__).resolve().parents[4]
RETAIL = ROOT / "examples" / "claims" / "retail.json"
EXAMPLES = ROOT / "examples" / "claims" / "examples.json"
runner = CliRunner()


def run(*args: str | Path) -> Any:
    return runner.invoke(app, ["contract", *map(str, args)])


def write(tmp: Path, name: str, data: Any) -> Path:
    path = tmp / name
    path.write_text(json.dumps(data, ensure_ascii=False))
    return path


def examples() -> list[dict[str, Any]]:
    return json.loads(EXAMPLES.read_text())


def test_the_example_contract_holds() -> None:
    result = run("test", "--contract", RETAIL, "--examples", EXAMPLES)
    assert result.exit_code == 0, result.output
    assert "holds" in result.output and "28 examples" in result.output


def test_a_failing_example_and_a_triggering_phrase_exit_1_listing_each(tmp_path: Path) -> None:
    cases = examples()[:3]
    cases[1]["expect"][0]["verdict"] = "matched"
    corpus = {"version": "neg-1", "phrases": ["Sai por R$ 99,90 hoje.", "Tamanho 38 esgotou."]}
    result = run("test", "--contract", RETAIL, "--examples", write(tmp_path, "ex.json", cases),
                 "--corpus", write(tmp_path, "corpus.json", corpus))  # fmt: skip
    assert result.exit_code == 1
    fails = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 4  # the phrase in each of 3 languages, and example 2
    assert sum("corpus phrase 1" in f for f in fails) == 3
    assert any("example 2" in f and "price/stale/rewrite" in f for f in fails)


def test_a_wrong_count_of_claims_fails(tmp_path: Path) -> None:
    cases = examples()[:1]
    cases[0]["expect"] = cases[0]["expect"][:1]
    result = run("test", "--contract", RETAIL, "--examples", write(tmp_path, "ex.json", cases))
    assert result.exit_code == 1


def test_bad_files_exit_2_naming_the_field(tmp_path: Path) -> None:
    bad = json.loads(RETAIL.read_text())
    bad["categories"][2]["evidence"] = {"tool": "shipping_quote", "tool_any": ["x"]}
    result = run("test", "--contract", write(tmp_path, "c.json", bad), "--examples", EXAMPLES)
    assert result.exit_code == 2
    assert "categories.2.evidence" in result.output
    cases = examples()[:2]
    del cases[1]["turn"]["now"]
    result = run("test", "--contract", RETAIL, "--examples", write(tmp_path, "e.json", cases))
    assert result.exit_code == 2 and "1.turn.now" in result.output
    result = run("test", "--contract", tmp_path / "none.json", "--examples", EXAMPLES)
    assert result.exit_code == 2
    no_phrases = json.loads(RETAIL.read_text())
    no_phrases["negative_corpus"]["phrases"] = []  # the profile's copy: only the version
    path = write(tmp_path, "profile.json", no_phrases)
    assert run("test", "--contract", path, "--examples", EXAMPLES).exit_code == 2
    corpus = write(tmp_path, "corpus.json", json.loads(RETAIL.read_text())["negative_corpus"])
    assert (
        run("test", "--contract", path, "--examples", EXAMPLES, "--corpus", corpus).exit_code == 0
    )


def test_check_prints_the_claims_as_the_turn_record_holds_them(tmp_path: Path) -> None:
    turn = examples()[1]["turn"]  # a stale price, rewritten in chat
    path = write(tmp_path, "turn.json", turn)
    result = run("check", "--contract", RETAIL, "--turn", path)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["text"] == "Esse tênis sai por R$ 189,90 hoje." and out["guard_acted"]
    record = Turn.model_validate(
        {"type": "turn", "space_id": "acme", "idempotency_key": "k", "profile_id": "p",
         "source": "web", "occurred_at": turn["now"], "turn_id": "t1", "agent": turn["agent"],
         "contract_version": out["contract_version"], "claims": out["claims"],
         "guard_acted": out["guard_acted"]}
    )  # fmt: skip
    assert [c.verdict for c in record.claims] == ["stale"]
    assert [Claim.model_validate(c).action for c in out["claims"]] == ["rewrite"]


def test_check_options_override_the_turn(tmp_path: Path) -> None:
    turn = copy.deepcopy(examples()[1]["turn"])
    path = write(tmp_path, "turn.json", turn)
    result = run("check", "--contract", RETAIL, "--turn", path, "--immutable")
    out = json.loads(result.output)
    assert out["claims"][0]["action"] == "warn" and out["text"] == turn["output"]
    result = run("check", "--contract", RETAIL, "--turn", path, "--context", "proposal")
    out = json.loads(result.output)
    assert out["claims"][0]["action"] == "block" and out["held_for_review"]
    result = run("check", "--contract", RETAIL, "--turn", write(tmp_path, "bad.json", {"x": 1}))
    assert result.exit_code == 2 and "now" in result.output


def test_the_corpus_is_read_for_every_agent_and_language(tmp_path: Path) -> None:
    from turnstream.sdk.claims import parse_contract
    from turnstream.sdk.claims.examples import claims_factory, run_corpus

    data = json.loads(RETAIL.read_text())
    data["categories"][4]["agents"] = ["billing-bot"]  # action promises: one agent only
    contract = parse_contract(data)
    failures = run_corpus(contract, ["Já reservei o item."], claims_factory(contract))
    assert [f.where for f in failures] == [
        "corpus phrase 1 (pt)",
        "corpus phrase 1 (en)",
        "corpus phrase 1 (es)",
    ]
    assert all("action_promise" in f.what for f in failures)
