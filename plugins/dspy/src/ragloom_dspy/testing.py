"""Offline DSPy LMs for testing code that uses ragloom-dspy: no network, scripted answers.

``scripted_lm(respond)`` returns a real ``dspy.LM`` whose custom engine (DSPy 3.4's engine
interface) answers from ``respond`` instead of a provider, so the whole DSPy path (adapters,
prompt formatting, parsing, async calls, history) runs as in production::

    lm = scripted_lm(lambda prompt: chat_answer(reasoning="...", sub_queries=["a", "b"]))
    with dspy.context(lm=lm):
        generator("Compare A and B")

The engine records every prompt and the peak number of calls in flight (``engine_of(lm)``),
and can sleep per call (``delay``) to test concurrency bounds.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.lm15 import Request, Response, response_to_events

from ._engine import request_text, text_response

__all__ = [
    "AsyncScriptedEngine",
    "ScriptExhaustedError",
    "ScriptedEngine",
    "chat_answer",
    "engine_of",
    "input_field",
    "scripted_lm",
]

#: What a scripted engine answers from: a function of the prompt text; a sequence of answers
#: used in order (an ``Exception`` in it is raised, simulating an LM failure); or one answer.
Responder = Callable[[str], str] | Sequence[str | BaseException] | str


class ScriptExhaustedError(RuntimeError):
    """A scripted engine was called more often than its script has answers."""


@dataclass
class ScriptedEngine:
    """A synchronous DSPy engine answering from a script (see :data:`Responder`)."""

    respond: Responder
    delay: float = 0.0
    model: str = "scripted"
    prompts: list[str] = field(default_factory=list)
    max_in_flight: int = 0
    _in_flight: int = 0
    _position: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _enter(self, prompt: str) -> None:
        with self._lock:
            self.prompts.append(prompt)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _answer(self, prompt: str) -> str:
        respond = self.respond
        if isinstance(respond, str):
            return respond
        if callable(respond):
            return respond(prompt)
        with self._lock:
            if self._position >= len(respond):
                raise ScriptExhaustedError(f"the script has only {len(respond)} answers")
            answer = respond[self._position]
            self._position += 1
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def complete(self, request: Request) -> Response:
        prompt = request_text(request)
        self._enter(prompt)
        try:
            if self.delay:
                time.sleep(self.delay)
            return text_response(self._answer(prompt), self.model)
        finally:
            self._leave()

    def stream(self, request: Request) -> Iterator[Any]:
        return iter(response_to_events(self.complete(request)))

    def close(self) -> None:
        pass

    @property
    def calls(self) -> int:
        return len(self.prompts)


@dataclass
class AsyncScriptedEngine:
    """The async counterpart of a :class:`ScriptedEngine` (sleeps without blocking the loop)."""

    sync: ScriptedEngine

    async def complete(self, request: Request) -> Response:
        sync = self.sync
        prompt = request_text(request)
        sync._enter(prompt)
        try:
            if sync.delay:
                await asyncio.sleep(sync.delay)
            return text_response(sync._answer(prompt), sync.model)
        finally:
            sync._leave()

    async def stream(self, request: Request) -> Any:
        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        pass


def scripted_lm(
    respond: Responder, *, delay: float = 0.0, model: str = "ragloom-test/scripted"
) -> dspy.LM:
    """A ``dspy.LM`` answering from ``respond``; no cache, no retries, no network."""
    engine = ScriptedEngine(respond, delay=delay, model=model)
    return dspy.LM(
        model,
        engine=engine,
        async_engine=AsyncScriptedEngine(engine),
        cache=False,
        num_retries=0,
    )


def engine_of(lm: dspy.LM) -> ScriptedEngine:
    """The :class:`ScriptedEngine` behind a :func:`scripted_lm` LM."""
    engine = lm.engine
    if not isinstance(engine, ScriptedEngine):
        raise TypeError(f"{lm!r} is not a scripted LM")
    return engine


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def chat_answer(**fields: Any) -> str:
    """An answer in DSPy's ChatAdapter format (``[[ ## name ## ]]`` sections), values that are
    not strings written as JSON."""
    sections = [f"[[ ## {name} ## ]]\n{_render(value)}" for name, value in fields.items()]
    return "\n\n".join([*sections, "[[ ## completed ## ]]"])


def input_field(prompt: str, name: str) -> str | None:
    """The value of input field ``name`` in the last ChatAdapter-formatted turn of ``prompt``."""
    header = rf"\[\[ ## {re.escape(name)} ## \]\]\n"
    pattern = re.compile(header + r"(.*?)(?=\n\n\[\[ ## |\n\nRespond |\Z)", re.S)
    matches = pattern.findall(prompt)
    return matches[-1].strip() if matches else None
