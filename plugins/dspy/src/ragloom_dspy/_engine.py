"""Shared pieces of ragloom's custom DSPy engines (the scripted test engine, llama.cpp).

DSPy 3.4 plugs a custom backend into ``dspy.LM(model, engine=..., async_engine=...)``: the
engine's ``complete(request: dspy.lm15.Request) -> dspy.lm15.Response`` does one attempt; the
LM keeps caching, retries, history and callbacks (``dspy/clients/engines/base.py``). Without
an ``async_engine`` DSPy refuses async calls, so ours always come in pairs.
"""

from __future__ import annotations

from typing import Any

from dspy.lm15 import Message, Request, Response, TextPart, Usage

__all__ = ["request_messages", "request_text", "text_response"]


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return "".join(getattr(part, "text", "") or "" for part in value)


def request_messages(request: Request) -> list[tuple[str, str]]:
    """``(role, text)`` pairs of a request: its system prompt first (role ``"system"``)."""
    pairs: list[tuple[str, str]] = []
    system = _text_of(request.system)
    if system:
        pairs.append(("system", system))
    pairs.extend((message.role, message.text or "") for message in request.messages)
    return pairs


def request_text(request: Request) -> str:
    """The whole request as one text: each message's text, separated by blank lines."""
    return "\n\n".join(text for _, text in request_messages(request))


def text_response(
    text: str,
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    finish_reason: str = "stop",
) -> Response:
    """A one-text-part assistant ``Response`` as DSPy expects it back from an engine."""
    return Response(
        id=None,
        model=model,
        message=Message.assistant([TextPart(text)]),
        finish_reason=finish_reason,
        usage=Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        ),
    )
