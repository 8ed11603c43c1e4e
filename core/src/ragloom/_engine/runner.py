"""Running one step over a stream of windows: the way chosen once, from public capabilities.

- A step whose ``transform`` never awaits, under a simple policy (one attempt, no timeout),
  runs inline: one plain call per item, outputs collected straight into the window.
- Work that awaits runs item after item at concurrency 1, or on a pool of worker tasks.
- A policy with retries or a timeout wraps each item in attempts (a synchronous call with a
  timeout runs in a thread, so its deadline holds).
- A routed step dispatches each item to the leaf step that handles it.
- A cache in effect reads and writes per window (:mod:`.cached`).

Output order follows input order on every path. Each failed item is released as an
``ItemFailed`` event in input order (or aborts the run with ``ItemProcessingError`` under
``on_failure = "abort"``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias, TypeVar, cast

from ..errors import ItemProcessingError
from ..events import CacheSkipped, ItemFailed, StepFinished, StepStarted
from . import costs
from .cached import cached_results
from .calls import (
    Done,
    Failure,
    Result,
    WindowCall,
    amap_flat,
    attempt_call,
    batch_call,
    flat_call,
    item_id,
    map_flat,
    raw_call,
    result_call,
)
from .hooks import hooks_of
from .pool import pooled_results
from .protocols import (
    C,
    Item,
    MaybeAsyncCall,
    RunContext,
    RunPolicy,
    RunStats,
    RunStep,
    RunStore,
    StepInfo,
)
from .routing import Leaf, Routing, routes_items

__all__ = ["process_windows"]

T = TypeVar("T")
#: What every way of running a step that has no hot path gives: per window, each input item
#: with its result (all of its outputs, or its :class:`Failure`), in input order.
Pairs: TypeAlias = AsyncGenerator[list[tuple[Item, Result]], None]


async def process_windows(
    step: RunStep[C], upstream: AsyncIterator[list[Item]], context: C
) -> AsyncGenerator[list[Item], None]:
    """``step``'s outputs for every window of ``upstream``, in input order."""
    stats = context.stats_for(step)
    policy = step.effective_policy(context)
    observed = context.observed
    if observed:
        await context.emit(
            StepStarted(context.run_id, step=stats.name, event_name=stats.event_name)
        )
    started = time.perf_counter()
    routing = Routing(step, context, policy) if routes_items(step) else None
    store = await _store_unless_cheaper(step, routing, context)
    # The way the step runs, chosen once: inline for the hot paths, else from a generator of
    # (item, outputs | Failure) pairs per window; both give output windows.
    inline = _inline_way(step, context, policy, routing, store)
    windows = _inline(inline, upstream, context, policy, stats) if inline is not None else (
        _released(_pairs(step, upstream, context, policy, stats, routing, store), context,
                  policy, stats)
    )
    try:
        async for out in windows:
            yield out
    finally:
        await windows.aclose()
        await _close(upstream)
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


async def _store_unless_cheaper(
    step: RunStep[C], routing: Routing[C] | None, context: C
) -> RunStore | None:
    """``step``'s store, or ``None`` when recomputing it is known to be cheaper than replaying
    (the same for each routed leaf, whose ``store`` is cleared); a ``CacheSkipped`` event says
    so for each step concerned."""
    from ..identity import Uncacheable

    candidates: list[tuple[StepInfo, RunStore, Leaf[C] | None]] = []  # (step, store, leaf)
    if routing is None:
        store = step.effective_cache(context)
        if store is not None:
            candidates.append((step, store, None))
    else:
        store = step.effective_cache(context)
        candidates.extend((leaf.step, leaf.store, leaf) for leaf in routing.leaves.values()
                          if leaf.store is not None)
    for owner, owner_store, leaf in candidates:
        if owner.output_model is None:
            # A step that says why it is never cached (a FunctionStep without an output
            # model) says so once per run; other steps set output_model = None on purpose.
            why = getattr(owner, "uncached_reason", None)
            if isinstance(why, str) and why:
                await context.emit(CacheSkipped(context.run_id, step=owner.name, reason=why))
            continue
        if costs.mode_of(owner) != "auto":
            continue
        try:
            identity = owner.config_hash
        except Uncacheable:
            continue  # the cached path reports it
        reason = costs.skip_reason(costs.decisions_for(owner_store, [identity]).get(identity))
        if reason is None:
            continue
        if leaf is None:
            store = None
        else:
            leaf.store = None
        await context.emit(CacheSkipped(context.run_id, step=owner.name, reason=reason))
    return store


def _inline_way(
    step: RunStep[C],
    context: C,
    policy: RunPolicy,
    routing: Routing[C] | None,
    store: RunStore | None,
) -> _Inline | None:
    """The hot path of ``step`` when it has one: a step that is not routed, not batched, under
    a simple policy (one attempt, no timeout), without a cache, not awaiting or at
    concurrency 1."""
    if routing is not None or store is not None or hooks_of(step).batch is not None:
        return None
    if (policy.max_attempts or 1) != 1 or policy.timeout is not None:
        return None
    is_async, raw = raw_call(step, context)
    if is_async and (policy.concurrency or 1) != 1:
        return None
    bare = flat_call(step, context)
    return _Inline(is_async, raw, None) if bare is None else _Inline(is_async, bare[1], bare[2])


class _Inline:
    """One plain call per item, outputs collected straight into the window (the hot paths)."""

    __slots__ = ("call", "context", "is_async")

    def __init__(self, is_async: bool, call: Callable[..., Any], context: object) -> None:
        # ``call(item)``, or ``call(item, context)`` when a context is given
        self.is_async = is_async
        self.call = call
        self.context = context


async def _inline(
    way: _Inline,
    upstream: AsyncIterator[list[Item]],
    context: RunContext,
    policy: RunPolicy,
    stats: RunStats,
) -> AsyncGenerator[list[Item], None]:
    """Output windows of the hot paths; failures are released in place, as on every other
    path."""
    call, ctx = way.call, way.context
    async for window in upstream:
        stats.items_in += len(window)
        failed: list[tuple[Item, BaseException]] = []
        if way.is_async:
            out = await amap_flat(call, window, failed, ctx)
        else:
            out = map_flat(call, window, failed, ctx)
        for item, error in failed:
            await _release(item, Failure(error, 1), context, policy, stats)
        stats.items_out += len(out)
        if out:
            yield out


async def _released(
    pairs: Pairs, context: RunContext, policy: RunPolicy, stats: RunStats
) -> AsyncGenerator[list[Item], None]:
    """Output windows of ``(item, outputs | Failure)`` pairs, each failure released in
    order."""
    try:
        async for window_pairs in pairs:
            out: list[Item] = []
            for item, result in window_pairs:
                if type(result) is list:
                    out.extend(result)
                else:
                    await _release(item, cast(Failure, result), context, policy, stats)
            stats.items_out += len(out)
            if out:
                yield out
    finally:
        await pairs.aclose()


def _pairs(
    step: RunStep[C],
    upstream: AsyncIterator[list[Item]],
    context: C,
    policy: RunPolicy,
    stats: RunStats,
    routing: Routing[C] | None,
    store: RunStore | None,
) -> Pairs:
    """``(item, outputs | Failure)`` pairs per window of a step that has no hot path
    (:func:`_inline_way`); every way gives the same shape (:data:`Pairs`)."""
    concurrency = policy.concurrency or 1
    hooks = hooks_of(step)
    if routing is not None:
        is_async, call = routing.result_call()
        compute = _window_call(call, is_async, concurrency)
        if store is None and all(leaf.store is None for leaf in routing.leaves.values()):
            return _computed(upstream, compute, stats)
        return cached_results(
            upstream, step=step, store=store, routing=routing, checks_input=False,
            compute=compute, context=context, stats=stats,
        )
    if hooks.batch is not None:
        compute = batch_call(step, context, policy, stats)
    else:
        is_async, raw = raw_call(step, context)
        if (policy.max_attempts or 1) == 1 and policy.timeout is None:
            call = result_call(raw, is_async)
        else:
            call = attempt_call(
                raw, is_async, policy=policy, context=context, stats=stats, step_name=stats.name
            )
            is_async = True
        if store is None:
            if is_async and concurrency > 1:
                return pooled_results(upstream, call, concurrency, _counter(stats))
            return _sequential(upstream, call, is_async, stats)
        compute = _window_call(call, is_async, concurrency)
    if store is None:
        return _computed(upstream, compute, stats)
    return cached_results(
        upstream, step=step, store=store, routing=None, checks_input=hooks.checks_input,
        compute=compute, context=context, stats=stats,
    )


def _window_call(call: MaybeAsyncCall, is_async: bool, concurrency: int) -> WindowCall:
    """A per-item result call as a call on a list of items (results in order); ``done(index,
    result)``, when given, is told of each item as soon as it is finished."""

    async def compute(items: list[Item], done: Done | None = None) -> list[Result]:
        out: list[Result] = []
        if not is_async:
            for item in items:
                out.append(call(item))
                if done is not None:
                    done(len(out) - 1, out[-1])
            return out
        if concurrency <= 1 or len(items) == 1:
            for item in items:
                out.append(await call(item))
                if done is not None:
                    done(len(out) - 1, out[-1])
            return out
        if done is None:
            worker_call = call
            work: list[Item] = items
        else:
            # Each item is reported by the worker that finished it, as soon as it is (not when
            # the items before it are); what reporting raises is raised here, after the pool.
            raised: list[BaseException] = []

            async def worker_call(pair: tuple[int, Item]) -> Result:
                result: Result = await call(pair[1])
                try:
                    done(pair[0], result)
                except Exception as exc:  # noqa: BLE001 - re-raised below
                    raised.append(exc)
                return result

            work = list(enumerate(items))
        pairs = pooled_results(_one(work), worker_call, concurrency, lambda n: None)
        try:
            async for ready in pairs:
                out.extend(result for _item, result in ready)
        finally:
            await pairs.aclose()
        if done is not None and raised:
            raise raised[0]
        return out

    return compute


async def _one(items: list[T]) -> AsyncGenerator[list[T], None]:
    yield items


async def _computed(
    upstream: AsyncIterator[list[Item]],
    compute: Callable[[list[Item]], Awaitable[list[Result]]],
    stats: RunStats,
) -> Pairs:
    try:
        async for window in upstream:
            stats.items_in += len(window)
            yield list(zip(window, await compute(window), strict=True))
    finally:
        await _close(upstream)


def _counter(stats: RunStats) -> Callable[[int], None]:
    def count(n: int) -> None:
        stats.items_in += n

    return count


async def _sequential(
    upstream: AsyncIterator[list[Item]], call: MaybeAsyncCall, is_async: bool, stats: RunStats
) -> Pairs:
    try:
        async for window in upstream:
            stats.items_in += len(window)
            if is_async:
                yield [(item, await call(item)) for item in window]
            else:
                yield [(item, call(item)) for item in window]
    finally:
        await _close(upstream)


async def _close(generator: object) -> None:
    """Close an upstream generator now, in this task (a pool's task group must be left by the
    task that entered it, never later by the garbage collector)."""
    aclose = getattr(generator, "aclose", None)
    if aclose is not None:
        await aclose()


async def _release(
    item: Item, failure: Failure, context: RunContext, policy: RunPolicy, stats: RunStats
) -> None:
    """Count a failed item and report it (or abort the run under ``on_failure="abort"``)."""
    stats.failed += 1
    error = failure.error
    if (failure.on_failure or policy.on_failure) == "abort":
        raise ItemProcessingError(
            f"{stats.name}: item {item_id(item)!r} failed after {failure.attempts} "
            f"attempt(s): {type(error).__name__}: {error}"
        ) from error
    await context.emit(
        ItemFailed(
            context.run_id,
            step=stats.name,
            item_id=item_id(item),
            error_type=type(error).__name__,
            message=str(error),
            attempts=failure.attempts,
            item=item,
            exception=error,
        )
    )
