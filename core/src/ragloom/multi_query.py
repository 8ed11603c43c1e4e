"""``MultiQueryRoutingPipeline``: Decompose -> Normalize -> Route, as a reusable block."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from enum import StrEnum
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from .component import Component
from .context import ExecutionContext
from .errors import ComponentTypeError, ConfigurationError, InvalidInputError, RagloomError
from .pipeline import Pipeline
from .policy import Policy
from .query import QueryTransformer, RouteDecision, Router
from .step import PipelineStep

__all__ = [
    "EmptyDecompositionError",
    "MultiQueryRoutingPipeline",
    "MultiQueryRoutingState",
    "OnEmptyDecompositionPolicy",
    "SubQueryRoute",
    "normalize_sub_queries",
]

log = logging.getLogger("ragloom.multi_query")


class OnEmptyDecompositionPolicy(StrEnum):
    """What happens when a decomposer returns no usable sub-query."""

    PASSTHROUGH = "passthrough"
    ERROR = "error"


class EmptyDecompositionError(RagloomError, ValueError):
    """The decomposer returned no usable sub-query under the ``error`` policy."""


class SubQueryRoute(BaseModel):
    """The route chosen for one sub-query, with the router's score and fallback reason."""

    model_config = ConfigDict(frozen=True)

    sub_query: str
    route: str
    score: float | None = None
    fallback_reason: str | None = None
    runner_up: str | None = None
    runner_up_score: float | None = None

    @classmethod
    def from_decision(cls, sub_query: str, decision: RouteDecision) -> SubQueryRoute:
        return cls.model_construct(
            sub_query=sub_query,
            route=decision.route,
            score=decision.score,
            fallback_reason=decision.fallback_reason,
            runner_up=decision.runner_up,
            runner_up_score=decision.runner_up_score,
        )


class MultiQueryRoutingState(BaseModel):
    """One query's journey: the original, its sub-queries (after the cap), the routing plan."""

    model_config = ConfigDict(frozen=True)

    query: str
    sub_queries: list[str] = Field(default_factory=list)
    routing_plan: list[SubQueryRoute] = Field(default_factory=list)


def normalize_sub_queries(
    query: str,
    sub_queries: list[str],
    *,
    max_sub_queries: int,
    on_empty: OnEmptyDecompositionPolicy,
) -> list[str]:
    """Strip, drop empties and exact duplicates (order kept), apply the empty policy, cap."""
    seen: set[str] = set()
    out: list[str] = []
    for raw in sub_queries:
        if not isinstance(raw, str):
            continue
        text = raw.strip()
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    if not out:
        if on_empty is OnEmptyDecompositionPolicy.ERROR:
            raise EmptyDecompositionError(f"decomposition of {query!r} produced no sub-query")
        return [query.strip()] if query.strip() else []
    if len(out) > max_sub_queries:
        log.info(
            "truncating %d sub-queries to max_sub_queries=%d for %r",
            len(out),
            max_sub_queries,
            query,
        )
        out = out[:max_sub_queries]
    return out


class _DecomposeStep(PipelineStep[Any]):
    event_name = "Decompose"
    output_model = MultiQueryRoutingState

    def __init__(self, decomposer: QueryTransformer, policy: Policy | None = None) -> None:
        super().__init__(policy=policy, name="Decompose")
        self.decomposer = decomposer
        self.awaits = decomposer.awaits  # type: ignore[misc]

    def config(self) -> Mapping[str, Any]:
        return {"decomposer": self.decomposer.config_hash}

    def validate_input(self, item: Any) -> None:
        if not isinstance(item, str | MultiQueryRoutingState):
            raise InvalidInputError(f"expected a query string, got {type(item).__name__}")

    async def _attempt(self, item: Any, context: ExecutionContext) -> list[Any]:
        self.validate_input(item)
        query = item if isinstance(item, str) else item.query
        subs = await self.decomposer.transform(query)
        if not isinstance(subs, list):
            raise ComponentTypeError(
                f"{type(self.decomposer).__name__}.transform returned {type(subs).__name__}, "
                "expected list[str]"
            )
        return [
            MultiQueryRoutingState(query=query, sub_queries=[s for s in subs if isinstance(s, str)])
        ]

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        for out in await self._attempt(item, context):
            yield out


class _NormalizeStep(PipelineStep[MultiQueryRoutingState]):
    event_name = "Normalize"
    output_model = MultiQueryRoutingState
    awaits = False

    def __init__(self, max_sub_queries: int, on_empty: OnEmptyDecompositionPolicy) -> None:
        super().__init__(name="Normalize")
        self.max_sub_queries = max_sub_queries
        self.on_empty = on_empty

    def config(self) -> Mapping[str, Any]:
        return {"max_sub_queries": self.max_sub_queries, "on_empty": self.on_empty.value}

    async def _attempt(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> list[MultiQueryRoutingState]:
        subs = normalize_sub_queries(
            item.query,
            item.sub_queries,
            max_sub_queries=self.max_sub_queries,
            on_empty=self.on_empty,
        )
        return [item.model_copy(update={"sub_queries": subs})]

    async def transform(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> AsyncIterator[MultiQueryRoutingState]:
        for out in await self._attempt(item, context):
            yield out


class _RouteStep(PipelineStep[MultiQueryRoutingState]):
    event_name = "Route"
    output_model = MultiQueryRoutingState

    def __init__(self, router: Router, policy: Policy | None = None) -> None:
        super().__init__(policy=policy, name="Route")
        self.router = router
        self.awaits = router.awaits  # type: ignore[misc]

    def config(self) -> Mapping[str, Any]:
        return {"router": self.router.config_hash}

    async def _attempt(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> list[MultiQueryRoutingState]:
        subs = item.sub_queries
        decide = self.router.decide
        decisions: list[RouteDecision | None] = [None] * len(subs)
        limit = self.effective_policy(context).concurrency or 1
        if len(subs) <= 1 or limit == 1 or not self.router.awaits:
            for i, sub in enumerate(subs):
                decisions[i] = await decide(sub)
        else:
            limiter = anyio.CapacityLimiter(limit)

            async def one(i: int, sub: str) -> None:
                async with limiter:
                    decisions[i] = await decide(sub)

            async with anyio.create_task_group() as tg:
                for i, sub in enumerate(subs):
                    tg.start_soon(one, i, sub)
        plan = [
            SubQueryRoute.from_decision(sub, d)
            for sub, d in zip(subs, decisions, strict=True)
            if d is not None
        ]
        return [item.model_copy(update={"routing_plan": plan})]

    async def transform(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> AsyncIterator[MultiQueryRoutingState]:
        for out in await self._attempt(item, context):
            yield out


class MultiQueryRoutingPipeline(Component):
    """Decompose a query into sub-queries, normalize them, and route each one.

    Args:
        decomposer: the :class:`QueryTransformer` that proposes sub-queries.
        router: the :class:`Router` that assigns each sub-query a route.
        max_sub_queries: at most this many sub-queries are routed (the rest are dropped,
            with a log line).
        on_empty_decomposition: ``"passthrough"`` routes the original query alone when the
            decomposer returns nothing usable; ``"error"`` fails that query with
            :class:`EmptyDecompositionError` (a ``ValueError``).
        policy: the pipeline policy of built pipelines (concurrency of queries and of
            sub-query routing, retries of decomposer and router calls).

    Raises:
        ValueError: ``max_sub_queries < 1`` or an unknown ``on_empty_decomposition``.
        TypeError: ``decomposer`` is not a ``QueryTransformer`` or ``router`` not a ``Router``.
    """

    step_id = "ragloom/multi-query-routing"

    def __init__(
        self,
        decomposer: QueryTransformer,
        router: Router,
        max_sub_queries: int = 4,
        on_empty_decomposition: OnEmptyDecompositionPolicy | str = (
            OnEmptyDecompositionPolicy.PASSTHROUGH
        ),
        *,
        policy: Policy | None = None,
    ) -> None:
        if not isinstance(decomposer, QueryTransformer):
            raise ComponentTypeError(
                f"decomposer must be a QueryTransformer, got {type(decomposer).__name__}"
            )
        if not isinstance(router, Router):
            raise ComponentTypeError(f"router must be a Router, got {type(router).__name__}")
        if isinstance(max_sub_queries, bool) or not isinstance(max_sub_queries, int):
            raise ConfigurationError(
                f"max_sub_queries must be an integer >= 1, got {max_sub_queries!r}"
            )
        if max_sub_queries < 1:
            raise ConfigurationError(f"max_sub_queries must be >= 1, got {max_sub_queries}")
        try:
            policy_value = OnEmptyDecompositionPolicy(on_empty_decomposition)
        except ValueError:
            valid = ", ".join(repr(p.value) for p in OnEmptyDecompositionPolicy)
            raise ConfigurationError(
                f"on_empty_decomposition must be one of {valid}, got {on_empty_decomposition!r}"
            ) from None
        self.decomposer = decomposer
        self.router = router
        self.max_sub_queries = max_sub_queries
        self.on_empty_decomposition = policy_value
        self.policy = policy

    def config(self) -> Mapping[str, Any]:
        return {
            "decomposer": self.decomposer.config_hash,
            "router": self.router.config_hash,
            "max_sub_queries": self.max_sub_queries,
            "on_empty_decomposition": self.on_empty_decomposition.value,
        }

    def build(self) -> Pipeline[MultiQueryRoutingState]:
        """A fresh pipeline (new step objects each call): Decompose -> Normalize -> Route.

        Run it with ``await pipeline.run(["q1", "q2"])``: one state per query, in order.
        """
        decompose = _DecomposeStep(self.decomposer)
        normalize = _NormalizeStep(self.max_sub_queries, self.on_empty_decomposition)(decompose)
        route = _RouteStep(self.router)(normalize)
        return Pipeline(route, policy=self.policy, name="MultiQueryRouting")

    async def plan(self, query: str) -> MultiQueryRoutingState:
        """Plan one query directly, raising its error (e.g. ``EmptyDecompositionError``)."""
        subs = await self.decomposer.transform(query)
        normalized = normalize_sub_queries(
            query,
            list(subs),
            max_sub_queries=self.max_sub_queries,
            on_empty=self.on_empty_decomposition,
        )
        state = MultiQueryRoutingState(query=query, sub_queries=normalized)
        step = _RouteStep(self.router, policy=self.policy)
        (routed,) = await step._attempt(state, ExecutionContext(policy=self.policy))
        return routed
