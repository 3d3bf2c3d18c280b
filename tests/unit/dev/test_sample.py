"""The sample generators: deterministic, realistic, and exactly as (in)valid as they say."""

from __future__ import annotations

import random
import re
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.config import Settings, load_settings
from turnstream.core.ingest import Decision, Gate, Reason, Source, decide
from turnstream.errors import InvalidItem
from turnstream.models import InteractionItem, Item, Outcome, Turn, parse_item
from turnstream_dev.sample import (
    EXPOSURE_KEYS,
    INVALID_KINDS,
    mixed_items,
    sample_day,
    uuid7,
)

EXAMPLE_CONFIG = Path(__file__).resolve().parents[3] / "examples" / "turnstream.toml"
DAY = date(2026, 9, 29)

#: What each intended invalid line of ``sample_day`` is refused for: (path, message part);
#: a truncated line names the field it was cut in, whichever that is (None).
INTENDED: dict[str, tuple[str | None, str]] = {
    "not_json": (None, "not valid JSON: the text ends"),
    "naive_time": ("occurred_at", "timezone"),
    "unknown_kind": ("interaction.kind", "unknown kind"),
    "between_one": ("interaction.values", "between takes exactly two values (got 1)"),
    "both_ids": ("handle", "(both given)"),
    "pos_zero": ("interaction.items[0].pos", "greater than or equal to 1"),
    "unknown_verdict": ("claims[0].verdict", "Input should be 'matched'"),
    "missing_key": ("idempotency_key", "Field required"),
}


@pytest.fixture(scope="module")
def settings() -> Settings:
    return load_settings(EXAMPLE_CONFIG, environ={})


@pytest.fixture(scope="module")
def day_lines() -> list[bytes]:
    return sample_day(DAY)


def parsed(lines: list[bytes]) -> tuple[list[Item], list[InvalidItem]]:
    items, invalid = [], []
    for line in lines:
        try:
            items.append(parse_item(line))
        except InvalidItem as exc:
            invalid.append(exc)
    return items, invalid


def decisions(lines: list[bytes], settings: Settings) -> list[Decision]:
    """Every line through the ingest rule, with a ``seen`` that never finds a key (and
    without the producers' signatures, which ``test_signing.py`` is about)."""
    gate = Gate(settings, signed=False)
    return [
        decide(line, Source("items", 0, offset), settings, lambda _key: None, gate=gate)
        for offset, line in enumerate(lines)
    ]


# ----------------------------------------------------------------------------- ids


def test_uuid7_layout() -> None:
    rand = random.Random(3)
    ts_ms = 1_790_690_531_123
    value = uuid.UUID(uuid7(ts_ms, rand))
    assert value.version == 7
    assert value.variant == uuid.RFC_4122
    assert value.int >> 80 == ts_ms
    assert str(value) == uuid7(ts_ms, random.Random(3))
    assert uuid7(ts_ms, rand) != uuid7(ts_ms, rand)


def test_uuid7_sorts_by_time() -> None:
    rand = random.Random(4)
    ids = [uuid7(ts, rand) for ts in range(1_790_690_531_000, 1_790_690_532_000, 7)]
    assert ids == sorted(ids)


def test_uuid7_range() -> None:
    with pytest.raises(ValueError):
        uuid7(1 << 48, random.Random())


# ----------------------------------------------------------------------------- sample_day


def test_sample_day_is_deterministic(day_lines: list[bytes]) -> None:
    assert sample_day(DAY) == day_lines
    assert sample_day(DAY, seed=7) == day_lines
    assert sample_day(DAY, seed=8) != day_lines
    assert sample_day(DAY + timedelta(days=1)) != day_lines


def test_sample_day_size(day_lines: list[bytes]) -> None:
    assert 1500 <= len(day_lines) <= 3000
    assert len(set(day_lines)) == len(day_lines)


def test_sample_day_invalid_lines_are_the_intended_ones(day_lines: list[bytes]) -> None:
    _, invalid = parsed(day_lines)
    kinds: Counter[str] = Counter()
    for exc in invalid:
        path, message = exc.errors[0]
        kind = next(
            (k for k, (p, m) in INTENDED.items() if p in (None, path) and m in message), None
        )
        assert kind is not None, f"unintended invalid line: {exc.errors}"
        kinds[kind] += 1
    assert set(kinds) == set(INVALID_KINDS)
    assert 0.01 <= len(invalid) / len(day_lines) <= 0.04


def test_sample_day_keys_are_unique(day_lines: list[bytes]) -> None:
    items, _ = parsed(day_lines)
    keys = Counter(item.idempotency_key for item in items)
    assert keys.most_common(1)[0][1] == 1


def test_sample_day_is_ordered_within_the_day(day_lines: list[bytes]) -> None:
    items, _ = parsed(day_lines)
    times = [item.occurred_at for item in items]
    assert times == sorted(times)
    assert all(t.date() == DAY and t.utcoffset() == timedelta(0) for t in times)
    stamps = re.findall(rb'"occurred_at":"([^"]*)"', b"\n".join(day_lines))
    assert sum(s.endswith(b"Z") for s in stamps) >= len(items)


def test_sample_day_covers_the_store(day_lines: list[bytes]) -> None:
    items, _ = parsed(day_lines)
    spaces = Counter((item.space_id, item.type) for item in items)
    for space in ("acme", "lumen", "vida"):
        assert spaces[(space, "turn")] > 50
    assert spaces[("lumen", "interaction")] > 100
    assert spaces[("ghost", "turn")] + spaces[("ghost", "interaction")] > 0
    kinds = {i.kind for it in items if isinstance(it, Turn) for i in it.interactions}
    kinds |= {it.interaction.kind for it in items if isinstance(it, InteractionItem)}
    assert kinds == {
        "presented",
        "seen",
        "engaged",
        "feedback",
        "preference",
        "attribute",
        "watch",
        "unwatch",
    }
    verdicts = {c.verdict.value for it in items if isinstance(it, Turn) for c in it.claims}
    assert verdicts >= {"matched", "mismatch", "no_evidence", "stale", "quoted_found"}
    assert verdicts >= {"anchored", "unsupported", "not_checked"}
    commands = {it.command for it in items if it.type == "command"}
    assert commands >= {"opt_out", "delete", "correct"}
    returns = [it for it in items if isinstance(it, Outcome) and it.outcome == "return"]
    assert any(r.reason == "returned_for_size" and r.attrs == {"size": "M"} for r in returns)
    sources = {item.source for item in items}
    assert sources == {"whatsapp", "web", "app"}


def test_sample_day_for_whom(day_lines: list[bytes]) -> None:
    items, _ = parsed(day_lines)
    whom = Counter(it.for_ for it in items if isinstance(it, InteractionItem))
    whom.update(i.for_ for it in items if isinstance(it, Turn) for i in it.interactions)
    assert whom["gift"] + whom["beneficiary:kid-1"] >= 3


def test_sample_day_tokens_point_at_what_was_shown(day_lines: list[bytes]) -> None:
    items, _ = parsed(day_lines)
    shown: dict[tuple[str, int], str] = {}
    tokens = 0
    for item in items:
        interactions = item.interactions if isinstance(item, Turn) else []
        if isinstance(item, InteractionItem):
            interactions = [item.interaction]
        for i in interactions:
            if i.kind == "presented":
                shown.update({(i.exposure_id, p.pos): p.ref for p in i.items})
        if isinstance(item, Outcome) and item.exposure_token:
            _, exposure_id, pos, _ = item.exposure_token.split(".")
            assert shown[(exposure_id, int(pos))] == item.ref
            tokens += 1
    assert tokens > 0


def test_sample_day_through_ingest(day_lines: list[bytes], settings: Settings) -> None:
    reasons: Counter[tuple[bool, Reason | None]] = Counter()
    paths: Counter[str] = Counter()
    for d in decisions(day_lines, settings):
        reasons[(d.item is not None, d.refusal.reason if d.refusal else None)] += 1
        if d.refusal and d.refusal.reason is Reason.signals_disabled:
            assert isinstance(d.item, Turn) and d.item.space_id == "vida"
        if d.refusal and d.refusal.reason is Reason.turn_scope:
            paths[d.refusal.field_path] += 1
    assert set(reasons) == {
        (True, None),
        (False, Reason.invalid),
        (False, Reason.unknown_space),
        (True, Reason.signals_disabled),  # vida turns kept, their interactions refused
        (False, Reason.turn_scope),  # the one turn-scope preference, refused whole
    }
    assert paths == {"interaction.scope": 1}


# ----------------------------------------------------------------------------- mixed_items


START = datetime(2026, 9, 29, 15, 0, 0, tzinfo=UTC)
#: The raw table each accepted item type lands in (one row per item in a mixed batch).
TABLES = {
    "turn": "turns",
    "interaction": "interactions",
    "outcome": "outcomes",
    "command": "commands",
}


@pytest.mark.parametrize(("n", "bad"), [(1000, 50), (60, 13), (25, 0), (12, 12)])
def test_mixed_items_counts(n: int, bad: int, settings: Settings) -> None:
    batch = mixed_items(n, bad, seed=2, start=START)
    assert len(batch.lines) == n
    assert len(set(batch.lines)) == n
    found = decisions(batch.lines, settings)
    not_accepted = [d for d in found if d.item is None or d.refusal is not None]
    assert len(not_accepted) == bad
    refused = Counter(d.refusal.reason.value for d in not_accepted if d.refusal)
    assert refused == Counter({k: v for k, v in batch.refused.items() if v})
    assert sum(batch.refused.values()) == bad
    accepted = Counter(TABLES[d.item.type] for d in found if d.item and d.refusal is None)
    assert accepted == Counter({k: v for k, v in batch.accepted.items() if v})
    assert set(batch.accepted) == set(TABLES.values())


def test_mixed_items_default_mix(settings: Settings) -> None:
    batch = mixed_items(start=START)
    assert len(batch.lines) == 1000
    assert sum(batch.accepted.values()) == 950
    assert all(v > 0 for v in batch.accepted.values())
    assert all(v > 0 for v in batch.refused.values())
    items, _ = parsed(batch.lines)
    assert not any(item.interactions for item in items if isinstance(item, Turn))
    keys = Counter((item.space_id, item.idempotency_key) for item in items)
    assert keys.most_common(1)[0][1] == 1


def test_mixed_items_times_within_the_day_before_start() -> None:
    items, _ = parsed(mixed_items(400, 20, start=START).lines)
    for item in items:
        assert START - timedelta(days=1) < item.occurred_at < START
        if isinstance(item, InteractionItem) and item.interaction.kind == "presented":
            assert START - timedelta(days=1) < item.interaction.delivered_at < START


def test_mixed_items_default_start_is_now() -> None:
    now = datetime.now(UTC)
    items, _ = parsed(mixed_items(50, 5).lines)
    assert all(now - timedelta(days=1) < i.occurred_at <= now for i in items)


def test_mixed_items_is_deterministic() -> None:
    assert mixed_items(200, 10, seed=3, start=START) == mixed_items(200, 10, seed=3, start=START)
    assert mixed_items(200, 10, seed=3, start=START) != mixed_items(200, 10, seed=4, start=START)


def test_mixed_items_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        mixed_items(10, 11)
    with pytest.raises(ValueError):
        mixed_items(10, 1, start=datetime(2026, 9, 29, 15))


# ----------------------------------------------------------------------------- SDK-made


def test_sample_day_outcomes_carry_sdk_tokens_of_every_status(
    day_lines: list[bytes], settings: Settings
) -> None:
    """The sample's keys are the example config's; most tokens verify, some do not."""
    assert {s: settings.space(s).token_keys() for s in EXPOSURE_KEYS} == {  # type: ignore[union-attr]
        s: tuple(k.encode() for k in keys) for s, keys in EXPOSURE_KEYS.items()
    }
    statuses: Counter[str] = Counter()
    for d in decisions(day_lines, settings):
        if isinstance(d.item, Outcome) and d.token is not None:
            statuses[d.token.status] += 1
            if d.token.status == "valid":
                assert d.item.exposure_token is not None
                assert d.item.exposure_token.split(".")[1] == d.token.exposure_id
    assert set(statuses) == {"valid", "invalid", "malformed", "absent"}
    assert statuses["valid"] > 3 * (statuses["invalid"] + statuses["malformed"])


def test_sample_day_claims_are_the_checker_s(day_lines: list[bytes]) -> None:
    """Every turn of a space with a contract cites it; its claims are what the SDK's
    checker gives when the same output is checked against the same evidence (the sample
    keeps neither, so this checks what only the checker could have produced: spans inside
    the output's length, values normalised, internal text without a value, guard flags
    only on turns whose claims were acted on)."""
    items, _ = parsed(day_lines)
    turns = [it for it in items if isinstance(it, Turn)]
    cited = {t.contract_version for t in turns if t.space_id in ("acme", "vida")}
    assert cited == {"retail-2026-11"}
    assert all(not t.claims and t.contract_version is None for t in turns if t.space_id == "lumen")
    categories = Counter(c.category for t in turns for c in t.claims)
    assert set(categories) == {
        "price", "discount", "deadline", "stock", "action_promise", "policy_citation",
        "internal_text",
    }  # fmt: skip
    for t in turns:
        for c in t.claims:
            if c.category == "internal_text":
                assert c.value is None and c.verdict == "internal_text_found"
            if c.class_ == "money" and c.value is not None:
                assert re.fullmatch(r"\d+\.\d{2}", c.value)
        acted = any(c.action in ("block", "rewrite") for c in t.claims)
        assert t.guard_acted == acted or not t.claims


_SCENE_VERDICTS = {
    "price": {"matched", "stale", "mismatch", "unsupported", "no_evidence", "quoted_found",
              "quoted_missing"},
    "discount": {"matched", "stale", "unsupported"},
    "deadline": {"matched", "mismatch", "no_evidence"},
    "stock": {"matched", "stale", "unsupported"},
    "action_promise": {"matched", "no_evidence"},
    "policy_citation": {"anchored", "below_threshold", "source_missing", "not_checked"},
}  # fmt: skip


@pytest.mark.parametrize("lang", ["pt", "en", "es"])
def test_the_sample_s_scenes_give_every_verdict_in_every_language(lang: str) -> None:
    """Each scene's sentence, checked by the SDK against the evidence the scene recorded,
    gives the verdicts the scene is for, in each language: the sample's mix is the
    checker's, never written by hand."""
    from turnstream.sdk import Conversation
    from turnstream_dev.sample_claims import CATEGORIES, retail_contract, scene

    records: list[dict[str, object]] = []
    now = datetime(2026, 9, 29, 15, 0, tzinfo=UTC)
    conv = Conversation(
        space="acme", source="web", agent="sales-assistant", profile_id="p_1",
        contract=retail_contract(), recorder=records.append, now=lambda: now, language=lang,
        context="chat",
    )  # fmt: skip
    rand = random.Random(f"scenes-{lang}")
    found: dict[str, set[str]] = {c: set() for c in CATEGORIES}
    for category in CATEGORIES:
        for _ in range(120):
            with conv.turn() as frame:
                said = scene(frame, rand, category, lang, "item_variant:acme:1001", 199.9)
                if said.anchor is not None:
                    frame.anchor(0, len(said.text), *said.anchor)
                conv.agent(said.text)
            claims = records[-1]["claims"]
            assert isinstance(claims, list) and claims, said.text
            assert {c["category"] for c in claims} == {category}, said.text
            found[category] |= {c["verdict"] for c in claims}
    assert found == _SCENE_VERDICTS


def test_sample_day_measurements_are_the_sdk_s(day_lines: list[bytes]) -> None:
    """Every measured turn cites the block the SDK rendered into its search, and its
    counts come from the results checked: the day has violations, results nothing could
    verify and a relaxed search, never more hard constraints sent than were said."""
    items, _ = parsed(day_lines)
    turns = [it for it in items if isinstance(it, Turn)]
    measured = [t for t in turns if t.constraints]
    assert len(measured) > 300
    assert all(t.constraints_version and t.constraints_version.startswith("cv_") for t in measured)
    calls = [c for t in measured for c in t.constraints]
    assert {c.tool for c in calls} == {"search_products", "search_plans"}
    assert sum(c.violations for c in calls) > 0 and sum(c.unverifiable for c in calls) > 0
    assert any(c.relaxed for c in calls) and any(c.sent for c in calls)
    # Every search looked through 4 to 9 items; what it returned is what was checked.
    assert all(c.results_checked <= 9 for c in calls) and any(c.results_checked for c in calls)
    # Nothing said in a session: nothing sent.
    assert sum(1 for c in calls if c.sent == 0) > sum(1 for c in calls if c.sent > 0)


def test_the_sample_day_signed_as_the_producer_signs_it_passes_the_keyed_gate(
    settings: Settings, day_lines: list[bytes]
) -> None:
    # make run's config keys every space: each line the producer sends verifies, and is
    # judged as it would be in an open space (invalid lines go out unsigned, as they are).
    from turnstream.adapters.kafka.producer import Producer

    assert all(space.producer_keys and space.erase_keys for space in settings.spaces.values())
    producer = Producer(settings)
    unsigned = decisions(day_lines, settings)
    for offset, (line, open_decision) in enumerate(zip(day_lines, unsigned, strict=True)):
        try:
            headers = producer._signed(parse_item(line), line) or []
        except InvalidItem:
            headers = []
        signature = headers[0][1] if headers else None
        decision = decide(
            line, Source("items", 0, offset), settings, lambda _key: None, signature=signature
        )
        assert decision.refusal == open_decision.refusal
        assert decision.dedup_key == open_decision.dedup_key
