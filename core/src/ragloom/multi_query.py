"""``MultiQueryRoutingPipeline``: Decompose -> Normalize -> Route, as a reusable block."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from ._inputs import wrong_item
from .component import Component
from .context import ExecutionContext
from .errors import ComponentTypeError, ConfigurationError, InvalidInputError, RagloomError
from .pipeline import Pipeline
from .policy import Policy
from .query import QueryTransformer, Retrieval, RouteDecision, Router
from .step import PipelineStep

__all__ = [
    "DEFAULT_MAX_SUB_QUERIES",
    "DecomposeStep",
    "EmptyDecompositionError",
    "MultiQueryRoutingPipeline",
    "MultiQueryRoutingState",
    "NormalizeStep",
    "OnEmptyDecompositionPolicy",
    "RouteStep",
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
    """The route chosen for one sub-query, with the router's score and fallback reason; over
    the collections of an index, also the collections searched and how (``retrieval``:
    ``"restrict"`` or ``"boost"``, see :class:`~ragloom.query.RouteDecision`) and the part of
    the sub-query the decision was taken on (``focus``), or a ``note`` saying why nothing is
    routed."""

    model_config = ConfigDict(frozen=True)

    sub_query: str
    route: str
    score: float | None = None
    fallback_reason: str | None = None
    runner_up: str | None = None
    runner_up_score: float | None = None
    collections: list[str] | None = None
    retrieval: Retrieval | None = None
    note: str | None = None
    focus: str | None = None

    @classmethod
    def from_decision(cls, sub_query: str, decision: RouteDecision) -> SubQueryRoute:
        return cls.model_construct(
            sub_query=sub_query,
            route=decision.route,
            score=decision.score,
            fallback_reason=decision.fallback_reason,
            runner_up=decision.runner_up,
            runner_up_score=decision.runner_up_score,
            collections=decision.collections,
            retrieval=decision.retrieval,
            note=decision.note,
            focus=decision.focus,
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


class DecomposeStep(PipelineStep[Any]):
    """Query -> a state holding the decomposer's sub-queries (one per question)."""

    event_name = "Decompose"
    kind = "decomposer"
    output_model = MultiQueryRoutingState

    def __init__(self, decomposer: QueryTransformer, policy: Policy | None = None) -> None:
        super().__init__(policy=policy, name="Decompose")
        self.decomposer = decomposer
        # The hook follows the decomposer: inline when it never awaits.
        self.__dict__["transform"] = self._adecompose if decomposer.awaits else self._decompose

    def config(self) -> Mapping[str, Any]:
        return {"decomposer": self.decomposer.config_hash}

    def validate_input(self, item: Any) -> None:
        if not isinstance(item, str | MultiQueryRoutingState):
            raise InvalidInputError(
                str(wrong_item(item, "a query string or a MultiQueryRoutingState"))
            )
        # A blank question fails here as it does in plan()/plan_sync() and the CLI.
        _check_question(item if isinstance(item, str) else item.query)

    def _state(self, query: str, subs: Any) -> MultiQueryRoutingState:
        if not isinstance(subs, list):
            raise ComponentTypeError(
                f"{type(self.decomposer).__name__}.transform returned {type(subs).__name__}, "
                "expected list[str]"
            )
        return MultiQueryRoutingState(
            query=query, sub_queries=[s for s in subs if isinstance(s, str)]
        )

    def _decompose(self, item: Any) -> MultiQueryRoutingState:
        query = item if isinstance(item, str) else item.query
        return self._state(query, self.decomposer.transform_sync(query))

    async def _adecompose(self, item: Any) -> MultiQueryRoutingState:
        query = item if isinstance(item, str) else item.query
        return self._state(query, await self.decomposer.transform(query))

    def transform(self, item: Any, context: ExecutionContext) -> Any:  # pragma: no cover
        # Replaced per instance (see __init__).
        return self._decompose(item)


class NormalizeStep(PipelineStep[MultiQueryRoutingState]):
    """Strips, de-duplicates, applies the empty policy and caps each state's sub-queries."""

    event_name = "Normalize"
    output_model = MultiQueryRoutingState

    def __init__(self, max_sub_queries: int, on_empty: OnEmptyDecompositionPolicy) -> None:
        super().__init__(name="Normalize")
        self.max_sub_queries = max_sub_queries
        self.on_empty = on_empty

    def config(self) -> Mapping[str, Any]:
        return {"max_sub_queries": self.max_sub_queries, "on_empty": self.on_empty.value}

    def transform(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> MultiQueryRoutingState:
        subs = normalize_sub_queries(
            item.query,
            item.sub_queries,
            max_sub_queries=self.max_sub_queries,
            on_empty=self.on_empty,
        )
        return item.model_copy(update={"sub_queries": subs})


class RouteStep(PipelineStep[MultiQueryRoutingState]):
    """Routes every sub-query of a state (concurrently, under the policy's limit)."""

    event_name = "Route"
    kind = "router"
    output_model = MultiQueryRoutingState

    def __init__(self, router: Router, policy: Policy | None = None) -> None:
        super().__init__(policy=policy, name="Route")
        self.router = router
        self.__dict__["transform"] = self._aroute if router.awaits else self._route

    def config(self) -> Mapping[str, Any]:
        return {"router": self.router.config_hash}

    def _route(self, item: MultiQueryRoutingState) -> MultiQueryRoutingState:
        decide = self.router.decide_sync
        plan = [SubQueryRoute.from_decision(sub, decide(sub)) for sub in item.sub_queries]
        return item.model_copy(update={"routing_plan": plan})

    async def _aroute(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> MultiQueryRoutingState:
        subs = item.sub_queries
        decide = self.router.decide
        decisions: list[RouteDecision | None] = [None] * len(subs)
        limit = self.effective_policy(context).concurrency or 1
        if len(subs) <= 1 or limit == 1:
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
        return item.model_copy(update={"routing_plan": plan})

    def transform(self, item: Any, context: ExecutionContext) -> Any:  # pragma: no cover
        # Replaced per instance (see __init__).
        return self._route(item)


#: Sub-queries routed (and searched) at most per question by default: as many as the heuristic
#: decomposer returns at most, so that none of its asks is dropped unsearched.
DEFAULT_MAX_SUB_QUERIES = 5


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
        max_sub_queries: int = DEFAULT_MAX_SUB_QUERIES,
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

    def build(self, *, registry: Any = None, plugin_hooks: bool = True) -> Pipeline[Any]:
        """A fresh pipeline (new step objects each call): Decompose -> Normalize -> Route,
        with the steps plugins add before and after (``ragloom_query_steps``).

        Run it with ``await pipeline.run(["q1", "q2"])``: one state per query, in order.
        ``plugin_hooks=False`` builds it without any plugin's steps or hooks.
        """
        registry = _registry(registry, plugin_hooks)
        last = None
        for step in _chain(registry, "before", self):
            last = step if last is None else step(last)
        decompose = DecomposeStep(self.decomposer)
        if last is not None:
            decompose(last)
        normalize = NormalizeStep(self.max_sub_queries, self.on_empty_decomposition)(decompose)
        last = RouteStep(self.router)(normalize)
        for step in _chain(registry, "after", self):
            last = step(last)
        return Pipeline(
            last, policy=self.policy, name="MultiQueryRouting", block=self, registry=registry,
            plugin_hooks=plugin_hooks,
        )

    async def plan(self, query: str) -> MultiQueryRoutingState:
        """Plan one query directly, raising its error (e.g. ``EmptyDecompositionError``).

        Raises:
            TypeError: ``query`` is not a string.
            InvalidInputError: ``query`` is blank.
        """
        _check_question(query)
        subs = await self.decomposer.transform(query)
        return await self._finish(query, subs)

    def plan_sync(self, query: str) -> MultiQueryRoutingState:
        """:meth:`plan` from synchronous code (scripts and notebooks alike)."""
        if self.decomposer.awaits or self.router.awaits:
            from ._sync import run_sync

            return run_sync(self.plan, query)
        _check_question(query)
        state = self._state(query, self.decomposer.transform_sync(query))
        return RouteStep(self.router, policy=self.policy)._route(state)

    async def _finish(self, query: str, subs: Any) -> MultiQueryRoutingState:
        state = self._state(query, subs)
        step = RouteStep(self.router, policy=self.policy)
        if self.router.awaits:
            return await step._aroute(state, ExecutionContext(policy=self.policy))
        return step._route(state)

    def _state(self, query: str, subs: Any) -> MultiQueryRoutingState:
        if not isinstance(subs, list):
            raise ComponentTypeError(
                f"{type(self.decomposer).__name__}.transform returned {type(subs).__name__}, "
                "expected list[str]"
            )
        normalized = normalize_sub_queries(
            query,
            list(subs),
            max_sub_queries=self.max_sub_queries,
            on_empty=self.on_empty_decomposition,
        )
        return MultiQueryRoutingState(query=query, sub_queries=normalized)


def _registry(registry: Any, plugin_hooks: bool) -> Any:
    if registry is None and plugin_hooks:
        from .plugins import Registry

        registry = Registry()
    return registry if plugin_hooks else None


def _chain(registry: Any, stage: str, block: Any) -> list[PipelineStep[Any]]:
    """The steps plugins add to a query block at ``stage``."""
    if registry is None or not registry.implements("ragloom_query_steps"):
        return []
    steps: list[PipelineStep[Any]] = registry.query_steps(stage, block)
    return steps


def _check_question(query: Any) -> None:
    if not isinstance(query, str):
        raise wrong_item(query, "a query string")
    if not query.strip():
        raise InvalidInputError("the question is blank: give a question to plan")
