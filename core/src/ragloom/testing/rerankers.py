"""The reranker contract: subclass it, provide a ``reranker`` fixture, get it checked.

Example::

    from ragloom.testing import RerankerContract

    class TestMyReranker(RerankerContract):
        @pytest.fixture
        def reranker(self):
            return MyReranker(depth=20)

The kit hands the reranker the fused passages of questions over its own documents (the corpus
of :mod:`ragloom.testing.retrievers`, cut into paragraphs with exact offsets, as
:func:`~ragloom.testing.make_retrieval` builds them): a question split into two asks, a
question asked whole, a passage without offsets. What is checked, at several ``top_k``: the
answer is a list of the passages given, each at most once, at most ``top_k`` of them, and at
least one when some were given; the passages come back unchanged (a reranker chooses and
orders, it does not rewrite); no passages give none; the same input gives the same answer
twice, from several threads at once too; the reranker's ``config()`` rebuilds it and its
identity does not move while it reranks; a search with it (``components={"reranker": ...}``)
answers with the passages it chose, in its order.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from ..models import Document
from ..multi_retrieval import FusedPassage, RetrievalResult
from ..reranking import Reranker
from .answerers import contract_questions
from .contracts import check_rebuilds
from .retrievers import contract_corpus

__all__ = ["RerankerContract"]


def _ids(passages: Sequence[Any]) -> list[str]:
    return [str(getattr(p, "chunk_id", p)) for p in passages]


class RerankerContract:
    """The reranker family's contract. Provide ``reranker``; override ``corpus`` and
    ``questions`` (``(question, RetrievalResult)`` pairs over the corpus) to check it on
    your own documents."""

    #: The ``top_k`` values each question is reranked with.
    top_ks = (1, 2, 10)

    @pytest.fixture
    def corpus(self) -> list[Document]:
        return contract_corpus()

    @pytest.fixture
    def questions(self, corpus: list[Document]) -> list[tuple[str, RetrievalResult]]:
        return contract_questions(corpus)

    def _rerank(
        self, reranker: Reranker, question: str, passages: list[FusedPassage], top_k: int
    ) -> list[FusedPassage]:
        chosen = reranker.rerank(question, list(passages), top_k)
        assert isinstance(chosen, list), (
            f"rerank() must return a list, got {type(chosen).__name__}"
        )
        return chosen

    def test_is_a_reranker(self, reranker: Any) -> None:
        assert isinstance(reranker, Reranker), (
            f"{type(reranker).__name__} must derive from ragloom.reranking.Reranker"
        )

    def test_returns_some_of_the_passages_given_each_once(
        self, reranker: Reranker, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        for question, result in questions:
            given = {p.chunk_id: p for p in result.passages}
            for top_k in self.top_ks:
                chosen = self._rerank(reranker, question, result.passages, top_k)
                ids = _ids(chosen)
                assert set(ids) <= set(given), (
                    f"{question!r}: passages not given: {sorted(set(ids) - set(given))}"
                )
                assert len(ids) == len(set(ids)), f"{question!r}: a passage returned twice"
                assert len(chosen) <= top_k, f"{question!r}: {len(chosen)} > top_k={top_k}"
                assert chosen, f"{question!r}: {len(given)} passages given, none returned"
                for passage in chosen:
                    assert passage == given[passage.chunk_id], (
                        f"{question!r}: passage {passage.chunk_id!r} came back changed"
                    )
                # the checked path a search takes agrees
                assert _ids(reranker.on_fused(question, list(result.passages), top_k)) == ids

    def test_no_passages_give_none(self, reranker: Reranker) -> None:
        assert self._rerank(reranker, "anything?", [], 5) == []

    def test_is_deterministic_also_across_threads(
        self, reranker: Reranker, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        def answers() -> list[list[str]]:
            return [
                _ids(self._rerank(reranker, q, r.passages, top_k))
                for q, r in questions
                for top_k in self.top_ks
            ]

        first = answers()
        assert answers() == first, "the same input must give the same answer"
        with ThreadPoolExecutor(max_workers=4) as pool:
            for got in pool.map(lambda _: answers(), range(4)):
                assert got == first, "answers differ when reranking from several threads"

    def test_config_rebuilds_it_and_identity_holds(
        self, reranker: Reranker, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        check_rebuilds(reranker)
        before = reranker.config_hash
        for question, result in questions:
            self._rerank(reranker, question, result.passages, 3)
        assert reranker.config_hash == before, "reranking must not move the identity"

    def test_a_search_answers_with_its_choice(
        self, reranker: Reranker, corpus: list[Document],
        questions: list[tuple[str, RetrievalResult]],
    ) -> None:
        import anyio

        from ..context import ExecutionContext
        from ..multi_query import MultiQueryRoutingState, SubQueryRoute
        from ..multi_retrieval import RetrieveStep
        from ..retrieval import Retriever
        from ..stores import ScoredChunk

        question, result = questions[0]
        chunks = [_Chunk(p) for p in result.passages]

        class Listed(Retriever):
            def retrieve(self, query: str, *, top_k: int | None = None,
                         where: Any = None) -> list[ScoredChunk]:
                return [ScoredChunk(c, 1.0 / n) for n, c in enumerate(chunks, 1)][:top_k]

        top_k = 2
        step = RetrieveStep(Listed(), top_k=top_k, components={"reranker": reranker},
                            whole_weight=0)
        state = MultiQueryRoutingState(
            query=question, sub_queries=[question],
            routing_plan=[SubQueryRoute(sub_query=question, route="docs")],
        )

        async def run() -> RetrievalResult:
            answer: RetrievalResult = await step.transform(state, ExecutionContext())
            return answer

        answered = anyio.run(run)
        # what the reranker chooses from the same fused passages
        fused = RetrieveStep(Listed(), top_k=len(chunks), whole_weight=0)

        async def plain() -> RetrievalResult:
            answer: RetrievalResult = await fused.transform(state, ExecutionContext())
            return answer

        expected = reranker.on_fused(question, anyio.run(plain).passages, top_k)
        assert _ids(answered.passages) == _ids(expected)


class _Chunk:
    """A found chunk with a passage's id, lineage and text."""

    def __init__(self, passage: FusedPassage) -> None:
        self.id = passage.chunk_id
        self.parent_id = passage.document_id
        self.start = passage.start
        self.end = passage.end
        self.content = passage.content
        self.metadata = dict(passage.metadata)
