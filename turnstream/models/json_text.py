"""What is wrong with an item's JSON text, in plain words, and where.

The parser (pydantic-core's) says ``Invalid JSON: unexpected end of hex escape at line 1
column 198`` for a lone UTF-16 surrogate (``"\\ud800"``), and names no field. These
functions run only for an item the parser refused, never on the accepted path: they
read the text again to name the nearest field (``interaction.ref``; :data:`BODY` when
the problem is outside every field) and say what is wrong. They never repeat the input
but a surrogate's escape and a key's name (cut as a validation path's names are).
"""

from __future__ import annotations

import json
import re

__all__ = ["BODY", "PATH_NAME_MAX", "json_problem", "path_at", "path_name"]

#: The field path of a problem of the text as a whole (not JSON at all, an empty body).
BODY = "<body>"

#: The longest name of one step of a field path in an error: a longer one is a key the
#: sender made up (a 10,000-character name in ``current``) and is cut, so an error
#: answer or a dead letter's reason never carries the sender's input back whole.
PATH_NAME_MAX = 64

#: pydantic-core's message for text that is not JSON: its reason and where.
_INVALID = re.compile(r"^Invalid JSON: (.*) at line (\d+) column (\d+)\Z", re.S)
#: One token of JSON text for :func:`path_at`: a string from its opening quote (escapes
#: and all; up to the end of the text when it is not closed), a bracket, or a run of
#: anything else (numbers, words, spaces, colons, commas).
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*\\?"?|[{}\[\]]|[^"{}\[\]]+', re.S)
#: A UTF-8 byte order mark: what some editors put at the start of a file.
_BOM = b"\xef\xbb\xbf"
#: The most tokens :func:`path_at` reads before it gives up on a path.
_TOKENS_MAX = 20_000
#: A ``\uXXXX`` escape of a UTF-16 surrogate (its six bytes end the match): not after
#: an escaped backslash (``\\ud800`` is a backslash and five letters).
_SURROGATE = re.compile(rb"(?<!\\)(?:\\\\)*\\u([dD][89a-fA-F][0-9a-fA-F]{2})")
#: A path longer than this many characters is cut (deep nesting: ``[0][0][0]...``).
_PATH_MAX = 128

#: The parser's reasons that say nothing to a producer, in plain words.
_PLAIN = {
    "expected value": "a value was expected",
    "expected ident": "not a JSON value (true, false and null are the only bare words)",
    "EOF while parsing a value": "the text ends where a value was expected",
    "EOF while parsing a string": "the text ends inside a string",
    "EOF while parsing an object": "the text ends inside an object",
    "EOF while parsing a list": "the text ends inside a list",
    "trailing characters": "more text after the item's object",
    "trailing comma": "a comma before a closing bracket",
    "key must be a string": "an object's key must be a string",
    "recursion limit exceeded": "nested too deep",
}


def json_problem(raw: bytes, parser_message: str) -> tuple[str, str] | None:
    """The path and plain message of the parser's refusal of ``raw`` as JSON; ``None``
    when ``parser_message`` is not about the text (a field's value is wrong)."""
    match = _INVALID.match(parser_message)
    if match is None:
        return None
    reason, line, column = match[1], int(match[2]), int(match[3])
    if not raw.strip():
        return BODY, "not valid JSON: the body is empty"
    if raw.startswith(_BOM):
        return BODY, (
            "not valid JSON: the text starts with a byte order mark (U+FEFF, bytes EF BB BF), "
            "which JSON text must not (RFC 8259): write UTF-8 without it"
        )
    offset = _offset(raw, line, column)
    if "surrogate" in reason or "hex escape" in reason:
        lone = _lone_surrogate(raw, offset)
        if lone is not None:
            at, code = lone
            line, column = _line_column(raw, at)
            return path_at(raw, at), (
                f"a lone surrogate \\u{code} in a string at line {line} column {column}: "
                "JSON text must be Unicode characters (a surrogate escape needs its pair)"
            )
    plain = _PLAIN.get(reason, reason)
    return path_at(raw, offset), f"not valid JSON: {plain} at line {line} column {column}"


def path_at(raw: bytes, offset: int) -> str:
    """The path of the value the byte at ``offset`` of the JSON text ``raw`` is in, as a
    validation error names it (``interactions[2].ref``); :data:`BODY` outside every
    field, or when the text before ``offset`` holds more than :data:`_TOKENS_MAX` tokens
    (a refused item is read again in ~10 ms at most). The text may be broken
    anywhere after ``offset``."""
    stack: list[list[object]] = []  # [key or index, True for an object awaiting a key]
    end = min(offset, len(raw))
    for n, token in enumerate(_TOKEN.finditer(raw, 0, end)):
        if n == _TOKENS_MAX:
            return BODY
        text = token.group()
        first = text[0]
        if first == 0x22:  # a string: a key, or a value
            if token.end() == end and not _closed(text):
                break  # the offset is inside it
            if stack and stack[-1][1] is True:
                stack[-1] = [text, False]  # read as a name only if it is on the path
        elif first == 0x7B:  # {
            stack.append([None, True])
        elif first == 0x5B:  # [
            stack.append([0, False])
        elif first in (0x7D, 0x5D):  # } ]
            if stack:
                stack.pop()
        elif stack and (commas := text.count(b",")):  # numbers, words, spaces, : and ,
            top = stack[-1]
            stack[-1] = [top[0] + commas, False] if isinstance(top[0], int) else [None, True]
    steps = [step for step, _ in stack if step is not None]
    path = "".join(
        f"[{s}]" if isinstance(s, int) else f".{_key(s[1:-1])}"  # type: ignore[index]
        for s in steps
    ).lstrip(".")
    if len(path) > _PATH_MAX:
        path = path[:_PATH_MAX] + "…"
    return path or BODY


def _closed(string: bytes) -> bool:
    """Whether a string token ends in its closing quote (not an escaped one)."""
    if len(string) < 2 or not string.endswith(b'"'):
        return False
    body = string[1:-1]
    return (len(body) - len(body.rstrip(b"\\"))) % 2 == 0


def path_name(name: str) -> str:
    """One step of a field path: ``name``, cut past :data:`PATH_NAME_MAX` characters."""
    return name if len(name) <= PATH_NAME_MAX else name[:PATH_NAME_MAX] + "…"


def _key(text: bytes) -> str:
    """An object's key (the bytes between its quotes) as a path names it."""
    try:
        name = json.loads(b'"' + text + b'"')
        name.encode("utf-8")  # a lone surrogate's escape stays as it is written
    except (ValueError, UnicodeEncodeError):
        name = text.decode("utf-8", "replace")
    return path_name(name)


def _lone_surrogate(raw: bytes, offset: int) -> tuple[int, str] | None:
    """The offset and hex digits of the first surrogate escape near ``offset`` (where
    the parser stopped, a few bytes after it) that is not half of a pair: a leading half
    (``d800`` to ``dbff``) not followed by a trailing one, or a trailing one alone."""
    for escape in _SURROGATE.finditer(raw, max(0, offset - 64), min(len(raw), offset + 6)):
        at = escape.end() - 6
        if _trailing(escape[1]):
            before = _SURROGATE.match(raw, max(0, at - 6), at)
            paired = before is not None and before.end() == at and not _trailing(before[1])
        else:
            after = _SURROGATE.match(raw, escape.end(), escape.end() + 6)
            paired = after is not None and _trailing(after[1])
        if not paired:
            return at, escape[1].lower().decode()
    return None


def _trailing(digits: bytes) -> bool:
    """Whether a surrogate's hex digits are a trailing half's (``dc00`` to ``dfff``)."""
    return digits[1:2].lower() in (b"c", b"d", b"e", b"f")


def _offset(raw: bytes, line: int, column: int) -> int:
    """The byte offset of the parser's 1-based ``line`` and ``column`` (bytes)."""
    start = 0
    for _ in range(line - 1):
        start = raw.index(b"\n", start) + 1
    return max(start + column - 1, 0)


def _line_column(raw: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (bytes) of ``offset``, as the parser counts them."""
    line = raw.count(b"\n", 0, offset) + 1
    return line, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
