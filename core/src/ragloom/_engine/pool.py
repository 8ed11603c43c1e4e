"""A pool of worker tasks running an async result call on many items at once, in order.

Items are submitted in windows; up to ``concurrency`` of them are in flight; results are taken
in input order as soon as the head of the line is done.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

import anyio
import anyio.abc

__all__ = ["pooled_results"]

#: What the pool works on, and what its call gives for each.
In = TypeVar("In")
Out = TypeVar("Out")


class _Slot(Generic[In, Out]):
    __slots__ = ("done", "item", "result")

    def __init__(self, item: In) -> None:
        self.item = item
        #: Set when the item is done (read only then).
        self.result: Out
        self.done = False


class _WorkerPool(Generic[In, Out]):
    """``concurrency`` worker tasks processing submitted items; results released in order."""

    def __init__(self, call: Callable[[In], Awaitable[Out]], concurrency: int) -> None:
        self.call = call
        self.concurrency = concurrency
        self.slots: deque[_Slot[In, Out]] = deque()
        self.todo: deque[_Slot[In, Out]] = deque()
        #: One event per idle worker; waking sets one, so work that never awaits is drained
        #: by a single worker instead of waking the whole pool for every window.
        self.idle: deque[anyio.Event] = deque()
        #: Workers woken that have not resumed yet: at most one helper is woken at a time.
        self.waking = 0
        self.closed = False
        self.head_waiter: anyio.Event | None = None

    def start(self, tg: anyio.abc.TaskGroup) -> None:
        for _ in range(self.concurrency):
            tg.start_soon(self._worker)

    def submit(self, items: list[In]) -> None:
        for item in items:
            slot: _Slot[In, Out] = _Slot(item)
            self.slots.append(slot)
            self.todo.append(slot)
        self._wake_one()

    def _wake_one(self) -> None:
        if self.idle and not self.waking:
            self.waking += 1
            self.idle.popleft().set()

    def take_ready(self) -> list[tuple[In, Out]]:
        slots = self.slots
        ready = []
        while slots and slots[0].done:
            slot = slots.popleft()
            ready.append((slot.item, slot.result))
        return ready

    async def wait_ready(self) -> list[tuple[In, Out]]:
        while True:
            ready = self.take_ready()
            if ready:
                return ready
            waiter = self.head_waiter = anyio.Event()
            await waiter.wait()

    def close(self) -> None:
        self.closed = True
        while self.idle:
            self.idle.popleft().set()

    async def _worker(self) -> None:
        call = self.call
        while True:
            while self.todo:
                slot = self.todo.popleft()
                if self.todo:
                    # More waiting: let another worker start on it while this item runs
                    # (it only gets to run if this item actually awaits).
                    self._wake_one()
                slot.result = await call(slot.item)
                slot.done = True
                waiter = self.head_waiter
                if waiter is not None and self.slots and self.slots[0] is slot:
                    self.head_waiter = None
                    waiter.set()
            if self.closed:
                return
            wakeup = anyio.Event()
            self.idle.append(wakeup)
            await wakeup.wait()
            if self.waking:
                self.waking -= 1


async def pooled_results(
    windows: AsyncIterator[list[In]],
    call: Callable[[In], Awaitable[Out]],
    concurrency: int,
    count: Callable[[int], None],
) -> AsyncGenerator[list[tuple[In, Out]], None]:
    """``(item, result)`` pairs in input order, ``concurrency`` items in flight at once.

    ``count(n)`` is told the size of each window as it is read.
    """
    pool = _WorkerPool(call, concurrency)
    high_water = 4 * concurrency + 64
    async with anyio.create_task_group() as tg:
        pool.start(tg)
        try:
            async for window in windows:
                count(len(window))
                pool.submit(window)
                ready = pool.take_ready()
                if ready:
                    yield ready
                while len(pool.slots) >= high_water:
                    yield await pool.wait_ready()
            while pool.slots:
                yield await pool.wait_ready()
        except GeneratorExit:
            # The consumer stopped early (a break, or an abort downstream). Leave the task
            # group normally: GeneratorExit escaping it would come out wrapped in an
            # exception group and hide the consumer's own error.
            pass
        finally:
            pool.close()
            # The upstream (maybe a pool of its own) is closed first, inside this task group
            # and in no new cancel scope: its task group was entered after this one and sits
            # above it, so it must be left first, and a scope entered here would sit above
            # it in turn. Its own cleanup shields what must finish.
            aclose = getattr(windows, "aclose", None)
            try:
                if aclose is not None:
                    await aclose()
            finally:
                if pool.slots:
                    tg.cancel_scope.cancel()
