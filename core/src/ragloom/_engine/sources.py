"""Feeding items into a pipeline in bounded windows.

A synchronous iterable is read in windows of at most ``window`` items, and of documents totalling
about ``window_chars`` characters, so memory stays bounded whatever the document sizes; an
async iterable is passed on item by item, so a slow producer never holds items back.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Iterable, Iterator
from itertools import islice

import anyio

from .protocols import Item, RunStats

__all__ = ["document_windows", "split_by_chars"]

#: The event loop gets a turn (Ctrl-C, other tasks) at least this often while a source feeds
#: steps that never await.
CHECKPOINT_SECONDS = 0.05


async def document_windows(
    items: Iterable[Item] | AsyncIterable[Item],
    *,
    window: int,
    window_chars: int,
    stats: RunStats,
    check: Callable[[Item], object] | None = None,
) -> AsyncGenerator[list[Item], None]:
    """Windows of ``items``; ``check(item)`` (if given) runs on each item as it is read."""
    if isinstance(items, AsyncIterable):
        async for item in items:
            if check is not None:
                check(item)
            stats.items_in += 1
            stats.items_out += 1
            yield [item]
        return
    iterator = iter(items)
    last_checkpoint = time.monotonic()
    while True:
        part = list(islice(iterator, window))
        if not part:
            return
        if check is not None:
            for item in part:
                check(item)
        stats.items_in += len(part)
        stats.items_out += len(part)
        if hasattr(part[0], "content"):
            for piece in split_by_chars(part, window_chars):
                yield piece
        else:
            yield part
        now = time.monotonic()
        if now - last_checkpoint > CHECKPOINT_SECONDS:
            await anyio.lowlevel.checkpoint()
            last_checkpoint = time.monotonic()


def split_by_chars(window: list[Item], max_chars: int) -> Iterator[list[Item]]:
    """Cut a window of documents so that no part holds much more than ``max_chars``."""
    total = 0
    start = 0
    for i, item in enumerate(window):
        size = len(getattr(item, "content", "") or "")
        total += size
        if total > max_chars and i > start:
            yield window[start:i]
            start, total = i, size
    yield window[start:]
