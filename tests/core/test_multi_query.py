"""MultiQueryRoutingPipeline: spec 000's behaviours one by one (issue 6)."""

from __future__ import annotations

import logging

import anyio
import pytest
from ragloom import (
    ConfigurationError,
    MultiQueryRoutingPipeline,
    MultiQueryRoutingState,
    OnEmptyDecompositionPolicy,
    Pipeline,
    Policy,
    QueryTransformer,
    RouteDecision,
    Router,
    SubQueryRoute,
)
from ragloom.multi_query import EmptyDecompositionError

pytestmark = pytest.mark.anyio


class Split(QueryTransformer):
    step_id = "tests/split"

    def __init__(self, fixed: list[str] | None = None) -> None:
        self.fixed = fixed

    async def transform(self, query: str) -> list[str]:
        return list(self.fixed) if self.fixed is not None else query.split(";")


class ByWord(Router):
    step_id = "tests/by-word"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.in_flight = 0
        self.peak = 0

    @property
    def valid_routes(self) -> tuple[str, ...]:
        return ("cats", "dogs", "other")

    @property
    def default_route(self) -> str:
        return "other"

    async def route(self, query: str) -> RouteDecision:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.delay:
                await anyio.sleep(self.delay)
            if "cat" in query:
                return RouteDecision(route="cats", score=0.9)
            if "dog" in query:
                return RouteDecision(route="dogs", score=0.8)
            if "bad" in query:
                return RouteDecision(route="birds", score=0.1)
            return self.fallback("no animal", score=0.0)
        finally:
            self.in_flight -= 1


def test_validation() -> None:
    with pytest.raises(ValueError):
        MultiQueryRoutingPipeline(Split(), ByWord(), max_sub_queries=0)
    with pytest.raises(ValueError):
        MultiQueryRoutingPipeline(Split(), ByWord(), on_empty_decomposition="ignore")
    with pytest.raises(TypeError):
        MultiQueryRoutingPipeline(ByWord(), ByWord())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MultiQueryRoutingPipeline(Split(), Split())  # type: ignore[arg-type]
    assert issubclass(ConfigurationError, ValueError)
    block = MultiQueryRoutingPipeline(Split(), ByWord(), on_empty_decomposition="error")
    assert block.on_empty_decomposition is OnEmptyDecompositionPolicy.ERROR
    assert OnEmptyDecompositionPolicy.PASSTHROUGH.value == "passthrough"


async def test_decompose_normalize_route() -> None:
    block = MultiQueryRoutingPipeline(Split(), ByWord())
    (state,) = await block.build().run(["  a cat ; ; a dog;a cat;the sky  "])
    assert isinstance(state, MultiQueryRoutingState)
    assert state.query == "  a cat ; ; a dog;a cat;the sky  "
    assert state.sub_queries == ["a cat", "a dog", "the sky"]
    assert state.routing_plan == [
        SubQueryRoute(sub_query="a cat", route="cats", score=0.9),
        SubQueryRoute(sub_query="a dog", route="dogs", score=0.8),
        SubQueryRoute(sub_query="the sky", route="other", score=0.0, fallback_reason="no animal"),
    ]


async def test_invalid_route_answer_falls_back_with_reason() -> None:
    (state,) = await MultiQueryRoutingPipeline(Split(), ByWord()).build().run(["bad"])
    (route,) = state.routing_plan
    assert route.route == "other" and route.fallback_reason == "invalid route 'birds'"


async def test_passthrough_on_empty() -> None:
    block = MultiQueryRoutingPipeline(Split(["", "  "]), ByWord())
    (state,) = await block.build().run(["my cat"])
    assert state.sub_queries == ["my cat"]
    assert state.routing_plan[0].route == "cats"


async def test_error_on_empty() -> None:
    block = MultiQueryRoutingPipeline(Split([]), ByWord(), on_empty_decomposition="error")
    result = await block.build().run(["my cat", "my dog"])
    assert list(result) == []
    assert [f.error_type for f in result.failed] == ["EmptyDecompositionError"] * 2
    with pytest.raises(ValueError):
        await block.plan("my cat")
    assert issubclass(EmptyDecompositionError, ValueError)


async def test_cap_at_max_sub_queries_logs(caplog: pytest.LogCaptureFixture) -> None:
    block = MultiQueryRoutingPipeline(Split(), ByWord(), max_sub_queries=2)
    with caplog.at_level(logging.INFO, logger="ragloom.multi_query"):
        (state,) = await block.build().run(["cat 1;cat 2;cat 3;cat 4"])
    assert state.sub_queries == ["cat 1", "cat 2"]
    assert len(state.routing_plan) == 2
    assert "truncating 4 sub-queries to max_sub_queries=2" in caplog.text


async def test_build_returns_a_fresh_pipeline() -> None:
    block = MultiQueryRoutingPipeline(Split(), ByWord())
    p1, p2 = block.build(), block.build()
    assert isinstance(p1, Pipeline) and p1 is not p2
    assert not set(map(id, p1.steps())) & set(map(id, p2.steps()))
    assert [s.event_name for s in p1.steps()] == ["Decompose", "Normalize", "Route"]


async def test_many_queries_stream_concurrently_in_order() -> None:
    router = ByWord(delay=0.02)
    block = MultiQueryRoutingPipeline(Split(), router, policy=Policy(concurrency=4))
    queries = [f"cat {i};dog {i};sky {i}" for i in range(20)]
    with anyio.fail_after(5):
        result = await block.build().run(queries)
    assert [s.query for s in result] == queries
    for i, state in enumerate(result):
        assert [r.route for r in state.routing_plan] == ["cats", "dogs", "other"]
        assert state.sub_queries[0] == f"cat {i}"
    assert 1 < router.peak <= 4 * 4  # queries and sub-queries both bounded by the limit


async def test_sub_queries_routed_concurrently_under_limit() -> None:
    router = ByWord(delay=0.05)
    block = MultiQueryRoutingPipeline(
        Split(), router, max_sub_queries=8, policy=Policy(concurrency=2)
    )
    (state,) = await block.build().run([";".join(f"cat {i}" for i in range(8))])
    assert [r.sub_query for r in state.routing_plan] == [f"cat {i}" for i in range(8)]
    assert router.peak == 2  # two in flight at once (concurrent), never more (bounded)


async def test_state_models_round_trip_json() -> None:
    (state,) = await MultiQueryRoutingPipeline(Split(), ByWord()).build().run(["a cat;x"])
    again = MultiQueryRoutingState.model_validate_json(state.model_dump_json())
    assert again == state


async def test_decide_surfaces_configuration_errors_but_not_runtime_ones() -> None:
    class Misconfigured(ByWord):
        async def route(self, query: str) -> RouteDecision:
            raise ConfigurationError("no LM configured")

    class Flaky(ByWord):
        async def route(self, query: str) -> RouteDecision:
            raise ConnectionError("backend down")

    with pytest.raises(ConfigurationError):
        await Misconfigured().decide("cat")
    decision = await Flaky().decide("cat")
    assert decision.route == "other"
    assert decision.fallback_reason == "router error: ConnectionError: backend down"


class SyncSplit(QueryTransformer):
    step_id = "tests/sync-split"

    def transform_sync(self, query: str) -> list[str]:
        return query.split(";")


@pytest.mark.parametrize("decomposer", [Split, SyncSplit], ids=["async", "sync"])
def test_a_blank_question_fails_the_same_way_everywhere(decomposer) -> None:
    """``build().run_sync``, ``plan_sync`` and the CLI all refuse a blank question: in a run it
    is an ItemFailed (the other questions go on), never an empty plan."""
    from ragloom import InvalidInputError

    block = MultiQueryRoutingPipeline(decomposer(), ByWord())
    result = block.build().run_sync(["   ", "my cat", "\t\n"])
    assert [state.query for state in result] == ["my cat"]
    assert [f.error_type for f in result.failed] == ["InvalidInputError"] * 2
    assert all("blank" in f.message for f in result.failed)
    with pytest.raises(InvalidInputError, match="blank"):
        block.plan_sync("   ")
