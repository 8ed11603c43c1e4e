"""The answerer contract: subclass it, provide an ``answerer`` fixture, get it checked.

Example::

    from ragloom.testing import AnswererContract

    class TestMyAnswerer(AnswererContract):
        @pytest.fixture
        def answerer(self):
            return MyAnswerer(model="...")

The kit hands the answerer retrieval results it builds over its own documents (the corpus of
:mod:`ragloom.testing.retrievers`, cut into paragraphs with exact offsets): a question split
into two asks, a question asked whole, a passage without offsets, and a result with no
passages at all. What is checked: the answer is an :class:`~ragloom.answering.Answer` for the
question asked; every citation names a passage it was given, by number, chunk id and document,
and quotes exactly ``document.content[start:end]`` (for a passage without offsets, a slice of
the passage); a claim or an answer that cites nothing says :data:`~ragloom.answering.NOT_FOUND`;
a result without passages is answered "not found" with no citation; the synchronous and async
paths give the same answer; the answerer's ``config()`` rebuilds it.

:func:`make_retrieval` builds such results for an author's own tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import pytest

from .._hashing import canonical
from ..answering import NOT_FOUND, Answer, Answerer, check_citations
from ..models import Document
from ..multi_retrieval import FusedPassage, PassageHit, RetrievalResult
from .contracts import check_rebuilds
from .retrievers import contract_corpus

__all__ = ["AnswererContract", "contract_questions", "make_retrieval", "paragraphs"]


def paragraphs(document: Document) -> list[tuple[int, int]]:
    """The exact ``(start, end)`` spans of ``document``'s paragraphs (split at blank lines)."""
    spans: list[tuple[int, int]] = []
    text = document.content
    start = 0
    while start < len(text):
        end = text.find("\n\n", start)
        end = len(text) if end < 0 else end
        if text[start:end].strip():
            spans.append((start, end))
        start = end + 2
    return spans


def make_retrieval(
    question: str,
    found: Mapping[str, Sequence[tuple[str, int]]],
    corpus: Sequence[Document],
    *,
    without_offsets: Sequence[tuple[str, int]] = (),
) -> RetrievalResult:
    """A retrieval result for ``question``: ``found`` maps each ask to the passages it found,
    best first, each ``(document id, paragraph number)`` of ``corpus`` (paragraphs as
    :func:`paragraphs` cuts them). Passages are fused in order of their best rank; those in
    ``without_offsets`` lose their offsets (as rendered text does)."""
    documents = {doc.id: doc for doc in corpus}
    hits: dict[tuple[str, int], list[PassageHit]] = {}
    for ask, passages in found.items():
        for rank, key in enumerate(passages, 1):
            hits.setdefault(key, []).append(
                PassageHit(sub_query=ask, route="docs", rank=rank, score=1.0 / rank)
            )
    order = sorted(hits, key=lambda key: (min(h.rank for h in hits[key]), list(hits).index(key)))
    fused = []
    for position, (doc_id, number) in enumerate(order, 1):
        document = documents[doc_id]
        start, end = paragraphs(document)[number]
        rendered = (doc_id, number) in without_offsets
        fused.append(FusedPassage(
            chunk_id=f"{doc_id}#{number}",
            document_id=doc_id,
            start=None if rendered else start,
            end=None if rendered else end,
            content=document.content[start:end],
            metadata=dict(document.metadata),
            score=1.0 / position,
            found_by=hits[(doc_id, number)],
        ))
    asks = list(found)
    return RetrievalResult(query=question, sub_queries=asks, passages=fused)


def contract_questions(corpus: Sequence[Document]) -> list[tuple[str, RetrievalResult]]:
    """The kit's questions over :func:`~ragloom.testing.retrievers.contract_corpus`, each with
    the result a search would give."""
    refund, cards = "How long does a refund take?", "Which cards are accepted?"
    password = "How do I reset a forgotten password?"
    return [
        (
            "How long does a refund take and which cards are accepted?",
            make_retrieval(
                "How long does a refund take and which cards are accepted?",
                {
                    refund: [("invoices", 1), ("invoices", 0), ("payment-methods", 0)],
                    cards: [("payment-methods", 0), ("payment-methods", 1)],
                },
                corpus,
            ),
        ),
        (password, make_retrieval(password, {password: [("passwords", 0), ("passwords", 1)]},
                                  corpus)),
        (
            "What does the audit log record?",
            make_retrieval(
                "What does the audit log record?",
                {"What does the audit log record?": [("audit-log", 0), ("proxy", 0)]},
                corpus, without_offsets=[("audit-log", 0)],
            ),
        ),
    ]


def _answer(answerer: Answerer, question: str, retrieval: RetrievalResult) -> Answer:
    async def run() -> Answer:
        return await answerer.answer(question, retrieval)

    return anyio.run(run)


def _says_not_found(text: str) -> bool:
    return NOT_FOUND.casefold().rstrip(".") in text.casefold()


class AnswererContract:
    """The answerer family's contract. Provide ``answerer``; override ``corpus`` and
    ``questions`` (``(question, RetrievalResult)`` pairs over the corpus) to check it on
    your own documents."""

    @pytest.fixture
    def answerer(self) -> Answerer:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide an `answerer` fixture returning your answerer")

    @pytest.fixture
    def corpus(self) -> list[Document]:
        return contract_corpus()

    @pytest.fixture
    def questions(self, corpus: list[Document]) -> list[tuple[str, RetrievalResult]]:
        return contract_questions(corpus)

    def test_is_an_answerer_with_identity(self, answerer: Answerer) -> None:
        assert isinstance(answerer, Answerer)
        assert isinstance(answerer.config_hash, str) and len(answerer.config_hash) == 32
        canonical(dict(answerer.config()))  # config() must be plain, hashable data

    def test_answers_the_question_asked(
        self, answerer: Answerer, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        for question, retrieval in questions:
            answer = _answer(answerer, question, retrieval)
            assert isinstance(answer, Answer), f"answer() returned {type(answer).__name__}"
            assert answer.question == question
            assert answer.text.strip(), f"{question!r}: the answer has no text"
            asks = set(retrieval.sub_queries) | {retrieval.query}
            for claim in answer.claims:
                assert claim.ask is None or claim.ask in asks, (
                    f"{question!r}: a claim answers {claim.ask!r}, which is not an ask"
                )

    def test_citations_are_exact_slices_of_their_documents(
        self,
        answerer: Answerer,
        corpus: list[Document],
        questions: list[tuple[str, RetrievalResult]],
    ) -> None:
        documents = {doc.id: doc for doc in corpus}
        cited = 0
        for question, retrieval in questions:
            answer = _answer(answerer, question, retrieval)
            problems = check_citations(answer, retrieval)
            assert not problems, f"{question!r}: {problems}"
            for citation in answer.citations:
                cited += 1
                passage = retrieval.passages[citation.passage - 1]
                assert citation.quote.strip(), f"{question!r}: an empty quote"
                if citation.start is None:
                    assert passage.start is None and citation.quote in passage.content
                    continue
                document = documents[str(citation.document_id)]
                assert document.content[citation.start : citation.end] == citation.quote, (
                    f"{question!r}: the quote of passage {citation.passage} is not "
                    f"{document.id}[{citation.start}:{citation.end}]"
                )
        assert cited, "no question of the kit was answered with a citation"

    def test_what_cites_nothing_says_so(
        self, answerer: Answerer, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        for question, retrieval in questions:
            answer = _answer(answerer, question, retrieval)
            for claim in answer.claims:
                if not claim.citations:
                    assert _says_not_found(claim.text), (
                        f"{question!r}: the claim {claim.text!r} cites nothing and does not "
                        "say it was not found"
                    )
            if not answer.found:
                assert _says_not_found(answer.text), (question, answer.text)

    def test_no_passages_no_citations(self, answerer: Answerer) -> None:
        question = "What is the airspeed velocity of an unladen swallow?"
        empty = RetrievalResult(query=question, sub_queries=[question], passages=[])
        answer = _answer(answerer, question, empty)
        assert answer.citations == [] and answer.found is False
        assert _says_not_found(answer.text), answer.text

    def test_sync_and_async_paths_agree(
        self, answerer: Answerer, questions: list[tuple[str, RetrievalResult]]
    ) -> None:
        for question, retrieval in questions:
            synchronous = answerer.answer_sync(question, retrieval)
            asynchronous = _answer(answerer, question, retrieval)
            assert _shape(synchronous) == _shape(asynchronous), question

    def test_config_rebuilds(self, answerer: Answerer) -> None:
        check_rebuilds(answerer)


def _shape(answer: Answer) -> Any:
    return (answer.text, [c.model_dump() for c in answer.citations], answer.not_found)
