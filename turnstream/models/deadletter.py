"""What goes on the dead-letter topic: the reason, the field path and the original bytes."""

from __future__ import annotations

import base64
from datetime import datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["MAX_ORIGINAL_BYTES", "DeadLetter"]

#: Larger originals are left out (the size and digest stay): base64 of them would pass
#: the broker's 1 MiB message limit.
MAX_ORIGINAL_BYTES = 512 * 1024


class DeadLetter(BaseModel):
    model_config = ConfigDict(frozen=True)

    reason: str
    field_path: str
    message: str
    topic: str
    partition: int
    offset: int
    received_at: datetime
    #: The message exactly as it arrived, base64 ('' when over MAX_ORIGINAL_BYTES).
    original: str
    original_size: int = 0
    original_sha256: str = ""

    def original_bytes(self) -> bytes:
        """The original message bytes."""
        return base64.b64decode(self.original)
