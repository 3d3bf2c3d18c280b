"""What the read side reads from the store: plain frozen records, filled by the HTTP layer.

Each record checks its own vocabulary (the wire's operators, strengths, scopes) and that
its times carry a zone, so the block is never built from something the wire refuses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from turnstream.core.derivation.values import Scalar
from turnstream.errors import TurnstreamError

__all__ = [
    "OPS",
    "BlockRequest",
    "CompanyRule",
    "Disliked",
    "InvalidViewInput",
    "Op",
    "Presented",
    "Scalar",
    "Scope",
    "StatedAttribute",
    "StatedPreference",
    "Strength",
]

Op = Literal["in", "not_in", "eq", "ne", "lt", "lte", "gt", "gte", "between"]
Strength = Literal["must", "must_not", "prefer", "avoid"]
Scope = Literal["turn", "session", "persistent"]

#: Every operator of a preference on the wire.
OPS: frozenset[str] = frozenset(get_args(Op))
_STRENGTHS: frozenset[str] = frozenset(get_args(Strength))
_SCOPES: frozenset[str] = frozenset(get_args(Scope))
_RULE_ORIGIN = re.compile(r"^(code|db:.+|prompt:.+|policy:.+)\Z")
_FOR = re.compile(r"^(self|gift|beneficiary:.+)\Z")


class InvalidViewInput(TurnstreamError, ValueError):
    """A record handed to the read side breaks the wire's vocabulary."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidViewInput(message)


def _check_aware(moment: datetime, what: str) -> None:
    _check(moment.tzinfo is not None and moment.utcoffset() is not None, f"{what} has no zone")


def _check_for(for_: str) -> None:
    _check(bool(_FOR.match(for_)), f"for must be self, gift or beneficiary:<id>, not {for_!r}")


def _check_condition(op: str, values: tuple[Scalar, ...]) -> None:
    _check(op in OPS, f"unknown operator {op!r}")
    _check(isinstance(values, tuple), "values must be a tuple")
    if op == "between":
        _check(len(values) == 2, "between takes two values")
    elif op in ("in", "not_in"):
        _check(len(values) >= 1, f"{op} takes at least one value")
    else:
        _check(len(values) == 1, f"{op} takes one value")


@dataclass(frozen=True)
class StatedPreference:
    """A ``preference`` interaction: what the person said they want or refuse.

    ``id`` is stable (the event's idempotency key); ``origin`` is the event or the turn
    where it was said; ``session`` is the session it was said in.
    """

    id: str
    attr: str
    op: Op
    values: tuple[Scalar, ...]
    strength: Strength
    scope: Scope
    category: str | None
    source: str
    for_: str
    occurred_at: datetime
    session: str
    origin: str

    def __post_init__(self) -> None:
        _check_condition(self.op, self.values)
        _check(self.strength in _STRENGTHS, f"unknown strength {self.strength!r}")
        _check(self.scope in _SCOPES, f"unknown scope {self.scope!r}")
        _check_for(self.for_)
        _check_aware(self.occurred_at, "occurred_at")

    @classmethod
    def said(
        cls,
        data: Mapping[str, Any],
        *,
        id: str,
        for_: str,
        occurred_at: datetime,
        session: str,
        origin: str,
    ) -> StatedPreference:
        """A preference from its interaction (docs/wire.md), with the wire's defaults: scope
        ``session``, source ``stated``."""
        return cls(
            id=id,
            attr=data["attr"],
            op=data["op"],
            values=tuple(data["values"]),
            strength=data["strength"],
            scope=data.get("scope") or "session",
            category=data.get("category"),
            source=data.get("source") or "stated",
            for_=for_,
            occurred_at=occurred_at,
            session=session,
            origin=origin,
        )


@dataclass(frozen=True)
class StatedAttribute:
    """An ``attribute`` interaction: what the person is (a size, a network)."""

    id: str
    attr: str
    value: Scalar
    system: str | None
    source: str
    for_: str
    occurred_at: datetime
    origin: str

    def __post_init__(self) -> None:
        _check_for(self.for_)
        _check_aware(self.occurred_at, "occurred_at")


@dataclass(frozen=True)
class Presented:
    """An object shown to the person before, and how many times."""

    ref: str
    times: int

    def __post_init__(self) -> None:
        _check(self.times >= 0, "times must not be negative")


@dataclass(frozen=True)
class Disliked:
    """An object the person refused: not to be offered again."""

    ref: str


@dataclass(frozen=True)
class CompanyRule:
    """One of the company's own rules, delivered with the block.

    ``rank`` is its place in the order the company declared (lower wins); ``origin`` is
    ``code``, ``db:<table>``, ``prompt:<version>`` or ``policy:<version>``. A rule that
    constrains a field carries ``attr``, ``op`` and ``values``; one that does not, only
    ``text``.
    """

    id: str
    rank: int
    origin: str
    attr: str | None
    op: Op | None
    values: tuple[Scalar, ...]
    text: str

    def __post_init__(self) -> None:
        _check(bool(_RULE_ORIGIN.match(self.origin)), f"unknown rule origin {self.origin!r}")
        _check((self.attr is None) == (self.op is None), "a rule has both attr and op, or neither")
        if self.op is not None:
            _check_condition(self.op, self.values)


@dataclass(frozen=True)
class BlockRequest:
    """Whose block, in which language, for which session, and what the person asked for.

    ``asked`` names what the person asked about (``"size"``, ``"item_variant.size"``,
    a label such as ``"tamanho"``: :mod:`~turnstream.core.constraints.asked`): only those
    let an attribute that applies ``when_asked`` in.
    ``delivery_elsewhere`` says the order goes to another address.
    """

    space_id: str
    profile_id: str
    for_: str = "self"
    language: str = "en"
    session: str | None = None
    asked: tuple[str, ...] = ()
    delivery_elsewhere: bool = False

    def __post_init__(self) -> None:
        _check_for(self.for_)
        _check(isinstance(self.asked, tuple), "asked must be a tuple")
