"""OpenAI-style tool-call transcripts: the calls an agent made, recorded into a turn, and its
reply checked, without touching the tools.

An agent on the OpenAI chat format (``openai``, LiteLLM, most agent stacks that speak it)
already keeps what a turn needs: each assistant message's ``tool_calls`` (``id``,
``function.name``, ``function.arguments`` as JSON text), each ``tool`` message's
``tool_call_id`` and ``content`` (the result, JSON text or plain), and the final assistant
``content``. ``record_openai_messages`` reads them:

```python
with conversation.turn():
    reply = record_openai_messages(messages)  # the turn's messages, after the user's
    conversation.agent(reply)                 # checked at the turn's end
```

A call of a tool the conversation binds (its profile's or ``tool_bindings=``), whose
results' type its object types declare, is recorded with the values claims may cite, as a
``@tool`` call would be (names, prices, stock on ``type:namespace:id``); another call is
recorded with its arguments and result only. In a conversation that checks claims, a bound
tool whose results' type is not declared is refused, as for ``@tool``. Messages may be
dicts or objects with ``model_dump()`` (the ``openai`` package's types).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from turnstream.core.constraints import binding_for
from turnstream.errors import TurnstreamError
from turnstream.sdk.frame import TurnFrame, current_frame
from turnstream.sdk.tools import _evidence, _evidence_possible

__all__ = ["record_openai_messages"]


def _plain(message: Any) -> Mapping[str, Any]:
    if isinstance(message, Mapping):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        return dump()  # type: ignore[no-any-return]
    raise TurnstreamError(f"a transcript message is a dict or has model_dump(): {message!r}")


def _json_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _content_text(content: Any) -> str | None:
    """An assistant message's text (a string, or the text parts of a list)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping)]
        return "".join(parts)
    return str(content)


def record_openai_messages(messages: Iterable[Any], frame: TurnFrame | None = None) -> str | None:
    """Record every tool call of ``messages`` (with its result) into the turn; return the
    last assistant text that is not a tool call (the reply), or None."""
    frame = frame or current_frame()
    if frame is None:
        raise TurnstreamError("record_openai_messages is called inside conversation.turn()")
    calls: list[tuple[str, str, Any]] = []  # (id, tool, arguments) in the order made
    results: dict[str, Any] = {}
    reply: str | None = None
    for i, raw in enumerate(messages):
        message = _plain(raw)
        role = message.get("role")
        if role == "assistant":
            tool_calls = message.get("tool_calls") or []
            for k, call in enumerate(tool_calls):
                call = _plain(call)
                function = _plain(call.get("function") or {})
                name = function.get("name")
                if not name:
                    raise TurnstreamError(f"messages.{i}.tool_calls.{k}.function.name: required")
                call_id = call.get("id") or f"{name}-{i}-{k}"
                calls.append((str(call_id), str(name), _json_or_text(function.get("arguments"))))
            text = _content_text(message.get("content"))
            if not tool_calls and text:
                reply = text
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is None:
                raise TurnstreamError(f"messages.{i}.tool_call_id: required on a tool message")
            results[str(call_id)] = _json_or_text(_content_text(message.get("content")))
    taken = {c.evidence.id for c in frame.calls}
    for call_id, name, args in calls:
        _record(frame, call_id if call_id not in taken else None, name, args, results.get(call_id))
    return reply


def _record(frame: TurnFrame, call_id: str | None, name: str, args: Any, result: Any) -> None:
    conversation: Any = frame.conversation
    bindings = getattr(conversation, "tool_bindings", None)
    binding = None if bindings is None else binding_for(bindings, name, conversation.source)
    flat = args if isinstance(args, dict) else {"arguments": args}
    types = conversation.types
    if binding is not None:
        _evidence_possible(name, binding, frame)
    if binding is not None and binding.results is not None and types is not None:
        results = binding.results
        if results.type in types.types:
            values = _evidence(result, results, types)
            frame.record_call(name, values, id=call_id, args=flat, result=result, type=results.type)
            return
    frame.record_call(name, id=call_id, args=flat, result=result)
