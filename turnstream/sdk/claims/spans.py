"""The code points already read: each number lands in at most one mention."""

from __future__ import annotations

from turnstream.sdk.claims.mention import Mention

__all__ = ["Taken"]


class Taken:
    """The mentions found so far and a mask of the code points they cover."""

    __slots__ = ("mask", "mentions", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.mask = bytearray(len(text))
        self.mentions: list[Mention] = []

    def free(self, start: int, end: int) -> bool:
        """True when no mention covers any code point of ``[start, end)``."""
        return self.mask.find(1, start, end) == -1

    def add(self, mention: Mention) -> bool:
        """Keep ``mention`` when its span is free; say whether it was kept."""
        if not self.free(mention.start, mention.end):
            return False
        self.mask[mention.start : mention.end] = b"\x01" * (mention.end - mention.start)
        self.mentions.append(mention)
        return True

    def skip(self, start: int, end: int) -> None:
        """Mark ``text[start:end]`` read without a mention (a URL: its digits are no numbers)."""
        self.mask[start:end] = b"\x01" * (end - start)

    def label(self, start: int, end: int, kind: str) -> bool:
        """Keep ``text[start:end]`` as a label of ``kind`` (its value is the text as written)."""
        text = self.text[start:end]
        return self.add(Mention(start, end, text, "label", text, None, kind))
