"""RoutedStep: fluent routes, first match wins, no silent drops, policy inheritance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from ragloom import (
    ComponentTypeError,
    ConfigurationError,
    ContentFormatFilter,
    Document,
    ExecutionContext,
    FunctionStep,
    InvalidInputError,
    ItemFailed,
    ItemProcessingError,
    IterableSource,
    MetadataFilter,
    Pipeline,
    PipelineStep,
    Policy,
    PredicateFilter,
    RoutedStep,
)


class Tag(PipelineStep[Any]):
    """Tags each item with its own label; records the policy it runs under."""

    def __init__(self, label: str, **kwargs: Any) -> None:
        super().__init__(name=label, **kwargs)
        self.label = label
        self.seen: list[Any] = []
        self.policies: list[Policy] = []

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        self.seen.append(item)
        self.policies.append(self.effective_policy(context))
        yield (self.label, item)


class Flaky(Tag):
    """Fails the first ``failures`` attempts of every item with a ``ConnectionError``."""

    def __init__(self, label: str, failures: int, **kwargs: Any) -> None:
        super().__init__(label, **kwargs)
        self.failures = failures
        self.attempts: dict[Any, int] = {}

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        n = self.attempts[item] = self.attempts.get(item, 0) + 1
        if n <= self.failures:
            raise ConnectionError(f"attempt {n} of {item!r}")
        yield (self.label, item)


class Slow(Tag):
    def __init__(self, label: str, seconds: float, **kwargs: Any) -> None:
        super().__init__(label, **kwargs)
        self.seconds = seconds
        self.finished: list[Any] = []
        self.cancelled: list[Any] = []

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        try:
            await anyio.sleep(self.seconds)
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(item)
            raise
        self.finished.append(item)
        yield (self.label, item)


def even() -> PredicateFilter[int]:
    return PredicateFilter(lambda x: x % 2 == 0)


def test_route_and_default_are_fluent_and_checked() -> None:
    router: RoutedStep[int] = RoutedStep()
    a, b = Tag("a"), Tag("b")
    assert router.route(even(), a) is router
    assert router.default(b) is router
    assert list(router.children) == [a, b]
    with pytest.raises(ConfigurationError, match="default"):
        router.default(Tag("c"))
    with pytest.raises(ComponentTypeError):
        router.route(lambda x: True, Tag("c"))  # type: ignore[arg-type]
    with pytest.raises(ComponentTypeError):
        router.route(even(), object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        router.route(even(), router)


@pytest.mark.anyio
async def test_first_matching_route_wins_and_default_takes_the_rest() -> None:
    first, second, rest = Tag("first"), Tag("second"), Tag("rest")
    router = (
        RoutedStep[int]()
        .route(PredicateFilter(lambda x: x % 3 == 0), first)
        .route(PredicateFilter(lambda x: x % 2 == 0), second)  # 0 and 6 also match here
        .default(rest)
    )
    out = await router(IterableSource(range(8))).run()
    assert out == [
        ("first", 0),
        ("rest", 1),
        ("second", 2),
        ("first", 3),
        ("second", 4),
        ("rest", 5),
        ("first", 6),
        ("rest", 7),
    ]
    assert first.seen == [0, 3, 6] and second.seen == [2, 4] and rest.seen == [1, 5, 7]
    assert router.select(9) is first and router.select(1) is rest


@pytest.mark.anyio
async def test_unmatched_item_without_default_is_an_item_failed_naming_it() -> None:
    events: list[ItemFailed] = []
    docs = [
        Document(id="keep-1", content="a", content_format="markdown"),
        Document(id="orphan-7", content="b", content_format="html"),
        Document(id="keep-2", content="c", content_format="markdown"),
    ]
    router = RoutedStep[Document]().route(
        ContentFormatFilter(include_formats=["markdown"]), FunctionStep(lambda d: d.id)
    )
    pipeline = Pipeline(
        router, observers=[lambda e: events.append(e) if isinstance(e, ItemFailed) else None]
    )
    result = await pipeline.run(docs)
    assert list(result) == ["keep-1", "keep-2"]
    assert len(result.failed) == 1 and events == result.failed
    failure = result.failed[0]
    assert failure.item_id == "orphan-7"
    assert "orphan-7" in failure.message
    assert failure.item is docs[1]
    assert failure.error_type == "UnroutedItemError"
    assert isinstance(failure.exception, InvalidInputError)
    assert result.steps[router.name].failed == 1


@pytest.mark.anyio
async def test_unrouted_items_are_never_retried() -> None:
    router = RoutedStep[int](policy=Policy(max_attempts=5, backoff=0)).route(even(), Tag("a"))
    result = await Pipeline(router).run([1, 2])
    assert list(result) == [("a", 2)]
    assert result.failed[0].attempts <= 1
    assert result.steps[router.name].retried == 0


@pytest.mark.anyio
async def test_child_without_policy_inherits_router_effective_policy_field_by_field() -> None:
    child = Tag("child")
    router = RoutedStep[int](policy=Policy(max_attempts=4, backoff=0.001)).default(child)
    pipeline = Pipeline(router, policy=Policy(timeout=7.0, max_attempts=2, on_failure="emit"))
    await pipeline.run([1])
    (policy,) = child.policies
    assert policy.max_attempts == 4  # router beats pipeline
    assert policy.backoff == 0.001  # router
    assert policy.timeout == 7.0  # pipeline, the router leaves it unset
    assert policy.concurrency == 8 and policy.jitter == 0.1  # defaults


@pytest.mark.anyio
async def test_child_without_policy_is_retried_under_the_router_policy() -> None:
    child = Flaky("flaky", failures=2)
    router = RoutedStep[int](policy=Policy(max_attempts=3, backoff=0.0)).default(child)
    result = await Pipeline(router).run([1, 2])
    assert list(result) == [("flaky", 1), ("flaky", 2)]
    assert child.attempts == {1: 3, 2: 3}
    assert result.steps[router.name].retried == 4


@pytest.mark.anyio
async def test_child_own_policy_applies_to_items_routed_to_it() -> None:
    patient = Flaky("patient", failures=2, policy=Policy(max_attempts=3, backoff=0.0))
    strict = Flaky("strict", failures=2)  # inherits the router's single attempt
    router = RoutedStep[int](policy=Policy(max_attempts=1)).route(even(), patient).default(strict)
    result = await Pipeline(router).run([0, 1, 2, 3])
    assert list(result) == [("patient", 0), ("patient", 2)]
    assert patient.attempts == {0: 3, 2: 3}
    assert strict.attempts == {1: 1, 3: 1}
    assert sorted(f.item for f in result.failed) == [1, 3]
    assert {f.error_type for f in result.failed} == {"ConnectionError"}


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [1, 4])
async def test_child_own_timeout_applies_to_items_routed_to_it(concurrency: int) -> None:
    hasty = Slow("hasty", 0.5, policy=Policy(timeout=0.02))
    relaxed = Slow("relaxed", 0.03)  # no timeout of its own, none inherited
    router = (
        RoutedStep[int](policy=Policy(concurrency=concurrency))
        .route(even(), hasty)
        .default(relaxed)
    )
    with anyio.fail_after(5):
        result = await Pipeline(router).run([0, 1])
    assert list(result) == [("relaxed", 1)]
    assert [f.error_type for f in result.failed] == ["StepTimeoutError"]
    # the work was cancelled before the run returned, not left running
    assert hasty.cancelled == [0] and hasty.finished == []


@pytest.mark.anyio
async def test_child_on_failure_abort_applies_to_its_items() -> None:
    strict = Flaky("strict", failures=10, policy=Policy(on_failure="abort"))
    lenient = Flaky("lenient", failures=10)
    router = RoutedStep[int]().route(even(), strict).default(lenient)
    lenient_result = await Pipeline(router).run([1, 3])
    assert len(lenient_result.failed) == 2
    with pytest.raises(ItemProcessingError) as info:
        await Pipeline(router).run([1, 2])
    assert isinstance(info.value.__cause__, ConnectionError)


@pytest.mark.anyio
async def test_validate_output_is_forwarded_to_the_selected_child() -> None:
    class Picky(Tag):
        async def validate_output(
            self, item: Any, produced: list[Any], context: ExecutionContext
        ) -> None:
            if item % 4 == 0:
                raise ValueError(f"{self.label} rejects what {item} produced")

    picky, easy = Picky("picky"), Tag("easy")
    router = RoutedStep[int]().route(even(), picky).default(easy)
    result = await Pipeline(router).run(range(6))
    assert list(result) == [("easy", 1), ("picky", 2), ("easy", 3), ("easy", 5)]
    assert [f.item for f in result.failed] == [0, 4]
    assert "picky rejects" in result.failed[0].message

    # and called directly, the router forwards to whichever child the item selects
    with pytest.raises(ValueError, match="picky"):
        await router.validate_output(8, [("picky", 8)], ExecutionContext())
    await router.validate_output(9, [("easy", 9)], ExecutionContext())


@pytest.mark.anyio
async def test_validate_input_is_forwarded_to_the_selected_child() -> None:
    class OnlyPositive(Tag):
        def validate_input(self, item: Any) -> None:
            if item < 0:
                raise InvalidInputError(f"{item} is negative")

    router = RoutedStep[int]().route(even(), OnlyPositive("pos")).default(Tag("any"))
    with pytest.raises(InvalidInputError):
        router.validate_input(-2)
    router.validate_input(-1)
    result = await Pipeline(router).run([-2, -1, 2])
    assert list(result) == [("any", -1), ("pos", 2)]
    assert result.failed[0].error_type == "InvalidInputError"


@pytest.mark.anyio
async def test_nested_routers_and_child_stats() -> None:
    inner_a, inner_b, outer_default = Tag("inner-a"), Tag("inner-b"), Tag("outer")
    inner = (
        RoutedStep[int](name="inner", policy=Policy(max_attempts=2))
        .route(PredicateFilter(lambda x: x % 4 == 0), inner_a)
        .default(inner_b)
    )
    outer = RoutedStep[int](name="outer-router").route(even(), inner).default(outer_default)
    result = await Pipeline(outer).run(range(6))
    assert list(result) == [
        ("inner-a", 0),
        ("outer", 1),
        ("inner-b", 2),
        ("outer", 3),
        ("inner-a", 4),
        ("outer", 5),
    ]
    assert inner_a.policies[0].max_attempts == 2  # the nearest enclosing router's policy
    assert outer_default.policies[0].max_attempts == 1
    steps = result.steps
    assert steps["outer-router"].items_in == 6 and steps["outer-router"].items_out == 6
    assert steps["inner-a"].items_in == 2 and steps["outer"].items_in == 3


def test_routing_requires_content_follows_filters() -> None:
    by_format = (
        RoutedStep[Document]()
        .route(ContentFormatFilter(include_formats=["md"]), Tag("a"))
        .route(MetadataFilter(lang="en"), Tag("b"))
    )
    assert by_format.routing_requires_content is False
    by_content = by_format.route(PredicateFilter(lambda d: "x" in d.content), Tag("c"))
    assert by_content.routing_requires_content is True


def test_router_config_hash_changes_with_routes() -> None:
    def build(fmt: str) -> RoutedStep[Document]:
        return RoutedStep[Document]().route(
            ContentFormatFilter(include_formats=[fmt]), FunctionStep(len)
        )

    assert build("md").config_hash == build("md").config_hash
    assert build("md").config_hash != build("html").config_hash
