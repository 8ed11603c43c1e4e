"""Pipeline: RunResult, per-step counts, feeding inputs, streaming, graph walking."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from ragloom import (
    ComponentTypeError,
    ConfigurationError,
    ExecutionContext,
    FunctionStep,
    ItemFailed,
    IterableSource,
    Pipeline,
    PipelineStep,
    Policy,
    PredicateFilter,
    RoutedStep,
    RunResult,
)


class Split(PipelineStep[str]):
    """Splits a string into words; fails on the word "bad"."""

    async def transform(self, item: str, context: ExecutionContext) -> AsyncIterator[str]:
        if "bad" in item.split():
            raise ValueError(f"bad line: {item!r}")
        for word in item.split():
            yield word


def chain(lines: list[str] | None = None) -> tuple[Pipeline[str], PipelineStep[Any]]:
    split = Split(name="split")
    upper = FunctionStep(str.upper, name="upper")(split)
    if lines is not None:
        split(IterableSource(lines, name="lines"))
    return Pipeline(upper), split


@pytest.mark.anyio
async def test_run_returns_outputs_with_failures_and_counts() -> None:
    pipeline, _ = chain(["a b", "bad line", "", "c"])
    result = await pipeline.run()
    assert isinstance(result, RunResult) and isinstance(result, list)
    assert result == ["A", "B", "C"] and result.outputs == ["A", "B", "C"]
    assert [type(f) for f in result.failed] == [ItemFailed]
    assert result.failed[0].item == "bad line" and result.failed[0].item_id == "bad line"
    split, upper = result.steps["split"], result.steps["upper"]
    assert (split.items_in, split.items_out, split.failed, split.retried) == (4, 3, 1, 0)
    assert (upper.items_in, upper.items_out, upper.failed) == (3, 3, 0)
    assert result.steps["lines"].items_out == 4
    assert result.seconds >= 0


@pytest.mark.anyio
async def test_run_inputs_feed_a_root_without_source() -> None:
    pipeline, _ = chain()
    assert await pipeline.run(["x y", "z"]) == ["X", "Y", "Z"]
    # the same pipeline runs again with other inputs: nothing is left bound
    assert await pipeline.run(["q"]) == ["Q"]


@pytest.mark.anyio
async def test_run_inputs_may_be_async() -> None:
    async def lines() -> AsyncIterator[str]:
        for line in ["one two", "three"]:
            await anyio.sleep(0)
            yield line

    pipeline, _ = chain()
    assert await pipeline.run(lines()) == ["ONE", "TWO", "THREE"]


@pytest.mark.anyio
async def test_missing_or_doubled_input_is_a_configuration_error() -> None:
    unfed, _ = chain()
    with pytest.raises(ConfigurationError, match="inputs"):
        await unfed.run()
    sourced, _ = chain(["a"])
    with pytest.raises(ConfigurationError, match="source"):
        await sourced.run(["b"])


def test_pipeline_needs_a_step() -> None:
    with pytest.raises(ComponentTypeError):
        Pipeline(lambda x: x)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_stream_yields_in_order_and_routes_failures_to_observers() -> None:
    failed: list[ItemFailed] = []
    pipeline, _ = chain(["a b", "bad", "c"])
    pipeline.subscribe(lambda e: failed.append(e) if isinstance(e, ItemFailed) else None)
    assert [w async for w in pipeline.stream()] == ["A", "B", "C"]
    assert [f.item for f in failed] == ["bad"]


@pytest.mark.anyio
async def test_stopping_a_stream_early_is_clean() -> None:
    async def slow(x: int) -> int:
        await anyio.lowlevel.checkpoint()
        return x

    pipeline = Pipeline(FunctionStep(slow, policy=Policy(concurrency=4)))
    stream = pipeline.stream(range(10_000))
    got = []
    async for x in stream:
        got.append(x)
        if len(got) == 5:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert got == [0, 1, 2, 3, 4]


def test_steps_and_walk() -> None:
    a, b = FunctionStep(str, name="a"), FunctionStep(repr, name="b")
    router = RoutedStep[Any](name="router").route(PredicateFilter(bool), a).default(b)
    source = IterableSource([1], name="src")
    terminal = FunctionStep(len, name="len")(router(source))
    pipeline = Pipeline(terminal)
    assert [s.name for s in pipeline.steps()] == ["src", "router", "len"]
    assert [s.name for s in pipeline.walk()] == ["src", "router", "a", "b", "len"]
    assert pipeline.root is source and pipeline.name == "len"


@pytest.mark.anyio
async def test_repeated_step_names_get_distinct_counts() -> None:
    first = FunctionStep(lambda x: [x, x], name="dup")
    second = FunctionStep(lambda x: x, name="dup")(first)
    result = await Pipeline(second).run([1, 2])
    assert sorted(result.steps) == ["IterableSource", "dup", "dup#2"]
    assert result.steps["dup"].items_out == 4 and result.steps["dup#2"].items_in == 4


@pytest.mark.anyio
async def test_pipeline_policy_is_inherited_by_steps() -> None:
    tries: dict[int, int] = {}

    async def flaky(x: int) -> int:
        tries[x] = tries.get(x, 0) + 1
        if tries[x] < 3:
            raise ConnectionError("again")
        return x

    result = await Pipeline(FunctionStep(flaky), policy=Policy(max_attempts=3, backoff=0)).run(
        [1, 2]
    )
    assert list(result) == [1, 2] and tries == {1: 3, 2: 3}
    assert result.steps["flaky"].retried == 4


def test_run_sync() -> None:
    pipeline, _ = chain(["sync run"])
    assert pipeline.run_sync() == ["SYNC", "RUN"]


def test_run_result_repr_is_bounded() -> None:
    # asyncio.run (3.11) reprs the main task's result when it restores its SIGINT handler:
    # a full repr would cost time proportional to the outputs on every run.
    assert "2 outputs" in repr(RunResult([1, 2]))
    assert len(repr(RunResult(range(100_000)))) < 200


def _pooled_chain(block_after: int, reached: anyio.Event) -> Pipeline[int]:
    """Three asynchronous steps on worker pools, then a synchronous one; the third stops
    for good after ``block_after`` items (``reached`` is set then)."""
    seen = 0

    async def passing(x: int) -> int:
        await anyio.lowlevel.checkpoint()
        return x

    async def blocking(x: int) -> int:
        nonlocal seen
        seen += 1
        if seen > block_after:
            reached.set()
            await anyio.Event().wait()
        return x

    pool = Policy(concurrency=4)
    first = FunctionStep(passing, name="first", policy=pool)
    second = FunctionStep(passing, name="second", policy=pool)(first)
    third = FunctionStep(blocking, name="blocking", policy=pool)(second)
    return Pipeline(FunctionStep(int, name="last")(third))  # a plain synchronous step


@pytest.mark.anyio
async def test_cancelling_a_run_of_pooled_steps_unwinds_every_pool() -> None:
    # The cancellation lands while the upstream pools are suspended handing out windows: each
    # pool's workers must stop and the run must end as cancelled, with no other error.
    reached = anyio.Event()
    pipeline = _pooled_chain(300, reached)
    got: list[int] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_blocked() -> None:
                await reached.wait()
                scope.cancel()

            tg.start_soon(cancel_when_blocked)
            stream = pipeline.stream(range(2_000))
            try:
                async for x in stream:
                    got.append(x)
            finally:
                with anyio.CancelScope(shield=True):
                    await stream.aclose()  # type: ignore[attr-defined]
    assert scope.cancelled_caught
    assert got == list(range(len(got)))


@pytest.mark.anyio
async def test_stopping_early_after_pooled_steps_closes_every_pool() -> None:
    pipeline = _pooled_chain(10**9, anyio.Event())
    stream = pipeline.stream(range(5_000))
    got: list[int] = []
    async for x in stream:
        got.append(x)
        if len(got) == 700:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert got == list(range(700))
