"""``PipelineStep``: the async, streaming, composable unit of work, and the engine under it.

Steps are chained by binding (``step(upstream)``) and evaluated as chained async generators.
Internally items move between steps in bounded windows (lists), so the per-item cost of the
engine is a function call, not an event-loop hop; publicly :meth:`PipelineStep.evaluate`
streams single items. Each item is processed under the step's effective :class:`Policy`
(retries with backoff and jitter, per-attempt timeout, failure mode). Steps whose work awaits
run up to ``concurrency`` items at once on a small pool of worker tasks; steps that declare
they never await (``awaits = False``) run inline, where concurrency would only cost. Output order
always follows input order. Every input item ends as output or as an ``ItemFailed`` event.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Sequence,
)
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

import anyio
from pydantic import BaseModel

from ._hashing import canonical, stable_hash
from .component import Component
from .context import ExecutionContext, StepStats
from .errors import (
    ComponentTypeError,
    ConfigurationError,
    ItemProcessingError,
    StepTimeoutError,
)
from .events import CacheHit, CacheMiss, ItemFailed, ItemRetried, StepFinished, StepStarted
from .models import Document
from .policy import Policy

if TYPE_CHECKING:
    from typing import Self

    from .cache.base import CacheStore

__all__ = ["FunctionStep", "IterableSource", "PipelineStep", "item_key"]

T = TypeVar("T")
U = TypeVar("U")

#: Items per window when a source reads from a synchronous iterable.
DEFAULT_WINDOW = 64


class _Failure:
    __slots__ = ("attempts", "error", "on_failure")

    def __init__(
        self, error: BaseException, attempts: int, on_failure: str | None = None
    ) -> None:
        self.error = error
        self.attempts = attempts
        #: The failure mode of the policy the item was processed under (a routed child's own
        #: policy may differ from its router's); ``None``: the releasing step's.
        self.on_failure = on_failure


def item_key(item: Any) -> tuple[str, str]:
    """``(identity, content hash)`` of an item, for cache ids and events."""
    if isinstance(item, Document):
        return item.id, stable_hash(
            item.content_hash,
            item.content_format,
            canonical(item.metadata),
            item.parent_id,
            item.index,
            item.start,
        )
    if isinstance(item, BaseModel):
        digest = stable_hash(item.model_dump(mode="json"))
        ident = getattr(item, "id", None)
        return (str(ident) if ident else digest[:16]), digest
    digest = stable_hash(item if isinstance(item, str | int | float | bool) else repr(item))
    return digest[:16], digest


def _item_id(item: Any) -> str:
    ident = getattr(item, "id", None)
    if isinstance(ident, str):
        return ident
    if isinstance(item, str):
        return item if len(item) <= 80 else item[:77] + "..."
    return item_key(item)[0]


class PipelineStep(Component, ABC, Generic[T]):
    """An async, streaming step: maps each upstream item to zero or more items.

    Subclasses implement :meth:`transform` as an async generator. ``step(upstream)`` binds an
    upstream step and returns ``step``; :meth:`evaluate` streams outputs in input order.
    """

    #: Whether the step's work awaits. ``False`` lets the engine run items inline (no tasks).
    awaits: ClassVar[bool] = True
    #: Replay reads full cached entries at once instead of probing headers first.
    replay_needs_content: ClassVar[bool] = False
    #: Items read from the cache per batch, independent of the worker concurrency.
    cache_window: ClassVar[int] = 256
    #: Pydantic model of this step's outputs, used to read them back from a cache.
    output_model: ClassVar[type[BaseModel] | None] = Document

    def __init__(
        self,
        *,
        cache: CacheStore | Literal[False] | None = None,
        policy: Policy | None = None,
        name: str | None = None,
    ) -> None:
        if cache is not None and cache is not False and not hasattr(cache, "get_many"):
            raise ComponentTypeError(
                f"cache must be None, False or a CacheStore, got {type(cache).__name__}"
            )
        if policy is not None and not isinstance(policy, Policy):
            raise ComponentTypeError(f"policy must be a Policy, got {type(policy).__name__}")
        self._upstream: PipelineStep[Any] | None = None
        self._cache = cache
        self._policy = policy
        self.name = name or type(self).__name__

    # -- composition -----------------------------------------------------------------------

    def __call__(self, upstream: PipelineStep[Any]) -> Self:
        """Bind ``upstream`` as this step's input and return this step."""
        if not isinstance(upstream, PipelineStep):
            raise ComponentTypeError(
                f"{type(self).__name__} can only be bound to a PipelineStep, "
                f"got {type(upstream).__name__}"
            )
        node: PipelineStep[Any] | None = upstream
        while node is not None:
            if node is self:
                raise ConfigurationError(f"binding {self.name} would create a cycle")
            node = node.upstream
        self._upstream = upstream
        return self

    @property
    def upstream(self) -> PipelineStep[Any] | None:
        """The step bound with ``step(upstream)``, or ``None``."""
        return self._upstream

    @property
    def children(self) -> Sequence[PipelineStep[Any]]:
        """Steps nested inside this one (a router's routes)."""
        return ()

    @property
    def event_name(self) -> str:
        """The stage label: the first ``event_name`` declared in a class body along the MRO.

        Falls back to the concrete class's own name, computed per instance so subclasses of an
        undeclared family each keep their own name.
        """
        for klass in type(self).__mro__:
            if klass is PipelineStep:
                break
            declared = klass.__dict__.get("event_name")
            if isinstance(declared, str):
                return declared
        return type(self).__name__

    @property
    def cache(self) -> CacheStore | Literal[False] | None:
        """The cache explicitly configured for this step (``None``: inherit)."""
        return self._cache

    @property
    def policy(self) -> Policy | None:
        """The policy explicitly configured for this step (``None``: inherit everything)."""
        return self._policy

    def effective_policy(self, context: ExecutionContext) -> Policy:
        """This step's set fields, then the inherited policy's, then the defaults."""
        own = self._policy
        inherited = context.policy
        return (own.merged_over(inherited) if own is not None else inherited).resolved()

    def effective_cache(self, context: ExecutionContext) -> CacheStore | None:
        """The store this step reads and writes, or ``None`` when caching is off."""
        cache = self._cache if self._cache is not None else context.cache
        return None if cache is None or cache is False else cache

    # -- hooks -----------------------------------------------------------------------------

    def validate_input(self, item: T) -> None:
        """Reject an item this step cannot process (raise ``InvalidInputError``).

        Runs before processing and before a cached replay.
        """

    async def validate_output(self, item: T, produced: list[T], context: ExecutionContext) -> None:
        """Check what one item produced (raise to fail the item). Default: accept."""

    @abstractmethod
    def transform(self, item: T, context: ExecutionContext) -> AsyncIterator[T]:
        """Yield zero or more output items for ``item``."""

    def cache_id(self, item: T) -> str:
        """The cache id of ``item`` at this step: config hash, item identity, content hash."""
        ident, digest = item_key(item)
        return stable_hash(self.config_hash, ident, digest)

    # -- running ---------------------------------------------------------------------------

    def _upstream_windows(self, context: ExecutionContext) -> AsyncGenerator[list[Any], None]:
        upstream = self._upstream
        if upstream is None:
            fed = context.feed_for(self)
            if fed is None:
                raise ConfigurationError(
                    f"{self.name} has no upstream step: bind one with step(upstream) "
                    "or run it through Pipeline.run(inputs)"
                )
            upstream = fed
        return upstream._windows(context)

    async def evaluate(self, context: ExecutionContext) -> AsyncIterator[T]:
        """Stream this step's outputs for every upstream item, in input order.

        Raises:
            ConfigurationError: no upstream is bound.
        """
        windows = self._windows(context)
        try:
            async for window in windows:
                for out in window:
                    yield out
        finally:
            await windows.aclose()

    async def evaluate_items(
        self, items: Iterable[T], context: ExecutionContext
    ) -> AsyncIterator[T]:
        """Process ``items`` (one bounded window) through the cache and this step."""
        source = IterableSource(items)
        windows = self._process_windows(source._windows(context), context)
        try:
            async for window in windows:
                for out in window:
                    yield out
        finally:
            await windows.aclose()

    async def run(self, inputs: Iterable[Any] | AsyncIterable[Any] | None = None) -> list[T]:
        """Execute this step's graph standalone with a default context; return all outputs."""
        from .pipeline import Pipeline

        return list(await Pipeline(self, policy=self._policy).run(inputs))

    async def _windows(self, context: ExecutionContext) -> AsyncGenerator[list[T], None]:
        upstream = self._upstream_windows(context)
        windows = self._process_windows(upstream, context)
        try:
            async for window in windows:
                yield window
        finally:
            await windows.aclose()
            await upstream.aclose()

    async def _process_windows(
        self, upstream: AsyncIterator[list[Any]], context: ExecutionContext
    ) -> AsyncGenerator[list[T], None]:
        stats = context.stats_for(self)
        policy = self.effective_policy(context)
        cache = self.effective_cache(context)
        observed = context.observed
        if observed:
            await context.emit(
                StepStarted(context.run_id, step=stats.name, event_name=stats.event_name)
            )
        started = time.perf_counter()
        if cache is not None:
            results = self._cached_results(upstream, context, policy, cache, stats)
        else:
            results = self._results(upstream, context, policy, stats)
        try:
            async for pairs in results:
                out: list[T] = []
                for item, result in pairs:
                    if type(result) is list:
                        out.extend(result)
                    else:
                        await self._release_failure(item, result, context, policy, stats)
                stats.items_out += len(out)
                if out:
                    yield out
        finally:
            await results.aclose()
            stats.seconds += time.perf_counter() - started
        if observed:
            await context.emit(
                StepFinished(
                    context.run_id,
                    step=stats.name,
                    event_name=stats.event_name,
                    items_in=stats.items_in,
                    items_out=stats.items_out,
                    failed=stats.failed,
                    retried=stats.retried,
                    cache_hits=stats.cache_hits,
                    cache_misses=stats.cache_misses,
                    seconds=stats.seconds,
                )
            )

    async def _release_failure(
        self,
        item: Any,
        failure: Any,
        context: ExecutionContext,
        policy: Policy,
        stats: StepStats,
    ) -> None:
        assert isinstance(failure, _Failure)
        stats.failed += 1
        error = failure.error
        if (failure.on_failure or policy.on_failure) == "abort":
            raise ItemProcessingError(
                f"{stats.name}: item {_item_id(item)!r} failed after {failure.attempts} "
                f"attempt(s): {type(error).__name__}: {error}"
            ) from error
        await context.emit(
            ItemFailed(
                context.run_id,
                step=stats.name,
                item_id=_item_id(item),
                error_type=type(error).__name__,
                message=str(error),
                attempts=failure.attempts,
                item=item,
                exception=error,
            )
        )

    # -- per item --------------------------------------------------------------------------

    def _handler_for(
        self, item: T, context: ExecutionContext, policy: Policy
    ) -> tuple[PipelineStep[T], ExecutionContext, Policy]:
        """The step that processes ``item``, with its context and policy (routers override)."""
        return self, context, policy

    async def _attempt(self, item: T, context: ExecutionContext) -> list[T]:
        self.validate_input(item)
        produced = [out async for out in self.transform(item, context)]
        await self.validate_output(item, produced, context)
        return produced

    async def _process_item(
        self, item: T, context: ExecutionContext, policy: Policy, stats: StepStats
    ) -> list[T] | _Failure:
        try:
            handler, ctx, policy = self._handler_for(item, context, policy)
        except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
            return _Failure(exc, 0)
        max_attempts = policy.max_attempts or 1
        timeout = policy.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                if timeout is None:
                    produced = await handler._attempt(item, ctx)
                else:
                    with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                        produced = await handler._attempt(item, ctx)
                    if scope.cancelled_caught:
                        raise StepTimeoutError(
                            f"{handler.name} took longer than {timeout}s on item {_item_id(item)!r}"
                        )
                if handler is not self:
                    child = ctx.stats_for(handler)
                    child.items_in += 1
                    child.items_out += len(produced)
                return produced
            except Exception as exc:  # noqa: BLE001 - policy decides
                if attempt >= max_attempts or not policy.is_retryable(exc):
                    return _Failure(exc, attempt, policy.on_failure)
                delay = policy.delay_before(attempt, _RNG)
                stats.retried += 1
                if context.observed:
                    await context.emit(
                        ItemRetried(
                            context.run_id,
                            step=stats.name,
                            item_id=_item_id(item),
                            attempt=attempt,
                            delay=delay,
                            error=f"{type(exc).__name__}: {exc}",
                        )
                    )
                if delay:
                    await anyio.sleep(delay)

    def _runs_inline(self, policy: Policy) -> bool:
        return policy.concurrency == 1 or not self.awaits

    async def _results(
        self,
        windows: AsyncIterator[list[Any]],
        context: ExecutionContext,
        policy: Policy,
        stats: StepStats,
    ) -> AsyncGenerator[list[tuple[Any, Any]], None]:
        """Per-item results ``(item, outputs | failure)`` in input order, in windows."""
        if self._runs_inline(policy):
            simple = (
                (policy.max_attempts or 1) == 1
                and policy.timeout is None
                and type(self)._handler_for is PipelineStep._handler_for
            )
            if simple:  # the hot path: no retry bookkeeping, no per-item coroutine
                attempt = self._attempt
                async for window in windows:
                    stats.items_in += len(window)
                    pairs: list[tuple[Any, Any]] = []
                    for item in window:
                        try:
                            pairs.append((item, await attempt(item, context)))
                        except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
                            pairs.append((item, _Failure(exc, 1)))
                    yield pairs
                return
            process = self._process_item
            async for window in windows:
                stats.items_in += len(window)
                yield [(item, await process(item, context, policy, stats)) for item in window]
            return
        pool = _WorkerPool(self, context, policy, stats)
        high_water = 4 * (policy.concurrency or 1) + DEFAULT_WINDOW
        async with anyio.create_task_group() as tg:
            pool.start(tg)
            try:
                async for window in windows:
                    stats.items_in += len(window)
                    pool.submit(window)
                    ready = pool.take_ready()
                    if ready:
                        yield ready
                    while len(pool.slots) >= high_water:
                        yield await pool.wait_ready()
                while pool.pending:
                    yield await pool.wait_ready()
            except GeneratorExit:
                # The consumer stopped early (a break, or an abort downstream). Leave the task
                # group normally: GeneratorExit escaping it would come out wrapped in an
                # exception group and hide the consumer's own error.
                pass
            finally:
                pool.close()
                if pool.pending:
                    tg.cancel_scope.cancel()

    async def _cached_results(
        self,
        windows: AsyncIterator[list[Any]],
        context: ExecutionContext,
        policy: Policy,
        cache: CacheStore,
        stats: StepStats,
    ) -> AsyncGenerator[list[tuple[Any, Any]], None]:
        """Like ``_results``, reading and writing ``cache`` in windows of ``cache_window``."""
        batch: list[Any] = []
        async for window in windows:
            batch.extend(window)
            while len(batch) >= self.cache_window:
                head, batch = batch[: self.cache_window], batch[self.cache_window :]
                yield await self._cached_window(head, context, policy, cache, stats)
        if batch:
            yield await self._cached_window(batch, context, policy, cache, stats)

    async def _cached_window(
        self,
        items: list[Any],
        context: ExecutionContext,
        policy: Policy,
        cache: CacheStore,
        stats: StepStats,
    ) -> list[tuple[Any, Any]]:
        from .cache.base import CacheEntry

        results: list[Any] = [None] * len(items)
        keys: list[str | None] = [None] * len(items)
        handlers: list[PipelineStep[Any] | None] = [None] * len(items)
        for i, item in enumerate(items):
            handler: PipelineStep[Any]
            try:
                handler, _ctx, _pol = self._handler_for(item, context, policy)
            except Exception as exc:  # noqa: BLE001 - unroutable: fails like uncached
                results[i] = _Failure(exc, 0)
                continue
            if handler.output_model is None or handler.cache is False:
                continue
            handlers[i] = handler
            keys[i] = handler.cache_id(item)
        wanted = [k for k in keys if k is not None]
        if self.replay_needs_content or not wanted:
            found = cache.get_many(wanted) if wanted else {}
        else:
            present = cache.get_headers(wanted)
            found = cache.get_many(list(present)) if present else {}
        misses: list[int] = []
        for i, key in enumerate(keys):
            if results[i] is not None:
                continue
            entry = found.get(key) if key is not None else None
            chosen = handlers[i]
            if entry is None or chosen is None:
                misses.append(i)
                continue
            item = items[i]
            try:
                chosen.validate_input(item)
                assert chosen.output_model is not None
                results[i] = entry.load(chosen.output_model)
            except Exception as exc:  # noqa: BLE001 - invalid input fails the item
                results[i] = _Failure(exc, 0)
                continue
            stats.cache_hits += 1
            if context.observed:
                await context.emit(
                    CacheHit(
                        context.run_id,
                        step=stats.name,
                        item_id=_item_id(item),
                        cache_id=str(key),
                        outputs=len(results[i]),
                    )
                )
        stats.items_in += len(items) - len(misses)
        if misses:
            stats.cache_misses += len(misses)
            if context.observed:
                for i in misses:
                    await context.emit(
                        CacheMiss(
                            context.run_id,
                            step=stats.name,
                            item_id=_item_id(items[i]),
                            cache_id=str(keys[i] or ""),
                        )
                    )
            miss_items = [items[i] for i in misses]
            processed = self._results(_one_window(miss_items), context, policy, stats)
            done: list[tuple[Any, Any]] = []
            try:
                async for pairs in processed:
                    done.extend(pairs)
            finally:
                await processed.aclose()
            entries = []
            for i, (_item, result) in zip(misses, done, strict=True):
                results[i] = result
                key = keys[i]
                owner = handlers[i]
                if key is not None and owner is not None and type(result) is list:
                    entries.append(
                        CacheEntry.build(key, owner.identity(), _item_id(items[i]), result)
                    )
            if entries:
                cache.put_many(entries)
        return list(zip(items, results, strict=True))


_RNG = random.Random()


async def _one_window(items: list[Any]) -> AsyncGenerator[list[Any], None]:
    yield items


class _Slot:
    __slots__ = ("done", "item", "result")

    def __init__(self, item: Any) -> None:
        self.item = item
        self.result: Any = None
        self.done = False


class _WorkerPool:
    """``concurrency`` worker tasks processing submitted items; results released in order."""

    def __init__(
        self,
        step: PipelineStep[Any],
        context: ExecutionContext,
        policy: Policy,
        stats: StepStats,
    ) -> None:
        self.step = step
        self.context = context
        self.policy = policy
        self.stats = stats
        self.slots: deque[_Slot] = deque()
        self.todo: deque[_Slot] = deque()
        self.work = anyio.Event()
        self.idle = 0
        self.closed = False
        self.head_waiter: anyio.Event | None = None

    @property
    def pending(self) -> bool:
        return bool(self.slots)

    def start(self, tg: anyio.abc.TaskGroup) -> None:
        for _ in range(self.policy.concurrency or 1):
            tg.start_soon(self._worker)

    def submit(self, items: list[Any]) -> None:
        for item in items:
            slot = _Slot(item)
            self.slots.append(slot)
            self.todo.append(slot)
        self._wake_workers()

    def _wake_workers(self) -> None:
        if self.idle:
            self.work.set()
            self.work = anyio.Event()

    def take_ready(self) -> list[tuple[Any, Any]]:
        slots = self.slots
        ready = []
        while slots and slots[0].done:
            slot = slots.popleft()
            ready.append((slot.item, slot.result))
        return ready

    async def wait_ready(self) -> list[tuple[Any, Any]]:
        while True:
            ready = self.take_ready()
            if ready:
                return ready
            waiter = self.head_waiter = anyio.Event()
            await waiter.wait()

    def close(self) -> None:
        self.closed = True
        self.work.set()

    async def _worker(self) -> None:
        process = self.step._process_item
        while True:
            while self.todo:
                slot = self.todo.popleft()
                slot.result = await process(slot.item, self.context, self.policy, self.stats)
                slot.done = True
                waiter = self.head_waiter
                if waiter is not None and self.slots and self.slots[0] is slot:
                    self.head_waiter = None
                    waiter.set()
            if self.closed:
                return
            self.idle += 1
            try:
                await self.work.wait()
            finally:
                self.idle -= 1


class IterableSource(PipelineStep[T]):
    """A root step that feeds items from an iterable or an async iterable.

    A synchronous iterable is read in windows; an async iterable is passed on item by item, so
    a slow producer never holds items back.
    """

    event_name = "Source"
    output_model = None

    def __init__(
        self,
        items: Iterable[T] | AsyncIterable[T],
        *,
        window: int = DEFAULT_WINDOW,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=False, name=name)
        if not isinstance(items, Iterable | AsyncIterable) or isinstance(items, str | bytes):
            raise ComponentTypeError(
                f"IterableSource needs an iterable of items, got {type(items).__name__}"
            )
        if window < 1:
            raise ConfigurationError(f"window must be >= 1, got {window}")
        self.items = items
        self.window = window

    def __call__(self, upstream: PipelineStep[Any]) -> Self:
        raise ConfigurationError("IterableSource is a source: it takes no upstream")

    async def transform(self, item: T, context: ExecutionContext) -> AsyncIterator[T]:
        yield item

    async def _windows(self, context: ExecutionContext) -> AsyncGenerator[list[T], None]:
        stats = context.stats_for(self)
        items = self.items
        if isinstance(items, AsyncIterable):
            async for item in items:
                stats.items_in += 1
                stats.items_out += 1
                yield [item]
            return
        window: list[T] = []
        size = self.window
        for item in items:
            window.append(item)
            if len(window) >= size:
                stats.items_in += len(window)
                stats.items_out += len(window)
                yield window
                window = []
        if window:
            stats.items_in += len(window)
            stats.items_out += len(window)
            yield window


class FunctionStep(PipelineStep[Any]):
    """A step from a plain function ``item -> output | list of outputs | None``.

    A synchronous function runs inline (no tasks); an ``async def`` function runs under the
    policy's concurrency.
    """

    output_model = None

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        name: str | None = None,
        cache: CacheStore | Literal[False] | None = None,
        policy: Policy | None = None,
        output_model: type[BaseModel] | None = None,
    ) -> None:
        super().__init__(cache=cache, policy=policy, name=name or getattr(fn, "__name__", None))
        if not callable(fn):
            raise ComponentTypeError(f"FunctionStep needs a callable, got {type(fn).__name__}")
        import inspect

        self.fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)
        self.awaits = self._is_async  # type: ignore[misc]
        if output_model is not None:
            self.output_model = output_model  # type: ignore[misc]

    def config(self) -> dict[str, Any]:
        return {"fn": canonical(self.fn)}

    async def _attempt(self, item: Any, context: ExecutionContext) -> list[Any]:
        self.validate_input(item)
        result = self.fn(item)
        if self._is_async:
            result = await result
        if result is None:
            produced: list[Any] = []
        elif isinstance(result, list):
            produced = result
        else:
            produced = [result]
        await self.validate_output(item, produced, context)
        return produced

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        for out in await self._attempt(item, context):
            yield out
