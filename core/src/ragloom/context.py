"""The execution context of one run: inherited policy and cache, observers, per-step stats."""

from __future__ import annotations

import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ._interrupts import signalled
from .events import Event, ItemFailed
from .policy import Policy

if TYPE_CHECKING:
    from .cache.base import CacheStore

__all__ = ["ExecutionContext", "Observer", "StepStats"]

Observer = Callable[[Event], "Awaitable[None] | None"]


class _Step(Protocol):
    """What the context reads of a step: its name and stage label."""

    @property
    def name(self) -> str: ...

    @property
    def event_name(self) -> str: ...


@dataclass(slots=True)
class StepStats:
    """Counts for one step in one run."""

    name: str
    event_name: str = ""
    items_in: int = 0
    items_out: int = 0
    failed: int = 0
    retried: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    seconds: float = 0.0
    #: Ids of the non-empty documents a chunker not declared lossless returned no chunk for
    #: (they produce nothing, yet nothing failed: worth a warning).
    no_chunks: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _RunState:
    run_id: str
    observers: list[Observer]
    stats: dict[str, StepStats] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    failures: list[ItemFailed] = field(default_factory=list)
    feeds: dict[int, Any] = field(default_factory=dict)
    observer_errors: dict[int, str] = field(default_factory=dict)
    hooks: Any = None
    plugin_policies: dict[int, Any] = field(default_factory=dict)
    async_observers: bool | None = None
    emit_lock: Any = None
    started: float = field(default_factory=time.perf_counter)


class ExecutionContext:
    """What a step sees of the run it is part of.

    ``policy`` and ``cache`` are what the step inherits from its enclosing pipeline or router;
    a step's own explicit settings take priority (see ``PipelineStep.effective_policy``).
    ``cache`` is tri-state like a step's: ``None`` (nothing configured), ``False`` (disabled)
    or a store.
    """

    __slots__ = ("_run", "cache", "policy")

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        cache: CacheStore | Literal[False] | None = None,
        observers: list[Observer] | None = None,
        run_id: str | None = None,
        hooks: Any = None,
    ) -> None:
        self.policy = policy if policy is not None else Policy()
        self.cache = cache
        self._run = _RunState(
            run_id=run_id or uuid.uuid4().hex[:12], observers=list(observers or []), hooks=hooks
        )

    @property
    def hooks(self) -> Any:
        """The plugin registry whose hooks this run calls (``None``: no plugin hooks)."""
        return self._run.hooks

    def plugin_policy(self, step: Any) -> Policy | None:
        """The plugins' policy defaults for ``step`` (by its ``kind``), asked once per run."""
        hooks = self._run.hooks
        if hooks is None:
            return None
        cache = self._run.plugin_policies
        key = id(step)
        if key not in cache:
            cache[key] = (
                hooks.default_policy(getattr(step, "kind", "step"), step)
                if hooks.has_default_policies()
                else None
            )
        result: Policy | None = cache[key]
        return result

    @property
    def run_id(self) -> str:
        return self._run.run_id

    @property
    def observed(self) -> bool:
        """Whether any observer listens (emitters skip building events otherwise)."""
        return bool(self._run.observers)

    @property
    def failures(self) -> list[ItemFailed]:
        """Items that failed so far in this run, in the order they were released."""
        return self._run.failures

    @property
    def stats(self) -> dict[str, StepStats]:
        """Per-step counts of this run, keyed by step name."""
        return self._run.stats

    def scoped(
        self, *, policy: Policy | None = None, cache: CacheStore | Literal[False] | None = None
    ) -> ExecutionContext:
        """A context for the children of a router: same run, other inherited policy/cache."""
        child = ExecutionContext.__new__(ExecutionContext)
        child._run = self._run
        child.policy = policy if policy is not None else self.policy
        child.cache = cache if cache is not None else self.cache
        return child

    def subscribe(self, observer: Observer) -> None:
        self._run.observers.append(observer)
        self._run.async_observers = None

    def step_name(self, step: _Step) -> str:
        """A run-unique name for ``step`` (its ``name``, suffixed when names repeat)."""
        key = id(step)
        name = self._run.names.get(key)
        if name is None:
            base = step.name
            taken = set(self._run.names.values())
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}#{n}"
            self._run.names[key] = name
        return name

    def stats_for(self, step: _Step) -> StepStats:
        name = self.step_name(step)
        stats = self._run.stats.get(name)
        if stats is None:
            stats = self._run.stats[name] = StepStats(name=name, event_name=step.event_name)
        return stats

    def feed(self, step: _Step, source: Any) -> None:
        """Give an unbound root ``step`` its input for this run."""
        self._run.feeds[id(step)] = source

    def feed_for(self, step: _Step) -> Any:
        return self._run.feeds.get(id(step))

    async def emit(self, event: Event) -> None:
        """Deliver ``event`` to every observer, awaiting async ones in order.

        An observer that raises is reported once (a warning on the ``ragloom`` logger and in
        :attr:`observer_errors`) and keeps receiving events: observing never aborts a run.
        """
        if isinstance(event, ItemFailed):
            self._run.failures.append(event)
        run = self._run
        if run.async_observers is None:
            run.async_observers = any(
                inspect.iscoroutinefunction(o) or inspect.iscoroutinefunction(
                    getattr(o, "__call__", None)  # noqa: B004 - a callable object's method
                )
                for o in run.observers
            )
        if run.async_observers:
            # An observer that awaits could let another task's event overtake this one:
            # deliver one event to every observer before the next (one order for all).
            if run.emit_lock is None:
                import anyio

                run.emit_lock = anyio.Lock()
            async with run.emit_lock:
                await self._deliver(event)
        else:
            await self._deliver(event)

    async def _deliver(self, event: Event) -> None:
        for observer in self._run.observers:
            try:
                result = observer(event)
                if inspect.isawaitable(result):
                    await result
            except BaseException as exc:
                if isinstance(exc, _cancelled()) or (
                    isinstance(exc, KeyboardInterrupt) and signalled()
                ):
                    raise
                self._observer_failed(observer, exc)

    @property
    def observer_errors(self) -> list[str]:
        """One line per observer that raised during this run (the first error of each)."""
        return list(self._run.observer_errors.values())

    def _observer_failed(self, observer: Observer, exc: BaseException) -> None:
        errors = self._run.observer_errors
        if id(observer) in errors:
            return
        name = getattr(observer, "__qualname__", None) or type(observer).__qualname__
        errors[id(observer)] = line = (
            f"observer {name} raised {type(exc).__name__}: {exc}; the run goes on"
        )
        logging.getLogger("ragloom").warning("%s", line)


def _cancelled() -> type[BaseException]:
    import anyio

    return anyio.get_cancelled_exc_class()


def warn_no_chunks(found: dict[str, list[str]]) -> list[str]:
    """Log one warning per chunker that returned no chunk for non-empty documents (``found``:
    chunker name -> document ids), with the count; return the lines logged."""
    lines = []
    for name, ids in found.items():
        if not ids:
            continue
        shown = ", ".join(repr(i) for i in ids[:3]) + (", ..." if len(ids) > 3 else "")
        line = (
            f"{name} returned no chunks for {len(ids)} non-empty document"
            f"{'' if len(ids) == 1 else 's'} ({shown}); they produce nothing (the chunker is "
            "not declared lossless, so nothing failed): check its settings"
        )
        logging.getLogger("ragloom").warning("%s", line)
        lines.append(line)
    return lines
