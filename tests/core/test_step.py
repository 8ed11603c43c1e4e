"""PipelineStep: binding, evaluation, transform fan-out, ordering, config hashes, sources."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import pytest
from ragloom import (
    ComponentTypeError,
    ConfigurationError,
    ExecutionContext,
    FunctionStep,
    InvalidInputError,
    IterableSource,
    Pipeline,
    PipelineStep,
    Policy,
)


class Repeat(PipelineStep[int]):
    """Yields each item ``times`` times (0 drops it)."""

    def __init__(self, times: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.times = times

    def config(self) -> Mapping[str, Any]:
        return {"times": self.times}

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        for _ in range(self.times):
            yield item


class FanOut(PipelineStep[int]):
    """Yields ``item % 3`` copies tagged with their index: 0, 1 or 2 outputs per item."""

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[Any]:
        for k in range(item % 3):
            yield (item, k)


class Jitter(PipelineStep[int]):
    """Yields to the event loop a random number of times per item (so items finish out of
    order, with no clock involved), tracking how many items are in flight."""

    def __init__(self, seed: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rng = random.Random(seed)
        self.in_flight = 0
        self.max_in_flight = 0

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            for _ in range(self.rng.randrange(1, 8)):
                await anyio.lowlevel.checkpoint()
        finally:
            self.in_flight -= 1
        yield item


def test_binding_returns_the_step_and_sets_upstream() -> None:
    source = IterableSource([1, 2])
    step = Repeat()
    assert step.upstream is None
    bound = step(source)
    assert bound is step
    assert step.upstream is source
    later = Repeat(2)
    assert later(step) is later and later.upstream is step


def test_binding_rejects_non_steps_and_cycles() -> None:
    step = Repeat()
    with pytest.raises(ComponentTypeError):
        step([1, 2, 3])  # type: ignore[arg-type]
    a, b = Repeat(), Repeat()
    b(a)
    with pytest.raises(ConfigurationError, match="cycle"):
        a(b)
    with pytest.raises(ConfigurationError, match="cycle"):
        a(a)


def test_a_source_takes_no_upstream() -> None:
    with pytest.raises(ConfigurationError):
        IterableSource([1])(IterableSource([2]))


@pytest.mark.anyio
async def test_evaluate_without_upstream_raises_configuration_error() -> None:
    step = Repeat()
    with pytest.raises(ConfigurationError, match="upstream"):
        async for _ in step.evaluate(ExecutionContext()):
            pass
    with pytest.raises(ConfigurationError):
        await step.run()


@pytest.mark.anyio
async def test_evaluate_streams_outputs() -> None:
    step = Repeat(2)(IterableSource(range(3)))
    seen = [x async for x in step.evaluate(ExecutionContext())]
    assert seen == [0, 0, 1, 1, 2, 2]


@pytest.mark.anyio
async def test_transform_yields_zero_or_more_per_item() -> None:
    out = await FanOut()(IterableSource(range(7))).run()
    assert out == [(1, 0), (2, 0), (2, 1), (4, 0), (5, 0), (5, 1)]
    assert await Repeat(0)(IterableSource(range(5))).run() == []


@pytest.mark.anyio
async def test_run_standalone_chain() -> None:
    source = IterableSource(["a", "b"])
    upper = FunctionStep(str.upper)(source)
    doubled = FunctionStep(lambda s: [s, s + s])(upper)
    assert await doubled.run() == ["A", "AA", "B", "BB"]


@pytest.mark.anyio
async def test_run_feeds_inputs_to_an_unbound_root() -> None:
    assert await Repeat(1).run([3, 1, 2]) == [3, 1, 2]


@pytest.mark.anyio
async def test_function_step_none_drops_and_async_functions_work() -> None:
    async def half(x: int) -> int | None:
        await anyio.sleep(0)
        return x // 2 if x % 2 == 0 else None

    assert await FunctionStep(half)(IterableSource(range(6))).run() == [0, 1, 2]
    with pytest.raises(ComponentTypeError):
        FunctionStep(42)  # type: ignore[arg-type]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_output_order_is_input_order_under_concurrency(seed: int) -> None:
    first = Jitter(seed, policy=Policy(concurrency=16))(IterableSource(range(300)))
    second = FanOut()(first)
    third = Jitter(seed + 100, policy=Policy(concurrency=16))(second)
    out = await third.run()
    expected = [(i, k) for i in range(300) for k in range(i % 3)]
    assert out == expected
    # it did run concurrently, within the limit
    assert 1 < first.max_in_flight <= 16
    assert 1 < third.max_in_flight <= 16


@pytest.mark.anyio
async def test_async_iterable_source() -> None:
    async def produce() -> AsyncIterator[int]:
        for i in range(5):
            await anyio.sleep(0)
            yield i

    assert await Repeat(1)(IterableSource(produce())).run() == [0, 1, 2, 3, 4]


@pytest.mark.anyio
async def test_iterable_source_streams_lazily_and_in_windows() -> None:
    pulled: list[int] = []

    def produce() -> Any:
        for i in range(1000):
            pulled.append(i)
            yield i

    step = Repeat(1)(IterableSource(produce(), window=10))
    stream = step.evaluate(ExecutionContext())
    first = await stream.__anext__()
    await stream.aclose()
    assert first == 0
    assert len(pulled) < 1000  # nothing forced the whole iterable to be read up front


def test_iterable_source_rejects_bad_input() -> None:
    with pytest.raises(ComponentTypeError):
        IterableSource(5)  # type: ignore[arg-type]
    with pytest.raises(ComponentTypeError):
        IterableSource("abc")  # a str is almost certainly a mistake
    with pytest.raises(ConfigurationError):
        IterableSource([1], window=0)


def test_constructor_rejects_wrong_kinds() -> None:
    with pytest.raises(ComponentTypeError):
        Repeat(policy={"max_attempts": 2})  # type: ignore[arg-type]
    with pytest.raises(ComponentTypeError):
        Repeat(cache="memory")  # type: ignore[arg-type]


def test_config_hash_is_stable_and_config_sensitive() -> None:
    assert Repeat(2).config_hash == Repeat(2).config_hash
    assert Repeat(2).config_hash != Repeat(3).config_hash
    # not a function of the instance's policy or name: only identity and config
    assert Repeat(2, name="x", policy=Policy(max_attempts=3)).config_hash == Repeat(2).config_hash


def test_config_hash_depends_on_declared_identity() -> None:
    class A(Repeat):
        step_id = "tests/same"

    class B(Repeat):
        step_id = "tests/same"

    class C(Repeat):
        step_id = "tests/other"

    assert A(1).config_hash == B(1).config_hash
    assert A(1).config_hash != C(1).config_hash


def test_config_hash_is_stable_across_processes() -> None:
    code = (
        "from ragloom import FunctionStep, Policy\n"
        "from ragloom.filters import ContentFormatFilter\n"
        "from ragloom import RoutedStep\n"
        "r = RoutedStep().route(ContentFormatFilter(include_formats=['md', 'x-custom']), "
        "FunctionStep(len)).default(FunctionStep(str))\n"
        "print(r.config_hash)\n"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(runs) == 1 and len(next(iter(runs))) == 32


@pytest.mark.anyio
async def test_pipeline_and_step_run_agree() -> None:
    step = Repeat(2)(IterableSource(range(4)))
    assert list(await Pipeline(step).run()) == await step.run()


# -- hooks are honoured on every engine path (inline, worker pool, sync and async work) ------


class CheckedFunction(FunctionStep):
    """A function step whose hooks reject negative inputs and outputs above 100."""

    def validate_input(self, item: Any) -> None:
        if item < 0:
            raise InvalidInputError(f"{item} is negative")

    async def validate_output(self, item: Any, produced: list[Any], context: Any) -> None:
        if any(out > 100 for out in produced):
            raise ValueError(f"{item} produced too much")


class CheckedInputOnly(FunctionStep):
    def validate_input(self, item: Any) -> None:
        if item < 0:
            raise InvalidInputError(f"{item} is negative")


class CheckedTransform(PipelineStep[int]):
    def validate_input(self, item: int) -> None:
        if item < 0:
            raise InvalidInputError(f"{item} is negative")

    async def validate_output(self, item: int, produced: list[int], context: Any) -> None:
        if any(out > 100 for out in produced):
            raise ValueError(f"{item} produced too much")

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        yield item * 10


async def times_ten(x: int) -> int:
    return x * 10


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 16])
@pytest.mark.parametrize(
    "make",
    [
        lambda: CheckedFunction(lambda x: x * 10),
        lambda: CheckedFunction(times_ten),
        lambda: CheckedTransform(),
    ],
    ids=["sync-fn", "async-fn", "transform"],
)
async def test_validation_hooks_apply_on_every_path(make: Any, concurrency: int) -> None:
    step = make()
    result = await Pipeline(step, policy=Policy(concurrency=concurrency)).run([1, -2, 30, 4])
    assert list(result) == [10, 40]
    assert [(f.item, f.error_type) for f in result.failed] == [
        (-2, "InvalidInputError"),
        (30, "ValueError"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("fn", [lambda x: x * 10, times_ten], ids=["sync", "async"])
async def test_validate_input_alone_applies(fn: Any) -> None:
    result = await Pipeline(CheckedInputOnly(fn)).run([1, -2, 3])
    assert list(result) == [10, 30]
    assert [f.item for f in result.failed] == [-2]


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 16])
async def test_function_results_none_list_and_errors(concurrency: int) -> None:
    class Pair(list[int]):
        pass

    def shape(x: int) -> Any:
        if x % 4 == 0:
            return None
        if x % 4 == 1:
            return Pair([x, -x])  # a list subclass is a list of outputs
        if x % 4 == 2:
            raise KeyError(x)
        return x

    async def ashape(x: int) -> Any:
        return shape(x)

    for fn in (shape, ashape):
        step = FunctionStep(fn, policy=Policy(concurrency=concurrency))
        result = await Pipeline(step).run(range(8))
        assert list(result) == [1, -1, 3, 5, -5, 7]
        assert [f.item for f in result.failed] == [2, 6]
        stats = result.steps[step.name]
        assert (stats.items_in, stats.items_out, stats.failed) == (8, 6, 2)
