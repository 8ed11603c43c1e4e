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

import gc
import random
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

import anyio
from pydantic import BaseModel

from ._hashing import canonical, identity_and_digest, stable_hash
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
DEFAULT_WINDOW = 256
#: Characters of document content per source window (bounds memory for large documents).
DEFAULT_WINDOW_CHARS = 4_000_000


class _Failure:
    __slots__ = ("attempts", "error", "on_failure")

    def __init__(self, error: BaseException, attempts: int, on_failure: str | None = None) -> None:
        self.error = error
        self.attempts = attempts
        #: The failure mode of the policy the item was processed under (a routed child's own
        #: policy may differ from its router's); ``None``: the releasing step's.
        self.on_failure = on_failure


def item_key(item: Any) -> tuple[str, str]:
    """``(identity, content hash)`` of an item: a document's id and a hash of its content,
    format, metadata and lineage. (Cache ids are ``ragloom.cache.keys.cache_key``'s.)"""
    if isinstance(item, Document):
        return item.id, stable_hash(
            item.content_hash,
            item.content_format,
            canonical(item.metadata),
            item.parent_id,
            item.index,
            item.start,
        )
    return identity_and_digest(item)


def _item_id(item: Any) -> str:
    ident = getattr(item, "id", None)
    if isinstance(ident, str):
        return ident
    if isinstance(item, str):
        return item if len(item) <= 80 else item[:77] + "..."
    if isinstance(item, int | float | bool):
        return repr(item)
    return identity_and_digest(item)[0]  # a Document has returned its id above


class PipelineStep(Component, ABC, Generic[T]):
    """An async, streaming step: maps each upstream item to zero or more items.

    Subclasses implement :meth:`transform` as an async generator. ``step(upstream)`` binds an
    upstream step and returns ``step``; :meth:`evaluate` streams outputs in input order.
    """

    #: Whether the step's work awaits. ``False`` lets the engine run items inline (no tasks).
    awaits: ClassVar[bool] = True
    #: Spec 004's switch for steps whose replay reads full entries anyway, to skip a
    #: header-only probe. ragloom's replay never probes: each window is one read of the full
    #: entries present (the store's header-only read serves inspection), so it is a no-op.
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
            # PipelineStep's own entry is this property, not a declaration: walk on past it,
            # since a mixin listed after the step base may still declare a label.
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
        memo = self.__dict__.get("_policy_memo")
        if memo is not None and memo[0] is own and memo[1] is inherited:
            return memo[2]  # type: ignore[no-any-return]
        resolved = (own.merged_over(inherited) if own is not None else inherited).resolved()
        self.__dict__["_policy_memo"] = (own, inherited, resolved)
        return resolved

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

    def _inline_call(self) -> Callable[[T], Any] | None:
        """A plain function doing one attempt on one item without awaiting, if there is one.

        It returns what the attempt produced: a list of outputs, a single output, or ``None``
        for none (a list is always taken as a list of outputs). Steps whose work never awaits
        and whose ``validate_output`` is the default offer one, and the engine then calls it
        directly instead of driving a coroutine per item. ``None`` (the default): no such
        function.
        """
        return None

    def _inline_acall(self) -> Callable[[T], Awaitable[Any]] | None:
        """Like :meth:`_inline_call`, for work that awaits: an ``async`` function doing one
        attempt on one item (returning a list, one output or ``None``), or ``None``.
        """
        return None

    def cache_id(self, item: T) -> str:
        """The cache id of ``item`` at this step: config hash, item identity, content hash."""
        from .cache.keys import cache_key

        return cache_key(self.config_hash, item)

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
        inline = None
        results: AsyncGenerator[list[tuple[Any, Any]], None] | None = None
        if cache is not None or self._has_cached_children():
            results = self._cached_results(upstream, context, policy, cache, stats)
        else:
            inline = self._inline_fast_path(policy)
            if inline is None:
                results = self._results(upstream, context, policy, stats)
        try:
            if inline is not None:
                # The hot path: one plain call per item, outputs collected straight into the
                # window; a failure is released in place, exactly as on the general path.
                call, is_async = inline
                async for window in upstream:
                    stats.items_in += len(window)
                    out: list[T] = []
                    append = out.append
                    failed: list[tuple[Any, BaseException]] = []
                    if is_async:
                        for item in window:
                            try:
                                produced = await call(item)
                            except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
                                failed.append((item, exc))
                                continue
                            if produced is None:
                                continue
                            if isinstance(produced, list):
                                out.extend(produced)
                            else:
                                append(produced)
                    else:
                        out = _map_inline(call, window, failed)
                    for item, error in failed:  # released in input order within the window
                        await self._release_failure(
                            item, _Failure(error, 1), context, policy, stats
                        )
                    stats.items_out += len(out)
                    if out:
                        yield out
            else:
                assert results is not None
                async for pairs in results:
                    out = []
                    for item, result in pairs:
                        if type(result) is list:
                            out.extend(result)
                        else:
                            await self._release_failure(item, result, context, policy, stats)
                    stats.items_out += len(out)
                    if out:
                        yield out
        finally:
            if results is not None:
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

    def _is_simple(self, policy: Policy) -> bool:
        """Whether an item needs no per-item machinery: one attempt, no timeout, no routing."""
        return (
            (policy.max_attempts or 1) == 1
            and policy.timeout is None
            and type(self)._handler_for is PipelineStep._handler_for
        )

    def _inline_fast_path(self, policy: Policy) -> tuple[Callable[[Any], Any], bool] | None:
        """``(function, is_async)`` to call per item in line, when the general path is not
        needed: a simple policy, and work that never awaits or runs one item at a time."""
        if not self._is_simple(policy):
            return None
        if not self.awaits:
            call = self._inline_call()
            return None if call is None else (call, False)
        if policy.concurrency == 1:
            acall = self._inline_acall()
            return None if acall is None else (acall, True)
        return None

    def _simple_process(
        self, context: ExecutionContext, policy: Policy
    ) -> Callable[[Any], Awaitable[Any]] | None:
        """For a simple policy, one coroutine per item giving ``outputs | _Failure``
        (what ``_process_item`` gives, without its retry and routing bookkeeping)."""
        if not self._is_simple(policy):
            return None
        acall = self._inline_acall()
        if acall is not None:

            async def call_one(item: Any) -> Any:
                try:
                    produced = await acall(item)
                except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
                    return _Failure(exc, 1)
                return _as_outputs(produced)

            return call_one
        cls = type(self)
        if (
            cls._attempt is PipelineStep._attempt
            and cls.validate_output is PipelineStep.validate_output
        ):
            # The default attempt spelled out: two coroutines fewer per item.
            transform, validate = self.transform, self.validate_input

            async def transform_one(item: Any) -> Any:
                try:
                    validate(item)
                    return [out async for out in transform(item, context)]
                except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
                    return _Failure(exc, 1)

            return transform_one
        attempt = self._attempt

        async def attempt_one(item: Any) -> Any:
            try:
                return await attempt(item, context)
            except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
                return _Failure(exc, 1)

        return attempt_one

    async def _results(
        self,
        windows: AsyncIterator[list[Any]],
        context: ExecutionContext,
        policy: Policy,
        stats: StepStats,
    ) -> AsyncGenerator[list[tuple[Any, Any]], None]:
        """Per-item results ``(item, outputs | failure)`` in input order, in windows."""
        inline = self._inline_fast_path(policy)
        if inline is not None and not inline[1]:
            # Work that never awaits, with a simple policy: a plain call per item.
            call = inline[0]
            async for window in windows:
                stats.items_in += len(window)
                yield [(item, _call_one(call, item)) for item in window]
            return
        if self._runs_inline(policy):
            one = self._simple_process(context, policy)
            if one is not None:  # no retry bookkeeping
                async for window in windows:
                    stats.items_in += len(window)
                    yield [(item, await one(item)) for item in window]
                return
            process = self._process_item
            async for window in windows:
                stats.items_in += len(window)
                yield [(item, await process(item, context, policy, stats)) for item in window]
            return
        pool = _WorkerPool(self, context, policy, stats)
        high_water = 4 * (policy.concurrency or 1) + 64
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
        cache: CacheStore | None,
        stats: StepStats,
    ) -> AsyncGenerator[list[tuple[Any, Any]], None]:
        """Like ``_results``, reading and writing the cache in windows of ``cache_window``.

        Each upstream window is handled as soon as it arrives (split when it is larger than
        ``cache_window``), so a slow upstream never holds items back. ``cache`` is this step's
        store; a router's items use the store of the child that handles them.
        """
        size = max(1, self.cache_window)
        hashes: dict[int, str] = {}
        # Entries of finished items wait here and are written in batches (one transaction per
        # batch, not per window), at least every _FLUSH_SECONDS, and when the step ends.
        pending = _PendingWrites()
        try:
            async for window in windows:
                parts = (
                    [window]
                    if len(window) <= size
                    else [window[i : i + size] for i in range(0, len(window), size)]
                )
                for part in parts:
                    yield await self._cached_window(
                        part, context, policy, cache, stats, hashes, pending
                    )
                    pending.flush_if_due()
        finally:
            pending.flush()

    def _has_cached_children(self) -> bool:
        """Whether a step nested in this one sets a store of its own."""
        stack = list(self.children)
        while stack:
            child = stack.pop()
            if child.cache is not None and child.cache is not False:
                return True
            stack.extend(child.children)
        return False

    async def _cached_window(
        self,
        items: list[Any],
        context: ExecutionContext,
        policy: Policy,
        cache: CacheStore | None,
        stats: StepStats,
        hashes: dict[int, str] | None = None,
        pending: _PendingWrites | None = None,
    ) -> list[tuple[Any, Any]]:
        """Results for one window: hits replayed, the rest processed and their outputs written.

        An item's key is its handler's ``config_hash`` with the item's identity and content
        hash. A hit is replayed only after the handler's ``validate_input`` accepts the item.
        Only successful items are written, each with all of its outputs, one batch per store.
        """
        from .cache.base import CacheEntry
        from .cache.codec import decode_many
        from .cache.keys import cache_key

        if hashes is None:
            hashes = {}
        n = len(items)
        results: list[Any] = [None] * n
        keys: list[str | None] = [None] * n
        handlers: list[Any] = [None] * n
        stores: list[Any] = [None] * n
        modes: list[str | None] = [None] * n
        routed = type(self)._handler_for is not PipelineStep._handler_for
        handler: PipelineStep[Any] = self
        store = cache
        for i, item in enumerate(items):
            if routed:
                try:
                    handler, ctx, child_policy = self._handler_for(item, context, policy)
                except Exception as exc:  # noqa: BLE001 - unroutable: fails like uncached
                    results[i] = _Failure(exc, 0)
                    continue
                store = handler.effective_cache(ctx)
                modes[i] = child_policy.on_failure
            if store is None or handler.output_model is None:
                continue  # caching is off for this item: processed, neither hit nor miss
            handlers[i] = handler
            stores[i] = store
            if type(handler).cache_id is PipelineStep.cache_id:
                config_hash = hashes.get(id(handler))
                if config_hash is None:
                    config_hash = hashes[id(handler)] = handler.config_hash
                keys[i] = cache_key(config_hash, item)
            else:
                keys[i] = handler.cache_id(item)

        wanted: dict[int, tuple[CacheStore, list[str]]] = {}
        for key, owner_store in zip(keys, stores, strict=True):
            if key is not None:
                group = wanted.get(id(owner_store))
                if group is None:
                    group = wanted[id(owner_store)] = (owner_store, [])
                group[1].append(key)
        found = {sid: store.get_many(group) for sid, (store, group) in wanted.items()}

        todo: list[int] = []
        missed: list[int] = []
        hits: list[int] = []
        entries: list[CacheEntry] = []
        # Replay builds many small objects at once: pause the cyclic GC meanwhile, or its
        # collections keep walking the whole heap (a quarter of replay time otherwise).
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            for i in range(n):
                if results[i] is not None:
                    continue
                key = keys[i]
                if key is None:
                    todo.append(i)
                    continue
                entry = found[id(stores[i])].get(key)
                if entry is None:
                    todo.append(i)
                    missed.append(i)
                    continue
                try:
                    handlers[i].validate_input(items[i])
                except Exception as exc:  # noqa: BLE001 - an input invalid now is never replayed
                    results[i] = _Failure(exc, 1, modes[i])
                    continue
                hits.append(i)
                entries.append(entry)
            if hits:
                # One call decodes the window's hits (the payload of a chunker's entry lists
                # offsets into the input: replay slices the input, it does not re-validate).
                decoded = decode_many(
                    [e.payload for e in entries],
                    [items[i] for i in hits],
                    [handlers[i].output_model for i in hits],
                    [e.outputs for e in entries],
                    lambda j: f"cache entry {entries[j].key} ({entries[j].step}, "
                    f"item {entries[j].item_id!r})",
                )
                for i, outputs in zip(hits, decoded, strict=True):
                    results[i] = outputs
        finally:
            if paused:
                gc.enable()
        stats.cache_hits += len(hits)
        observed = context.observed
        if observed:
            for i in hits:
                await context.emit(
                    CacheHit(
                        context.run_id,
                        step=stats.name,
                        item_id=_item_id(items[i]),
                        cache_id=str(keys[i]),
                        outputs=len(results[i]),
                    )
                )
        stats.items_in += n - len(todo)
        if missed:
            stats.cache_misses += len(missed)
            if observed:
                for i in missed:
                    await context.emit(
                        CacheMiss(
                            context.run_id,
                            step=stats.name,
                            item_id=_item_id(items[i]),
                            cache_id=str(keys[i]),
                        )
                    )
        if not todo:
            return list(zip(items, results, strict=True))

        processed = self._results(_one_window([items[i] for i in todo]), context, policy, stats)
        done: list[tuple[Any, Any]] = []
        try:
            async for pairs in processed:
                done.extend(pairs)
        finally:
            await processed.aclose()
        writes = pending if pending is not None else _PendingWrites()
        for i, (item, result) in zip(todo, done, strict=True):
            results[i] = result
            key = keys[i]
            if key is None or type(result) is not list:
                continue
            owner = handlers[i]
            model = owner.output_model
            wrong = next((o for o in result if not isinstance(o, model)), None)
            if wrong is not None:
                results[i] = _Failure(
                    ComponentTypeError(
                        f"{owner.name} declares output_model {model.__name__} but produced "
                        f"{type(wrong).__name__}; fix the step or set output_model = None "
                        "to turn caching off for it"
                    ),
                    1,
                    modes[i],
                )
                continue
            entry = CacheEntry.build(key, owner.identity(), _item_id(item), result, item)
            writes.add(stores[i], entry)
        if pending is None:
            writes.flush()
        return list(zip(items, results, strict=True))


#: Cache entries are written at least this often while a cached step runs (and at its end).
_FLUSH_SECONDS = 1.0
#: ...or as soon as this many entries are waiting.
_FLUSH_ENTRIES = 1024


class _PendingWrites:
    """Finished items' cache entries not yet written, per store."""

    __slots__ = ("count", "since", "stores")

    def __init__(self) -> None:
        self.stores: dict[int, tuple[Any, list[Any]]] = {}
        self.count = 0
        self.since = time.monotonic()

    def add(self, store: Any, entry: Any) -> None:
        group = self.stores.get(id(store))
        if group is None:
            group = self.stores[id(store)] = (store, [])
        group[1].append(entry)
        self.count += 1

    def flush_if_due(self) -> None:
        if self.count >= _FLUSH_ENTRIES or (
            self.count and time.monotonic() - self.since >= _FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        stores, self.stores, self.count = self.stores, {}, 0
        self.since = time.monotonic()
        for store, entries in stores.values():
            store.put_many(entries)


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
        #: One event per idle worker; waking sets one, so work that never awaits is drained
        #: by a single worker instead of waking the whole pool for every window.
        self.idle: deque[anyio.Event] = deque()
        #: Workers woken that have not resumed yet: at most one helper is woken at a time.
        self.waking = 0
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
        self._wake_one()

    def _wake_one(self) -> None:
        if self.idle and not self.waking:
            self.waking += 1
            self.idle.popleft().set()

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
        while self.idle:
            self.idle.popleft().set()

    async def _worker(self) -> None:
        process = self.step._process_item
        simple = self.step._simple_process(self.context, self.policy)
        while True:
            while self.todo:
                slot = self.todo.popleft()
                if self.todo:
                    # More waiting: let another worker start on it while this item runs
                    # (it only gets to run if this item actually awaits).
                    self._wake_one()
                if simple is not None:
                    slot.result = await simple(slot.item)
                else:
                    slot.result = await process(slot.item, self.context, self.policy, self.stats)
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


class IterableSource(PipelineStep[T]):
    """A root step that feeds items from an iterable or an async iterable.

    A synchronous iterable is read in windows of at most ``window`` items, and of documents
    totalling about ``window_chars`` characters, so memory stays bounded whatever the document
    sizes; an async iterable is passed on item by item, so a slow producer never holds items
    back.
    """

    event_name = "Source"
    output_model = None

    def __init__(
        self,
        items: Iterable[T] | AsyncIterable[T],
        *,
        window: int = DEFAULT_WINDOW,
        window_chars: int = DEFAULT_WINDOW_CHARS,
        name: str | None = None,
    ) -> None:
        super().__init__(cache=False, name=name)
        if not isinstance(items, Iterable | AsyncIterable) or isinstance(items, str | bytes):
            raise ComponentTypeError(
                f"IterableSource needs an iterable of items, got {type(items).__name__}"
            )
        if window < 1:
            raise ConfigurationError(f"window must be >= 1, got {window}")
        if window_chars < 1:
            raise ConfigurationError(f"window_chars must be >= 1, got {window_chars}")
        self.items = items
        self.window = window
        self.window_chars = window_chars

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
        iterator = iter(items)
        size = self.window
        max_chars = self.window_chars
        last_checkpoint = time.monotonic()
        while True:
            window = list(islice(iterator, size))
            if not window:
                return
            stats.items_in += len(window)
            stats.items_out += len(window)
            if isinstance(window[0], Document):
                for part in _split_by_chars(window, max_chars):
                    yield part
            else:
                yield window
            # Let the event loop run (Ctrl-C, other tasks) at least every 50 ms, even when
            # every step downstream runs inline and never awaits.
            now = time.monotonic()
            if now - last_checkpoint > 0.05:
                await anyio.lowlevel.checkpoint()
                last_checkpoint = time.monotonic()


_NONE_TYPE = type(None)


def _call_one(call: Callable[[Any], Any], item: Any) -> Any:
    """``call(item)`` as a list of outputs, or the ``_Failure`` it raised."""
    try:
        produced = call(item)
    except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
        return _Failure(exc, 1)
    return _as_outputs(produced)


def _as_outputs(produced: Any) -> list[Any]:
    """What one attempt returned (a list, one output or ``None``) as a plain list."""
    if produced is None:
        return []
    if type(produced) is list:
        return produced
    # A list subclass is a list of outputs too; results travel as plain lists.
    return list(produced) if isinstance(produced, list) else [produced]


def _map_inline(
    call: Callable[[Any], Any], window: list[Any], failed: list[tuple[Any, BaseException]]
) -> list[Any]:
    """Outputs of ``call`` over ``window`` (a result may be one output, a list, or None).

    The loop body is a bare call and append: each success appends exactly once, so after an
    exception ``len(results)`` is the index of the item that raised; it is recorded in
    ``failed`` and the loop resumes after it. Results are flattened only when a window holds
    ``None`` or lists.
    """
    results: list[Any] = []
    append = results.append
    placeholder = _FAILED
    start = 0
    n = len(window)
    while start < n:
        try:
            for item in window[start:] if start else window:
                append(call(item))
        except Exception as exc:  # noqa: BLE001 - becomes an ItemFailed
            index = len(results)
            failed.append((window[index], exc))
            append(placeholder)
            start = index + 1
        else:
            break
    kinds = set(map(type, results))
    if not failed and _NONE_TYPE not in kinds and not any(issubclass(k, list) for k in kinds):
        return results
    out: list[Any] = []
    for produced in results:
        if produced is None or produced is placeholder:
            continue
        if isinstance(produced, list):
            out.extend(produced)
        else:
            out.append(produced)
    return out


class _FailedMarker:
    __slots__ = ()


_FAILED = _FailedMarker()


def _split_by_chars(window: list[Any], max_chars: int) -> Iterator[list[Any]]:
    """Cut a window of documents so that no part holds much more than ``max_chars``."""
    total = 0
    start = 0
    for i, item in enumerate(window):
        total += len(getattr(item, "content", ""))
        if total > max_chars and i > start:
            yield window[start:i]
            start, total = i, len(getattr(item, "content", ""))
    yield window[start:]


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

    def _inline_call(self) -> Callable[[Any], Any] | None:
        cls = type(self)
        if (
            self._is_async
            or cls._attempt is not FunctionStep._attempt
            or cls.validate_output is not PipelineStep.validate_output
        ):
            return None
        if cls.validate_input is PipelineStep.validate_input:
            return self.fn
        fn, validate = self.fn, self.validate_input

        def call(item: Any) -> Any:
            validate(item)
            return fn(item)

        return call

    def _inline_acall(self) -> Callable[[Any], Awaitable[Any]] | None:
        cls = type(self)
        if (
            not self._is_async
            or cls._attempt is not FunctionStep._attempt
            or cls.validate_input is not PipelineStep.validate_input
            or cls.validate_output is not PipelineStep.validate_output
        ):
            return None
        return self.fn  # type: ignore[no-any-return]

    async def _attempt(self, item: Any, context: ExecutionContext) -> list[Any]:
        self.validate_input(item)
        result = self.fn(item)
        if self._is_async:
            result = await result
        if result is None:
            produced: list[Any] = []
        elif isinstance(result, list):
            produced = result if type(result) is list else list(result)
        else:
            produced = [result]
        await self.validate_output(item, produced, context)
        return produced

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        for out in await self._attempt(item, context):
            yield out
