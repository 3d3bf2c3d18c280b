"""Serving the constraints block: the person named, their arm in the space's running
experiment, their inputs read (:class:`ReadInputs`, none for an arm that drops the
block), the block built by the pure :mod:`turnstream.core.constraints`, and rendered for
the caller's tool when it asks. The HTTP route (``entrypoints/http/routes.py``) only moves the
request in and the block out."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from turnstream.config import Settings
from turnstream.core.constraints import (
    BlockRequest,
    CompanyRule,
    UnreadableState,
    binding_for,
    build_block,
    load_bindings,
    read_current,
    render_for_tool,
)
from turnstream.core.experiments import arm_at, served_inferences
from turnstream.core.identity import profile_id_for
from turnstream.core.object_types import types_for_space
from turnstream.errors import TurnstreamError
from turnstream.models.measurement import Arm, Experiment, MeasurementDocument, load_measurement
from turnstream.models.requests import ConstraintsRequest
from turnstream.service.errors import Invalid
from turnstream.service.spaces import space_of

__all__ = ["ReadInputs", "measurement", "serve_block"]


class ReadInputs(Protocol):
    """A person's inputs to the block (``adapters/clickhouse/profile_reads.load_inputs`` on a
    store)."""

    def __call__(self, space_id: str, profile_id: str, for_: str | None) -> Any: ...


def measurement(path: str) -> MeasurementDocument:
    """The measurement document, read again only when the file changed (one ``stat`` per
    block request)."""
    return _measurement_at(path, Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _measurement_at(path: str, mtime_ns: int) -> MeasurementDocument:
    return load_measurement(path)


def _arm(
    settings: Settings, space_id: str, profile_id: str, source: str, now: datetime
) -> tuple[Experiment, Arm] | None:
    """The person's arm in the space's running experiment (``jobs.measurement``)."""
    path = settings.jobs.measurement
    if path is None:
        return None
    try:
        doc = measurement(path)
    except OSError as exc:
        raise TurnstreamError(f"measurement document {path}: {exc.strerror}") from None
    return arm_at(doc, space_id, profile_id, source, now)


def serve_block(
    read_inputs: ReadInputs, settings: Settings, body: ConstraintsRequest
) -> dict[str, Any]:
    """The block for ``body``. Blocking (the inputs' reads). Raises ``NotFound`` for a
    space not configured or without signals, :class:`Invalid` for a body naming nobody
    (or two), a tool not bound or a value in ``current`` its field cannot have (a price
    that is no price: the error names ``current.<ref>.<field>``)."""
    space = space_of(settings, body.space_id, need_signals=True)
    if (body.profile_id is None) == (body.handle is None):
        raise Invalid(
            "invalid body",
            [{"field": "handle", "message": "exactly one of handle and profile_id is required"}],
        )
    profile_id = body.profile_id or profile_id_for(
        body.space_id,
        body.handle,
        settings.secret_bytes(),  # type: ignore[arg-type]
    )
    try:
        current = read_current(body.current, types_for_space(space), space.language)
    except UnreadableState as exc:
        raise Invalid("invalid body", [{"field": exc.field, "message": exc.message}]) from None
    now = datetime.now(UTC)
    assigned = _arm(settings, body.space_id, profile_id, body.source or "", now)
    dropped = frozenset() if assigned is None else assigned[1].dropped
    # The memory's control group (and an arm that drops the block) gets no block at all:
    # nothing of the person is read.
    no_block = "constraints_block" in dropped
    inputs = None if no_block else read_inputs(body.space_id, profile_id, body.for_)
    request = BlockRequest(
        space_id=body.space_id,
        profile_id=profile_id,
        for_=body.for_,
        language=space.language,
        session=body.session_id,
        asked=tuple(body.asked),
        delivery_elsewhere=body.delivery_elsewhere,
    )
    rules = [
        CompanyRule(r.id, r.rank, r.origin, r.attr, r.op, tuple(r.values), r.text)
        for r in space.rules
        if not no_block
    ]
    active = [] if inputs is None else [i for i in inputs.inferences if i.status == "active"]
    block = build_block(
        request,
        () if inputs is None else inputs.preferences,
        () if inputs is None else inputs.attributes,
        served_inferences(dropped, active),
        () if inputs is None else inputs.presented,
        () if inputs is None else inputs.disliked,
        rules,
        now,
        labels=space.labels,
        types=types_for_space(space),
        soft_max=settings.signals.block_soft_max,
        shown=None if inputs is None else inputs.shown,
        current=current,
    )
    if assigned is not None:
        experiment, arm = assigned
        block["experiment"] = {"id": experiment.id, "arm": arm.name, "drops": sorted(dropped)}
    if body.tool is not None:
        doc = load_bindings(space.tool_bindings) if space.tool_bindings else None
        binding = binding_for(doc, body.tool, body.source or "") if doc else None
        if binding is None:
            raise Invalid(
                f"tool {body.tool!r} is not bound for source {body.source!r} "
                f"in space {body.space_id!r}"
            )
        block["rendered"] = render_for_tool(block, binding)
    return block
