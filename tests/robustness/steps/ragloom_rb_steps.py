"""Steps and chunkers that misbehave on purpose, for the robustness suite.

Imported by ``ragloom`` subprocesses through pipeline files (``import = "ragloom_rb_steps:X"``
with ``--allow-imports``). Each misbehaves only on items whose id contains ``bad`` (default),
so the other files show that the run went on. Steps that block announce it on stderr first,
so a test signals the process only after it saw the step blocked.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from ragloom import Chunker, ChunkSpan, Document, PipelineStep


def _announce(what: str) -> None:
    print(f"ragloom-rb: {what}", file=sys.stderr, flush=True)


class _Step(PipelineStep[Any]):
    output_model = None

    def __init__(self, on: str = "bad") -> None:
        super().__init__(cache=False)
        self.on = on

    def hit(self, item: Any) -> bool:
        return self.on in str(getattr(item, "id", ""))


class ExitZero(_Step):
    """Raises ``SystemExit(0)`` on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            raise SystemExit(0)
        return [item]


class Base(BaseException):
    """Not an ``Exception``."""


class RaiseBase(_Step):
    """Raises a ``BaseException`` that is not an ``Exception`` on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            raise Base("a BaseException from plugin code")
        return [item]


class RaiseInterrupt(_Step):
    """Raises ``KeyboardInterrupt`` from its own code (no signal) on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            raise KeyboardInterrupt("raised by the step, not by a signal")
        return [item]


class RaiseInterruptAsync(_Step):
    """Asynchronous: raises ``KeyboardInterrupt`` from its own code on the bad item."""

    async def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            raise KeyboardInterrupt("raised by the step, not by a signal")
        return [item]


class Fail(_Step):
    """Raises ``ValueError`` on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            raise ValueError("this item is bad")
        return [item]


class NanMetadata(_Step):
    """Puts NaN and infinity into the bad item's metadata."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            meta = {**item.metadata, "score": math.nan, "weight": math.inf}
            return [item.model_copy(update={"metadata": meta})]
        return [item]


class Spin(_Step):
    """Synchronous: announces, then never returns (busy loop) on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            _announce("spinning")
            while True:
                pass
        return [item]


class SleepSync(_Step):
    """Synchronous: announces, then sleeps forever on the bad item."""

    def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            _announce("sleeping")
            while True:
                time.sleep(0.05)
        return [item]


class SleepAsync(_Step):
    """Asynchronous: sleeps forever on the bad item."""

    async def transform(self, item: Any, context: Any) -> list[Any]:
        if self.hit(item):
            await anyio.sleep_forever()
        return [item]


class PassAsync(PipelineStep[Any]):
    """Asynchronous pass-through (runs its items on a pool of workers)."""

    output_model = None

    def __init__(self) -> None:
        super().__init__(cache=False)

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        yield item


class BlockAfter(PipelineStep[Any]):
    """Passes ``after`` items, then announces once and waits forever (asynchronously)."""

    output_model = None

    def __init__(self, after: int = 10) -> None:
        super().__init__(cache=False)
        self.after = after
        self.seen = 0
        self.announced = False

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        self.seen += 1
        if self.seen > self.after:
            if not self.announced:
                self.announced = True
                _announce(f"blocked after {self.after} items")
            await anyio.sleep_forever()
        yield item


class Broken(PipelineStep[Any]):
    """A step whose constructor has a bug (an unexpected error, not a configuration one)."""

    output_model = None

    def __init__(self) -> None:
        raise RuntimeError("a bug in the step's constructor")

    def transform(self, item: Any, context: Any) -> list[Any]:  # pragma: no cover - never built
        return [item]


class DropThird(Chunker):
    """Declares itself lossless but loses the last third of the bad document."""

    lossless = True

    def split(self, document: Document) -> list[ChunkSpan]:
        n = len(document.content)
        end = n * 2 // 3 if "bad" in document.id else n
        return [ChunkSpan(0, end)]


class NoChunks(Chunker):
    """Declares itself lossless but returns no chunk for the bad document."""

    lossless = True

    def split(self, document: Document) -> list[ChunkSpan]:
        return [] if "bad" in document.id else [ChunkSpan(0, len(document.content))]


class NoChunksQuietly(Chunker):
    """Not declared lossless: returns no chunk for the bad documents."""

    def split(self, document: Document) -> list[ChunkSpan]:
        return [] if "bad" in document.id else [ChunkSpan(0, len(document.content))]


class WhitespaceGaps(Chunker):
    """Lossless with whitespace gaps allowed: leaves out the spaces between words."""

    lossless = True
    whitespace_gaps = True

    def split(self, document: Document) -> list[ChunkSpan]:
        import re

        return [ChunkSpan(m.start(), m.end()) for m in re.finditer(r"\S+", document.content)]
