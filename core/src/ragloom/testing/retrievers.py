"""The retriever contract: subclass it, index the kit's corpus in a ``retriever`` fixture, get it
checked.

Example::

    from ragloom.testing import RetrieverContract

    class TestMyRetriever(RetrieverContract):
        @pytest.fixture
        def retriever(self, corpus, tmp_path):
            index = MyIndex(tmp_path / "index")
            index.add(my_chunker.chunk_all(corpus))   # chunks keep parent_id/start/end
            yield MyRetriever(index)
            index.close()

``corpus`` is a list of :class:`~ragloom.models.Document` (a few short documents, each with a
``topic`` metadata value and some with a ``tags`` list). Index their chunks, keeping each
chunk's metadata and lineage (``parent_id`` = the document's id, ``start``/``end`` its exact
span in the document's text). Override ``corpus`` to check your retriever on your own documents,
and then ``queries``, ``relevant`` and ``where_conditions`` to match them.

What is checked: results are :class:`~ragloom.stores.ScoredChunk` lists, best first (scores
finite and non-increasing), at most ``top_k`` and never the same chunk twice; a smaller ``top_k``
keeps the best of a larger one; every passage can be traced back to its document (its text is
exactly ``document.content[start:end]`` when it has offsets) and keeps its metadata; each
relevant document is found; ``where`` keeps only chunks whose metadata satisfies it (with the
meaning of :func:`~ragloom.stores.matches_where`) and a condition nothing meets finds nothing;
the same query gives the same answer twice, from several threads at once too; a blank query
gives a (possibly empty) valid answer or an ``InvalidInputError``, never another error; the
retriever's identity is stable and does not move while it answers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from .._hashing import canonical
from ..errors import InvalidInputError
from ..models import Document
from ..retrieval import Retriever
from ..stores import ScoredChunk, matches_where

__all__ = ["RetrieverContract", "contract_corpus"]


_TEXTS: dict[str, tuple[str, dict[str, Any]]] = {
    "invoices": (
        "Invoices are sent on the first day of every month. An invoice lists each seat and "
        "the plan it is on.\n\nA refund is paid back to the card that was charged, within ten "
        "working days of the request. Refunds for annual plans are prorated.",
        {"topic": "billing", "tags": ["money", "invoice"]},
    ),
    "payment-methods": (
        "We accept credit cards and bank transfers. A card that is declined is tried again "
        "three days later.\n\nTo change the card on file, open the billing page and add the "
        "new card before removing the old one.",
        {"topic": "billing", "tags": ["money"]},
    ),
    "install": (
        "Install the command line tool with the package manager of your system. The tool "
        "needs Python 3.11 or later.\n\nUpgrading replaces the old version in place; your "
        "settings are kept.",
        {"topic": "setup"},
    ),
    "proxy": (
        "Behind a corporate proxy, set the HTTPS_PROXY environment variable before you run "
        "the tool. Certificates of the proxy must be trusted by the system.",
        {"topic": "setup", "tags": ["network"]},
    ),
    "passwords": (
        "Passwords must be at least twelve characters long. A forgotten password is reset "
        "from the sign-in page: a link valid for one hour is mailed to you.\n\nTwo-factor "
        "authentication adds a code from an authenticator app to every sign-in.",
        {"topic": "security"},
    ),
    "audit-log": (
        "The audit log records every sign-in, every change of permissions and every export "
        "of data, with the time and the address it came from. It is kept for a year.",
        {"topic": "security", "tags": ["compliance"]},
    ),
}


def contract_corpus() -> list[Document]:
    """The kit's documents: short texts on billing, setup and security, with metadata."""
    return [
        Document(id=doc_id, content=text, metadata=dict(metadata))
        for doc_id, (text, metadata) in _TEXTS.items()
    ]


def _ids(results: Sequence[ScoredChunk]) -> list[str]:
    return [str(hit.chunk.id) for hit in results]


def _answer(results: Sequence[ScoredChunk]) -> list[tuple[str, float]]:
    return [(str(hit.chunk.id), float(hit.score)) for hit in results]


class RetrieverContract:
    """The retriever family's contract. Provide ``retriever``: a retriever over ``corpus``.

    Optionally override ``corpus`` (the documents the author's fixture indexes), ``queries``
    (questions about them), ``relevant`` (question -> ids of documents one of which must be
    among the first ``relevant_k`` passages) and ``where_conditions`` (metadata conditions to
    check, at least one of which matches some chunk).
    """

    #: How deep a relevant document must be found.
    relevant_k = 3

    @pytest.fixture
    def corpus(self) -> list[Document]:
        return contract_corpus()

    @pytest.fixture
    def retriever(self, corpus: list[Document]) -> Retriever:  # pragma: no cover - overridden
        raise NotImplementedError(
            "provide a `retriever` fixture: a Retriever over the chunks of `corpus`"
        )

    @pytest.fixture
    def queries(self) -> list[str]:
        return [
            "How long does a refund take?",
            "How do I reset a forgotten password?",
            "What do I set behind a corporate proxy?",
            "Which cards are accepted?",
            "What does the audit log record?",
        ]

    @pytest.fixture
    def relevant(self) -> dict[str, set[str]]:
        return {
            "How long does a refund take?": {"invoices"},
            "How do I reset a forgotten password?": {"passwords"},
            "What do I set behind a corporate proxy?": {"proxy"},
            "Which cards are accepted?": {"payment-methods"},
            "What does the audit log record?": {"audit-log"},
        }

    @pytest.fixture
    def where_conditions(self) -> list[dict[str, Any]]:
        return [
            {"topic": "billing"},
            {"topic": ["setup", "security"]},
            {"tags": "money"},
            {"topic": "billing", "tags": "invoice"},
        ]

    # -- the answer's shape -------------------------------------------------------------------

    def test_is_a_retriever_with_identity(self, retriever: Retriever) -> None:
        assert isinstance(retriever, Retriever)
        assert isinstance(retriever.config_hash, str) and len(retriever.config_hash) == 32
        canonical(dict(retriever.config()))  # config() must be plain, hashable data

    def test_best_first_at_most_top_k_no_duplicates(
        self, retriever: Retriever, queries: list[str]
    ) -> None:
        for query in queries:
            for top_k in (1, 3, 50):
                results = retriever.retrieve(query, top_k=top_k)
                assert isinstance(results, list), f"retrieve() returned {type(results).__name__}"
                assert len(results) <= top_k, f"{len(results)} results for top_k={top_k}"
                for hit in results:
                    assert isinstance(hit, ScoredChunk), f"a result is a {type(hit).__name__}"
                    assert isinstance(hit.score, float | int) and math.isfinite(hit.score), (
                        f"chunk {hit.chunk.id!r} has score {hit.score!r}"
                    )
                scores = [hit.score for hit in results]
                assert scores == sorted(scores, reverse=True), (
                    f"results for {query!r} are not best first: scores {scores}"
                )
                ids = _ids(results)
                assert len(ids) == len(set(ids)), f"a chunk appears twice for {query!r}: {ids}"

    def test_a_smaller_top_k_keeps_the_best(
        self, retriever: Retriever, queries: list[str]
    ) -> None:
        for query in queries:
            many = retriever.retrieve(query, top_k=10)
            few = retriever.retrieve(query, top_k=3)
            assert len(few) == min(3, len(many)), (
                f"{query!r}: top_k=3 gave {len(few)} results, top_k=10 gave {len(many)}"
            )
            if few:
                cut = few[-1].score  # ties at the cut may be broken either way
                best = {i for i, s in _answer(many) if s > cut}
                assert best <= set(_ids(few)), (
                    f"{query!r}: the best of top_k=10 are missing from top_k=3"
                )

    def test_passages_trace_back_to_their_documents(
        self, retriever: Retriever, corpus: list[Document], queries: list[str]
    ) -> None:
        documents = {doc.id: doc for doc in corpus}
        for query in queries:
            for hit in retriever.retrieve(query, top_k=50):
                chunk = hit.chunk
                assert isinstance(getattr(chunk, "id", None), str) and chunk.id, (
                    "every passage needs a chunk id"
                )
                parent = documents.get(getattr(chunk, "parent_id", None))  # type: ignore[arg-type]
                assert parent is not None, (
                    f"chunk {chunk.id!r} names parent {getattr(chunk, 'parent_id', None)!r}, "
                    "which is no document of the corpus"
                )
                if chunk.start is not None:
                    assert parent.content[chunk.start : chunk.end] == chunk.content, (
                        f"chunk {chunk.id!r}: its text is not {parent.id}[{chunk.start}:"
                        f"{chunk.end}]"
                    )
                missing = {k: v for k, v in parent.metadata.items() if chunk.metadata.get(k) != v}
                assert not missing, (
                    f"chunk {chunk.id!r} lost its document's metadata {sorted(missing)}"
                )

    def test_relevant_documents_are_found(
        self, retriever: Retriever, relevant: dict[str, set[str]]
    ) -> None:
        for query, wanted in relevant.items():
            hits = retriever.retrieve(query, top_k=self.relevant_k)
            found = [hit.chunk.parent_id for hit in hits]
            assert set(found) & set(wanted), (
                f"{query!r}: none of {sorted(wanted)} in the first {self.relevant_k} "
                f"passages (found {found})"
            )

    # -- where --------------------------------------------------------------------------------

    def test_where_keeps_only_matching_chunks(
        self,
        retriever: Retriever,
        queries: list[str],
        where_conditions: list[dict[str, Any]],
    ) -> None:
        matched_any = False
        for where in where_conditions:
            for query in queries:
                results = retriever.retrieve(query, top_k=50, where=where)
                for hit in results:
                    assert matches_where(hit.chunk.metadata, where), (
                        f"{where!r} kept chunk {hit.chunk.id!r} with metadata "
                        f"{hit.chunk.metadata!r}"
                    )
                matched_any = matched_any or bool(results)
                unfiltered = retriever.retrieve(query, top_k=50)
                expected = [h for h in unfiltered if matches_where(h.chunk.metadata, where)]
                assert set(_ids(expected)) <= set(_ids(results)), (
                    f"{where!r} dropped matching chunks for {query!r}"
                )
        assert matched_any, "no where condition found anything: check where_conditions"

    def test_where_nothing_matches_finds_nothing(
        self, retriever: Retriever, queries: list[str]
    ) -> None:
        for query in queries:
            assert retriever.retrieve(query, where={"topic": "no-such-topic-anywhere"}) == []
            assert retriever.retrieve(query, where={"no_such_key_anywhere": 1}) == []

    # -- stability ----------------------------------------------------------------------------

    def test_deterministic(self, retriever: Retriever, queries: list[str]) -> None:
        for query in queries:
            first = _answer(retriever.retrieve(query, top_k=5))
            again = _answer(retriever.retrieve(query, top_k=5))
            assert first == again, f"{query!r} answered differently twice"

    def test_concurrent_calls_agree(self, retriever: Retriever, queries: list[str]) -> None:
        expected = [_answer(retriever.retrieve(q, top_k=5)) for q in queries]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda q: _answer(retriever.retrieve(q, top_k=5)), queries * 3))
        assert got == expected * 3, "answers from several threads at once differ"

    def test_blank_query(self, retriever: Retriever) -> None:
        for blank in ("", "   \n"):
            try:
                results = retriever.retrieve(blank, top_k=5)
            except InvalidInputError:
                continue
            assert isinstance(results, list) and len(results) <= 5
            assert all(isinstance(hit, ScoredChunk) for hit in results)

    def test_identity_is_stable(self, retriever: Retriever, queries: list[str]) -> None:
        before = retriever.config_hash, canonical(dict(retriever.config()))
        for query in queries:
            retriever.retrieve(query, top_k=3, where={"topic": "billing"})
        assert (retriever.config_hash, canonical(dict(retriever.config()))) == before, (
            "answering queries changed the retriever's identity"
        )

    def test_where_and_top_k_arguments_are_checked(self, retriever: Retriever) -> None:
        for bad in (0, -1):
            with pytest.raises((ValueError, InvalidInputError)):
                retriever.retrieve("refund", top_k=bad)

