"""The read side's pure core: the constraints block of one person, its text and its
rendering for one tool.

Standard library and pydantic only; no store, no Faust, no clock (``now`` is passed in).
The HTTP layer reads the records of :mod:`turnstream.core.constraints.inputs` from the store and
calls :func:`build_block`.
"""

from turnstream.core.constraints.bindings import (
    ArgBinding,
    BindingsDocument,
    Capabilities,
    Negation,
    ResultsBinding,
    SdkProfile,
    ToolBinding,
    binding_for,
    load_bindings,
    parse_bindings,
    parse_profile,
    profile_for,
    render_for_tool,
)
from turnstream.core.constraints.block import (
    PRECEDENCE,
    SAID_SOURCES,
    SESSION_LIFETIME,
    build_block,
    read_current,
    version_of,
)
from turnstream.core.constraints.changes import UnreadableState
from turnstream.core.constraints.conditions import BlockOp, clashes, refusing
from turnstream.core.constraints.inputs import (
    OPS,
    BlockRequest,
    CompanyRule,
    Disliked,
    InvalidViewInput,
    Op,
    Presented,
    Scope,
    StatedAttribute,
    StatedPreference,
    Strength,
)
from turnstream.core.constraints.text import LANGUAGES, render_text
from turnstream.core.constraints.tool_calls import (
    CallPlan,
    Counterfactual,
    Measured,
    Mode,
    compare_results,
    counterfactual_args,
    filter_residual,
    mask_result,
    measure_results,
    plan_call,
    result_items,
)

__all__ = [
    "LANGUAGES",
    "OPS",
    "PRECEDENCE",
    "SAID_SOURCES",
    "SESSION_LIFETIME",
    "ArgBinding",
    "BindingsDocument",
    "BlockOp",
    "BlockRequest",
    "CallPlan",
    "Capabilities",
    "CompanyRule",
    "Counterfactual",
    "Disliked",
    "InvalidViewInput",
    "Measured",
    "Mode",
    "Negation",
    "Op",
    "Presented",
    "ResultsBinding",
    "Scope",
    "SdkProfile",
    "StatedAttribute",
    "StatedPreference",
    "Strength",
    "ToolBinding",
    "UnreadableState",
    "binding_for",
    "build_block",
    "clashes",
    "compare_results",
    "counterfactual_args",
    "filter_residual",
    "load_bindings",
    "mask_result",
    "measure_results",
    "parse_bindings",
    "parse_profile",
    "plan_call",
    "profile_for",
    "read_current",
    "refusing",
    "render_for_tool",
    "render_text",
    "result_items",
    "version_of",
]
