"""Policy: validation, retries with backoff, retry_on, timeouts, concurrency, failure modes."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from ragloom import (
    DEFAULT_POLICY,
    ConfigurationError,
    Event,
    ExecutionContext,
    FunctionStep,
    InvalidInputError,
    ItemProcessingError,
    ItemRetried,
    IterableSource,
    Pipeline,
    PipelineStep,
    Policy,
    RoutedStep,
    StepTimeoutError,
)


class Scripted(PipelineStep[int]):
    """Raises ``errors[item][attempt]`` (when present) on each attempt, else yields the item."""

    def __init__(self, errors: dict[int, list[BaseException]] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.errors = errors or {}
        self.attempts: dict[int, int] = {}

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        n = self.attempts.get(item, 0)
        self.attempts[item] = n + 1
        script = self.errors.get(item, [])
        if n < len(script):
            raise script[n]
        yield item


class Sleeper(PipelineStep[int]):
    """Sleeps ``seconds(item, attempt)``; records completions and the peak number in flight."""

    def __init__(self, seconds: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.seconds = seconds
        self.attempts: dict[int, int] = {}
        self.completed: list[int] = []
        self.cancelled: list[int] = []
        self.in_flight = 0
        self.peak = 0

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        n = self.attempts[item] = self.attempts.get(item, 0) + 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await anyio.sleep(self.seconds(item, n))
            self.completed.append(item)  # never reached when the attempt is cancelled
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(item)
            raise
        finally:
            self.in_flight -= 1
        yield item


# -- the Policy value ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"backoff": -1.0},
        {"backoff_max": -0.5},
        {"jitter": -0.1},
        {"backoff_multiplier": 0.5},
        {"timeout": 0},
        {"timeout": -2},
        {"concurrency": 0},
        {"on_failure": "explode"},
        {"retry_on": (ValueError, "nope")},
    ],
)
def test_bad_policy_values_raise_configuration_error(kwargs: dict[str, Any]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(ConfigurationError, match=name):
        Policy(**kwargs)


def test_policy_is_frozen_and_partial() -> None:
    policy = Policy(max_attempts=3)
    with pytest.raises(AttributeError):
        policy.max_attempts = 4  # type: ignore[misc]
    assert policy.explicit_fields() == {"max_attempts": 3}
    assert policy.with_(timeout=2.0).explicit_fields() == {"max_attempts": 3, "timeout": 2.0}
    assert Policy().resolved() == DEFAULT_POLICY
    assert Policy(retry_on=[KeyError]).retry_on == (KeyError,)  # type: ignore[arg-type]


def test_merge_is_field_by_field() -> None:
    child = Policy(max_attempts=5, timeout=None)
    parent = Policy(max_attempts=2, timeout=3.0, concurrency=4)
    merged = child.merged_over(parent)
    assert (merged.max_attempts, merged.timeout, merged.concurrency) == (5, 3.0, 4)
    assert merged.on_failure is None
    assert merged.resolved().on_failure == "emit"


def test_backoff_delays_grow_cap_and_jitter() -> None:
    flat = Policy(backoff=0.1, backoff_multiplier=2.0, backoff_max=0.5, jitter=0.0)
    assert [flat.delay_before(n) for n in (1, 2, 3, 4, 5)] == pytest.approx(
        [0.1, 0.2, 0.4, 0.5, 0.5]
    )
    jittery = Policy(backoff=1.0, backoff_multiplier=1.0, jitter=0.25)
    rng = random.Random(3)
    delays = [jittery.delay_before(1, rng) for _ in range(200)]
    assert all(0.75 <= d <= 1.25 for d in delays)
    assert max(delays) - min(delays) > 0.1  # it does spread
    assert Policy(backoff=0.0).delay_before(3) == 0.0


def test_retryable_errors() -> None:
    policy = Policy(retry_on=(ConnectionError,)).resolved()
    assert policy.is_retryable(ConnectionResetError())
    assert not policy.is_retryable(KeyError())
    assert not Policy(retry_on=(Exception,)).is_retryable(InvalidInputError("bad"))
    assert not Policy(retry_on=(InvalidInputError,)).is_retryable(InvalidInputError("bad"))
    assert DEFAULT_POLICY.is_retryable(RuntimeError())


# -- retries in a run -----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 8])
async def test_retries_with_exponential_backoff(concurrency: int) -> None:
    retried: list[ItemRetried] = []
    step = Scripted({1: [ConnectionError("a"), ConnectionError("b"), ConnectionError("c")]})
    policy = Policy(
        max_attempts=4,
        backoff=0.002,
        backoff_multiplier=2.0,
        jitter=0.0,
        concurrency=concurrency,
    )
    pipeline = Pipeline(step, policy=policy)
    pipeline.subscribe(lambda e: retried.append(e) if isinstance(e, ItemRetried) else None)
    result = await pipeline.run([0, 1, 2])
    assert list(result) == [0, 1, 2]
    assert step.attempts == {0: 1, 1: 4, 2: 1}
    assert [(e.attempt, e.delay) for e in retried] == [(1, 0.002), (2, 0.004), (3, 0.008)]
    assert all(e.item_id == retried[0].item_id and "ConnectionError" in e.error for e in retried)
    assert result.steps[step.name].retried == 3 and not result.failed


@pytest.mark.anyio
async def test_attempts_are_bounded_then_the_item_fails() -> None:
    step = Scripted({7: [OSError(str(n)) for n in range(10)]})
    result = await Pipeline(step, policy=Policy(max_attempts=3, backoff=0.0)).run([6, 7, 8])
    assert list(result) == [6, 8]
    assert step.attempts[7] == 3
    (failure,) = result.failed
    assert failure.item == 7 and failure.attempts == 3 and failure.message == "2"


@pytest.mark.anyio
async def test_retry_on_limits_what_is_retried() -> None:
    step = Scripted({1: [KeyError("k")], 2: [ConnectionError("c")]})
    policy = Policy(max_attempts=5, backoff=0.0, retry_on=(ConnectionError,))
    result = await Pipeline(step, policy=policy).run([1, 2])
    assert list(result) == [2]
    assert step.attempts == {1: 1, 2: 2}
    assert result.failed[0].error_type == "KeyError"


@pytest.mark.anyio
async def test_invalid_input_is_never_retried() -> None:
    step = Scripted({1: [InvalidInputError("wrong format")] * 5})
    policy = Policy(max_attempts=5, backoff=0.0, retry_on=(Exception,))
    result = await Pipeline(step, policy=policy).run([1])
    assert step.attempts == {1: 1}
    assert result.failed[0].error_type == "InvalidInputError"
    assert result.failed[0].attempts == 1


# -- timeouts -------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 16])
async def test_timeout_cancels_the_item_work(concurrency: int) -> None:
    step = Sleeper(lambda item, n: 0.5 if item == 2 else 0.001)
    policy = Policy(timeout=0.03, concurrency=concurrency)
    with anyio.fail_after(3):
        result = await Pipeline(step, policy=policy).run(range(5))
    assert list(result) == [0, 1, 3, 4]
    (failure,) = result.failed
    assert failure.item == 2 and failure.error_type == "StepTimeoutError"
    assert isinstance(failure.exception, StepTimeoutError)
    assert isinstance(failure.exception, TimeoutError)
    # cancelled before the run returned, not merely abandoned
    assert step.cancelled == [2] and 2 not in step.completed


@pytest.mark.anyio
async def test_timed_out_attempt_is_retried() -> None:
    step = Sleeper(lambda item, n: 0.5 if n == 1 else 0.0)
    policy = Policy(timeout=0.02, max_attempts=2, backoff=0.0, concurrency=4)
    with anyio.fail_after(3):
        result = await Pipeline(step, policy=policy).run([1, 2, 3])
    assert list(result) == [1, 2, 3]
    assert step.attempts == {1: 2, 2: 2, 3: 2}
    assert result.steps[step.name].retried == 3


# -- concurrency ---------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("limit", [1, 3, 16])
async def test_concurrency_limit_is_honoured(limit: int) -> None:
    rng = random.Random(limit)
    delays = [rng.random() * 0.003 for _ in range(120)]
    step = Sleeper(lambda item, n: delays[item], policy=Policy(concurrency=limit))
    assert await step.run(range(120)) == list(range(120))
    assert step.peak <= limit
    if limit > 1:
        assert step.peak > 1  # and actually used


# -- failure modes ------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 8])
async def test_on_failure_emit_goes_on(concurrency: int) -> None:
    step = Scripted({3: [ValueError("bad three")]})
    result = await Pipeline(step, policy=Policy(concurrency=concurrency)).run(range(6))
    assert list(result) == [0, 1, 2, 4, 5]
    assert [f.item for f in result.failed] == [3]


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 8])
async def test_on_failure_abort_raises_with_the_original_cause(concurrency: int) -> None:
    events: list[Event] = []
    original = ValueError("bad three")
    step = Scripted({3: [original]}, policy=Policy(on_failure="abort"))
    pipeline = Pipeline(step, policy=Policy(concurrency=concurrency), observers=[events.append])
    with pytest.raises(ItemProcessingError, match="bad three") as info:
        await pipeline.run(range(200))
    assert info.value.__cause__ is original
    assert type(events[-1]).__name__ == "RunFinished"
    assert events[-1].aborted  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_abort_from_a_sync_function_step() -> None:
    def explode(x: int) -> int:
        if x == 5:
            raise ArithmeticError("five")
        return x

    with pytest.raises(ItemProcessingError) as info:
        await FunctionStep(explode, policy=Policy(on_failure="abort"))(
            IterableSource(range(10))
        ).run()
    assert isinstance(info.value.__cause__, ArithmeticError)


# -- precedence ---------------------------------------------------------------------------


def test_effective_policy_precedence_step_then_pipeline_then_defaults() -> None:
    step = Scripted(policy=Policy(max_attempts=4, on_failure="abort"))
    context = ExecutionContext(policy=Policy(max_attempts=2, timeout=9.0))
    effective = step.effective_policy(context)
    assert effective.max_attempts == 4
    assert effective.on_failure == "abort"
    assert effective.timeout == 9.0
    assert effective.concurrency == DEFAULT_POLICY.concurrency
    assert Scripted().effective_policy(ExecutionContext()) == DEFAULT_POLICY


@pytest.mark.anyio
async def test_effective_policy_precedence_step_router_pipeline_defaults() -> None:
    seen: list[Policy] = []

    class Probe(PipelineStep[int]):
        async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
            seen.append(self.effective_policy(context))
            yield item

    child = Probe(policy=Policy(timeout=5.0))
    router = RoutedStep[int](policy=Policy(timeout=1.0, max_attempts=3, concurrency=2))
    router.default(child)
    await Pipeline(router, policy=Policy(max_attempts=2, jitter=0.0, on_failure="abort")).run([1])
    (policy,) = seen
    assert policy.timeout == 5.0  # step
    assert policy.max_attempts == 3 and policy.concurrency == 2  # router
    assert policy.jitter == 0.0 and policy.on_failure == "abort"  # pipeline
    assert policy.backoff == DEFAULT_POLICY.backoff  # defaults


@pytest.mark.anyio
@pytest.mark.parametrize("limit", [2, 16])
async def test_pool_ramps_up_to_its_limit(limit: int) -> None:
    """Items that wait for each other only finish if ``limit`` of them run at once."""
    state = {"in_flight": 0, "peak": 0}
    everyone = anyio.Event()

    async def gather(x: int) -> int:
        state["in_flight"] += 1
        state["peak"] = max(state["peak"], state["in_flight"])
        if state["in_flight"] == limit:
            everyone.set()
        with anyio.move_on_after(2):
            await everyone.wait()
        state["in_flight"] -= 1
        return x

    step = FunctionStep(gather, policy=Policy(concurrency=limit))
    with anyio.fail_after(5):
        assert await step.run(range(3 * limit)) == list(range(3 * limit))
    assert state["peak"] == limit
    assert everyone.is_set()
