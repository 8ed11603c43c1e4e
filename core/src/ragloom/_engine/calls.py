"""Per-item calls: a step's hooks turned into one function per item, with its policy applied.

Two shapes of call exist:

- a *raw* call ``item -> produced`` (a list of outputs, one output, ``None`` or a generator),
  which may raise; the fastest path maps it over a window with nothing around it;
- a *result* call ``item -> list | Failure`` (sync or async), which never raises for a failure
  of the item itself (retries, timeouts and the failure mode are settled inside it).

Interrupts and cancellation always propagate: they stop the run, they are not failures of an
item. A ``KeyboardInterrupt`` is an interrupt when a signal raised it (see
:mod:`ragloom._interrupts`); one that a step raises from its own code fails that item, as
everything else an item's work raises does, ``SystemExit`` included.
"""

from __future__ import annotations

import random
import threading
import types
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias, TypeVar, cast

import anyio

from .._interrupts import signalled
from ..errors import StepTimeoutError
from ..events import ItemRetried
from .hooks import hooks_of
from .protocols import (
    C,
    Item,
    MaybeAsyncCall,
    RunContext,
    RunPolicy,
    RunStats,
    RunStep,
    StepWrappers,
)

__all__ = [
    "Done",
    "Failure",
    "Result",
    "WindowCall",
    "amap_flat",
    "as_outputs",
    "attempt_call",
    "batch_call",
    "flat_call",
    "is_interrupt",
    "item_id",
    "map_flat",
    "raw_call",
    "result_call",
    "stops_run",
]

T = TypeVar("T")
R = TypeVar("R")


class Failure:
    """Why an item produced nothing: the error, the attempts made, the failure mode."""

    __slots__ = ("attempts", "error", "on_failure")

    def __init__(self, error: BaseException, attempts: int, on_failure: str | None = None) -> None:
        self.error = error
        self.attempts = attempts
        #: The failure mode of the policy the item ran under (a routed child's own policy may
        #: differ from its router's); ``None``: the releasing step's.
        self.on_failure = on_failure


#: What one item came to: all of its outputs, or why it produced nothing.
Result: TypeAlias = list[Item] | Failure
#: ``done(index, result)``: told of each item of a window as soon as it is finished.
Done: TypeAlias = Callable[[int, Result], None]


class WindowCall(Protocol):
    """``items -> results``, one :data:`Result` per item, in order; ``done`` (when given) is
    told of each item as soon as it is finished."""

    def __call__(self, items: list[Item], done: Done | None = None, /) -> Awaitable[list[Result]]:
        ...


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` must stop the run rather than fail one item (async code)."""
    if isinstance(exc, KeyboardInterrupt):
        return signalled()
    return isinstance(exc, GeneratorExit | anyio.get_cancelled_exc_class())


def stops_run(exc: BaseException) -> bool:
    """Whether ``exc``, raised by synchronous item code, must stop the run: a
    ``KeyboardInterrupt`` raised for a signal (not one a step raised on its own)."""
    return isinstance(exc, KeyboardInterrupt) and signalled()


def item_id(item: object) -> str:
    """A short readable id of ``item`` for events and messages."""
    ident = getattr(item, "id", None)
    if isinstance(ident, str):
        return ident
    if isinstance(item, str):
        return item if len(item) <= 80 else item[:77] + "..."
    if isinstance(item, int | float | bool):
        return repr(item)
    from .._hashing import identity_and_digest

    return identity_and_digest(item)[0]


def as_outputs(produced: object) -> list[Item]:
    """What one call produced (a list, one output, ``None`` or a generator) as a plain list."""
    if produced is None:
        return []
    if type(produced) is list:
        return produced
    if isinstance(produced, list | types.GeneratorType):
        return list(produced)
    return [produced]


# -- building calls from hooks ----------------------------------------------------------------


def raw_call(step: RunStep[C], context: C) -> tuple[bool, MaybeAsyncCall]:
    """``(is_async, call)``: one call of ``step``'s hooks on one item, checks included.

    The call raises what the hooks raise and returns what ``transform`` produced (checked by
    ``validate_output`` first, when the step has one).
    """
    hooks = hooks_of(step)
    # ``(item)`` or ``(item, context)``: the hook says which
    transform: Callable[..., Any] = step.transform  # (item) or (item, context): hook says
    hook = hooks.transform
    call: MaybeAsyncCall
    if hook.kind == "sync":
        call = transform if not hook.takes_context else (lambda item: transform(item, context))
    elif hook.kind == "gen":
        if hook.takes_context:
            call = lambda item: list(transform(item, context))  # noqa: E731
        else:
            call = lambda item: list(transform(item))  # noqa: E731
    elif hook.kind == "async":
        call = transform if not hook.takes_context else (lambda item: transform(item, context))
    else:

        async def call(item: Item) -> list[Item]:
            gen = transform(item, context) if hook.takes_context else transform(item)
            return [out async for out in gen]

    is_async = hook.awaits
    if hooks.checks_input:
        call = _checked_input(call, step.validate_input, is_async)
    if hooks.checks_output is not None:
        call = _checked_output(call, step.validate_output, context, is_async, hooks.checks_output)
        is_async = is_async or hooks.checks_output == "async"
    plugins: StepWrappers | None = getattr(context, "hooks", None)
    if plugins is not None and plugins.implements("ragloom_wrap_step"):
        call = plugins.wrap_step(step, call, is_async)
    return is_async, call


def flat_call(step: RunStep[C], context: C) -> tuple[bool, Callable[..., Any], C | None] | None:
    """``(is_async, transform, context or None)`` when ``transform`` can be called bare (no
    checks, not a generator): the hot path calls ``transform(item)`` or
    ``transform(item, context)`` with nothing around it. ``None`` otherwise."""
    hooks = hooks_of(step)
    hook = hooks.transform
    if hooks.checks_input or hooks.checks_output is not None or hook.kind in ("gen", "agen"):
        return None
    plugins: StepWrappers | None = getattr(context, "hooks", None)
    if plugins is not None and plugins.implements("ragloom_wrap_step"):
        return None  # plugins wrap each call: no bare path
    return hook.awaits, step.transform, (context if hook.takes_context else None)


def _checked_input(
    call: MaybeAsyncCall, validate: Callable[[Item], None], is_async: bool
) -> MaybeAsyncCall:
    if is_async:

        async def acall(item: Item) -> Any:
            validate(item)
            return await call(item)

        return acall

    def scall(item: Item) -> Any:
        validate(item)
        return call(item)

    return scall


def _checked_output(
    call: MaybeAsyncCall,
    validate: Callable[[Item, list[Item], C], Any],  # awaitable when ``mode`` is "async"
    context: C,
    is_async: bool,
    mode: str,
) -> MaybeAsyncCall:
    if not is_async and mode == "sync":

        def scall(item: Item) -> list[Item]:
            produced = as_outputs(call(item))
            validate(item, produced, context)
            return produced

        return scall

    async def acall(item: Item) -> list[Item]:
        produced = as_outputs(await call(item) if is_async else call(item))
        if mode == "async":
            await validate(item, produced, context)
        else:
            validate(item, produced, context)
        return produced

    return acall


def result_call(raw: MaybeAsyncCall, is_async: bool) -> MaybeAsyncCall:
    """A raw call as a result call (``item -> list | Failure``, awaited when ``is_async``), one
    attempt."""
    if is_async:

        async def aone(item: Item) -> Result:
            try:
                return as_outputs(await raw(item))
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                return Failure(exc, 1)

        return aone

    def one(item: Item) -> Result:
        try:
            return as_outputs(raw(item))
        except BaseException as exc:
            if stops_run(exc):
                raise
            return Failure(exc, 1)

    return one


_RNG = random.Random()


def attempt_call(
    raw: MaybeAsyncCall,
    is_async: bool,
    *,
    policy: RunPolicy,
    context: RunContext,
    stats: RunStats,
    step_name: str,
) -> Callable[[Item], Awaitable[Result]]:
    """An async result call that applies ``policy``: retries with backoff, a per-attempt
    timeout, and the failure mode recorded on the :class:`Failure`.

    A synchronous call with a timeout runs in a daemon thread, so the deadline holds even when
    the call never returns: the item fails and the thread is left behind (and reported in the
    error message); the event loop stays free to stop the run on Ctrl-C.
    """
    max_attempts = policy.max_attempts or 1
    timeout = policy.timeout
    mode = policy.on_failure
    if not is_async and timeout is not None:
        one_attempt: Callable[[Item], Awaitable[Any]] = _in_thread(raw, timeout)
    elif is_async:
        one_attempt = raw
    else:

        async def one_attempt(item: Item) -> Any:
            return raw(item)

    async def call(item: Item) -> Result:
        attempt = 0
        while True:
            attempt += 1
            try:
                if timeout is None:
                    return as_outputs(await one_attempt(item))
                with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                    produced = as_outputs(await one_attempt(item))
                if not scope.cancelled_caught:
                    return produced
                raise StepTimeoutError(
                    f"{step_name} took longer than {timeout}s on item {item_id(item)!r}"
                    + ("" if is_async else "; its synchronous call was left running in a thread")
                )
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                if attempt >= max_attempts or not policy.is_retryable(exc):
                    return Failure(exc, attempt, mode)
                delay = policy.delay_before(attempt, _RNG)
                stats.retried += 1
                if context.observed:
                    await context.emit(
                        ItemRetried(
                            context.run_id,
                            step=stats.name,
                            item_id=item_id(item),
                            attempt=attempt,
                            delay=delay,
                            error=f"{type(exc).__name__}: {exc}",
                        )
                    )
                if delay:
                    await anyio.sleep(delay)

    return call


def _in_thread(raw: Callable[[T], R], timeout: float) -> Callable[[T], Awaitable[R]]:
    """``raw`` run in a daemon thread per call, awaited without blocking the event loop.

    The thread wakes the waiting task through the loop's token when it is done. When the
    deadline cancels the wait, the thread is left behind: it is a daemon, so a call that never
    returns neither holds the run nor keeps the process from exiting.
    """

    async def run(item: T) -> R:
        done = anyio.Event()
        token = anyio.lowlevel.current_token()
        box: list[R] = []
        raised: list[BaseException] = []

        def target() -> None:
            try:
                box.append(raw(item))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                raised.append(exc)
            try:
                anyio.from_thread.run_sync(done.set, token=token)
            except Exception:  # noqa: BLE001 - the run is over: nobody waits any more
                pass

        threading.Thread(target=target, name="ragloom-step", daemon=True).start()
        await done.wait()
        if raised:
            raise raised[0]
        return box[0]

    return run


def map_flat(
    call: Callable[..., Any],
    window: list[Item],
    failed: list[tuple[Item, BaseException]],
    context: object = None,
) -> list[Item]:
    """Outputs of a raw ``call`` over ``window``, flattened; failures go to ``failed``.

    The loop body is a bare call and append: each success appends exactly once, so after an
    exception ``len(results)`` is the index of the item that raised; it is recorded and the
    loop resumes after it. Results are flattened only when the window holds ``None``, lists or
    generators.
    """
    results: list[Item] = []
    append = results.append
    start = 0
    n = len(window)
    while start < n:
        try:
            if context is None:
                for item in window[start:] if start else window:
                    append(call(item))
            else:
                for item in window[start:] if start else window:
                    append(call(item, context))
        except BaseException as exc:
            if stops_run(exc):
                raise
            index = len(results)
            failed.append((window[index], exc))
            append(_FAILED)
            start = index + 1
        else:
            break
    kinds = set(map(type, results))
    if not failed and not kinds & _FLATTENED and not any(issubclass(k, list) for k in kinds):
        return results
    out: list[Item] = []
    for index, produced in enumerate(results):
        if produced is None or produced is _FAILED:
            continue
        if type(produced) is list:
            out.extend(produced)
        elif isinstance(produced, list | types.GeneratorType):
            try:  # a returned generator runs only now
                out.extend(list(produced))
            except BaseException as exc:
                if stops_run(exc):
                    raise
                failed.append((window[index], exc))
        else:
            out.append(produced)
    return out


async def amap_flat(
    call: Callable[..., Awaitable[Any]],
    window: list[Item],
    failed: list[tuple[Item, BaseException]],
    context: object = None,
) -> list[Item]:
    """Like :func:`map_flat`, awaiting an async raw ``call`` item after item."""
    out: list[Item] = []
    append = out.append
    for item in window:
        try:
            produced = await (call(item) if context is None else call(item, context))
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            failed.append((item, exc))
            continue
        if produced is None:
            continue
        if type(produced) is list:
            out.extend(produced)
        elif isinstance(produced, list | types.GeneratorType):
            try:  # a returned generator runs only now
                out.extend(list(produced))
            except BaseException as exc:
                if stops_run(exc):
                    raise
                failed.append((item, exc))
        else:
            append(produced)
    return out


class _FailedMarker:
    __slots__ = ()


_FAILED = _FailedMarker()
_FLATTENED = frozenset({type(None), list, types.GeneratorType})


def batch_call(step: RunStep[C], context: C, policy: RunPolicy, stats: RunStats) -> WindowCall:
    """A window call for a step with a ``transform_batch`` hook: ``items -> results``, one
    result (a list of outputs, or a :class:`Failure`) per item, in order.

    Items go to the hook in batches of the step's ``batch_size``. A batch attempt runs under the
    policy (retries, backoff; the timeout is per item, so a batch of ``n`` gets ``n`` times it).
    A batch that finally fails is retried item by item, so one bad item fails alone.
    ``done(index, result)``, when given, is told of each item as its batch is finished.
    """
    hooks = hooks_of(step)
    hook = hooks.batch
    assert hook is not None
    fn: Callable[..., Any] = getattr(step, "transform_batch")  # noqa: B009 - optional hook
    size = max(1, int(getattr(step, "batch_size", 64)))
    max_attempts = policy.max_attempts or 1
    timeout = policy.timeout
    mode = policy.on_failure
    validate = step.validate_input if hooks.checks_input else None
    check_output = hooks.checks_output
    who = stats.name

    def bare_hook(batch: list[Item]) -> Any:
        return fn(batch, context) if hook.takes_context else fn(batch)

    run_hook: MaybeAsyncCall = bare_hook  # a batch (a list of items) is its one argument
    plugins: StepWrappers | None = getattr(context, "hooks", None)
    if plugins is not None and plugins.implements("ragloom_wrap_step"):
        # A batch is one call: wrappers get the list of items.
        run_hook = plugins.wrap_step(step, bare_hook, hook.awaits)

    def checked(batch: list[Item], produced: object) -> list[list[Item]]:
        if not isinstance(produced, list) or len(produced) != len(batch):
            from ..errors import ComponentTypeError

            got = len(produced) if isinstance(produced, list) else type(produced).__name__
            raise ComponentTypeError(
                f"{who}.transform_batch returned {got} results for {len(batch)} items; it must "
                "return a list with one result per item"
            )
        return [as_outputs(p) for p in produced]

    async def once(batch: list[Item]) -> list[list[Item]]:
        if hook.awaits:
            return checked(batch, await run_hook(batch))
        if timeout is not None:
            return checked(batch, await _in_thread(run_hook, timeout * len(batch))(batch))
        return checked(batch, run_hook(batch))

    async def attempt(batch: list[Item]) -> list[list[Item]] | Failure:
        tries = 0
        while True:
            tries += 1
            try:
                if timeout is None:
                    return await once(batch)
                limit = timeout * len(batch)
                with anyio.CancelScope(deadline=anyio.current_time() + limit) as scope:
                    outputs = await once(batch)
                if not scope.cancelled_caught:
                    return outputs
                raise StepTimeoutError(
                    f"{who} took longer than {timeout}s per item on a batch of {len(batch)} "
                    f"starting with item {item_id(batch[0])!r}"
                )
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                if tries >= max_attempts or not policy.is_retryable(exc):
                    return Failure(exc, tries, mode)
                delay = policy.delay_before(tries, _RNG)
                stats.retried += len(batch)
                if context.observed:
                    for item in batch:
                        await context.emit(
                            ItemRetried(
                                context.run_id, step=who, item_id=item_id(item), attempt=tries,
                                delay=delay, error=f"{type(exc).__name__}: {exc}",
                            )
                        )
                if delay:
                    await anyio.sleep(delay)

    async def output_checked(item: Item, outputs: list[Item]) -> Result:
        if check_output is None:
            return outputs
        try:
            result = step.validate_output(item, outputs, context)
            if check_output == "async" and result is not None:
                await result
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            return Failure(exc, 1, mode)
        return outputs

    async def call(items: list[Item], done: Done | None = None) -> list[Result]:
        results: list[Result | None] = [None] * len(items)
        todo: list[int] = []
        for i, item in enumerate(items):
            if validate is not None:
                try:
                    validate(item)
                except Exception as exc:  # noqa: BLE001 - the item fails alone
                    results[i] = Failure(exc, 1, mode)
                    continue
            todo.append(i)
        for start in range(0, len(todo), size):
            part = todo[start : start + size]
            batch = [items[i] for i in part]
            outcome = await attempt(batch)
            if isinstance(outcome, Failure) and len(batch) > 1:
                singles = [await attempt([item]) for item in batch]
                outcome_each: list[Result] = [
                    s if isinstance(s, Failure) else s[0] for s in singles
                ]
            elif isinstance(outcome, Failure):
                outcome_each = [outcome]
            else:
                outcome_each = list(outcome)
            for i, result in zip(part, outcome_each, strict=True):
                results[i] = finished = (
                    result if isinstance(result, Failure)
                    else await output_checked(items[i], result)
                )
                if done is not None:
                    done(i, finished)
        return cast("list[Result]", results)  # every item has its result by now

    return call
