"""Cache reads and writes go in bounded windows, whatever the worker concurrency."""

from __future__ import annotations

from typing import Any

import pytest
from cache_kit import AsyncCountingChunker, CountingChunker, CountingStore, docs, dumps
from ragloom import Document, ExecutionContext, MemoryCacheStore, Pipeline, Policy


class Windowed(AsyncCountingChunker):
    step_id = "tests/cache-windowed"
    cache_window = 5


async def _collect(step: Any, items: list[Document], context: ExecutionContext) -> list[Any]:
    return [out async for out in step.evaluate_items(items, context)]


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 3, 16, 64])
async def test_evaluate_items_reads_in_cache_windows(concurrency: int) -> None:
    store = CountingStore(MemoryCacheStore())
    context = ExecutionContext(cache=store, policy=Policy(concurrency=concurrency))
    step = Windowed()
    inputs = docs(37)
    cold = await _collect(step, inputs, context)
    assert store.get_batches and max(store.get_batches) <= 5
    assert sum(store.get_batches) == 37
    assert sum(store.put_batches) == 37  # every item written once (in batches of any size)
    assert sorted(step.calls) == sorted(d.id for d in inputs)

    store.get_batches.clear()
    step.calls.clear()
    warm = await _collect(step, inputs, ExecutionContext(cache=store, policy=context.policy))
    assert step.calls == []
    assert max(store.get_batches) <= 5 and sum(store.get_batches) == 37
    assert dumps(warm) == dumps(cold)
    # Output order follows input order whatever the concurrency.
    assert [c.parent_id for c in warm] == [
        d.id for d in inputs for _ in range((len(d.content) + 39) // 40)
    ]


@pytest.mark.parametrize("concurrency", [1, 32])
def test_pipeline_batches_are_bounded_by_the_window_not_the_concurrency(
    concurrency: int,
) -> None:
    import anyio

    store = CountingStore(MemoryCacheStore())
    chunker = Windowed(policy=Policy(concurrency=concurrency))

    async def main() -> None:
        await Pipeline(chunker, cache=store).run(docs(23))

    anyio.run(main)
    assert max(store.get_batches) <= 5 and sum(store.get_batches) == 23


def test_default_window_batches_many_items_per_read() -> None:
    import anyio

    store = CountingStore(MemoryCacheStore())
    chunker = CountingChunker()

    async def main() -> None:
        await Pipeline(chunker, cache=store).run(docs(300))

    anyio.run(main)
    # One read per upstream window (the source hands over 64 documents at a time).
    assert len(store.get_batches) < 10
    assert max(store.get_batches) <= CountingChunker.cache_window
