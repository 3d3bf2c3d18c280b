"""The producer SDK: runs in the agent's process (conversations and turns, the claim
contract, exposure tokens). ``docs/sdk.md`` walks through it."""

from turnstream.sdk.conversation import Conversation, ConversationClaims, Recorder, TurnScope
from turnstream.sdk.exposure import exposure_token, uuid7
from turnstream.sdk.frame import Output, RecordedCall, TurnFrame, current_frame
from turnstream.sdk.sync import LoopThread, SyncProducer
from turnstream.sdk.tools import BoundTool, ToolRun, tool
from turnstream.sdk.turn_record import build_turn_record, turn_key

__all__ = [
    "BoundTool",
    "Conversation",
    "ConversationClaims",
    "LoopThread",
    "Output",
    "RecordedCall",
    "Recorder",
    "SyncProducer",
    "ToolRun",
    "TurnFrame",
    "TurnScope",
    "build_turn_record",
    "current_frame",
    "exposure_token",
    "tool",
    "turn_key",
    "uuid7",
]
