"""Commands on a profile: correct, delete, opt out, erase."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from turnstream.models.common import Envelope, Id
from turnstream.models.interactions import Attribute, Preference

__all__ = ["Command"]


class Command(Envelope):
    """A change to a profile, ordered with the person's events."""

    type: Literal["command"]
    command: Literal["correct", "delete", "opt_out", "erase"]
    inference_id: Id | None = None
    replacement: Annotated[Preference | Attribute, Field(discriminator="kind")] | None = None

    @model_validator(mode="after")
    def _arguments(self) -> Command:
        if self.command in ("correct", "delete") and self.inference_id is None:
            raise ValueError(f"inference_id: required for {self.command}")
        if self.command == "correct" and self.replacement is None:
            raise ValueError("replacement: correct needs the stated preference or attribute")
        if self.command != "correct" and self.replacement is not None:
            raise ValueError(f"replacement: only correct takes one, not {self.command}")
        return self
