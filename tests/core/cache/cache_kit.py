"""Small steps that count their calls, shared by the cache tests (and the subprocess worker)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import anyio
from ragloom import (
    Chunker,
    ChunkSpan,
    Document,
    ExecutionContext,
    Pipeline,
    PipelineStep,
    RunResult,
)
from ragloom.cache import CacheEntry


class CountingChunker(Chunker):
    """Cuts fixed-size spans; records the id of every document it splits.

    ``explode`` holds ids of documents on which it yields two pieces and then raises (not part
    of the config: a transient failure). ``delay`` sleeps per document (a slow-ish step).
    """

    step_id = "tests/cache-counting"
    # How long it sleeps never changes what it cuts: declared, so runs with other delays hit.
    identity_ignores = Chunker.identity_ignores | {"delay"}

    def __init__(
        self,
        size: int = 40,
        *,
        delay: float = 0.0,
        cache: Any = None,
        policy: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name)
        self.size = size
        self.delay = delay
        self.calls: list[str] = []
        self.explode: set[str] = set()

    def config(self) -> dict[str, Any]:
        return {"size": self.size}

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        self.calls.append(document.id)
        if self.delay:
            time.sleep(self.delay)
        text = document.content
        for n, start in enumerate(range(0, len(text), self.size)):
            if document.id in self.explode and n == 2:
                raise RuntimeError(f"boom in {document.id}")
            yield ChunkSpan(start, min(len(text), start + self.size))


class AsyncCountingChunker(CountingChunker):
    """The same cuts from ``asplit`` (so the engine runs it under the policy's concurrency)."""

    step_id = "tests/cache-counting-async"

    async def asplit(self, document: Document) -> AsyncIterator[ChunkSpan]:
        await anyio.sleep(0)
        for piece in CountingChunker.split(self, document):
            yield piece


class Tagger(PipelineStep[Document]):
    """Adds ``metadata[key] = value`` to every item; records the ids it processed."""

    step_id = "tests/cache-tagger"
    awaits = False

    def __init__(self, key: str, value: str, *, cache: Any = None, name: str | None = None):
        super().__init__(cache=cache, name=name or f"tag-{key}")
        self.key = key
        self.value = value
        self.calls: list[str] = []

    def config(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value}

    async def transform(self, item: Document, context: ExecutionContext) -> AsyncIterator[Document]:
        self.calls.append(item.id)
        yield item.model_copy(update={"metadata": {**item.metadata, self.key: self.value}})


class CountingStore:
    """Wraps a store; records the size of every ``get_many`` batch and ``put_many`` batch."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.get_batches: list[int] = []
        self.put_batches: list[int] = []

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        self.get_batches.append(len(keys))
        result: dict[str, CacheEntry] = self.inner.get_many(keys)
        return result


    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        batch = list(entries)
        self.put_batches.append(len(batch))
        self.inner.put_many(batch)

    def info(self) -> Any:
        return self.inner.info()

    def clear(self, step: str | None = None) -> int:
        cleared: int = self.inner.clear(step)
        return cleared

    def close(self) -> None:
        self.inner.close()


def docs(n: int, *, length: int = 130, prefix: str = "d", fmt: str = "text") -> list[Document]:
    """``n`` distinct documents of ``length`` characters."""
    out = []
    for i in range(n):
        body = (f"document {prefix}{i} says hello. " * (length // 20 + 1))[:length]
        out.append(
            Document(id=f"{prefix}{i}", content=body, content_format=fmt, metadata={"n": i})
        )
    return out


def run(pipeline: Pipeline[Any], inputs: Any = None) -> RunResult[Any]:
    """``pipeline.run(inputs)`` from sync code."""
    box: list[RunResult[Any]] = []

    async def main() -> None:
        box.append(await pipeline.run(inputs))

    anyio.run(main)
    return box[0]


def dumps(outputs: Iterable[Any]) -> list[dict[str, Any]]:
    return [o.model_dump(mode="json") for o in outputs]


class ConfiguredChunker(CountingChunker):
    """A chunker with config values of several kinds (for ``config_hash`` tests)."""

    step_id = "tests/cache-configured"

    def __init__(
        self,
        size: int = 40,
        *,
        ratio: float = 0.5,
        separators: Sequence[str] = ("\n\n", "\n"),
        options: dict[str, Any] | None = None,
        flags: frozenset[str] = frozenset({"x", "y", "z"}),
        mode: str = "greedy",
        cache: Any = None,
    ) -> None:
        super().__init__(size, cache=cache)
        self.ratio = ratio
        self.separators = list(separators)
        self.options = options if options is not None else {"b": 1, "a": [1, 2]}
        self.flags = frozenset(flags)
        self.mode = mode

    def config(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "ratio": self.ratio,
            "separators": self.separators,
            "options": self.options,
            "flags": self.flags,
            "mode": self.mode,
        }


class LoggingChunker(CountingChunker):
    """Appends the id of every document it splits to a file (visible across processes)."""

    step_id = "tests/cache-counting"  # same identity as CountingChunker: same keys
    identity_ignores = CountingChunker.identity_ignores | {"log"}  # where it logs, not what
    cache_window = 4

    def __init__(self, log: str, size: int = 40, *, delay: float = 0.0) -> None:
        super().__init__(size, delay=delay)
        self.log = log

    def split(self, document: Document) -> Iterable[ChunkSpan]:
        pieces = list(super().split(document))
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(document.id + "\n")
        return pieces
