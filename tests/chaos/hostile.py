"""Malformed and hostile messages, each with the dead-letter reason it must get.

Every message is distinct (the worker drops a second copy of the same invalid bytes by
design), built from a few valid items that are then broken one way each: wrong types,
impossible values, unknown kinds, NaN and infinities, null bytes, bad UTF-8, lone UTF-16
surrogates, deep nesting, JSON that is not an object, text that is not JSON, blank
messages, huge strings (up to and over the 1 MiB limit), plus valid items refused by
policy (a space that is not configured, an interaction of a space whose signals feature
is off).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from turnstream.models.items import MAX_ITEM_BYTES

__all__ = ["HUGE_SIZES", "Hostile", "hostile_items", "valid_turn"]

Item = dict[str, Any]

#: Sizes of the messages around the 1 MiB limit (near it, at it and over it).
HUGE_SIZES = (
    MAX_ITEM_BYTES - 4096,
    MAX_ITEM_BYTES - 1,
    MAX_ITEM_BYTES,
    MAX_ITEM_BYTES + 1,
    MAX_ITEM_BYTES + 4096,
    2 * MAX_ITEM_BYTES,
    3 * MAX_ITEM_BYTES,
)

#: How many of each category (10,000 in all).
PLAN = {
    "wrong_type": 1_800,
    "bad_value": 1_200,
    "unknown_kind": 1_000,
    "nan_inf": 800,
    "null_bytes": 800,
    "bad_utf8": 800,
    "lone_surrogate": 200,
    "deep_nesting": 400,
    "non_object_json": 1_000,
    "not_json": 1_000,
    "blank": 100,
    "huge": 100,
    "unknown_space": 400,
    "signals_disabled": 400,
}
REASON = {"unknown_space": "unknown_space", "signals_disabled": "signals_disabled"}


@dataclass(frozen=True)
class Hostile:
    raw: bytes
    category: str

    @property
    def reason(self) -> str:
        """The dead-letter reason it must get."""
        return REASON.get(self.category, "invalid")


def _dumps(item: Any) -> bytes:
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode()


class _Maker:
    """Valid items of every type, each with its own key, to break."""

    def __init__(self, rand: random.Random) -> None:
        self.rand = rand
        self.n = 0
        self.t0 = datetime.now(UTC) - timedelta(hours=2)

    def _envelope(self, kind: str, space: str = "acme") -> Item:
        self.n += 1
        rand = self.rand
        ident: Item = (
            {"handle": {"type": "phone_e164", "value": f"+5511{rand.randrange(10**9):09d}"}}
            if rand.random() < 0.5
            else {"profile_id": f"p_{rand.getrandbits(64):016x}"}
        )
        at = self.t0 + timedelta(seconds=rand.randrange(3600), milliseconds=rand.randrange(999))
        return {
            "type": kind,
            "space_id": space,
            "idempotency_key": f"hostile-{self.n}-{rand.getrandbits(40):010x}",
            **ident,
            "source": rand.choice(("web", "whatsapp", "app")),
            "conversation_id": f"conv-{rand.randrange(10**6)}",
            "occurred_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }

    def turn(self, space: str = "acme") -> Item:
        rand = self.rand
        return self._envelope("turn", space) | {
            "turn_id": f"turn-{self.n}",
            "agent": "sales-assistant",
            "claims": [
                {
                    "category": "price",
                    "class": "money",
                    "nature": "quoted",
                    "value": f"{rand.randrange(10, 999)}.90",
                    "verdict": rand.choice(("matched", "mismatch", "no_evidence")),
                    "action": "none",
                    "span": [3, 9],
                    "evidence": {"field": "price_sale"},
                }
            ],
            "constraints": [
                {
                    "tool": "search_products",
                    "sent": 2,
                    "results_checked": 8,
                    "violations": 1,
                    "unverifiable": 1,
                }
            ],
        }

    def preference(self, space: str = "acme") -> Item:
        return self._envelope("interaction", space) | {
            "interaction": {
                "kind": "preference",
                "attr": "item_variant.color",
                "op": "not_in",
                "values": [self.rand.choice(("black", "navy", "red"))],
                "strength": "must_not",
                "source": "stated",
            }
        }

    def presented(self, space: str = "acme") -> Item:
        rand = self.rand
        ts_ms = int(self.t0.timestamp() * 1000) + rand.randrange(3_600_000)
        value = ts_ms << 80 | 0x7 << 76 | rand.getrandbits(12) << 64 | 0b10 << 62
        exposure = f"{value | rand.getrandbits(62):032x}"
        exposure = "-".join(
            (exposure[:8], exposure[8:12], exposure[12:16], exposure[16:20], exposure[20:])
        )
        return self._envelope("interaction", space) | {
            "interaction": {
                "kind": "presented",
                "exposure_id": exposure,
                "list_id": f"list-{rand.randrange(10**6)}",
                "list_kind": "search",
                "page": 1,
                "delivered_at": self.t0.isoformat().replace("+00:00", "Z"),
                "visible_k": 2,
                "items": [
                    {"pos": 1, "ref": "item_variant:acme:1001", "shown": {"price_sale": 49.9}},
                    {"pos": 2, "ref": "item_variant:acme:1002", "shown": {"color": "navy"}},
                ],
            }
        }

    def outcome(self, space: str = "acme") -> Item:
        return self._envelope("outcome", space) | {
            "outcome": "purchase",
            "ref": "item_variant:acme:1001",
            "order_id": f"ord-{self.n}",
            "attrs": {"size": "M"},
        }

    def command(self, space: str = "acme") -> Item:
        return self._envelope("command", space) | {
            "command": "delete",
            "inference_id": f"inf-{self.rand.getrandbits(48):012x}",
        }

    def any(self, space: str = "acme") -> Item:
        make = self.rand.choice(
            (self.turn, self.preference, self.presented, self.outcome, self.command)
        )
        return make(space)


# ----------------------------------------------------------------- breaking one field


def _set(item: Item, path: tuple[Any, ...], value: Any) -> Item:
    out = copy.deepcopy(item)
    node: Any = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def _drop(item: Item, path: tuple[Any, ...]) -> Item:
    out = copy.deepcopy(item)
    node: Any = out
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return out


#: Paths every item has, and paths per item type ("interaction" covers both kinds).
_ENVELOPE = ("type", "space_id", "idempotency_key", "source", "occurred_at")
_TYPED: dict[str, tuple[tuple[Any, ...], ...]] = {
    "turn": (
        ("turn_id",),
        ("agent",),
        ("claims",),
        ("constraints",),
        ("claims", 0, "verdict"),
        ("claims", 0, "nature"),
        ("claims", 0, "span"),
        ("constraints", 0, "sent"),
        ("constraints", 0, "results_checked"),
    ),
    "interaction": (("interaction",), ("interaction", "kind")),
    "preference": (
        ("interaction", "values"),
        ("interaction", "attr"),
        ("interaction", "op"),
        ("interaction", "strength"),
    ),
    "presented": (
        ("interaction", "items"),
        ("interaction", "items", 0, "pos"),
        ("interaction", "visible_k"),
        ("interaction", "delivered_at"),
        ("interaction", "exposure_id"),
    ),
    "outcome": (("outcome",), ("ref",), ("order_id",), ("attrs",), ("attrs", "size")),
    "command": (("command",), ("inference_id",)),
}


#: Fields that take any scalar.
_SCALARS = {("attrs", "size")}


def _paths(item: Item) -> list[tuple[Any, ...]]:
    paths = [(p,) for p in _ENVELOPE]
    paths += list(_TYPED[item["type"]])
    if item["type"] == "interaction":
        paths += list(_TYPED[item["interaction"]["kind"]])
    return paths


def _wrong_for(path: tuple[Any, ...], item: Item) -> list[Any]:
    """Values of a wrong JSON type for the field at ``path`` (never a valid null)."""
    node: Any = item
    for part in path:
        node = node[part]
    if path in _SCALARS:  # a string, a number or a boolean is right there
        return [[], [node], {}, {"v": node}]
    if isinstance(node, str):
        return [0, -7, 1.5, True, False, [], [node], {}, {"v": node}]
    if isinstance(node, bool):
        return [1, 0, "true", [], {}]
    if isinstance(node, int | float):
        return ["1", str(node), True, [], [node], {}, {"v": node}]
    if isinstance(node, list):
        return ["x", 0, True, {}, {"0": node}]
    return ["x", 0, 1.5, True, [], [node]]


def _wrong_type(mk: _Maker) -> bytes:
    item = mk.any()
    path = mk.rand.choice(_paths(item))
    value = mk.rand.choice(_wrong_for(path, item))
    return _dumps(_set(item, path, value))


_BAD_VALUES: tuple[tuple[str, tuple[Any, ...], Any], ...] = (
    ("any", ("occurred_at",), "2026-02-30T10:00:00Z"),
    ("any", ("occurred_at",), "2026-13-01T00:00:00Z"),
    ("any", ("occurred_at",), "2026-01-01T25:61:00Z"),
    ("any", ("occurred_at",), "2026-01-01T10:00:00"),
    ("any", ("occurred_at",), "1767261600"),
    ("any", ("occurred_at",), "yesterday"),
    ("any", ("occurred_at",), ""),
    ("any", ("space_id",), "ACME"),
    ("any", ("space_id",), ""),
    ("any", ("space_id",), "-acme"),
    ("any", ("space_id",), "ac me"),
    ("any", ("space_id",), "a" * 65),
    ("any", ("idempotency_key",), ""),
    ("any", ("source",), ""),
    ("any", ("handle",), {"type": "phone_e164", "value": "12345"}),
    ("any", ("handle",), {"type": "phone_e164", "value": "+0123456789"}),
    ("any", ("handle",), {"type": "email", "value": "not-an-email"}),
    ("any", ("handle",), {"type": "email", "value": "two@@at.com"}),
    ("any", ("handle",), {"type": "email", "value": ""}),
    ("any", ("handle",), {"type": "phone_e164"}),
    ("any", ("handle",), {}),
    ("turn", ("claims", 0, "span"), [9, 3]),
    ("turn", ("claims", 0, "span"), [-1, 3]),
    ("turn", ("claims", 0, "span"), [1, 2, 3]),
    ("turn", ("constraints", 0, "violations"), 9),
    ("turn", ("constraints", 0, "sent"), -1),
    ("turn", ("claims",), [{}]),
    ("presented", ("interaction", "items", 0, "pos"), 0),
    ("presented", ("interaction", "items"), []),
    ("presented", ("interaction", "page"), 0),
    ("presented", ("interaction", "visible_k"), -1),
    ("presented", ("interaction", "exposure_id"), "not-a-uuid"),
    ("presented", ("interaction", "exposure_id"), "00000000-0000-4000-8000-000000000000"),
    ("preference", ("interaction", "op"), "between"),
    ("preference", ("interaction", "values"), []),
    ("preference", ("interaction", "attr"), "color"),
    ("preference", ("interaction", "for"), "nobody"),
    # A malformed token keeps its outcome (token_status, issue 13); one past the 256
    # characters a token may have is still no item.
    ("outcome", ("exposure_token",), "nx1." + "9" * 300),
    ("outcome", ("ref",), ""),
    ("command", ("command",), "correct"),
)


def _bad_value(mk: _Maker) -> bytes:
    rand = mk.rand
    roll = rand.random()
    if roll < 0.1:  # both identities
        item = mk.any()
        item["profile_id"] = f"p_{rand.getrandbits(64):016x}"
        item["handle"] = {"type": "email", "value": f"u{rand.randrange(10**6)}@example.com"}
        return _dumps(item)
    if roll < 0.2:  # neither identity
        item = mk.any()
        item.pop("handle", None)
        item.pop("profile_id", None)
        return _dumps(item)
    if roll < 0.35:  # a required field missing
        item = mk.any()
        return _dumps(_drop(item, rand.choice([(p,) for p in _ENVELOPE])))
    kind, path, value = rand.choice(_BAD_VALUES)
    make: dict[str, Callable[[], Item]] = {
        "any": mk.any,
        "turn": mk.turn,
        "presented": mk.presented,
        "preference": mk.preference,
        "outcome": mk.outcome,
        "command": mk.command,
    }
    item = make[kind]()
    if path[0] == "handle":
        item.pop("profile_id", None)
    return _dumps(_set(item, path, value))


_UNKNOWN: tuple[tuple[str, tuple[Any, ...], tuple[str, ...]], ...] = (
    ("any", ("type",), ("banana", "Turn", "turns", "", "event", "interaction ")),
    ("presented", ("interaction", "kind"), ("hovered", "teleported", "Presented", "")),
    ("preference", ("interaction", "kind"), ("wish", "preferences", "vibe")),
    ("preference", ("interaction", "op"), ("approximately", "like", "~")),
    ("preference", ("interaction", "strength"), ("maybe", "MUST")),
    ("preference", ("interaction", "source"), ("rumor", "inferred")),
    ("presented", ("interaction", "method"), ("telepathy", "fax")),
    ("outcome", ("outcome",), ("teleported", "refund", "Purchase")),
    ("command", ("command",), ("explode", "forget_everything", "ERASE")),
    ("turn", ("claims", 0, "verdict"), ("plausible", "true", "maybe")),
    ("turn", ("claims", 0, "nature"), ("guessed", "hallucinated")),
    ("turn", ("claims", 0, "action"), ("shout", "ignore")),
    ("turn", ("claims", 0, "class"), ("vibes", "temperature")),
    ("any", ("handle",), ("fax", "telegram", "ssn")),
)


def _unknown_kind(mk: _Maker) -> bytes:
    kind, path, words = mk.rand.choice(_UNKNOWN)
    item = getattr(mk, kind)()
    word = mk.rand.choice(words)
    if path == ("handle",):
        item.pop("profile_id", None)
        return _dumps(_set(item, path, {"type": word, "value": "+5511999990000"}))
    return _dumps(_set(item, path, word))


def _nan_inf(mk: _Maker) -> bytes:
    """NaN and infinities where a number or a scalar is read (never in an ignored
    field, where they would be ignored with it)."""
    rand = mk.rand
    token = rand.choice(("NaN", "Infinity", "-Infinity", "1e999", "-1e999"))
    places: list[tuple[Callable[[], Item], tuple[Any, ...]]] = [
        (mk.preference, ("interaction", "values", 0)),
        (mk.presented, ("interaction", "items", 0, "shown", "price_sale")),
        (mk.presented, ("interaction", "visible_k")),
        (mk.presented, ("interaction", "items", 0, "pos")),
        (mk.outcome, ("attrs", "size")),
        (mk.turn, ("constraints", 0, "sent")),
        (mk.turn, ("claims", 0, "evidence", "field")),
        (mk.turn, ("claims", 0, "span", 0)),
    ]
    make, path = rand.choice(places)
    marker = f"__NUMBER_{rand.getrandbits(32):08x}__"
    raw = _dumps(_set(make(), path, marker))
    return raw.replace(f'"{marker}"'.encode(), token.encode())


def _null_bytes(mk: _Maker) -> bytes:
    rand = mk.rand
    if rand.random() < 0.5:  # a raw NUL byte somewhere in the text: never valid JSON
        raw = _dumps(mk.any())
        at = rand.randrange(1, len(raw) - 1)
        return raw[:at] + b"\x00" * rand.randint(1, 3) + raw[at:]
    # An escaped NUL inside a field that is checked (a pattern or a fixed word).
    paths: list[tuple[Callable[[], Item], tuple[Any, ...]]] = [
        (mk.any, ("space_id",)),
        (mk.any, ("type",)),
        (mk.any, ("occurred_at",)),
        (mk.presented, ("interaction", "kind")),
        (mk.outcome, ("outcome",)),
        (mk.command, ("command",)),
        (mk.turn, ("claims", 0, "verdict")),
        (mk.preference, ("interaction", "op")),
        (mk.preference, ("interaction", "attr")),
    ]
    make, path = rand.choice(paths)
    item = make()
    node: Any = item
    for part in path:
        node = node[part]
    at = rand.randrange(len(node) + 1)
    return _dumps(_set(item, path, node[:at] + "\x00" + node[at:]))


_BAD_UTF8 = (
    b"\xff",
    b"\xfe",
    b"\xc0\xaf",
    b"\xc1\xbf",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\x80",
    b"\xbf\xbf",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"caf\xe9",
)


def _bad_utf8(mk: _Maker) -> bytes:
    rand = mk.rand
    raw = _dumps(mk.any())
    seq = rand.choice(_BAD_UTF8)
    if rand.random() < 0.7:  # inside a string value
        marker = b'"source":"'
        at = raw.index(marker) + len(marker)
    else:
        at = rand.randrange(len(raw) + 1)
    return raw[:at] + seq + raw[at:]


def _lone_surrogate(mk: _Maker) -> bytes:
    """A JSON escape of half a UTF-16 pair (``\\ud800``): not a character, refused by the
    parser; Python's ``json`` module reads it as a lone surrogate, which no UTF-8 encoder
    takes."""
    rand = mk.rand
    item = mk.any()
    path = rand.choice((("source",), ("idempotency_key",), ("type",), ("space_id",)))
    escape = rand.choice(("\\ud800", "\\udfff", "\\ud83d", "\\udc00\\ud800"))
    marker = f"__SURROGATE_{rand.getrandbits(32):08x}__"
    raw = _dumps(_set(item, path, marker))
    return raw.replace(marker.encode(), f"{item[path[0]]}{escape}".encode())


def _nested(depth: int, rand: random.Random) -> bytes:
    if rand.random() < 0.5:
        return b"[" * depth + str(rand.randrange(10**6)).encode() + b"]" * depth
    return b'{"a":' * depth + str(rand.randrange(10**6)).encode() + b"}" * depth


def _deep_nesting(mk: _Maker) -> bytes:
    rand = mk.rand
    depth = rand.choices((250, 1_000, 10_000, 100_000), (4, 3, 2, 1))[0]  # <= ~600 KB
    roll = rand.random()
    if roll < 0.4:  # the whole message
        return _nested(depth, rand)
    item = mk.turn()
    marker = f"__DEEP_{rand.getrandbits(32):08x}__"
    if roll < 0.7:  # inside free-form evidence: past the parser's depth limit
        item = _set(item, ("claims", 0, "evidence", "field"), marker)
    else:  # where a string is read
        item = _set(item, ("source",), marker)
    return _dumps(item).replace(f'"{marker}"'.encode(), _nested(depth, rand))


def _non_object(mk: _Maker) -> bytes:
    rand = mk.rand
    n = rand.randrange(10**9)
    pad = b" " * rand.randint(0, 3)
    choice = rand.randrange(9)
    if choice == 0:
        body = b"[" + _dumps(mk.any()) + b"]"  # a valid item, wrapped in an array
    elif choice == 1:
        body = _dumps([mk.any(), mk.any()])
    elif choice == 2:
        body = _dumps(_dumps(mk.any()).decode())  # the item as a JSON string
    elif choice == 3:
        body = _dumps(f"hello {n}")
    elif choice == 4:
        body = str(n).encode()
    elif choice == 5:
        body = f"{n / 7:.6f}e{rand.randint(-5, 5)}".encode()
    elif choice == 6:
        body = rand.choice((b"true", b"false", b"null"))
        pad = b" " * rand.randint(0, 40) + b"\n" * rand.randint(0, 40)
    elif choice == 7:
        body = _dumps([n, "x", None, True])
    else:
        body = b"[]" if rand.random() < 0.5 else _dumps(list(range(rand.randint(1, 50))))
    return pad + body + pad


def _not_json(mk: _Maker) -> bytes:
    rand = mk.rand
    raw = _dumps(mk.any())
    choice = rand.randrange(8)
    if choice == 0:  # cut short
        return raw[: rand.randrange(1, len(raw) - 1)]
    if choice == 1:  # trailing garbage
        return raw + rand.choice((b"x", b"}", b",", b"]", b"\x1a", b"garbage"))
    if choice == 2:  # two objects
        return raw + _dumps(mk.any())
    if choice == 3:  # single quotes
        return raw.replace(b'"', b"'")
    if choice == 4:  # a trailing comma
        return raw[:-1] + b",}"
    if choice == 5:  # a comment
        return b"// hostile\n" + raw
    if choice == 6:  # a byte order mark
        return b"\xef\xbb\xbf" + raw
    return b"{" + raw[1:].replace(b":", b"=", 1)  # key = value


def _blanks() -> list[bytes]:
    out = [b""]  # the one empty message (a second one would be the same bytes)
    chars = (b" ", b"\t", b"\n", b"\r")
    length = 1
    while len(out) < PLAN["blank"]:
        for i in range(len(chars) ** length):
            if len(out) == PLAN["blank"]:
                break
            word = b"".join(chars[(i // len(chars) ** k) % len(chars)] for k in range(length))
            out.append(word)
        length += 1
    return out


def _huge(mk: _Maker, index: int) -> bytes:
    """Strings far past any field's bound: the last few make the message near, at and
    over the 1 MiB limit; the others between 4 KiB and 512 KiB."""
    rand = mk.rand
    big = len(HUGE_SIZES)
    if index >= PLAN["huge"] - big:
        size = HUGE_SIZES[index - (PLAN["huge"] - big)]
    else:
        size = rand.randint(4 * 1024, 512 * 1024)
    item = mk.turn()
    path = rand.choice((("source",), ("agent",), ("idempotency_key",), ("claims", 0, "value")))
    filler = "x"
    item = _set(item, path, filler)
    raw = _dumps(item)
    fill = size - len(raw) + 1  # the one "x" is replaced by ``fill`` characters
    letter = rand.choice("abcdefghijklmnopqrstuvwxyz")
    return _dumps(_set(item, path, letter * fill))


def _unknown_space(mk: _Maker) -> bytes:
    space = f"ghost-{mk.rand.getrandbits(24):06x}"
    return _dumps(mk.any(space))


def _signals_disabled(mk: _Maker) -> bytes:
    make = mk.rand.choice((mk.preference, mk.presented))
    return _dumps(make("vida"))


_MAKERS: dict[str, Callable[[_Maker], bytes]] = {
    "wrong_type": _wrong_type,
    "bad_value": _bad_value,
    "unknown_kind": _unknown_kind,
    "nan_inf": _nan_inf,
    "null_bytes": _null_bytes,
    "bad_utf8": _bad_utf8,
    "lone_surrogate": _lone_surrogate,
    "deep_nesting": _deep_nesting,
    "non_object_json": _non_object,
    "not_json": _not_json,
    "unknown_space": _unknown_space,
    "signals_disabled": _signals_disabled,
}


def hostile_items(seed: int = 1) -> list[Hostile]:
    """The 10,000 messages of :data:`PLAN`, shuffled, every one distinct."""
    mk = _Maker(random.Random(f"turnstream-hostile:{seed}"))
    seen: set[bytes] = set()
    out: list[Hostile] = []

    def add(raw: bytes, category: str) -> bool:
        if raw in seen:
            return False
        seen.add(raw)
        out.append(Hostile(raw, category))
        return True

    for raw in _blanks():
        add(raw, "blank")
    for index in range(PLAN["huge"]):
        while not add(_huge(mk, index), "huge"):
            pass
    for category, make in _MAKERS.items():
        made = 0
        while made < PLAN[category]:
            made += add(make(mk), category)
    mk.rand.shuffle(out)
    assert len(out) == sum(PLAN.values())
    return out


def valid_turn(seed: int) -> bytes:
    """One valid turn of acme, to send after the hostile messages."""
    return _dumps(_Maker(random.Random(f"turnstream-valid:{seed}")).turn())
