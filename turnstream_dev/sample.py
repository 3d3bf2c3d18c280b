"""Deterministic, realistic wire items (JSON lines) for demos, load tests and tests.

:func:`sample_day` plays one day of a small store over the spaces of
``examples/turnstream.toml`` (acme, lumen, vida) plus an unconfigured ``ghost``;
:func:`mixed_items` builds a batch whose accepted rows and dead letters are known in
advance. Only the standard library is used: the items are plain dicts dumped as JSON.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Any

from turnstream.sdk import Conversation, TurnFrame, exposure_token, turn_key
from turnstream_dev.sample_claims import PROMPT, retail_contract, scene
from turnstream_dev.sample_tools import Said, bindings, search, session_block

__all__ = [
    "EXPOSURE_KEYS",
    "INVALID_KINDS",
    "MixedBatch",
    "mixed_items",
    "sample_day",
    "uuid7",
]

Item = dict[str, Any]

#: The kinds of broken lines the generators mix in (see ``_INVALID``).
INVALID_KINDS = (
    "not_json",
    "naive_time",
    "unknown_kind",
    "between_one",
    "both_ids",
    "pos_zero",
    "unknown_verdict",
    "missing_key",
)

#: How ``mixed_items`` cycles its bad lines: invalid kinds, unknown space, signals off.
_MIXED_BAD = (
    "not_json",
    "unknown_space",
    "naive_time",
    "signals_disabled",
    "unknown_kind",
    "between_one",
    "unknown_space",
    "both_ids",
    "pos_zero",
    "signals_disabled",
    "unknown_verdict",
    "missing_key",
)


# --------------------------------------------------------------------------- ids


def uuid7(ts_ms: int, rand: random.Random) -> str:
    """A UUIDv7 string: 48-bit Unix time in ms, version 7, RFC 4122 variant, random rest."""
    if not 0 <= ts_ms < 1 << 48:
        raise ValueError(f"ts_ms out of the 48-bit range: {ts_ms}")
    value = ts_ms << 80 | 0x7 << 76 | rand.getrandbits(12) << 64 | 0b10 << 62
    return str(uuid.UUID(int=value | rand.getrandbits(62)))


#: The exposure keys of ``examples/turnstream.toml`` and of the test deployments (the first
#: signs; acme's second is its previous key, still accepted).
EXPOSURE_KEYS = {
    "acme": ("dev-only-acme-exposure-key-2026-11", "dev-only-acme-exposure-key-2026-08"),
    "lumen": ("dev-only-lumen-exposure-key-2026-11",),
    "vida": ("dev-only-vida-exposure-key-2026-11",),
}


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _ts(at: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``, to the millisecond."""
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dumps(item: Item) -> bytes:
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode()


# --------------------------------------------------------------------------- catalog


@dataclass(frozen=True)
class _Space:
    id: str
    agents: tuple[str, ...]
    tool: str
    ref_prefix: str
    first_ref: int
    refs: int
    base_price: float
    price_step: float


_SPACES = {
    space.id: space
    for space in (
        _Space(id="acme", agents=("sales-assistant", "support-bot"), tool="search_products",
               ref_prefix="item_variant:acme", first_ref=1000, refs=60,
               base_price=49.9, price_step=10.0),
        _Space(id="lumen", agents=("sales-assistant", "support-bot"), tool="search_products",
               ref_prefix="item_variant:lumen", first_ref=300, refs=40,
               base_price=99.0, price_step=120.0),
        _Space(id="vida", agents=("plan-advisor", "support-bot"), tool="search_plans",
               ref_prefix="plan:vida", first_ref=10, refs=12, base_price=189.9, price_step=35.0),
        _Space(id="ghost", agents=("sales-assistant",), tool="search_products",
               ref_prefix="item_variant:ghost", first_ref=1, refs=20,
               base_price=19.9, price_step=5.0),
    )
}  # fmt: skip
_COLORS = ("black", "navy", "white", "red", "green", "beige")
_SIZES = ("XS", "S", "M", "L", "XL")
_BRANDS = ("samsung", "motorola", "apple", "xiaomi", "lenovo")
_NETWORKS = ("einstein", "sirio", "oswaldo-cruz", "santa-catarina")


def _price(space: _Space, ref_id: int) -> float:
    return round(space.base_price + (ref_id * 37) % 41 * space.price_step, 2)


def _ref(space: _Space, ref_id: int) -> str:
    return f"{space.ref_prefix}:{ref_id}"


def _pick_ref(rand: random.Random, space: _Space) -> int:
    return space.first_ref + rand.randrange(space.refs)


def _shown(space: _Space, ref_id: int) -> Item:
    """What the list showed next to the item (the values claims are checked against)."""
    price = _price(space, ref_id)
    shown: Item = {"price_sale": price}
    if space.id in ("acme", "ghost"):
        shown |= {
            "price_list": int(price * 1.2) + 0.9,
            "color": _COLORS[ref_id % 6],
            "size": _SIZES[ref_id % 5],
            "in_stock": ref_id % 7 != 0,
        }
    elif space.id == "lumen":
        shown |= {"brand": _BRANDS[ref_id % 5], "storage_gb": 64 << ref_id % 3}
    else:
        shown |= {"network": _NETWORKS[ref_id % 4], "coverage": "national"}
    return shown


# --------------------------------------------------------------------------- people


@dataclass(frozen=True)
class _Person:
    space: str
    ident: Item
    arm: str | None


_FIRST = ("ana", "bruno", "carla", "diego", "elisa", "felipe", "gabriela", "henrique",
          "isabela", "joao", "karina", "lucas", "mariana", "nicolas", "olivia", "pedro",
          "renata", "sofia", "thiago", "vitor", "yara")  # fmt: skip
_LAST = ("silva", "souza", "oliveira", "santos", "lima", "costa", "pereira", "almeida")
_DOMAINS = ("gmail.com", "outlook.com", "uol.com.br", "yahoo.com.br")


def _ident(rand: random.Random, n: int) -> Item:
    """A handle (phone, e-mail, external id) or, for some, a profile id."""
    roll = rand.random()
    if roll < 0.5:
        return {"handle": {"type": "phone_e164", "value": f"+55119{rand.randrange(10**8):08d}"}}
    if roll < 0.72:
        name = f"{rand.choice(_FIRST)}.{rand.choice(_LAST)}{n}@{rand.choice(_DOMAINS)}"
        return {"handle": {"type": "email", "value": name}}
    if roll < 0.86:
        return {"handle": {"type": "external_id", "value": f"cust-{10000 + n * 7}"}}
    return {"profile_id": f"p_{rand.getrandbits(128):032x}"}


def _people(
    rand: random.Random, spaces: tuple[str, ...], count: int, start: int = 0
) -> list[_Person]:
    people = []
    for n in range(start, start + count):
        arm = rand.choice(("control", "ranker-b", None))
        people.append(_Person(spaces[n % len(spaces)], _ident(rand, n), arm))
    return people


# --------------------------------------------------------------------------- stream


@dataclass
class _Stream:
    """Collects items with their times and mints unique idempotency keys."""

    rand: random.Random
    prefix: str
    end: datetime
    entries: list[tuple[datetime, int, Item | bytes]] = field(default_factory=list)
    _minted: int = 0

    def key(self, kind: str) -> str:
        self._minted += 1
        return f"{self.prefix}-{kind}-{self._minted:05d}"

    def later(self, at: datetime, low: int, high: int) -> datetime:
        """``low`` to ``high`` minutes after ``at``, never past the end of the stream."""
        return min(at + timedelta(minutes=self.rand.randint(low, high)), self.end)

    def add(self, at: datetime, item: Item | bytes) -> None:
        self.entries.append((at, len(self.entries), item))

    def lines(self) -> list[bytes]:
        ordered = sorted(self.entries, key=lambda entry: entry[:2])
        return [it if isinstance(it, bytes) else _dumps(it) for _, _, it in ordered]


@dataclass(frozen=True)
class _Exposure:
    """One page of a list as shown: ``refs[i]`` is at position ``first_pos + i``."""

    id: str
    list_id: str
    page: int
    first_pos: int
    refs: list[int]


@dataclass
class _Session:
    """One conversation of a person, with what the agent showed so far."""

    person: _Person
    source: str
    conv: str
    agent: str
    at: datetime
    language: str = "pt"
    turns: int = 0
    exposures: list[_Exposure] = field(default_factory=list)
    cart: list[tuple[int, str, int]] = field(default_factory=list)
    conversation: Conversation | None = None
    #: The preferences the person said for themselves in the session, and when.
    said: list[Said] = field(default_factory=list)

    @property
    def space(self) -> _Space:
        return _SPACES[self.person.space]


_SOURCE_PREFIX = {"whatsapp": "wa", "web": "web", "app": "app"}


def _session(s: _Stream, person: _Person, at: datetime) -> _Session:
    source = s.rand.choices(("whatsapp", "web", "app"), (5, 3, 2))[0]
    conv = f"{_SOURCE_PREFIX[source]}-{person.space}-{s.key('c').rsplit('-', 1)[1]}"
    agents = _SPACES[person.space].agents
    agent = agents[-1] if s.rand.random() < 0.25 else agents[0]
    languages, weights = zip(*_LANGUAGES[person.space], strict=True)
    language = s.rand.choices(languages, weights)[0]
    return _Session(person, source, conv, agent, at, language)


def _envelope(s: _Stream, kind: str, sess: _Session, at: datetime | None = None) -> Item:
    person = sess.person
    return {
        "type": kind,
        "space_id": person.space,
        "idempotency_key": s.key(f"{person.space}-{kind[:4]}"),
        **person.ident,
        "source": sess.source,
        "conversation_id": sess.conv,
        "occurred_at": _ts(at or sess.at),
    }


# --------------------------------------------------------------------------- turns


#: The spaces whose agents have a claim contract (lumen's has none: its turns carry no
#: claims), and the share of their turns said through the guard rather than in count mode.
_GUARDED = {"acme": 0.5, "vida": 0.3, "ghost": 0.0}
#: Each space's languages and how often each is spoken (the contract reads all three).
_LANGUAGES = {
    "acme": (("pt", 7), ("en", 2), ("es", 1)),
    "lumen": (("en", 1),),
    "vida": (("es", 8), ("pt", 2)),
    "ghost": (("pt", 1),),
}
_OPENERS = {"pt": ("Claro! ", "Boa escolha. ", ""), "en": ("Sure! ", "Good choice. ", ""),
            "es": ("¡Claro! ", "Buena elección. ", "")}  # fmt: skip
#: How often an agent repeats its own prompt (the contract's internal-text fingerprints).
_LEAKS = 0.015


def _conversation(sess: _Session) -> Conversation:
    """The SDK's conversation of a session: the sample's turns are the SDK's records."""
    if sess.conversation is None:
        person = sess.person
        ident = person.ident
        sess.conversation = Conversation(
            space=person.space,
            source=sess.source,
            agent=sess.agent,
            handle=ident.get("handle"),
            profile_id=ident.get("profile_id"),
            conversation_id=sess.conv,
            contract=retail_contract() if person.space in _GUARDED else None,
            language=sess.language,
            context="chat",
            build=f"{sess.agent}@2026.09.{3 + len(sess.agent) % 4}",
            experiment=(
                {"id": "ranker-2026-09", "arm": person.arm} if person.arm is not None else None
            ),
            now=lambda: sess.at,
            # The guard's budgets on a clock that does not move: the same day every time,
            # however loaded the machine (on time.monotonic, a guarded turn that takes over
            # the 300 ms message budget under load is marked guard_budget_exceeded).
            clock=lambda: 0.0,
            tool_bindings=bindings(),  # what GET /v1/sdk/profile serves the source
            tool_evidence=False,  # each scene records its evidence by hand
        )
    return sess.conversation


def _say(s: _Stream, sess: _Session, frame: TurnFrame, categories: Sequence[str]) -> str:
    """The agent's output: one sentence per category about the last list shown (or any
    item), each with the evidence its scene put in the frame."""
    refs = sess.exposures[-1].refs if sess.exposures else None
    return _said(frame, s.rand, sess.language, sess.space, refs, categories)


def _said(
    frame: TurnFrame,
    rand: random.Random,
    lang: str,
    space: _Space,
    refs: Sequence[int] | None,
    categories: Sequence[str],
) -> str:
    text = rand.choice(_OPENERS[lang])
    for category in categories:
        ref_id = rand.choice(refs) if refs else _pick_ref(rand, space)
        said = scene(frame, rand, category, lang, _ref(space, ref_id), _price(space, ref_id))
        if said.anchor is not None:
            frame.anchor(len(text), len(text) + len(said.text), *said.anchor)
        text += said.text + " "
    if categories and rand.random() < _LEAKS:
        text += PROMPT
    return text.strip()


#: The claim sets mixed batches draw from (see ``_checked_claims``).
_MIXED_CATEGORIES = (("price",), ("deadline", "action_promise"))


@cache
def _checked_claims() -> dict[tuple[str, ...], list[list[Item]]]:
    """Claims the real checker gave 36 outputs (12 per language) of each category set of
    the mixed batches, against the evidence their scenes recorded. Checked once per
    process and drawn from: a mixed batch is for counting rows, and checking each of a
    30,000-line batch's ~12,000 turns took minutes (5,000 lines: 21 s against 2.7 s, on
    a machine at load 21)."""
    rand = random.Random("turnstream-mixed-claims")
    now = datetime(2026, 9, 29, 12, tzinfo=UTC)
    pool: dict[tuple[str, ...], list[list[Item]]] = {}
    for categories in _MIXED_CATEGORIES:
        checked: list[list[Item]] = pool.setdefault(categories, [])
        for lang in ("pt", "en", "es"):
            conv = Conversation(
                space="acme", source="web", agent="mixed", profile_id="p_mixed",
                contract=retail_contract(), language=lang, context="chat", now=lambda: now,
            )  # fmt: skip
            for _ in range(12):
                with conv.turn() as frame:
                    conv.agent(_said(frame, rand, lang, _SPACES["acme"], None, categories))
                assert frame.record is not None
                checked.append(frame.record["claims"])
    return pool


def _pooled_turn(
    s: _Stream, sess: _Session, categories: tuple[str, ...], constraints: Sequence[Item] = ()
) -> Item:
    """A turn record whose claims are drawn from ``_checked_claims`` (mixed batches and
    the lines broken on purpose), with the SDK's idempotency key."""
    sess.turns += 1
    turn_id = f"{sess.conv}-t{sess.turns}"
    item = _envelope(s, "turn", sess) | {
        "idempotency_key": turn_key(sess.person.space, sess.conv, turn_id),
        "turn_id": turn_id,
        "agent": sess.agent,
        "constraints": list(constraints),
    }
    if sess.person.space in _GUARDED:
        item["contract_version"] = retail_contract().version
        item["claims"] = [dict(c) for c in s.rand.choice(_checked_claims()[categories])]
    else:
        item["claims"] = []
    if sess.person.arm is not None:
        item["experiment"] = {"id": "ranker-2026-09", "arm": sess.person.arm}
    return item


def _catalogue(rand: random.Random, space: _Space) -> list[Item]:
    """What the space's search looks through for one call: a few of its items, as the
    search returns them (one in nine has a field missing: a result nothing can verify)."""
    refs = rand.sample(range(space.first_ref, space.first_ref + space.refs), rand.randint(4, 9))
    found = []
    for ref_id in refs:
        shown = _shown(space, ref_id)
        if space.tool == "search_plans":
            item = {"plan_id": _ref(space, ref_id), "price": shown["price_sale"],
                    "coverage": shown["coverage"], "network": shown["network"]}  # fmt: skip
        else:
            item = {"sku": _ref(space, ref_id), "price": shown["price_sale"]}
            item |= {k: shown[k] for k in ("color", "size", "brand", "storage_gb") if k in shown}
        if ref_id % 9 == 0:
            item.pop("network" if space.tool == "search_plans" else "color", None)
            item.pop("brand", None)
        found.append(item)
    return found


def _measured(s: _Stream, sess: _Session) -> Item:
    """One call of the space's search, measured by the SDK outside a turn (a pooled turn
    has no frame): the wire's constraint measurement."""
    space = sess.space
    block = session_block(space.id, sess.conv, sess.said, sess.at)
    run = search(space.tool, s.rand, _catalogue(s.rand, space), block, sess.source, False)
    assert run.measured is not None
    return run.measured.wire(space.tool)


def _remember(sess: _Session, interaction: Item, for_: str = "self") -> None:
    """Keep what the person said for themselves: the session's block holds it."""
    if interaction.get("kind") == "preference" and for_ == "self":
        sess.said.append((interaction, sess.at))


def _turn(
    s: _Stream,
    sess: _Session,
    interactions: list[Item],
    categories: Sequence[str] = (),
    searched: bool = False,
) -> Item:
    """A turn record made by the SDK: the claims are the checker's verdicts on what the
    agent said against what the turn's tools returned. Some turns go through the guard
    (it may rewrite or block, and marks guard_acted); a few of vida's are proposals,
    which a block holds for a person. ``searched``: the agent called the space's search,
    bound and measured by the SDK against the block of what was said in the session."""
    sess.turns += 1
    conv = _conversation(sess)
    rand = s.rand
    guarded = rand.random() < _GUARDED.get(sess.person.space, 0.0)
    context = "proposal" if sess.person.space == "vida" and rand.random() < 0.25 else "chat"
    with conv.turn(at=sess.at) as frame:
        for interaction in interactions:
            frame.interact(interaction)
            _remember(sess, interaction, interaction.get("for", "self"))
        text = _say(s, sess, frame, categories)
        if searched:  # after what the agent says: the claims cite the calls _say recorded
            frame.cite_block(session_block(sess.person.space, sess.conv, sess.said, sess.at))
            search(sess.space.tool, rand, _catalogue(rand, sess.space), {}, sess.source, True)
        if guarded:
            text = conv.claims.guard_text(text, context=context).text
        conv.agent(text, context=context)
    assert frame.record is not None
    return frame.record


# --------------------------------------------------------------------------- interactions


_PREFERENCES = {
    "acme": (
        ("item_variant.color", "not_in", ["black"], "must_not"),
        ("item_variant.size", "eq", ["M"], "must"),
        ("item_variant.price_sale", "between", [100, 250], "prefer"),
        ("item_variant.category", "in", ["sneakers", "running"], "prefer"),
        ("item_variant.color", "in", ["navy", "beige"], "prefer"),
    ),
    "lumen": (
        ("item_variant.brand", "in", ["samsung", "motorola"], "prefer"),
        ("item_variant.storage_gb", "gte", [128], "must"),
        ("item_variant.price_sale", "lte", [2500], "must"),
        ("item_variant.brand", "ne", ["apple"], "avoid"),
    ),
    "vida": (
        ("plan.price_monthly", "lte", [400], "must"),
        ("plan.network", "in", ["einstein", "sirio"], "prefer"),
        ("plan.coverage", "eq", ["national"], "must"),
    ),
}
_ATTRIBUTES = {
    "acme": (
        ("person.shoe_size", 42, "EU"),
        ("person.clothing_size", "M", "BR"),
        ("person.shoe_size", 9, "US"),
    ),
    "lumen": (("person.carrier", "vivo", None), ("person.os", "android", None)),
    "vida": (("person.age", 34, None), ("person.city", "sao-paulo", None)),
}


def _preference(rand: random.Random, space: str, source: str = "stated") -> Item:
    attr, op, values, strength = rand.choice(_PREFERENCES[space])
    item = {
        "kind": "preference",
        "attr": attr,
        "op": op,
        "values": list(values),
        "strength": strength,
        "source": source,
    }
    # Never "turn": a turn-scope constraint stays in the agent's turn; one sent is
    # refused (reason turn_scope), and these are the items a well-behaved producer sends.
    scope = rand.choice((None, None, "persistent", "session"))
    return item | ({"scope": scope} if scope else {})


def _attribute(rand: random.Random, space: str) -> Item:
    attr, value, system = rand.choice(_ATTRIBUTES[space])
    item = {"kind": "attribute", "attr": attr, "value": value, "source": "stated"}
    return item | ({"system": system} if system else {})


def _next_page(rand: random.Random, sess: _Session) -> tuple[str, int, int]:
    """``(list_id, page, first pos)``: a new list, or sometimes the next page of the last."""
    last = sess.exposures[-1] if sess.exposures else None
    if last is not None and rand.random() < 0.2:
        return last.list_id, last.page + 1, last.first_pos + len(last.refs)
    return f"{sess.conv}-l{len(sess.exposures) + 1}", 1, 1


def _presented(s: _Stream, sess: _Session, method: str = "bridge") -> Item:
    """A page of a list shown in the session; remembered for the steps that follow."""
    rand, space = s.rand, sess.space
    refs = rand.sample(range(space.first_ref, space.first_ref + space.refs), rand.randint(3, 8))
    list_id, page, first = _next_page(rand, sess)
    shown = _Exposure(uuid7(_ms(sess.at), rand), list_id, page, first, refs)
    sess.exposures.append(shown)
    items = [
        {"pos": first + i, "ref": _ref(space, r), "shown": _shown(space, r)}
        for i, r in enumerate(refs)
    ]
    return {
        "kind": "presented",
        "exposure_id": shown.id,
        "list_id": list_id,
        "list_kind": "search" if page > 1 else rand.choice(("search", "recommendation", "similar")),
        "page": page,
        "delivered_at": _ts(sess.at),
        "visible_k": min(4, len(items)),
        "method": method,
        "items": items,
    }


def _liked(person: _Person, space: _Space, ref_id: int) -> bool:
    """Whether the item is of the person's taste: one colour at acme, one brand at lumen,
    the same every day (from who they are)."""
    taste = int(hashlib.sha256(json.dumps(person.ident, sort_keys=True).encode()).hexdigest(), 16)
    if space.id == "acme":
        return _COLORS[ref_id % 6] == _COLORS[taste % 6]
    if space.id == "lumen":
        return _BRANDS[ref_id % 5] == _BRANDS[taste % 5]
    return False


def _look(s: _Stream, sess: _Session, cart: bool) -> list[Item]:
    """Seen, a click and maybe a cart on the last page shown: two looks in three go to an
    item of the person's taste among the first four, when there is one (people have
    tastes; clicks at random would teach nothing)."""
    rand, space, shown = s.rand, sess.space, sess.exposures[-1]
    index = rand.randrange(min(4, len(shown.refs)))
    liked = [i for i in range(min(4, len(shown.refs))) if _liked(sess.person, space, shown.refs[i])]
    # Decided from the exposure id, not the generator: the rest of the day is drawn as before.
    if liked and int(shown.id[-2:], 16) % 3 < 2:
        index = liked[int(shown.id[-4:-2], 16) % len(liked)]
    pos, ref_id, last = shown.first_pos + index, shown.refs[index], len(shown.refs) - 1
    seen = {"kind": "seen", "exposure_id": shown.id}
    seen["max_index_seen"] = shown.first_pos + rand.randint(index, last)
    click = {"kind": "engaged", "exposure_id": shown.id, "ref": _ref(space, ref_id), "pos": pos}
    steps = [seen, click | {"action": rand.choice(("click", "click", "detail", "mention"))}]
    if cart:
        steps.append(click | {"action": "cart"})
        sess.cart.append((ref_id, shown.id, pos))
    return steps


def _feedback(rand: random.Random, sess: _Session) -> Item:
    ref_id = rand.choice(sess.exposures[-1].refs)
    polarity = rand.choice(("like", "dislike"))
    reason = "too dark" if polarity == "dislike" and sess.space.id == "acme" else "price"
    return {
        "kind": "feedback",
        "ref": _ref(sess.space, ref_id),
        "polarity": polarity,
        "fields": ["color" if sess.space.id == "acme" else "price_sale"],
        "reason": reason,
    }


def _watch(rand: random.Random, sess: _Session) -> Item:
    ref_id = _pick_ref(rand, sess.space)
    below = round(_price(sess.space, ref_id) * 0.9, 2)
    return {
        "kind": "watch",
        "condition": {"ref": _ref(sess.space, ref_id), "price_below": below},
        "consent_event": f"consent-{sess.conv}",
    }


def _unwatch(rand: random.Random, sess: _Session) -> Item:
    return {"kind": "unwatch", "watch_id": f"w-{rand.getrandbits(40):010x}"}


def _interaction_item(s: _Stream, sess: _Session, interaction: Item, for_: str = "self") -> Item:
    _remember(sess, interaction, for_)
    item = _envelope(s, "interaction", sess) | {"interaction": interaction}
    return item | ({"for": for_} if for_ != "self" else {})


# --------------------------------------------------------------------------- outcomes, commands


def _outcome(
    s: _Stream, sess: _Session, outcome: str, ref: str, order_id: str, at: datetime, **extra: Any
) -> Item:
    item = _envelope(s, "outcome", sess, at)
    return item | {"outcome": outcome, "ref": ref, "order_id": order_id} | extra


def _command(s: _Stream, sess: _Session, command: str, at: datetime) -> Item:
    item = _envelope(s, "command", sess, at) | {"command": command}
    if command in ("delete", "correct"):
        item["inference_id"] = f"inf-{s.rand.getrandbits(48):012x}"
    if command == "correct":
        item["replacement"] = _preference(s.rand, sess.person.space, source="correction")
    return item


def _order_id(s: _Stream, sess: _Session, day: date) -> str:
    return f"ord-{sess.person.space}-{day:%Y%m%d}-{s.key('o').rsplit('-', 1)[1]}"


#: How the sample's cart lines carry tokens: most signed with the space's key, some with
#: its previous key (still valid), a few forged, another space's, or cut short.
_TOKEN_KINDS = (("signed", 80), ("previous_key", 6), ("forged", 6), ("other_space", 3),
                ("cut", 5))  # fmt: skip


def _token(rand: random.Random, space: str, exposure_id: str, pos: int) -> str:
    """A cart line's token as the SDK mints it (or as a forger or a bad copy makes it)."""
    kinds, weights = zip(*_TOKEN_KINDS, strict=True)
    kind = rand.choices(kinds, weights)[0]
    keys = EXPOSURE_KEYS[space]
    if kind == "previous_key" and len(keys) > 1:
        return exposure_token(exposure_id, pos, space=space, key=keys[1])
    if kind == "forged":
        return exposure_token(exposure_id, pos, space=space, key="a-forger-s-guess-0000")
    if kind == "other_space":
        other = "lumen" if space != "lumen" else "acme"
        return exposure_token(exposure_id, pos, space=other, key=EXPOSURE_KEYS[other][0])
    token = exposure_token(exposure_id, pos, space=space, key=keys[0])
    return token[: -rand.randint(3, 12)] if kind == "cut" else token


def _purchase(s: _Stream, sess: _Session) -> None:
    """The cart bought a little later, with the token of the exposure it came from."""
    ref_id, exposure_id, pos = sess.cart[-1]
    at = s.later(sess.at, 2, 45)
    extra: Item = {"exposure_token": _token(s.rand, sess.space.id, exposure_id, pos)}
    if sess.space.id == "acme":
        extra["attrs"] = {"size": _SIZES[ref_id % 5]}
    order = _order_id(s, sess, at.date())
    s.add(at, _outcome(s, sess, "purchase", _ref(sess.space, ref_id), order, at, **extra))


# --------------------------------------------------------------------------- sessions


def _acme_turn(s: _Stream, sess: _Session) -> Item:
    """One acme turn: preferences first, then lists, looks, carts, feedback."""
    rand = s.rand
    if sess.turns == 0:
        inter = [_preference(rand, "acme") for _ in range(rand.randint(1, 2))]
        if rand.random() < 0.3:
            kid = rand.random() < 0.15
            inter.append(_attribute(rand, "acme") | ({"for": "beneficiary:kid-1"} if kid else {}))
        return _turn(s, sess, inter, ("stock",))
    if not sess.exposures or rand.random() < 0.3:
        presented = _presented(s, sess)
        categories = rand.choice((("price",), ("price", "discount"), ("price", "stock")))
        return _turn(s, sess, [presented], categories, searched=True)
    inter = _look(s, sess, cart=rand.random() < 0.35)
    if rand.random() < 0.2:
        inter.append(_feedback(rand, sess) | ({"for": "gift"} if rand.random() < 0.2 else {}))
    if sess.cart:
        categories = rand.choice((("deadline", "action_promise"), ("policy_citation",)))
    else:
        categories = ("stock", "price")
    return _turn(s, sess, inter, categories)


def _acme_session(s: _Stream, sess: _Session) -> None:
    for _ in range(s.rand.randint(3, 7)):
        sess.at += timedelta(seconds=s.rand.randint(15, 150))
        s.add(sess.at, _acme_turn(s, sess))
    if sess.cart and s.rand.random() < 0.6:
        _purchase(s, sess)


def _lumen_signals(s: _Stream, sess: _Session, presented: Item) -> None:
    """Batch interactions the shop's web SDK records after a search turn."""
    rand = s.rand
    sess.at += timedelta(seconds=1)
    s.add(sess.at, _interaction_item(s, sess, presented))
    for_ = "gift" if rand.random() < 0.04 else "self"
    for step in _look(s, sess, cart=rand.random() < 0.3):
        sess.at += timedelta(seconds=rand.randint(3, 40))
        s.add(sess.at, _interaction_item(s, sess, step, for_))
    extra = rand.choices((_feedback, _watch, _unwatch, None), (2, 1, 0.4, 6))[0]
    if extra is not None:
        sess.at += timedelta(seconds=5)
        s.add(sess.at, _interaction_item(s, sess, extra(rand, sess)))


def _lumen_session(s: _Stream, sess: _Session) -> None:
    """A shop that records turns and, separately, batch interactions."""
    rand = s.rand
    for n in range(rand.randint(2, 5)):
        sess.at += timedelta(seconds=rand.randint(20, 180))
        if n == 0 and rand.random() < 0.5:
            s.add(sess.at, _interaction_item(s, sess, _preference(rand, "lumen")))
        presented = _presented(s, sess, "tool_result")
        categories = rand.choice((("price",), ("price", "stock")))
        s.add(sess.at, _turn(s, sess, [], categories, searched=True))
        _lumen_signals(s, sess, presented)
    if sess.cart and rand.random() < 0.5:
        _purchase(s, sess)


def _vida_session(s: _Stream, sess: _Session) -> None:
    """Health plans: turns with claims; a few carry interactions the space refuses."""
    rand = s.rand
    for _ in range(rand.randint(3, 6)):
        sess.at += timedelta(seconds=rand.randint(30, 240))
        inter = [_preference(rand, "vida")] if rand.random() < 0.04 else []
        categories = rand.choice(
            (
                ("price",),
                ("price", "deadline"),
                ("policy_citation",),
                ("action_promise",),
                ("deadline", "action_promise"),
            )
        )
        s.add(sess.at, _turn(s, sess, inter, categories, searched=True))
    if rand.random() < 0.15:
        at = s.later(sess.at, 5, 60)
        ref = _ref(sess.space, _pick_ref(rand, sess.space))
        s.add(at, _outcome(s, sess, "purchase", ref, _order_id(s, sess, at.date()), at))


_SESSIONS: dict[str, Callable[[_Stream, _Session], None]] = {
    "acme": _acme_session,
    "lumen": _lumen_session,
    "vida": _vida_session,
}
#: Relative traffic per UTC hour (Brazil: UTC-3): quiet nights, busy evenings. Sessions
#: start before 22:30 so that they end within the day.
_HOURLY = (2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 6, 7, 7, 6, 6, 6, 7, 8, 8, 9, 5)


def _start_of_session(rand: random.Random, day: date) -> datetime:
    hour = rand.choices(range(len(_HOURLY)), _HOURLY)[0]
    ms = rand.randrange(3_600_000 if hour < 22 else 1_800_000)
    return datetime.combine(day, time(hour), UTC) + timedelta(milliseconds=ms)


# --------------------------------------------------------------------------- the day


_RETURNS = {
    "acme": {"reason": "returned_for_size", "attrs": {"size": "M"}},
    "lumen": {"reason": "defective"},
}


def _after_sales(s: _Stream, people: list[_Person], day: date) -> None:
    """Deliveries, returns and kept items of orders placed on earlier days."""
    rand, returned = s.rand, set()
    for person in (p for p in people if p.space in _RETURNS and rand.random() < 0.6):
        sess = _session(s, person, _start_of_session(rand, day))
        ref = _ref(sess.space, _pick_ref(rand, sess.space))
        order = _order_id(s, sess, day - timedelta(days=rand.randint(3, 20)))
        outcome = rand.choices(("delivery", "return", "kept"), (5, 2, 3))[0]
        if person.space not in returned:  # every day sees at least one return
            outcome = "return"
        returned.add(person.space)
        extra = _RETURNS[person.space] if outcome == "return" else {}
        s.add(sess.at, _outcome(s, sess, outcome, ref, order, sess.at, **extra))


def _commands(s: _Stream, people: list[_Person], day: date) -> None:
    for command in ("opt_out", "opt_out", "delete", "delete", "delete", "correct", "correct"):
        person = s.rand.choice([p for p in people if p.space != "ghost"])
        sess = _session(s, person, _start_of_session(s.rand, day))
        s.add(sess.at, _command(s, sess, command, sess.at))


def _ghost(s: _Stream, day: date) -> None:
    """An unconfigured space's producer: valid items, refused as unknown_space."""
    for person in _people(s.rand, ("ghost",), 4, start=900):
        sess = _session(s, person, _start_of_session(s.rand, day))
        s.add(sess.at, _turn(s, sess, [], ("price",)))
        s.add(sess.at, _interaction_item(s, sess, _presented(s, sess)))


def sample_day(day: date, seed: int = 7) -> list[bytes]:
    """A realistic day of a small store: one JSON item per element, ordered by occurred_at.

    About 2% of the lines are broken on purpose (one of :data:`INVALID_KINDS`), and one
    preference says ``scope = "turn"`` (refused: it never reaches the server); the rest
    are valid, each with its own idempotency key. Deterministic for ``(day, seed)``.
    """
    rand = random.Random(f"turnstream-sample:{day.isoformat()}:{seed}")
    s = _Stream(rand, f"{day:%Y%m%d}", datetime.combine(day, time(23, 59, 59), UTC))
    people = _people(s.rand, ("acme", "acme", "lumen", "vida", "acme", "lumen", "vida"), 60)
    for person in people:
        for _ in range(s.rand.randint(2, 5)):
            sess = _session(s, person, _start_of_session(s.rand, day))
            _SESSIONS[person.space](s, sess)
    _after_sales(s, people, day)
    _commands(s, people, day)
    _ghost(s, day)
    _add_invalid(s, people, day, round(len(s.entries) * 0.02))
    _turn_scope(s, people, day)
    return s.lines()


def _turn_scope(s: _Stream, people: list[_Person], day: date) -> None:
    """One producer that sends a turn-scope preference, which belongs in the agent's turn:
    refused whole (reason ``turn_scope``, field ``interaction.scope``). Drawn last, so the
    rest of the day is the same as without it."""
    person = s.rand.choice([p for p in people if p.space == "acme"])
    sess = _session(s, person, _start_of_session(s.rand, day))
    preference = _preference(s.rand, "acme") | {"scope": "turn"}
    s.add(sess.at, _interaction_item(s, sess, preference))


# --------------------------------------------------------------------------- invalid lines


def _bad_turn(s: _Stream, sess: _Session) -> Item:
    return _pooled_turn(s, sess, ("price",))


def _bad_pref(s: _Stream, sess: _Session) -> Item:
    return _interaction_item(
        s, sess, _preference(s.rand, "acme") | {"op": "between", "values": [150]}
    )


def _bad_pos(s: _Stream, sess: _Session) -> Item:
    presented = _presented(s, sess)
    for item in presented["items"]:
        item["pos"] -= 1
    return _interaction_item(s, sess, presented)


def _bad_verdict(s: _Stream, sess: _Session) -> Item:
    turn = _bad_turn(s, sess)
    if not turn["claims"]:  # a space without a contract: a claim made up, to break
        turn["claims"] = [{"category": "price", "nature": "model", "verdict": "unsupported",
                           "action": "warn"}]  # fmt: skip
    turn["claims"][0]["verdict"] = "plausible"
    return turn


_INVALID: dict[str, Callable[[_Stream, _Session], Item | bytes]] = {
    "not_json": lambda s, sess: _dumps(_bad_turn(s, sess))[:-25],
    "naive_time": lambda s, sess: _bad_turn(s, sess) | {"occurred_at": _ts(sess.at)[:-5]},
    "unknown_kind": lambda s, sess: _interaction_item(
        s, sess, {"kind": "hovered", "ref": _ref(sess.space, _pick_ref(s.rand, sess.space))}
    ),
    "between_one": _bad_pref,
    "both_ids": lambda s, sess: (
        _bad_turn(s, sess)
        | {
            "handle": {"type": "phone_e164", "value": f"+55119{s.rand.randrange(10**8):08d}"},
            "profile_id": f"p_{s.rand.getrandbits(128):032x}",
        }
    ),
    "pos_zero": _bad_pos,
    "unknown_verdict": _bad_verdict,
    "missing_key": lambda s, sess: {
        k: v for k, v in _bad_turn(s, sess).items() if k != "idempotency_key"
    },
}


def _invalid_line(s: _Stream, kind: str, sess: _Session) -> bytes:
    line = _INVALID[kind](s, sess)
    return line if isinstance(line, bytes) else _dumps(line)


def _add_invalid(s: _Stream, people: list[_Person], day: date, count: int) -> None:
    for n in range(count):
        person = s.rand.choice([p for p in people if p.space in ("acme", "lumen")])
        sess = _session(s, person, _start_of_session(s.rand, day))
        s.add(sess.at, _invalid_line(s, INVALID_KINDS[n % len(INVALID_KINDS)], sess))


# --------------------------------------------------------------------------- mixed batch


@dataclass(frozen=True)
class MixedBatch:
    """Lines plus what ingesting them must give.

    ``accepted``: raw-table rows by table (``turns``, ``interactions``, ``outcomes``,
    ``commands``); ``refused``: dead letters by reason (``invalid``, ``unknown_space``,
    ``signals_disabled``). Every key is present, zero when nothing goes there.
    """

    lines: list[bytes]
    accepted: dict[str, int]
    refused: dict[str, int]


_TABLE = {
    "turn": "turns",
    "interaction": "interactions",
    "outcome": "outcomes",
    "command": "commands",
}
_MIXED_KINDS = (
    "presented",
    "seen",
    "engaged",
    "feedback",
    "preference",
    "attribute",
    "watch",
    "unwatch",
)


def _mixed_interaction(s: _Stream, sess: _Session) -> Item:
    """One interaction item of any of the eight kinds."""
    rand, kind = s.rand, s.rand.choice(_MIXED_KINDS)
    space = sess.person.space if sess.person.space in _PREFERENCES else "acme"
    make: dict[str, Callable[[], Item]] = {
        "presented": lambda: _presented(s, sess),
        "seen": lambda: _look(s, sess, cart=False)[0],
        "engaged": lambda: _look(s, sess, cart=rand.random() < 0.5)[-1],
        "feedback": lambda: _feedback(rand, sess),
        "preference": lambda: _preference(rand, space),
        "attribute": lambda: _attribute(rand, space),
        "watch": lambda: _watch(rand, sess),
        "unwatch": lambda: _unwatch(rand, sess),
    }
    if kind not in ("presented", "preference", "attribute", "watch", "unwatch"):
        _presented(s, sess)  # something shown before it is seen or clicked
    return _interaction_item(s, sess, make[kind]())


def _mixed_valid(s: _Stream, sess: _Session, kind: str) -> Item:
    rand = s.rand
    if kind == "turn":
        categories = rand.choice(_MIXED_CATEGORIES)
        return _pooled_turn(s, sess, categories, [_measured(s, sess)])
    if kind == "interaction":
        return _mixed_interaction(s, sess)
    if kind == "outcome":
        ref = _ref(sess.space, _pick_ref(rand, sess.space))
        outcome = rand.choice(("purchase", "delivery", "return", "kept"))
        return _outcome(s, sess, outcome, ref, _order_id(s, sess, sess.at.date()), sess.at)
    # No erase: an erased subject's rows leave every table, and this batch is for counting.
    return _command(s, sess, rand.choice(("opt_out", "delete", "correct")), sess.at)


def _mixed_bad(s: _Stream, sess_for: Callable[[str], _Session], label: str) -> None:
    """One line that is not accepted: refused for ``label`` or invalid of that kind."""
    if label == "unknown_space":
        sess = sess_for("ghost")
        s.add(sess.at, _mixed_valid(s, sess, s.rand.choice(("turn", "interaction"))))
    elif label == "signals_disabled":
        sess = sess_for("vida")
        s.add(sess.at, _mixed_interaction(s, sess))
    else:
        sess = sess_for(s.rand.choice(("acme", "lumen")))
        s.add(sess.at, _invalid_line(s, label, sess))


def mixed_items(
    n: int = 1000, bad: int = 50, seed: int = 1, start: datetime | None = None
) -> MixedBatch:
    """``n`` lines of which exactly ``bad`` are invalid or refused, the rest accepted.

    Every line is distinct and every valid item has its own idempotency key; every time
    lies within the day before ``start`` (default: now, UTC, to the second). Turns carry
    no interactions, so each accepted item is exactly one row of its table.
    """
    if not 0 <= bad <= n:
        raise ValueError(f"need 0 <= bad <= n, got bad={bad}, n={n}")
    start = start or datetime.now(UTC).replace(microsecond=0)
    if start.tzinfo is None:
        raise ValueError("start must carry a time zone")
    s = _Stream(random.Random(f"turnstream-mixed:{n}:{bad}:{seed}"), f"mx{seed}", start)
    people = {sp: _people(s.rand, (sp,), 20, start=i * 100) for i, sp in enumerate(_SPACES)}

    def sess_for(space: str) -> _Session:
        at = start - timedelta(seconds=s.rand.randint(60, 86_000))
        return _session(s, s.rand.choice(people[space]), at)

    accepted = dict.fromkeys(_TABLE.values(), 0)
    refused = dict.fromkeys(("invalid", "unknown_space", "signals_disabled"), 0)
    for i in range(n - bad):
        kind = s.rand.choices(tuple(_TABLE), (4, 3.5, 1.5, 1))[0]
        spaces = ("acme", "lumen") if kind == "interaction" else ("acme", "lumen", "vida")
        sess = sess_for(spaces[i % len(spaces)])
        s.add(sess.at, _mixed_valid(s, sess, kind))
        accepted[_TABLE[kind]] += 1
    for i in range(bad):
        label = _MIXED_BAD[i % len(_MIXED_BAD)]
        _mixed_bad(s, sess_for, label)
        refused[label if label in refused else "invalid"] += 1
    return MixedBatch(s.lines(), accepted, refused)
