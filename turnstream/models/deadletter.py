"""What goes on the dead-letter topic: the reason, the field path and the original bytes."""

from __future__ import annotations

import base64
from datetime import datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["DeadLetter"]


class DeadLetter(BaseModel):
    model_config = ConfigDict(frozen=True)

    reason: str
    field_path: str
    message: str
    topic: str
    partition: int
    offset: int
    received_at: datetime
    #: The message exactly as it arrived, base64.
    original: str

    def original_bytes(self) -> bytes:
        """The original message bytes."""
        return base64.b64decode(self.original)
