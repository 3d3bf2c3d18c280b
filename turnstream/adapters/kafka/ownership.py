"""Which worker of a consumer group runs a once-per-store task (the webhook sender): the
one assigned partition 0 of a topic the group already consumes. The broker's group
protocol gives each partition to exactly one member, so the role moves with it: on a
rebalance the old owner lets go (after its attempt in flight) before the group's new
assignment is made, and the new owner takes it up.

A member cut off from the broker still believes it holds its partitions until it
rejoins, while the broker gives them away after ``worker.session_timeout`` without a
heartbeat. So the role also needs recent proof of membership: the loop's last contact
with the broker (a commit, an answered probe, a start) within three quarters of the
session timeout; heartbeats go every quarter, so the role lapses before the broker can
hand the partition on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from aiokafka import TopicPartition

from turnstream.core.liveness import Liveness

__all__ = ["PartitionRole"]


class PartitionRole:
    """Held while this member is assigned ``partition`` of ``topic`` and its loop has
    been in touch with the broker within ``fresh_seconds``."""

    def __init__(
        self,
        topic: str,
        liveness: Liveness,
        fresh_seconds: float,
        partition: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.partition = TopicPartition(topic, partition)
        self.liveness = liveness
        self.fresh_seconds = fresh_seconds
        self.clock = clock
        self._assigned = False
        #: Held by the task while it acts (one webhook attempt): letting go waits for it.
        self.acting = asyncio.Lock()

    async def held_partitions(self, partitions: set[TopicPartition]) -> None:
        """The loop's whole assignment changed to ``partitions`` (empty: revoked, or the
        run ended). Losing the partition waits for the act in flight to finish."""
        assigned = self.partition in partitions
        if self._assigned and not assigned:
            self._assigned = False
            async with self.acting:  # the attempt in flight ends before the handover
                pass
        self._assigned = assigned

    def held(self) -> bool:
        """Whether this member may act now."""
        if not self._assigned:
            return False
        contact = max(self.liveness.last_contact_at or 0.0, self.liveness.last_progress_at or 0.0)
        return self.clock() - contact <= self.fresh_seconds
