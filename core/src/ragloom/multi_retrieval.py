"""Executing a query plan: decompose, normalise, route, retrieve per sub-query, fuse.

:class:`MultiQueryRetrievalPipeline` extends the routing block with retrieval. Each routed
sub-query is answered by its route's retriever (a route may name one, with its own metadata
filter, ``top_k`` and fusion weight; others use the default retriever), the sub-queries of one
question concurrently under the policy's limit. A decision that names collections (the routes
fitted from an index's collections, :mod:`ragloom.index_routes`) restricts its sub-query's
search to them (``restrict``: one search in those collections), or adds beside its search of
the whole index a list of those collections' passages among that search's first
:data:`BOOST_DEPTH` times ``top_k`` (``boost``, weighted ``boost_weight`` times the sub-query). A
question that was split is also searched
whole, by the default retriever (weight ``whole_weight``): a wrong split then costs little,
and a question that was not split is searched once. In each list, chunks with nothing to read
(a lone heading, a navigation line) go last. The lists are fused per question by rank
(:func:`~ragloom.retrieval.reciprocal_rank_fusion` with ``k=fusion_k``): a passage's best
weighted gain ``weight / (fusion_k + rank)`` plus ``consensus`` times its other gains, chunks
found several times counted once. The defaults (``fusion_k=5``, ``consensus=0.2``) put each
ask's best passages first and let agreement between searches break ties, so a passage that every
ask finds only fairly well (a table of contents, a "next steps" list) no longer outranks the
passages that answer one ask; they were chosen on the development halves of the project's
evaluation sets (plain sum-RRF, ``fusion_k=60, consensus=1``, found fewer facets there).
Two settings trade passages for documents, off by default: each search may ask for
``search_depth`` times its ``top_k`` passages, and the fused list may show at most
``per_document`` passages of a document before every other document found has shown one
(:func:`~ragloom.retrieval.spread_documents`; a document's further passages follow, in fused
order, and are the first cut to ``top_k``). On the development halves, ``per_document=1,
search_depth=2`` found more expected documents in the first ten passages on each of the five
sets, but fewer of the passages that hold the facts each page was chosen for, on each set
measured (docs/evaluation.md): a second passage of the page that answers is often the one
that answers. Each passage says which sub-queries found it at what rank. A passage's
``score`` is its fused score over the best one possible (every list ranking it first): 1.0 is
a passage every search put first, and the scores of one answer compare with each other.
Query-side components (:mod:`ragloom.query_stages`; a reranker, ``components={"reranker":
...}``) see each search's hits before the fusion, or the question's fused passages before the
cut to ``top_k`` (then every fused passage, and they choose the ``top_k`` kept and their
order; scores stay the fused ones). A sub-query whose retrieval failed is reported in the
result; a question whose every sub-query failed fails as an item (``ItemFailed``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from .collection import COLLECTION_KEY, collection_where
from .component import Component
from .context import ExecutionContext
from .errors import ComponentTypeError, ConfigurationError, RagloomError
from .multi_query import (
    DEFAULT_MAX_SUB_QUERIES,
    DecomposeStep,
    MultiQueryRoutingPipeline,
    MultiQueryRoutingState,
    NormalizeStep,
    RouteStep,
    SubQueryRoute,
    _chain,
    _registry,
)
from .passages import FusedPassage, PassageHit
from .pipeline import Pipeline
from .policy import Policy
from .query import QueryTransformer, RetrieveSpec, Router
from .query_stages import build_query_component, check_query_components, ordered
from .retrieval import (
    Retriever,
    _count,
    demote_boilerplate,
    reciprocal_rank_fusion,
    spread_documents,
)
from .step import PipelineStep

__all__ = [
    "FusedPassage",
    "MultiQueryRetrievalPipeline",
    "PassageHit",
    "RetrievalFailedError",
    "RetrievalResult",
    "RetrieveStep",
    "SubQueryFailure",
]


class RetrievalFailedError(RagloomError):
    """Every sub-query of a question failed to retrieve (the message lists why)."""


#: The route reported for the search of the whole question.
WHOLE_QUESTION_ROUTE = "(whole question)"
#: The weight of the whole question's list against each sub-query's (1.0), chosen on the
#: development halves of the evaluation sets (docs/evaluation.md).
DEFAULT_WHOLE_WEIGHT = 1.0
#: The weight of a boosted sub-query's collection-restricted list, times the sub-query's own
#: (a router's ``boost_weight`` replaces it).
DEFAULT_BOOST_WEIGHT = 1.0
#: The rank constant of the fusion of a question's searches (small: a list's first passages
#: count much more than its later ones).
DEFAULT_FUSION_K = 5
#: How much a passage's gains from its other lists add to its best one (0: the best alone;
#: 1: the plain sum of reciprocal rank fusion).
DEFAULT_CONSENSUS = 0.2
#: Passages of one document the fused list shows before every other document found has shown
#: one (0: the fused order alone; see the module docstring).
DEFAULT_PER_DOCUMENT = 0
#: Each search asks for this many times its ``top_k`` passages (candidates for the fused list).
DEFAULT_SEARCH_DEPTH = 1
#: A boosted sub-query's search of the whole index asks for this many times its passages; the
#: collection's list beside it is the collection's passages among them, not a search of its
#: own. On the development half of the ``multi`` questions both ways gave the same ten
#: passages for every question; on bench_scale's million chunks the median question took
#: 38 ms instead of 51 (one search less for each boosted ask: 0.9 of 4.9 a question).
BOOST_DEPTH = 2


class SubQueryFailure(BaseModel):
    """A sub-query whose retrieval failed, and why."""

    model_config = ConfigDict(frozen=True)

    #: The sub-query.
    sub_query: str
    #: Its route.
    route: str
    #: ``"Type: message"`` of the error.
    error: str


class RetrievalResult(BaseModel):
    """One question answered: its plan, the fused passages (best first), failed sub-queries."""

    model_config = ConfigDict(frozen=True)

    #: The question.
    query: str
    #: Its sub-queries, in order.
    sub_queries: list[str] = Field(default_factory=list)
    #: The route of each sub-query, with the router's score and any fallback reason.
    routing_plan: list[SubQueryRoute] = Field(default_factory=list)
    #: The fused passages, best first (a document's passages beyond the block's
    #: ``per_document`` after every other document's first ones).
    passages: list[FusedPassage] = Field(default_factory=list)
    #: Sub-queries whose retrieval failed.
    failures: list[SubQueryFailure] = Field(default_factory=list)


class RetrieveStep(PipelineStep[Any]):
    """Routed plan -> fused passages (see the module docstring).

    Results are not cached: they depend on what the index holds now.
    """

    event_name = "Retrieve"
    kind = "retriever"
    output_model = None

    def __init__(
        self,
        retriever: Retriever,
        *,
        retrievers: Mapping[str, Retriever] | None = None,
        routes: Mapping[str, RetrieveSpec] | None = None,
        top_k: int = 10,
        fusion_k: int = DEFAULT_FUSION_K,
        consensus: float = DEFAULT_CONSENSUS,
        whole_weight: float = DEFAULT_WHOLE_WEIGHT,
        boost_weight: float = DEFAULT_BOOST_WEIGHT,
        per_document: int = DEFAULT_PER_DOCUMENT,
        search_depth: int = DEFAULT_SEARCH_DEPTH,
        components: Mapping[str, Any] | None = None,
        policy: Policy | None = None,
    ) -> None:
        super().__init__(policy=policy, name="Retrieve")
        if not isinstance(retriever, Retriever):
            raise ComponentTypeError(
                f"retriever must be a Retriever, got {type(retriever).__name__}"
            )
        self.retriever = retriever
        self.retrievers = dict(retrievers or {})
        self.routes = dict(routes or {})
        self.top_k = top_k
        self.fusion_k = fusion_k
        self.consensus = consensus
        self.whole_weight = whole_weight
        self.boost_weight = boost_weight
        self.per_document = _count("per_document", per_document, 0)
        self.search_depth = _count("search_depth", search_depth, 1)
        #: Query-side components by kind name (see :mod:`ragloom.query_stages`).
        self.components = check_query_components(components)

    def config(self) -> Mapping[str, Any]:
        return {
            "top_k": self.top_k, "fusion_k": self.fusion_k, "consensus": self.consensus,
            "whole_weight": self.whole_weight, "boost_weight": self.boost_weight,
            "per_document": self.per_document, "search_depth": self.search_depth,
            **{k: c.config_hash for k, c in self.components.items()},
        }

    def _plan_for(self, route: str) -> tuple[Retriever, RetrieveSpec | None]:
        spec = self.routes.get(route)
        if spec is not None and spec.retriever is not None:
            return self.retrievers[spec.retriever], spec
        return self.retriever, spec

    def _searches(self, routed: SubQueryRoute) -> list[_Search]:
        """The searches of one routed sub-query: its route's; when the decision names
        collections, one search restricted to them instead (``restrict``, at the sub-query's
        weight), or beside its search of the whole index (``boost``: that search asks for
        :data:`BOOST_DEPTH` times its passages, and their passages of those collections are a
        list at ``boost_weight`` times it). The fusion keeps a passage's best gain
        (plus a little of its others), so an added list never weakens the ask's own: a right
        guess lifts the collection's passages, a wrong one costs little."""
        retriever, spec = self._plan_for(routed.route)
        top_k = spec.top_k if spec and spec.top_k else self.top_k
        where = spec.where if spec else None
        weight = self._weight(routed.route)
        listed = list(dict.fromkeys(routed.collections or ())) if routed.retrieval else []
        if not listed:
            return [_Search(routed, retriever, top_k, where, weight)]
        scoped = _Search(
            routed, retriever, top_k, {**(where or {}), **(collection_where(listed) or {})},
            weight if routed.retrieval == "restrict" else weight * self.boost_weight, listed,
        )
        # the sentence the decision was taken on, alone, in the same collections: the ask
        # without the situation it opened with, whose words pull its search elsewhere
        focused = [] if not routed.focus or routed.focus == routed.sub_query else [
            _Search(
                routed.model_copy(update={"sub_query": routed.focus}), retriever, top_k,
                scoped.where, scoped.weight, listed,
            )
        ]
        if routed.retrieval == "restrict":
            return [scoped, *focused]
        # boost: the collection's list is its passages among a deeper search of the whole
        # index, not a search of its own
        whole = _Search(routed, retriever, top_k, where, weight, deep=BOOST_DEPTH)
        beside = _Search(routed, retriever, top_k, scoped.where, scoped.weight, listed, of=whole)
        return [whole, beside, *focused]

    async def transform(
        self, item: MultiQueryRoutingState, context: ExecutionContext
    ) -> RetrievalResult:
        plan = list(item.routing_plan)
        searches = [search for routed in plan for search in self._searches(routed)]
        planned = len(searches)
        if self.whole_weight > 0 and plan and not (
            len(plan) == 1 and _same_words(plan[0].sub_query, item.query)
        ):
            whole = SubQueryRoute(sub_query=item.query, route=WHOLE_QUESTION_ROUTE)
            searches.append(
                _Search(whole, self.retriever, self.top_k, None, self.whole_weight)
            )
        hits: list[Any] = [None] * len(searches)
        errors: list[str | None] = [None] * len(searches)
        limiter = anyio.CapacityLimiter(self.effective_policy(context).concurrency or 1)

        async def one(i: int, search: _Search) -> None:
            if search.of is not None:
                return
            call = functools.partial(
                search.retriever.retrieve,
                search.routed.sub_query,
                top_k=search.top_k * self.search_depth * search.deep,
                where=search.where,
            )
            async with limiter:
                try:
                    hits[i] = await anyio.to_thread.run_sync(call)
                except Exception as exc:  # noqa: BLE001 - reported in the result
                    errors[i] = f"{type(exc).__name__}: {exc}"

        async with anyio.create_task_group() as tg:
            for i, search in enumerate(searches):
                tg.start_soon(one, i, search)
        _take_from_deeper(searches, hits, self.search_depth)
        failures = [
            SubQueryFailure(sub_query=s.routed.sub_query, route=s.routed.route, error=e)
            for s, e in zip(searches, errors, strict=True)
            if e is not None
        ]
        if plan and all(
            e is not None for s, e in zip(searches[:planned], errors, strict=False)
            if s.of is None
        ):
            raise RetrievalFailedError(
                f"every sub-query of {item.query!r} failed to retrieve: "
                + "; ".join(f"{f.sub_query!r}: {f.error}" for f in failures)
            )
        kept = [(s, found) for s, found in zip(searches, hits, strict=True) if found is not None]
        for stage in ordered(self.components, "search"):
            kept = [
                (search, await anyio.to_thread.run_sync(
                    stage.on_search, item.query, search.routed.sub_query, list(found)
                ))
                for search, found in kept
            ]
        refine = ordered(self.components, "fused")
        # Chunks with nothing to read (a lone heading, a navigation line) go after the others
        # of their list, so they never crowd out a passage.
        lists = [(search.weight, demote_boilerplate(found)) for search, found in kept]
        # the score of a passage every list ranks first
        weights = [weight for weight, _ in lists]
        top = max(weights, default=0.0)
        best = (top + self.consensus * (sum(weights) - top)) / (self.fusion_k + 1)
        fused = spread_documents(
            reciprocal_rank_fusion(lists, k=self.fusion_k, consensus=self.consensus),
            self.per_document,
            lambda entry: str(entry[1].parent_id),
        )
        if not refine:  # a component at the "fused" stage sees them all
            fused = fused[: self.top_k]
        passages = []
        for score, chunk, found in fused:
            passages.append(
                FusedPassage(
                    chunk_id=chunk.id,
                    document_id=chunk.parent_id,
                    start=chunk.start,
                    end=chunk.end,
                    content=chunk.content,
                    metadata=dict(chunk.metadata),
                    score=min(1.0, score / best) if best > 0 else 0.0,
                    found_by=[
                        PassageHit(
                            sub_query=kept[s][0].routed.sub_query,
                            route=kept[s][0].routed.route,
                            rank=rank,
                            score=lists[s][1][rank - 1].score,
                            collections=kept[s][0].collections,
                        )
                        for s, rank in found
                    ],
                )
            )
        for stage in refine:
            passages = await anyio.to_thread.run_sync(
                stage.on_fused, item.query, passages, self.top_k
            )
        return RetrievalResult(
            query=item.query,
            sub_queries=item.sub_queries,
            routing_plan=plan,
            passages=passages[: self.top_k],
            failures=failures,
        )

    def _weight(self, route: str) -> float:
        spec = self.routes.get(route)
        return spec.weight if spec is not None else 1.0


@dataclass(frozen=True)
class _Search:
    """One search of a question: the routed sub-query, the retriever, how many passages,
    the metadata condition, the list's fusion weight, the collections it is restricted to."""

    routed: SubQueryRoute
    retriever: Retriever
    top_k: int
    where: Mapping[str, Any] | None
    weight: float
    collections: list[str] | None = None
    #: Times ``top_k`` the search asks for (its own list keeps ``top_k``; a list ``of`` it
    #: takes from the rest too).
    deep: int = 1
    #: A list taken from another search's passages (those of :attr:`collections`) instead of
    #: a search of its own.
    of: _Search | None = None


def _take_from_deeper(searches: list[_Search], hits: list[Any], depth: int) -> None:
    """Fill the lists taken from another search (its passages of their collections, in its
    order), then cut the searches that asked for more back to their own ``top_k``. A list
    whose search failed stays empty (the failure is that search's)."""
    position = {id(search): i for i, search in enumerate(searches)}
    for i, search in enumerate(searches):
        if search.of is None:
            continue
        source = hits[position[id(search.of)]]
        if source is not None:
            wanted = set(search.collections or ())
            hits[i] = [
                hit for hit in source if hit.chunk.metadata.get(COLLECTION_KEY) in wanted
            ][: search.top_k * depth]
    for i, search in enumerate(searches):
        if search.deep > 1 and hits[i] is not None:
            hits[i] = hits[i][: search.top_k * depth]


class MultiQueryRetrievalPipeline(Component):
    """Decompose a question, route each sub-query, retrieve for each, fuse the results.

    Args:
        decomposer: the :class:`~ragloom.query.QueryTransformer` that proposes sub-queries
            (as for :class:`~ragloom.multi_query.MultiQueryRoutingPipeline`).
        router: the :class:`~ragloom.query.Router` that gives each sub-query a route.
        retriever: the default retriever (routes without retrieval settings use it).
        retrievers: retrievers by name, for routes whose ``retrieve.retriever`` names one
            (with a ``registry``, names not given here are built from registered
            retrievers, handed this block's ``store`` and ``embedder`` when they take them).
        top_k: passages per sub-query and in the fused result.
        fusion_k: the rank constant of the fusion (see the module docstring).
        consensus: how much a passage's gains from its other lists add to its best one, in
            [0, 1] (1: plain reciprocal rank fusion, the sum).
        whole_weight: the weight of the whole question's search, run beside the sub-queries'
            when the question was split (0: not run).
        per_document: passages of one document the fused list shows before every other
            document found has shown one (0: the fused order alone; see the module docstring).
        search_depth: each search asks for this many times its ``top_k`` passages, the
            candidates of the fused list (1: ``top_k``).
        max_sub_queries: at most this many sub-queries are searched, as in the routing block.
        on_empty_decomposition: ``"passthrough"`` (search the question alone when the
            decomposer gives nothing usable) or ``"error"``, as in the routing block.
        policy: the policy of the built pipelines (concurrency, retries of each call).
        registry: a plugin :class:`~ragloom.plugins.Registry` to build retrievers that routes
            name and ``retrievers`` lacks.
        store: the :class:`~ragloom.stores.Store` handed to retrievers built from the
            registry.
        embedder: the :class:`~ragloom.embedding.Embedder` handed to them likewise.
        components: query-side components by kind name (``{"reranker": reranker}``; the
            query-side kinds of the table of kinds, see :mod:`ragloom.query_stages`).

    Each route of the router (``router.routes``, :class:`~ragloom.query.Route` models) may
    carry ``retrieve`` settings: a retriever name, a metadata filter (``where``), ``top_k``
    and a fusion ``weight``.

    Raises:
        ConfigurationError: a route names a retriever that is neither given nor registered.
    """

    step_id = "ragloom/multi-query-retrieval"

    def __init__(
        self,
        decomposer: QueryTransformer,
        router: Router,
        retriever: Retriever,
        *,
        retrievers: Mapping[str, Retriever] | None = None,
        top_k: int = 10,
        fusion_k: int = DEFAULT_FUSION_K,
        consensus: float = DEFAULT_CONSENSUS,
        whole_weight: float = DEFAULT_WHOLE_WEIGHT,
        per_document: int = DEFAULT_PER_DOCUMENT,
        search_depth: int = DEFAULT_SEARCH_DEPTH,
        max_sub_queries: int = DEFAULT_MAX_SUB_QUERIES,
        on_empty_decomposition: str = "passthrough",
        policy: Policy | None = None,
        registry: Any = None,
        store: Any = None,
        embedder: Any = None,
        components: Mapping[str, Any] | None = None,
    ) -> None:
        self.routing = MultiQueryRoutingPipeline(
            decomposer, router, max_sub_queries, on_empty_decomposition, policy=policy
        )
        if not isinstance(retriever, Retriever):
            raise ComponentTypeError(
                f"retriever must be a Retriever, got {type(retriever).__name__}"
            )
        _count("top_k", top_k, 1)
        _count("fusion_k", fusion_k, 1)
        if (
            isinstance(whole_weight, bool)
            or not isinstance(whole_weight, int | float)
            or not math.isfinite(whole_weight)
            or whole_weight < 0
        ):
            raise ConfigurationError(
                f"whole_weight must be a number >= 0 (0: never search the whole question), "
                f"got {whole_weight!r}"
            )
        if (
            isinstance(consensus, bool)
            or not isinstance(consensus, int | float)
            or not 0 <= consensus <= 1
        ):
            raise ConfigurationError(
                f"consensus must be a number in [0, 1] (1: plain reciprocal rank fusion), "
                f"got {consensus!r}"
            )
        self.consensus = float(consensus)
        self.whole_weight = float(whole_weight)
        self.per_document = _count("per_document", per_document, 0)
        self.search_depth = _count("search_depth", search_depth, 1)
        boost = getattr(router, "boost_weight", None)
        #: The weight of a boosted sub-query's restricted list (the router's, when it says).
        self.boost_weight = (
            float(boost) if isinstance(boost, int | float) and not isinstance(boost, bool)
            and math.isfinite(boost) and boost > 0 else DEFAULT_BOOST_WEIGHT
        )
        self.decomposer = decomposer
        self.router = router
        self.retriever = retriever
        self.top_k = top_k
        self.fusion_k = fusion_k
        self.policy = policy
        #: The index searched and the embedder of the sub-queries (for writing the block to a
        #: pipeline file): as given, else the default retriever's.
        self.store = store if store is not None else getattr(retriever, "store", None)
        self.embedder = embedder if embedder is not None else getattr(retriever, "embedder", None)
        self.routes = _route_specs(router)
        #: Query-side components by kind name (a reranker...); each runs at its kind's stage,
        #: in the order of the table of kinds.
        self.components = check_query_components(components)
        self.retrievers = dict(retrievers or {})
        #: Names of the retrievers given in code (the others were built from the registry).
        self.given_retrievers = frozenset(self.retrievers)
        for route, spec in self.routes.items():
            if spec.retriever is None or spec.retriever in self.retrievers:
                continue
            if registry is None:
                raise ConfigurationError(
                    f"route {route!r} names the retriever {spec.retriever!r}, which is not "
                    "among the retrievers given (pass retrievers={...} or a registry)"
                )
            self.retrievers[spec.retriever] = _build_retriever(
                registry, spec.retriever, spec.params, store, embedder
            )

    def config(self) -> Mapping[str, Any]:
        return {
            "routing": self.routing.config_hash,
            "retriever": self.retriever.config_hash,
            "top_k": self.top_k,
            "fusion_k": self.fusion_k,
            "consensus": self.consensus,
            "whole_weight": self.whole_weight,
            "boost_weight": self.boost_weight,
            "per_document": self.per_document,
            "search_depth": self.search_depth,
            **{k: c.config_hash for k, c in self.components.items()},
        }

    def build(self, *, registry: Any = None, plugin_hooks: bool = True) -> Pipeline[Any]:
        """A fresh pipeline: Decompose -> Normalize -> Route -> Retrieve (one result per
        question, in input order), with the steps plugins add before and after
        (``ragloom_query_steps``)."""
        registry = _registry(registry, plugin_hooks)
        last = None
        for step in _chain(registry, "before", self):
            last = step if last is None else step(last)
        decompose = DecomposeStep(self.decomposer)
        if last is not None:
            decompose(last)
        normalize = NormalizeStep(
            self.routing.max_sub_queries, self.routing.on_empty_decomposition
        )(decompose)
        route = RouteStep(self.router)(normalize)
        last = RetrieveStep(
            self.retriever, retrievers=self.retrievers, routes=self.routes, top_k=self.top_k,
            fusion_k=self.fusion_k, consensus=self.consensus, whole_weight=self.whole_weight,
            boost_weight=self.boost_weight, per_document=self.per_document,
            search_depth=self.search_depth, components=self.components,
        )(route)
        for step in _chain(registry, "after", self):
            last = step(last)
        return Pipeline(
            last, policy=self.policy, name="MultiQueryRetrieval", block=self, registry=registry,
            plugin_hooks=plugin_hooks,
        )

    async def search(self, query: str) -> RetrievalResult:
        """Answer one question directly, raising its error (``RetrievalFailedError`` when every
        sub-query failed)."""
        state = await self.routing.plan(query)
        step = RetrieveStep(
            self.retriever, retrievers=self.retrievers, routes=self.routes, top_k=self.top_k,
            fusion_k=self.fusion_k, consensus=self.consensus, whole_weight=self.whole_weight,
            boost_weight=self.boost_weight, per_document=self.per_document,
            search_depth=self.search_depth, components=self.components, policy=self.policy,
        )
        result: RetrievalResult = await step.transform(state, ExecutionContext(policy=self.policy))
        return result

    def search_sync(self, query: str) -> RetrievalResult:
        """:meth:`search` from synchronous code (scripts and notebooks alike)."""
        from ._sync import run_sync

        return run_sync(self.search, query)


def _same_words(a: str, b: str) -> bool:
    return _WORDS.findall(a.casefold()) == _WORDS.findall(b.casefold())


_WORDS = re.compile(r"\w+")


def _route_specs(router: Router) -> dict[str, RetrieveSpec]:
    """The ``retrieve`` settings of the router's routes, by route name."""
    specs: dict[str, RetrieveSpec] = {}
    for route in getattr(router, "routes", ()) or ():
        retrieve = getattr(route, "retrieve", None)
        name = getattr(route, "name", None)
        if isinstance(retrieve, RetrieveSpec) and isinstance(name, str):
            specs[name] = retrieve
    return specs


def _build_retriever(
    registry: Any, name: str, params: Mapping[str, Any], store: Any, embedder: Any
) -> Retriever:
    built: Retriever = build_query_component(registry, "retriever", name, params, store, embedder)
    return built
