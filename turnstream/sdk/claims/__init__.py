"""The claim contract: what an agent may state, checked in the agent's process.

``Claims(contract, agent=...)`` checks an output against the turn's evidence (``check``) and
guards it as the contract's actions say (``guard_text``, ``guard``). Rules: ``docs/claims.md``.
"""

from turnstream.sdk.claims.check import Claims, Evaluation, Guarded, evaluate
from turnstream.sdk.claims.contract import Contract, ContractError, load_contract, parse_contract
from turnstream.sdk.claims.evidence import (
    Anchor,
    Document,
    Evidence,
    EvidenceValue,
    StateRead,
    ToolCall,
    TurnToCheck,
)
from turnstream.sdk.claims.guard import GuardStream
from turnstream.sdk.claims.internal_text import fingerprints
from turnstream.sdk.claims.records import ClaimRecord

__all__ = [
    "Anchor",
    "ClaimRecord",
    "Claims",
    "Contract",
    "ContractError",
    "Document",
    "Evaluation",
    "Evidence",
    "EvidenceValue",
    "GuardStream",
    "Guarded",
    "StateRead",
    "ToolCall",
    "TurnToCheck",
    "evaluate",
    "fingerprints",
    "load_contract",
    "parse_contract",
]
