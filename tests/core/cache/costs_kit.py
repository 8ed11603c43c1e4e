"""A controllable clock for the cost-aware cache, and steps and stores that advance it.

The engine measures costs with ``ragloom._engine.costs.clock``. These tests replace it with a
:class:`FakeClock` that only moves when told: :class:`Costed`'s transform advances it by what
computing an item "costs", :class:`MeteredStore`'s reads by what reading a cache entry "costs".
Every measured duration is then exact, so every decision is the same on any machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ragloom import Document, ExecutionContext, PipelineStep
from ragloom._engine import costs
from ragloom.cache import CacheEntry

#: What reading one cache entry costs on the fake clock (seconds).
READ_COST = 50e-6
#: A cheap step (recomputing is cheaper than the cache) and a costly one, per item (seconds).
CHEAP = 5e-6
COSTLY = 5e-3


class FakeClock:
    """A clock standing still until :meth:`advance` moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def fake_clock() -> FakeClock:
    """The fake clock in effect (installed by the test or the worker)."""
    clock = costs.clock
    assert isinstance(clock, FakeClock), "install a FakeClock as ragloom._engine.costs.clock"
    return clock


class Costed(PipelineStep[Document]):
    """Tags each item; computing one advances the fake clock by ``cost`` seconds."""

    step_id = "tests/costed"
    awaits = False

    def __init__(self, cost: float, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.cost = cost
        self.calls = 0

    def transform(self, item: Document, context: ExecutionContext) -> Document:
        self.calls += 1
        fake_clock().advance(self.cost)
        return item.model_copy(update={"metadata": {**item.metadata, "costed": self.cost}})


class MeteredStore:
    """Wraps a store: reading entries advances the fake clock by ``read_cost`` per key."""

    def __init__(self, inner: Any, read_cost: float = READ_COST) -> None:
        self.inner = inner
        self.read_cost = read_cost
        self.writes = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        fake_clock().advance(self.read_cost * len(keys))
        found: dict[str, CacheEntry] = self.inner.get_many(keys)
        return found

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        batch = list(entries)
        self.writes += len(batch)
        self.inner.put_many(batch)

    def __getattr__(self, name: str) -> Any:  # decisions, info, clear, close...
        return getattr(self.inner, name)


def docs(n: int) -> list[Document]:
    return [Document(id=f"d{i}", content=f"document {i} " * 5) for i in range(n)]
