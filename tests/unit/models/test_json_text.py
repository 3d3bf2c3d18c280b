"""Text that is not JSON is refused in plain words, at the nearest field: a lone
surrogate is named as one (the parser said "unexpected end of hex escape"), a truncated
item names the field it ends in, and the messages never repeat the producer's values."""

from __future__ import annotations

import json

import pytest

from tests.unit.models.builders import interaction_item
from turnstream.config import Settings
from turnstream.core.ingest import Reason, Source, judge
from turnstream.errors import InvalidItem
from turnstream.models import parse_item
from turnstream.models.items import MAX_ITEM_BYTES
from turnstream.models.json_text import BODY, path_at

SECRET = "maria@example.com"


def _interaction(ref: str = "item:1") -> dict[str, object]:
    return interaction_item(ref)


def _refused(raw: bytes) -> tuple[str, str]:
    with pytest.raises(InvalidItem) as caught:
        parse_item(raw)
    assert len(caught.value.errors) == 1, caught.value.errors
    return caught.value.errors[0]


def _with_escape(escape: str) -> bytes:
    """An item whose interaction's ref is ``SECRET`` and then the JSON ``escape``."""
    return json.dumps(_interaction(SECRET + "@@")).encode().replace(b"@@", escape.encode())


@pytest.mark.parametrize(
    ("escape", "lone"),
    [
        ("\\ud800", "\\ud800"),  # a leading half at the string's end
        ("\\udc00", "\\udc00"),  # a trailing half alone (the parser: "lone leading")
        ("\\ud800\\u0041", "\\ud800"),  # a leading half before a letter
        ("\\ud83d\\ude00\\udfff", "\\udfff"),  # a pair (an emoji), then a lone half
        ("\\ud800\\ud800", "\\ud800"),  # two leading halves: the first is lone
    ],
)
def test_a_lone_surrogate_is_named_at_its_field_and_column(escape: str, lone: str) -> None:
    raw = _with_escape(escape)
    path, message = _refused(raw)
    assert path == "interaction.ref"
    column = raw.index(lone.encode(), raw.index(SECRET.encode())) + 1
    assert message.startswith(f"a lone surrogate {lone} in a string at line 1 column {column}:")
    assert SECRET not in message


def test_a_surrogate_pair_is_a_character() -> None:
    item = parse_item(_with_escape("\\ud83d\\ude00"))
    assert item.interaction.ref == SECRET + "😀"  # type: ignore[union-attr]


def test_a_lone_surrogate_in_a_turn_and_in_a_key() -> None:
    turn = {k: v for k, v in _interaction().items() if k != "interaction"}
    turn |= {"type": "turn", "turn_id": "t1", "agent": "a",
             "interactions": [{"kind": "engaged", "ref": "r", "action": "click"},
                              {"kind": "engaged", "ref": "@@", "action": "click"}]}  # fmt: skip
    raw = json.dumps(turn).encode().replace(b"@@", b"\\udfff")
    assert _refused(raw)[0] == "interactions[1].ref"
    # In a key: the object that holds it is the nearest field (here, none: the body).
    raw = json.dumps(_interaction()).encode().replace(b'"source"', b'"sour\\ud800ce"')
    path, message = _refused(raw)
    assert path == BODY and message.startswith("a lone surrogate \\ud800 in a string")


@pytest.mark.parametrize(
    ("raw", "path", "says"),
    [
        (b"", BODY, "not valid JSON: the body is empty"),
        (b" \n ", BODY, "not valid JSON: the body is empty"),
        (b"<item/>", BODY, "not valid JSON: a value was expected at line 1 column 1"),
        (json.dumps(_interaction()).encode() + b" {}", BODY, "more text after the item's object"),
        (json.dumps(_interaction()).encode().partition(b"item:")[0], "interaction.ref",
         "not valid JSON: the text ends inside a string at line 1 column"),
        (json.dumps(_interaction()).encode().replace(b'"click"', b"clack"), "interaction.action",
         "not valid JSON: a value was expected at line 1 column"),
        (json.dumps(_interaction()).encode().replace(b'"click"', b"truth"), "interaction.action",
         "not a JSON value (true, false and null are the only bare words) at line 1 column"),
        (json.dumps(_interaction(), indent=1).encode().replace(b'"click"\n', b'"click",\n'),
         "interaction", "a comma before a closing bracket at line 12 column 2"),
    ],
)  # fmt: skip
def test_text_that_is_not_json_says_what_and_where(raw: bytes, path: str, says: str) -> None:
    got_path, message = _refused(raw)
    assert got_path == path
    assert says in message
    assert "Invalid JSON" not in message


def test_a_byte_that_is_not_utf8_names_its_field() -> None:
    raw = json.dumps(_interaction()).encode().replace(b"item:1", b"item:\xff")
    byte = raw.index(b"\xff")
    assert _refused(raw) == ("interaction.ref", f"not valid UTF-8 (byte {byte})")


def test_the_dead_letter_carries_the_path_and_the_message() -> None:
    settings = Settings.model_validate(
        {"identity": {"secret": "s"}, "spaces": {"acme": {"features": ["signals"]}}}
    )
    decision = judge(_with_escape("\\ud800"), Source("t", 0, 1), settings)
    assert decision.refusal is not None and decision.refusal.reason is Reason.invalid
    assert decision.refusal.field_path == "interaction.ref"
    assert decision.refusal.message.startswith("a lone surrogate \\ud800 in a string")


def test_path_at_reads_strings_escapes_and_lists() -> None:
    text = b'{"a \\" b": [1, {"c,d": "x\\"]}", "e": [[], [2, 3]]}], "f": 1}'
    assert path_at(text, text.index(b"3")) == 'a " b[1].e[1][1]'
    assert path_at(text, text.index(b"2")) == 'a " b[1].e[1][0]'
    assert path_at(text, text.index(b"x")) == 'a " b[1].c,d'
    assert path_at(text, text.index(b"1}")) == "f"
    assert path_at(text, 0) == BODY
    long_key = b'{"' + b"k" * 100 + b'": tru}'
    assert path_at(long_key, long_key.index(b"tru")) == "k" * 64 + "…"


def test_an_escaped_backslash_before_u_is_no_surrogate() -> None:
    # "C:\\ud800" is a backslash and five letters; the lone half is the ref's.
    item = _interaction("@@") | {"source": "C:\\ud800"}
    raw = json.dumps(item).encode().replace(b"@@", b"\\udbff")
    assert b"C:\\\\ud800" in raw
    path, message = _refused(raw)
    column = raw.index(b"\\udbff") + 1
    assert path == "interaction.ref"
    assert message.startswith(f"a lone surrogate \\udbff in a string at line 1 column {column}:")


def test_path_at_inside_a_key_or_an_escape() -> None:
    text = b'{"a": {"b\\q": 1}}'  # an invalid escape in a key: the object holding it
    assert path_at(text, text.index(b"q")) == "a"
    text = b'{"a": "x\\"y", "b": 2}'  # an escaped quote does not close the string
    assert path_at(text, text.index(b"y")) == "a"
    assert path_at(text, text.index(b"2")) == "b"


def test_path_at_gives_up_past_its_token_budget() -> None:
    # A refused item of 1 MiB of tiny tokens: bounded work, the body as the path.
    text = b'{"a": [' + b"[]," * 300_000
    assert path_at(text, len(text)) == BODY
    text = b'{"a": [' + b"1," * 300_000  # a run of numbers is one token
    assert path_at(text, len(text)) == "a[300000]"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[]", "object"),
        (b'"text"', "object"),
        (b"null", "object"),
        (b" " * (MAX_ITEM_BYTES + 1), "the limit is"),
    ],
)
def test_a_problem_outside_every_field_is_the_bodys(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidItem) as refused:
        parse_item(raw)
    [(path, text)] = refused.value.errors
    assert path == "<body>" and message in text
