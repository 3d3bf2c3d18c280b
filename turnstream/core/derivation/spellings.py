"""A person's values of a field by the value they name: its spellings counted as one.

A state keeps each value as objects showed it (``Black``, `` black``, ``preto``: by
:func:`~turnstream.core.derivation.values.value_key`), and so do the fold in Python and
the store's SQL fold (they count the same strings). Derivation counts them by the value
they name, :meth:`~turnstream.core.value_ids.ValueIds.key` with the space's types
document, the block's identity: one value, its evidence summed, inferred under the
spelling the person was shown most (then engaged with most; then the first in code point
order), a spelling they saw. Reading a state this way needs no migration: a state saved
with two spellings of one value merges when it is derived, by the types document of that
moment (a label added later merges what it names from then on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from turnstream.core.derivation.evidence import ValueStats
from turnstream.core.value_ids import ValueIds

__all__ = ["FieldValues", "field_values"]


@dataclass(frozen=True)
class FieldValues:
    """One field's values, each under the spelling that names it (its ``name``)."""

    attr: str
    ids: ValueIds
    #: A spelling the state holds -> the name of the value it names.
    names: Mapping[str, str]
    #: The name of a value -> its evidence, every spelling's summed.
    stats: Mapping[str, ValueStats]
    #: The name of a value -> its spellings, in code point order.
    spellings: Mapping[str, tuple[str, ...]]
    #: The value's key (:meth:`ValueIds.key`) -> its name.
    by_key: Mapping[str, str]

    def name(self, spelling: str) -> str:
        """The name of the value ``spelling`` names: one the state holds, else one spelled
        like a value it holds, else ``spelling`` itself."""
        found = self.names.get(spelling)
        if found is not None:
            return found
        return self.by_key.get(self.ids.key(self.attr, spelling), spelling)


def _most_shown(values: Mapping[str, ValueStats], spellings: list[str]) -> str:
    return min(
        spellings,
        key=lambda s: (-values[s].exposure_micro, -values[s].signal_micro, -values[s].events, s),
    )


def field_values(attr: str, values: Mapping[str, ValueStats], ids: ValueIds) -> FieldValues:
    """``values`` (a bucket's spelling -> evidence, of field ``attr``) by the value each
    spelling names (``ids``)."""
    groups: dict[str, list[str]] = {}
    for spelling in values:
        groups.setdefault(ids.key(attr, spelling), []).append(spelling)
    names: dict[str, str] = {}
    stats: dict[str, ValueStats] = {}
    spellings: dict[str, tuple[str, ...]] = {}
    by_key: dict[str, str] = {}
    for key, group in groups.items():
        if len(group) == 1:  # most values: one spelling, its own stats
            name = group[0]
            stats[name] = values[name]
        else:
            name = _most_shown(values, group)
            group.sort()
            merged = values[group[0]]
            for spelling in group[1:]:
                merged = merged.merged(values[spelling])
            stats[name] = merged
        by_key[key] = name
        spellings[name] = tuple(group)
        for spelling in group:
            names[spelling] = name
    return FieldValues(attr, ids, names, stats, spellings, by_key)
