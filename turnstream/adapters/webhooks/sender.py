"""The webhook sender: a thin loop over the outbox. Each second it asks the store which
attempts are due (the pure :func:`turnstream.core.webhooks.due_deliveries`), posts each
one signed, and records the attempt and the delivery's next state. What is due lives in
the store, so a restarted worker goes on where the last one stopped (at least once).

Several workers on one store run one sender between them: each pass, and each attempt,
asks ``may_send`` (``adapters/kafka/ownership.PartitionRole``: this worker holds partition 0
of the accepted topic in the derivation group), and an attempt holds the role's lock,
so a rebalance hands the role over after the attempt in flight. Delivery stays at least
once: an attempt whose record did not land, or one made by an owner cut off from the
broker in its last seconds, is made again; receivers deduplicate by event id."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

import aiohttp

from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.adapters.clickhouse.webhooks import pending_work, record_attempt
from turnstream.adapters.kafka.ownership import PartitionRole
from turnstream.adapters.webhooks.egress import POST_OPTIONS, destination_refusal, guarded_session
from turnstream.config import Settings
from turnstream.core.webhooks import (
    Attempted,
    Due,
    Endpoint,
    after_attempt,
    due_deliveries,
    event_body,
    headers_for,
)

__all__ = ["WebhookSender", "endpoints_of"]

log = logging.getLogger(__name__)

#: Seconds an attempt may take: a receiver should answer at once and work later.
ATTEMPT_TIMEOUT = 10.0
#: How often the outbox is read: review requests are rare; one small query a second.
POLL_SECONDS = 1.0


def endpoints_of(settings: Settings) -> list[Endpoint]:
    """Every configured endpoint with a secret (preflight refuses one without)."""
    return [
        Endpoint(
            space_id,
            hook.id,
            hook.url,
            hook.secret.get_secret_value().encode(),
            frozenset(hook.events),
            hook.allow_internal,
        )
        for space_id, space in sorted(settings.spaces.items())
        for hook in space.webhooks
        if hook.secret is not None
    ]


class WebhookSender:
    """Delivers the outbox's due events, one attempt each per pass."""

    def __init__(
        self,
        store: AsyncStore,
        endpoints: Sequence[Endpoint],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.endpoints = list(endpoints)
        self.clock = clock
        self.spaces = sorted({e.space_id for e in self.endpoints})
        #: Attempts made by this sender (a worker's share of the deliveries).
        self.attempts = 0

    async def run_forever(
        self, should_stop: Callable[[], bool], role: PartitionRole | None = None
    ) -> None:
        """Pass after pass until told to stop, while this worker holds ``role`` (every
        pass without one); a failing pass is logged and retried."""
        # One session per rule: an endpoint allowed the internal network never shares
        # a connection (or a DNS cache entry) with one that is not.
        sessions = {allow: guarded_session(allow, ATTEMPT_TIMEOUT) for allow in (False, True)}
        try:
            sending = False
            while not should_stop():
                if (role is None or role.held()) != sending:
                    sending = not sending
                    log.info("webhook sender %s", "active" if sending else "standing by")
                if sending:
                    try:
                        await self.run_once(sessions, role)
                    except Exception:  # the store is down: the loops report it; try again
                        log.exception("webhook pass failed")
                await asyncio.sleep(POLL_SECONDS)
        finally:
            for session in sessions.values():
                await session.close()

    async def run_once(
        self, sessions: Mapping[bool, aiohttp.ClientSession], role: PartitionRole | None = None
    ) -> int:
        """One pass: every attempt due now, each while ``role`` is held, through the
        session of its endpoint's rule (``sessions[allow_internal]``); returns how many
        were made. An endpoint that gave no answer (a timeout, a refused connection) is
        not tried again in the same pass: its other events wait for the next one, so a
        receiver that hangs costs the other endpoints (every space's) one attempt's
        timeout a pass, not one per event due to it."""
        now = self.clock()
        events, deliveries = await self.store.run(pending_work, self.store.store, self.spaces, now)
        due = due_deliveries(events, deliveries, self.endpoints, now)
        made = 0
        silent: set[str] = set()
        for one in due:
            if one.endpoint.key in silent:
                continue
            session = sessions[one.endpoint.allow_internal]
            if role is None:
                result = await self._attempt(session, one)
            else:
                async with role.acting:
                    if not role.held():
                        break
                    result = await self._attempt(session, one)
            made += 1
            if result.http_status == 0:
                silent.add(one.endpoint.key)
        self.attempts += made
        return made

    async def _attempt(self, session: aiohttp.ClientSession, due: Due) -> Attempted:
        event = due.event
        body = event_body(event["event_id"], event)
        started = self.clock()
        headers = headers_for(due.endpoint.secret, event["event_id"], event["type"],
                              due.attempt, int(started.timestamp()), body)  # fmt: skip
        began = time.monotonic()
        refused = destination_refusal(due.endpoint.url, due.endpoint.allow_internal)
        try:
            if refused is not None:  # an address in the URL: aiohttp would not resolve it
                raise OSError(f"refused: {refused}")
            post = session.post(due.endpoint.url, data=body, headers=headers, **POST_OPTIONS)
            async with post as answer:  # its status alone: the body is never read
                error = "" if 200 <= answer.status < 300 else f"HTTP {answer.status}"
                if 300 <= answer.status < 400:
                    error += " (a redirect: not followed)"
                result = Attempted(answer.status, error)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            result = Attempted(0, f"{type(exc).__name__}: {exc}"[:1024])
        duration_ms = int((time.monotonic() - began) * 1000)
        delivery = after_attempt(due, result, self.clock())
        await self.store.run(
            record_attempt, self.store.store, due, result, delivery, started, duration_ms
        )
        if not result.delivered:
            log.warning("webhook %s to %s, attempt %d: %s (next: %s)", event["event_id"],
                        due.endpoint.key, due.attempt, result.error, delivery.status)  # fmt: skip
        return result
