"""A question's fused passages show many documents before one document's next passage, from
searches that ask for more than the answer keeps: ``spread_documents`` (properties), the
retrieve step (``per_document``, ``search_depth``), the block's identity and pipeline files."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragloom.context import ExecutionContext
from ragloom.errors import ConfigurationError
from ragloom.index_routes import WholeIndex
from ragloom.multi_query import MultiQueryRoutingState, SubQueryRoute
from ragloom.multi_retrieval import (
    DEFAULT_PER_DOCUMENT,
    DEFAULT_SEARCH_DEPTH,
    MultiQueryRetrievalPipeline,
    RetrievalResult,
    RetrieveStep,
)
from ragloom.query import WholeQuestion
from ragloom.retrieval import Retriever, spread_documents
from ragloom.stores import ScoredChunk

# -- spread_documents --------------------------------------------------------------------------

_items = st.lists(st.tuples(st.sampled_from("abcde"), st.integers()), max_size=40)


@given(_items, st.integers(min_value=0, max_value=4))
def test_spreading_reorders_and_never_drops(items: list[tuple[str, int]], cap: int) -> None:
    spread = spread_documents(items, cap, lambda item: item[0])
    assert sorted(spread) == sorted(items)
    if cap == 0:
        assert spread == items
        return
    # a document's first `cap` items come before every document's further ones, and each
    # group keeps the order given
    shown: dict[str, int] = {}
    firsts = []
    for item in items:
        shown[item[0]] = shown.get(item[0], 0) + 1
        firsts.append(shown[item[0]] <= cap)
    head = [item for item, first in zip(items, firsts, strict=True) if first]
    tail = [item for item, first in zip(items, firsts, strict=True) if not first]
    assert spread == head + tail
    for document in set(d for d, _ in items):
        assert sum(d == document for d, _ in head) <= cap


@given(_items)
def test_one_per_document_shows_every_document_first(items: list[tuple[str, int]]) -> None:
    spread = spread_documents(items, 1, lambda item: item[0])
    documents = len({d for d, _ in items})
    assert len({d for d, _ in spread[:documents]}) == documents
    # the first passage of each document stays where the fused order put it among the others
    assert [d for d, _ in spread[:documents]] == list(dict.fromkeys(d for d, _ in items))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1", None])
def test_a_bad_count_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="per_document must be an integer >= 0"):
        spread_documents(["x"], bad, str)


# -- the retrieve step -------------------------------------------------------------------------


class _Chunk:
    def __init__(self, chunk_id: str, document: str) -> None:
        self.id, self.parent_id, self.start, self.end = chunk_id, document, 0, 10
        self.content, self.metadata = f"text of {chunk_id} in {document}", {}


#: One long page whose every section matches (a1..a6), then two other pages.
RANKED = [_Chunk(f"a{n}", "long.html") for n in range(1, 7)] + [
    _Chunk("b1", "short.html"), _Chunk("c1", "other.html"),
]


class Ranked(Retriever):
    """RANKED, best first; records the top_k of every call."""

    def __init__(self) -> None:
        self.asked: list[int | None] = []

    def retrieve(self, query: str, *, top_k: int | None = None,
                 where: Any = None) -> list[ScoredChunk]:
        self.asked.append(top_k)
        return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(RANKED, 1)][: top_k or 10]


def _state(*asks: str) -> MultiQueryRoutingState:
    return MultiQueryRoutingState(
        query=" and ".join(asks), sub_queries=list(asks),
        routing_plan=[SubQueryRoute(sub_query=ask, route="r") for ask in asks],
    )


@pytest.mark.anyio
async def test_the_answer_shows_other_documents_before_a_pages_next_passage() -> None:
    retriever = Ranked()
    step = RetrieveStep(retriever, top_k=4, whole_weight=0, per_document=1, search_depth=2)
    result: RetrievalResult = await step.transform(_state("q?"), ExecutionContext())
    # b1 and c1 are found at ranks 7 and 8 of a search asked for 2 x 4 passages
    assert retriever.asked == [8]
    assert [p.chunk_id for p in result.passages] == ["a1", "b1", "c1", "a2"]
    assert [p.document_id for p in result.passages[:3]] == [
        "long.html", "short.html", "other.html",
    ]
    # each passage keeps its fused score and the rank its search gave it
    assert result.passages[1].score < result.passages[0].score
    assert result.passages[1].found_by[0].rank == 7


@pytest.mark.anyio
async def test_by_default_the_fused_order_from_searches_of_top_k() -> None:
    assert (DEFAULT_PER_DOCUMENT, DEFAULT_SEARCH_DEPTH) == (0, 1)
    retriever = Ranked()
    step = RetrieveStep(retriever, top_k=4, whole_weight=0)
    result: RetrievalResult = await step.transform(_state("q?"), ExecutionContext())
    assert retriever.asked == [4]
    assert [p.chunk_id for p in result.passages] == ["a1", "a2", "a3", "a4"]
    step = RetrieveStep(Ranked(), top_k=4, whole_weight=0, per_document=2)
    result = await step.transform(_state("q?"), ExecutionContext())
    # two of the long page, then the rest of the four searched: a3 and a4 go last
    assert [p.chunk_id for p in result.passages] == ["a1", "a2", "a3", "a4"]
    step = RetrieveStep(Ranked(), top_k=4, whole_weight=0, per_document=2, search_depth=2)
    result = await step.transform(_state("q?"), ExecutionContext())
    assert [p.chunk_id for p in result.passages] == ["a1", "a2", "b1", "c1"]


@pytest.mark.anyio
async def test_a_reranker_is_given_the_spread_list() -> None:
    from ragloom.reranking import Reranker

    class Keep(Reranker):
        def rerank(self, question: str, passages: list[Any], top_k: int) -> list[Any]:
            self.given = [p.chunk_id for p in passages]
            return passages[:top_k]

    keep = Keep()
    step = RetrieveStep(Ranked(), top_k=4, whole_weight=0, per_document=1, search_depth=2,
                        components={"reranker": keep})
    result: RetrievalResult = await step.transform(_state("q?"), ExecutionContext())
    # every passage of the search (2 x 4), spread, and the reranker chooses the four kept
    assert keep.given == ["a1", "b1", "c1", "a2", "a3", "a4", "a5", "a6"]
    assert [p.chunk_id for p in result.passages] == ["a1", "b1", "c1", "a2"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"per_document": -1}, "per_document must be an integer >= 0"),
        ({"search_depth": 0}, "search_depth must be an integer >= 1"),
        ({"search_depth": 2.0}, "search_depth must be an integer >= 1"),
    ],
)
def test_bad_settings_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RetrieveStep(Ranked(), **settings)
    with pytest.raises(ConfigurationError, match=message):
        MultiQueryRetrievalPipeline(WholeQuestion(), WholeIndex(), Ranked(), **settings)


def test_both_settings_reach_the_blocks_identity() -> None:
    base = RetrieveStep(Ranked())
    assert base.config()["per_document"] == DEFAULT_PER_DOCUMENT
    assert base.config()["search_depth"] == DEFAULT_SEARCH_DEPTH
    hashes = {
        RetrieveStep(Ranked(), **settings).config_hash
        for settings in ({}, {"per_document": 1}, {"search_depth": 2})
    }
    assert len(hashes) == 3
