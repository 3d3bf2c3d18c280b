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
    ToolBinding,
    binding_for,
    load_bindings,
    parse_bindings,
    render_for_tool,
)
from turnstream.core.constraints.block import (
    PRECEDENCE,
    SAID_SOURCES,
    SESSION_LIFETIME,
    build_block,
    version_of,
)
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
    "Capabilities",
    "CompanyRule",
    "Disliked",
    "InvalidViewInput",
    "Negation",
    "Op",
    "Presented",
    "ResultsBinding",
    "Scope",
    "StatedAttribute",
    "StatedPreference",
    "Strength",
    "ToolBinding",
    "binding_for",
    "build_block",
    "clashes",
    "load_bindings",
    "parse_bindings",
    "refusing",
    "render_for_tool",
    "render_text",
    "version_of",
]
