"""A step that ticks a controllable clock, for the tests of when finished work is written.

The engine writes cache entries by ``ragloom._engine.cached.flush_clock``; the tests (and the
worker subprocess) replace it with a :class:`~costs_kit.FakeClock`, and each item this step
computes advances it by ``TICK`` seconds: four items make one second of work, whatever the
machine. ``block_at`` names an item on which the step says so on standard output and then
blocks, so that a test can stop the process at a known point.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import anyio
from costs_kit import FakeClock
from ragloom import Document, PipelineStep
from ragloom._engine import cached

TICK = 0.25


def install_clock() -> FakeClock:
    clock = FakeClock()
    cached.flush_clock = clock
    return clock


def _tick() -> None:
    clock = cached.flush_clock
    if isinstance(clock, FakeClock):  # (a resumed run may run on the real clock)
        clock.advance(TICK)


class Ticking(PipelineStep[Document]):
    """Tags each item; computing one is a quarter of a second of work on the fake clock."""

    step_id = "tests/resume-ticking"
    identity_ignores = PipelineStep.identity_ignores | {"log", "block_at"}

    def __init__(self, log: str | None = None, block_at: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.log = log
        self.block_at = block_at
        self.calls: list[str] = []

    def _work(self, item: Document) -> Document:
        if item.id == self.block_at:
            print(f"blocked {item.id}", flush=True)
            while True:
                time.sleep(60)
        _tick()
        self.calls.append(item.id)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(item.id + "\n")
        return item.model_copy(update={"metadata": {**item.metadata, "seen": True}})

    def transform(self, item: Document) -> Document:
        return self._work(item)


class AsyncTicking(Ticking):
    step_id = "tests/resume-ticking-async"

    async def transform(self, item: Document) -> Document:  # type: ignore[override]
        await anyio.sleep(0)
        return self._work(item)


class BatchTicking(Ticking):
    step_id = "tests/resume-ticking-batch"
    batch_size = 2

    def transform_batch(self, items: Sequence[Document]) -> list[Document]:
        return [self._work(item) for item in items]


def main(argv: list[str]) -> None:
    """``DB N BLOCK_AT HOW``: run ``Ticking`` over ``docs(N)`` against the SQLite cache ``DB``
    with the library alone (no handler of its own), ``HOW``: ``run_sync``, ``asyncio`` or
    ``trio`` (``await pipeline.run()`` in that event loop), or ``in-loop`` (``run_sync``
    called from inside a running asyncio loop, as in a notebook)."""
    import asyncio

    from cache_kit import docs
    from ragloom import Pipeline, SQLiteCacheStore

    db, n, block_at, how = argv
    install_clock()
    pipeline = Pipeline(Ticking(block_at=block_at), cache=SQLiteCacheStore(db))
    inputs = docs(int(n))
    if how == "run_sync":
        pipeline.run_sync(inputs)
    elif how == "in-loop":

        async def notebook() -> None:
            pipeline.run_sync(inputs)

        asyncio.run(notebook())
    else:
        anyio.run(pipeline.run, inputs, backend=how)
    print("finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
