"""Retrieval per routed sub-query and fusion: ``reciprocal_rank_fusion``,
``MultiQueryRetrievalPipeline`` with in-memory retrievers (failures, empty answers, route
settings). The same over a real LanceDB index: tests/plugins/lancedb/test_lancedb_search.py."""

from __future__ import annotations

import importlib.util
import threading

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ragloom import ItemFailed
from ragloom.errors import ComponentTypeError, ConfigurationError
from ragloom.models import Document
from ragloom.multi_retrieval import (
    FusedPassage,
    MultiQueryRetrievalPipeline,
    RetrievalFailedError,
    RetrievalResult,
)
from ragloom.query import QueryTransformer, Route, RouteDecision, Router
from ragloom.retrieval import DEFAULT_RRF_K, Retriever, reciprocal_rank_fusion
from ragloom.stores import ScoredChunk, matches_where

# -- reciprocal rank fusion -------------------------------------------------------------------


def chunk(cid: str, **metadata: object) -> Document:
    return Document(id=cid, content=f"text of {cid}", metadata=metadata)


def hits(*ids: str) -> list[ScoredChunk]:
    return [ScoredChunk(chunk(i), 1.0 / n) for n, i in enumerate(ids, 1)]


def ids_of(fused) -> list[str]:
    return [c.id for _, c, _ in fused]


def test_fusion_sums_reciprocal_ranks_and_counts_each_chunk_once() -> None:
    fused = reciprocal_rank_fusion([(1.0, hits("a", "b", "c")), (1.0, hits("b", "d"))], k=60)
    assert ids_of(fused) == ["b", "a", "d", "c"]
    scores = {c.id: s for s, c, _ in fused}
    assert scores["b"] == 1 / 62 + 1 / 61
    assert scores["a"] == 1 / 61 and scores["d"] == 1 / 62 and scores["c"] == 1 / 63
    assert dict((c.id, found) for _, c, found in fused)["b"] == [(0, 2), (1, 1)]


def test_fusion_ties_keep_the_order_chunks_were_first_found() -> None:
    # a and x are both first in one list, b and y second: equal scores, first seen first.
    fused = reciprocal_rank_fusion([(1.0, hits("a", "b")), (1.0, hits("x", "y"))])
    assert ids_of(fused) == ["a", "x", "b", "y"]
    assert fused[0][0] == fused[1][0] and fused[2][0] == fused[3][0]


def test_fusion_duplicates_in_one_list_count_once_at_their_best_rank() -> None:
    fused = reciprocal_rank_fusion([(1.0, hits("a", "b", "a"))], k=10)
    assert ids_of(fused) == ["a", "b"]
    assert fused[0][0] == 1 / 11 and fused[0][2] == [(0, 1)]


def test_fusion_weights_scale_a_list() -> None:
    plain = reciprocal_rank_fusion([(1.0, hits("a")), (1.0, hits("b"))])
    assert ids_of(plain) == ["a", "b"]
    weighted = reciprocal_rank_fusion([(1.0, hits("a")), (3.0, hits("b"))])
    assert ids_of(weighted) == ["b", "a"]
    assert weighted[0][0] == 3.0 / (DEFAULT_RRF_K + 1)
    # weight 2 on rank 2 beats weight 1 on rank 1
    assert ids_of(reciprocal_rank_fusion([(1.0, hits("a")), (2.0, hits("x", "b"))], k=1)) == [
        "x", "b", "a",
    ]


def test_fusion_top_k_and_bad_settings() -> None:
    assert ids_of(reciprocal_rank_fusion([(1.0, hits("a", "b", "c"))], top_k=2)) == ["a", "b"]
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([(1.0, [])]) == []
    with pytest.raises(ConfigurationError, match="k must be >= 1"):
        reciprocal_rank_fusion([(1.0, hits("a"))], k=0)
    for weight in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigurationError, match="weight"):
            reciprocal_rank_fusion([(weight, hits("a"))])


lists = st.lists(
    st.tuples(
        st.floats(min_value=0.1, max_value=5.0, allow_nan=False),
        st.lists(st.sampled_from("abcdefgh"), max_size=8),
    ),
    max_size=5,
)


@settings(deadline=None, max_examples=200)
@given(
    lists,
    st.integers(min_value=1, max_value=100),
    st.none() | st.integers(1, 10),
    st.sampled_from([1.0, 0.0, 0.2, 0.5]),
)
def test_fusion_properties(data, k, top_k, consensus) -> None:
    results = [(w, hits(*ids)) for w, ids in data]
    fused = reciprocal_rank_fusion(results, k=k, top_k=top_k, consensus=consensus)
    # the formula, list by list; each chunk at its first rank in each list: the best gain
    # plus consensus times the others (1: the plain sum)
    gains: dict[str, list[float]] = {}
    first_seen: dict[str, int] = {}
    for weight, ids in data:
        ranks: dict[str, int] = {}
        for rank, cid in enumerate(ids, 1):
            ranks.setdefault(cid, rank)
        for cid, rank in ranks.items():
            gains.setdefault(cid, []).append(weight / (k + rank))
            first_seen.setdefault(cid, len(first_seen))
    expected = {
        cid: sum(g) if consensus == 1 else max(g) + consensus * (sum(g) - max(g))
        for cid, g in gains.items()
    }
    order = sorted(expected, key=lambda cid: (-expected[cid], first_seen[cid]))
    if top_k is not None:
        order = order[:top_k]
    assert ids_of(fused) == order  # each chunk once, by score, then first seen
    for score, c, found in fused:
        assert score == expected[c.id]
        listed = {s for s, (_, ids) in enumerate(data) if c.id in ids}
        assert [s for s, _ in found] == sorted(listed)
        for source, rank in found:
            assert data[source][1][rank - 1] == c.id


def test_consensus_below_one_puts_each_lists_best_before_a_chunk_every_list_finds_fairly() -> None:
    # "toc" is third for both asks: the plain sum ranks it first, a small consensus does not
    asks = [(1.0, hits("cache", "x", "toc")), (1.0, hits("plugin", "y", "toc"))]
    assert ids_of(reciprocal_rank_fusion(asks, k=5))[0] == "toc"
    fused = reciprocal_rank_fusion(asks, k=5, consensus=0.2)
    assert ids_of(fused)[:2] == ["cache", "plugin"]
    assert fused[2][0] == pytest.approx(1 / 8 + 0.2 / 8)  # toc: its best gain plus a fifth
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(ConfigurationError, match="consensus"):
            reciprocal_rank_fusion(asks, consensus=bad)


# -- the pipeline with in-memory components ---------------------------------------------------


class Split(QueryTransformer):
    """Splits on ' and '."""

    step_id = "test/split"

    def transform_sync(self, query: str) -> list[str]:
        return [part.strip() for part in query.split(" and ")]


class FirstWord(Router):
    """Routes a query to the route named by its first word (else ``general``)."""

    step_id = "test/first-word"

    def __init__(self, routes: list[Route]) -> None:
        self._routes = tuple(routes)

    @property
    def routes(self) -> tuple[Route, ...]:
        return self._routes

    def config(self):
        return {"routes": [r.model_dump() for r in self._routes]}

    @property
    def valid_routes(self) -> list[str]:
        return [r.name for r in self._routes]

    @property
    def default_route(self) -> str:
        return "general"

    def route_sync(self, query: str) -> RouteDecision:
        word = query.split()[0] if query.split() else ""
        if word in self.valid_routes:
            return RouteDecision(route=word, score=1.0)
        return self.fallback("no match")


CHUNKS = [
    chunk("bill-1", topic="billing"),
    chunk("bill-2", topic="billing"),
    chunk("sec-1", topic="security"),
    chunk("sec-2", topic="security"),
    chunk("gen-1", topic="general"),
]


class Memory(Retriever):
    """Finds the chunks whose id shares a word with the query; records every call."""

    step_id = "test/memory"

    def __init__(self, chunks=None, top_k: int = 10, label: str = "memory") -> None:
        self.chunks = list(CHUNKS if chunks is None else chunks)
        self.top_k = top_k
        self.label = label
        self.calls: list[tuple[str, int | None, dict | None]] = []
        self._lock = threading.Lock()

    def config(self):
        return {"top_k": self.top_k, "label": self.label}

    def retrieve(self, query, *, top_k=None, where=None):
        with self._lock:
            self.calls.append((query, top_k, where))
        words = set(query.lower().replace("?", "").split())
        found = [
            c for c in self.chunks
            if matches_where(c.metadata, where) and c.id.split("-")[0] in words
        ]
        return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(found[: top_k or self.top_k], 1)]


class Broken(Retriever):
    step_id = "test/broken"

    def retrieve(self, query, *, top_k=None, where=None):
        raise ConnectionError(f"index unreachable for {query!r}")


ROUTES = [
    Route(name="bill", retrieve={"where": {"topic": "billing"}, "top_k": 1, "weight": 2.0}),
    Route(name="sec", retrieve={"retriever": "broken"}),
    Route(name="general"),
]


def block(retriever=None, routes=ROUTES, **kwargs) -> MultiQueryRetrievalPipeline:
    return MultiQueryRetrievalPipeline(
        Split(), FirstWord(routes), retriever or Memory(),
        retrievers=kwargs.pop("retrievers", {"broken": Broken()}), **kwargs,
    )


def test_route_settings_reach_the_retriever_and_weights_the_fusion() -> None:
    memory = Memory()
    result = block(memory, whole_weight=0).search_sync("bill sec and bill gen")
    assert isinstance(result, RetrievalResult)
    assert result.sub_queries == ["bill sec", "bill gen"]
    assert [r.route for r in result.routing_plan] == ["bill", "bill"]
    # the route's where and top_k, for both of its sub-queries
    assert sorted(memory.calls) == [
        ("bill gen", 1, {"topic": "billing"}), ("bill sec", 1, {"topic": "billing"}),
    ]
    assert [p.chunk_id for p in result.passages] == ["bill-1"]
    (passage,) = result.passages
    # found first by both lists (route weight 2): the best fused score there can be
    assert passage.score == 1.0
    assert [(h.sub_query, h.rank) for h in passage.found_by] == [("bill sec", 1), ("bill gen", 1)]


def test_a_split_question_is_also_searched_whole() -> None:
    memory = Memory()
    result = block(memory, retrievers={"broken": Broken()}).search_sync("bill sec and bill gen")
    assert ("bill sec and bill gen", 10, None) in memory.calls  # default retriever, no filter
    whole = [h for p in result.passages for h in p.found_by if h.route == "(whole question)"]
    assert {h.sub_query for h in whole} == {"bill sec and bill gen"}
    # what only the whole question found is kept: a wrong split costs little
    assert {"sec-1", "gen-1"} <= {p.chunk_id for p in result.passages}
    scores = [p.score for p in result.passages]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    # a question that was not split is searched once
    memory.calls.clear()
    block(memory).search_sync("gen")
    assert [call[0] for call in memory.calls] == ["gen"]


def test_whole_weight_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="whole_weight must be a number >= 0"):
        block(whole_weight=-1)


def test_a_failing_retriever_for_one_sub_query_is_reported_not_dropped() -> None:
    result = block(whole_weight=0).search_sync("sec passwords and gen and bill invoices")
    assert [r.route for r in result.routing_plan] == ["sec", "general", "bill"]
    assert len(result.failures) == 1
    failure = result.failures[0]
    assert (failure.sub_query, failure.route) == ("sec passwords", "sec")
    assert "ConnectionError: index unreachable" in failure.error
    assert {p.chunk_id for p in result.passages} == {"gen-1", "bill-1"}
    assert {h.route for p in result.passages for h in p.found_by} == {"general", "bill"}


def test_every_sub_query_failing_fails_the_question() -> None:
    routes = [Route(name="bill", retrieve={"retriever": "memory"}), Route(name="general")]
    searched = block(Broken(), routes=routes, retrievers={"memory": Memory()})
    with pytest.raises(RetrievalFailedError, match="every sub-query .* failed") as info:
        searched.search_sync("one and two")
    assert "'one'" in str(info.value) and "'two'" in str(info.value)
    outcome = searched.build().run_sync(["one and two", "bill x"])
    assert [r.query for r in outcome] == ["bill x"] and outcome[0].passages
    (failed,) = outcome.failed
    assert isinstance(failed, ItemFailed) and failed.item.query == "one and two"
    assert failed.error_type == "RetrievalFailedError"
    assert "ConnectionError" in failed.reason


def test_in_a_run_each_question_keeps_its_own_failures() -> None:
    outcome = block().build().run_sync(["bill x and sec y", "sec only", "gen z"])
    answered = {r.query: r for r in outcome}
    assert set(answered) == {"bill x and sec y", "gen z"}
    assert [f.route for f in answered["bill x and sec y"].failures] == ["sec"]
    assert answered["gen z"].failures == []
    assert [f.item.query for f in outcome.failed] == ["sec only"]


def test_an_empty_index_and_a_question_with_no_match() -> None:
    empty = block(Memory(chunks=[]), routes=[Route(name="general")], retrievers={})
    result = empty.search_sync("gen anything and bill more")
    assert result.passages == [] and result.failures == []
    assert len(result.routing_plan) == 2
    nothing = block(routes=[Route(name="general")], retrievers={})
    assert nothing.search_sync("zebras and unicorns").passages == []


def test_a_route_naming_an_unknown_retriever_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="'missing'"):
        block(routes=[Route(name="general", retrieve={"retriever": "missing"})], retrievers={})
    with pytest.raises(ComponentTypeError):
        MultiQueryRetrievalPipeline(Split(), FirstWord(ROUTES), object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="top_k"):
        block(top_k=0)


def test_a_route_naming_a_registered_retriever_gets_it_built(ragloom_registry) -> None:
    ragloom_registry.register("retriever", "memory", Memory)
    routes = [
        Route(name="bill", retrieve={"retriever": "memory", "params": {"label": "from-file"}}),
        Route(name="general"),
    ]
    searched = MultiQueryRetrievalPipeline(
        Split(), FirstWord(routes), Memory(chunks=[]), registry=ragloom_registry
    )
    built = searched.retrievers["memory"]
    assert isinstance(built, Memory) and built.label == "from-file"
    result = searched.search_sync("bill refund and gen other")
    assert [p.chunk_id for p in result.passages] == ["bill-1", "bill-2"]


@pytest.mark.parametrize(
    "backend",
    [
        "asyncio",
        pytest.param(
            "trio",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("trio") is None, reason="trio is not installed"
            ),
        ),
    ],
)
def test_the_pipeline_streams_results_in_input_order(backend: str) -> None:
    questions = [f"gen {n} and bill {n}" for n in range(20)]
    pipeline = block().build()
    results = anyio.run(pipeline.run, questions, backend=backend)
    assert [r.query for r in results] == questions
    assert all(isinstance(p, FusedPassage) for r in results for p in r.passages)
    assert all(r.passages and not r.failures for r in results)
