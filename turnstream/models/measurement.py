"""The measurement document: experiments that drop elements of the memory's block per arm.

An arm drops some of the block's elements (``constraints_block``, ``soft_signals``,
``inferred_sizes``, ``state_block``); the arm with ``control: true`` (an arm named
``control`` is one) is the memory's control group and gets no block at all. Critical
sources never go to the control arm. Outcomes of the chosen kind count as successes
when they come within ``window_days`` after the person's assignment.

The daily comparison adjusts for the same outcome in the ``cuped_days`` before each
person's assignment (CUPED; 0 turns it off), and is read as a group-sequential test
spending ``alpha`` over ``horizon_days`` daily looks (look 1 is the start day).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from turnstream.errors import ConfigError
from turnstream.models.common import SPACE_ID_PATTERN

__all__ = [
    "ELEMENTS",
    "Arm",
    "Element",
    "Experiment",
    "MeasurementDocument",
    "load_measurement",
    "measurement_errors",
]

#: The elements of the block an arm can drop.
ELEMENTS: tuple[str, ...] = ("constraints_block", "soft_signals", "inferred_sizes", "state_block")
Element = Literal["constraints_block", "soft_signals", "inferred_sizes", "state_block"]
#: Names of experiments, arms and spaces: short, lower case, safe in tables and file names.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")]
SpaceId = Annotated[str, StringConstraints(pattern=SPACE_ID_PATTERN)]
Source = Annotated[str, StringConstraints(min_length=1, max_length=256)]

CONTROL = "control"


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Arm(_Document):
    """One arm: its allocation weight and the block elements it drops."""

    name: Name
    allocation: float = Field(gt=0)
    drops: tuple[Element, ...] = ()
    control: bool = False

    @model_validator(mode="before")
    @classmethod
    def _named_control(cls, data: Any) -> Any:
        # An arm named "control" is the control group unless it says otherwise (refused below).
        if isinstance(data, dict) and data.get("name") == CONTROL and "control" not in data:
            return {**data, "control": True}
        return data

    @field_validator("drops")
    @classmethod
    def _no_repeats(cls, drops: tuple[str, ...]) -> tuple[str, ...]:
        repeated = sorted(d for d, n in Counter(drops).items() if n > 1)
        if repeated:
            raise ValueError(f"listed more than once: {', '.join(repeated)}")
        return drops

    @model_validator(mode="after")
    def _control_drops_everything(self) -> Arm:
        if self.name == CONTROL and not self.control:
            raise ValueError("control: an arm named control is the control group")
        if self.control and self.drops and set(self.drops) != set(ELEMENTS):
            raise ValueError(
                "drops: a control arm drops the whole block; leave drops out (it is implied)"
            )
        return self

    @property
    def dropped(self) -> frozenset[str]:
        """The elements this arm goes without (all of them for the control arm)."""
        return frozenset(ELEMENTS) if self.control else frozenset(self.drops)


class Experiment(_Document):
    """One experiment over one space."""

    id: Name
    space_id: SpaceId
    starts_at: AwareDatetime
    ends_at: AwareDatetime | None = None
    arms: tuple[Arm, ...] = Field(min_length=2)
    critical_sources: tuple[Source, ...] = ()
    outcome: Literal["purchase", "kept"] = "purchase"
    window_days: int = Field(14, ge=1, le=365)
    cuped_days: int = Field(28, ge=0, le=365)
    # At most 90 daily looks: one arm's repeated p-value at look 90 costs 90 boundary
    # recursions per level tried (bench/experiments_aa.py times it), and the job runs daily.
    horizon_days: int = Field(28, ge=1, le=90)
    alpha: float = Field(0.05, gt=0, lt=0.5)

    @field_validator("starts_at", "ends_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return value.astimezone(UTC) if value is not None else None

    @field_validator("arms")
    @classmethod
    def _arms(cls, arms: tuple[Arm, ...]) -> tuple[Arm, ...]:
        repeated = sorted(n for n, k in Counter(a.name for a in arms).items() if k > 1)
        if repeated:
            raise ValueError(f"arm names must be unique; repeated: {', '.join(repeated)}")
        controls = [a.name for a in arms if a.control]
        if len(controls) > 1:
            raise ValueError(f"at most one control arm; got {', '.join(controls)}")
        total = math.fsum(a.allocation for a in arms)
        if not total > 0 or not math.isfinite(total):
            raise ValueError("allocations must sum to a positive finite number")
        return arms

    @model_validator(mode="after")
    def _window(self) -> Experiment:
        if self.ends_at is not None and self.ends_at <= self.starts_at:
            raise ValueError("ends_at: must be after starts_at")
        return self

    @property
    def control_arm(self) -> Arm | None:
        """The control arm, if there is one."""
        return next((a for a in self.arms if a.control), None)

    @property
    def baseline(self) -> Arm:
        """What the other arms are compared against: the control arm, else the first arm."""
        return self.control_arm or self.arms[0]

    def arm(self, name: str) -> Arm | None:
        """The arm with this name, or None."""
        return next((a for a in self.arms if a.name == name), None)


class MeasurementDocument(_Document):
    """Every experiment of the measurement document."""

    experiments: tuple[Experiment, ...] = ()

    @field_validator("experiments")
    @classmethod
    def _unique_ids(cls, experiments: tuple[Experiment, ...]) -> tuple[Experiment, ...]:
        repeated = sorted(i for i, k in Counter(e.id for e in experiments).items() if k > 1)
        if repeated:
            raise ValueError(f"experiment ids must be unique; repeated: {', '.join(repeated)}")
        return experiments

    def experiment(self, experiment_id: str) -> Experiment:
        """The experiment with this id; ConfigError when there is none."""
        for experiment in self.experiments:
            if experiment.id == experiment_id:
                return experiment
        known = ", ".join(e.id for e in self.experiments) or "none"
        raise ConfigError(f"no experiment {experiment_id!r} in the measurement document ({known})")


_FIELD_PREFIX = re.compile(r"^([a-z_][a-z0-9_]*): (.*)\Z", re.S)


def measurement_errors(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field_path, message)`` per problem, e.g. ``("experiments[0].arms[1].allocation", ...)``.

    A rule that spans fields names its field at the head of its message; that name
    joins the path.
    """
    out: list[tuple[str, str]] = []
    for err in exc.errors(include_input=False, include_url=False):
        path = ""
        for part in err["loc"]:
            path += f"[{part}]" if isinstance(part, int) else ("." if path else "") + str(part)
        msg = err["msg"].removeprefix("Value error, ")
        match = _FIELD_PREFIX.match(msg)
        if match and err["type"] == "value_error":
            path = f"{path}.{match[1]}" if path else match[1]
            msg = match[2]
        out.append((path, msg))
    return out


def load_measurement(path: str | Path) -> MeasurementDocument:
    """Read and validate a measurement document (``.json``, else TOML).

    Raises ConfigError naming the file and each offending field.
    """
    file = Path(path)
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise ConfigError(f"measurement document {file} does not exist") from None
    try:
        data = json.loads(text) if file.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if file.suffix.lower() == ".json" else "TOML"
        raise ConfigError(f"measurement document {file} is not valid {kind}: {exc}") from None
    try:
        return MeasurementDocument.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{p or '<document>'}: {m}" for p, m in measurement_errors(exc))
        raise ConfigError(f"invalid measurement document {file}: {problems}") from None
