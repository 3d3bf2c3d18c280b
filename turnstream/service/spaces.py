"""The space a request names, as the use cases look it up."""

from __future__ import annotations

from turnstream.config import Feature, Settings
from turnstream.config.settings import SpaceConfig
from turnstream.service.errors import NotFound

__all__ = ["space_of"]


def space_of(settings: Settings, space_id: str, need_signals: bool = False) -> SpaceConfig:
    """The configured space; :class:`NotFound` (field ``space_id``) when it is not, or
    when ``need_signals`` and its signals feature is off."""
    space = settings.space(space_id)
    if space is None:
        raise NotFound("space_id", f"space {space_id!r} is not configured")
    if need_signals and not space.has(Feature.signals):
        raise NotFound("space_id", f"the signals feature is off for space {space_id!r}")
    return space
