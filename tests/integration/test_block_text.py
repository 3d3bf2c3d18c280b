"""The block ``make run`` prints, from the sample day replayed into a real chDB store
(issue 36): no raw ref and no repeated line in any person's ``text``; objects named by
what they showed; refs kept in the JSON; one question per notion, none for a size the
block already knows unless a conflict names it."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.profile_reads import load_inputs
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import load_settings
from turnstream.core.constraints import BlockRequest, build_block
from turnstream.core.object_types import types_for_space
from turnstream.entrypoints.bootstrap import build_replay
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.integration

REF = re.compile(r"\b[a-z_]+:[A-Za-z0-9_-]+:[A-Za-z0-9_.-]+")
TYPES = Path(__file__).resolve().parents[2] / "examples" / "types.toml"


def _names(line: str, lead: str) -> list[str]:
    """The objects a line names (commas outside parentheses; a count left out)."""
    rest = re.sub(r" e mais \d+$", "", line.removeprefix(lead).strip())
    names, depth, current = [], 0, ""
    for ch in rest:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += ch
    return [n for n in [*names, current.strip()] if n and not re.fullmatch(r"\d+ itens|1 item", n)]


def test_every_block_of_the_sample_day_reads_like_a_colleagues_note(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    day = (datetime.now(UTC) - timedelta(days=1)).date()
    events = tmp_path / "day.jsonl"
    events.write_bytes(b"\n".join(sample_day(day, seed=21)) + b"\n")
    config = tmp_path / "turnstream.toml"
    # The session's chDB path (one per process), a migrated database of the test's own
    # (a copy of the session's template; dropped afterwards).
    store = store_factory()
    config.write_text(
        f'[store]\ndsn = "chdb:{chdb_path}"\ndatabase = "{store.database}"\n'
        '[identity]\nsecret = "block-text"\n'
        f'[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\ntypes = "{TYPES}"\n'
    )
    settings = load_settings(config, environ={})
    build_replay(settings, store).run(events)
    space = settings.space("acme")
    assert space is not None
    people = [
        row[0]
        for row in store.query(
            # Everyone with an entry: an inference, a statement, a presentation, feedback.
            "SELECT DISTINCT profile_id FROM (SELECT space_id, profile_id FROM inferences "
            "FINAL WHERE status = 'active' UNION ALL SELECT space_id, profile_id FROM stated "
            "FINAL UNION ALL SELECT space_id, profile_id FROM interactions) "
            "WHERE space_id = 'acme' ORDER BY profile_id"
        ).rows
    ]
    assert len(people) > 10, len(people)
    named = asked_sizes = 0
    for profile_id in people:
        inputs = load_inputs(store, "acme", profile_id, "self")
        request = BlockRequest("acme", profile_id, language="pt", asked=("size",))
        block = build_block(
            request, inputs.preferences, inputs.attributes,
            [i for i in inputs.inferences if i.status == "active"],
            inputs.presented, inputs.disliked, [], datetime.now(UTC),
            labels=space.labels, types=types_for_space(space), shown=inputs.shown,
        )  # fmt: skip
        lines = block["text"].split("\n")
        assert not REF.search(block["text"]), block["text"]
        assert len(lines) == len(set(lines)), block["text"]
        # No object both an interest and not (issue 36: "variante (vermelho)" twice).
        sides = [
            {n for ln in lines if ln.startswith(lead) for n in _names(ln, lead)}
            for lead in ("Demonstrou interesse em (inferido):",
                         "Não demonstrou interesse em (inferido):")
        ]  # fmt: skip
        assert not sides[0] & sides[1], block["text"]
        # One question per notion (the demo asked "tamanho" and "tamanho de roupa"), and
        # a known size is asked only by a conflict, which the question names.
        types = types_for_space(space)
        assert types is not None
        asks = [ln for ln in lines if ln.startswith("Pergunte antes:")]
        families = [types.family(a) or a for a in block["ask"]]
        assert len(asks) == len(block["ask"]) == len(set(families)), block["text"]
        sized = any(r["attr"] and types.family(r["attr"]) == "size" and not r.get("lost")
                    for r in block["attributes"] + block["hard"])  # fmt: skip
        if sized and "item_variant.size" in block["ask"]:
            [asked] = [ln for ln in asks if ln.startswith("Pergunte antes: tamanho")]
            assert " (disse " in asked and "; inferido " in asked, block["text"]
            asked_sizes += 1
        named += "variante (" in block["text"]
        refs = [r["values"][0] for r in block["soft"] if r["kind"] == "interest"]
        assert all(REF.fullmatch(str(r)) for r in refs)  # refs stay in the JSON
    assert named > 0  # objects named by the values they showed
    assert asked_sizes > 0  # a size said and one inferred from purchases disagree
