"""The retriever contract passes a good retriever and catches broken ones.

A word-overlap retriever written here (no store, no model) shows that the contract asks only for
what the ``Retriever`` base class documents; each broken variant fails the tests that name its
fault, and nothing else.
"""

from __future__ import annotations

import re

import pytest

RETRIEVERS = '''
import re
import pytest
from ragloom.errors import InvalidInputError
from ragloom.retrieval import Retriever
from ragloom.stores import ScoredChunk, matches_where
from ragloom.testing import RetrieverContract


def words(text):
    return set(re.findall(r"[a-z]+", text.lower())) - {"the", "a", "do", "i", "how", "what"}


class Overlap(Retriever):
    step_id = "kit/overlap"

    def __init__(self, chunks, top_k=4):
        self.chunks = chunks
        self.top_k = top_k

    def config(self):
        return {"top_k": self.top_k}

    def ranked(self, query, where):
        scored = []
        for n, chunk in enumerate(self.chunks):
            if not matches_where(chunk.metadata, where):
                continue
            shared = len(words(query) & words(chunk.content))
            if shared:
                scored.append((-shared - 1 / (n + 2), n, chunk))
        scored.sort(key=lambda t: t[:2])
        return [ScoredChunk(chunk, float(-s)) for s, _, chunk in scored]

    def retrieve(self, query, *, top_k=None, where=None):
        if top_k is not None and top_k < 1:
            raise InvalidInputError("top_k must be >= 1")
        return self.ranked(query, where)[: top_k or self.top_k]


class IgnoresWhere(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        return super().retrieve(query, top_k=top_k)


class WorstFirst(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        deep = top_k if top_k is not None and top_k < 1 else 1000
        everything = super().retrieve(query, top_k=deep, where=where)
        return everything[::-1][: top_k or self.top_k]


class TooMany(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        return self.ranked(query, where)[: (top_k or self.top_k) + 1]


class LosesOffsets(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        return [
            ScoredChunk(h.chunk.model_copy(update={"content": h.chunk.content.strip()}), h.score)
            for h in super().retrieve(query, top_k=top_k, where=where)
        ]


class FailsOnBlank(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        if not query.strip():
            raise KeyError("empty")
        return super().retrieve(query, top_k=top_k, where=where)


class Chatty(Overlap):
    def retrieve(self, query, *, top_k=None, where=None):
        self.top_k += 1  # a setting that moves as it answers
        return super().retrieve(query, top_k=top_k, where=where)


def chunks_of(corpus):
    out = []
    for doc in corpus:
        start = 0
        for n, part in enumerate(re.split(r"(?<=\\n\\n)", doc.content)):
            out.append(doc.model_copy(update={
                "id": f"{doc.id}#{n}", "content": part, "parent_id": doc.id, "index": n,
                "start": start, "end": start + len(part),
            }))
            start += len(part)
    return out


def fixture_for(cls):
    @pytest.fixture
    def retriever(self, corpus):
        return cls(chunks_of(corpus))
    return retriever


class TestGood(RetrieverContract):
    retriever = fixture_for(Overlap)


class TestIgnoresWhere(RetrieverContract):
    retriever = fixture_for(IgnoresWhere)


class TestWorstFirst(RetrieverContract):
    retriever = fixture_for(WorstFirst)


class TestTooMany(RetrieverContract):
    retriever = fixture_for(TooMany)


class TestLosesOffsets(RetrieverContract):
    retriever = fixture_for(LosesOffsets)


class TestFailsOnBlank(RetrieverContract):
    retriever = fixture_for(FailsOnBlank)


class TestChatty(RetrieverContract):
    retriever = fixture_for(Chatty)
'''


def failures(pytester: pytest.Pytester, source: str) -> dict[str, set[str]]:
    pytester.makepyfile(test_subject=source)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-rf")
    failed: dict[str, set[str]] = {}
    for line in result.outlines:
        match = re.match(r"FAILED \S+::(\w+)::(\w+)", line)
        if match:
            failed.setdefault(match.group(1), set()).add(match.group(2))
    assert result.ret in (0, 1), "\n".join(result.outlines[-30:])
    return failed


def test_retriever_contract(pytester: pytest.Pytester) -> None:
    failed = failures(pytester, RETRIEVERS)
    assert "TestGood" not in failed
    assert failed["TestIgnoresWhere"] == {
        "test_where_keeps_only_matching_chunks", "test_where_nothing_matches_finds_nothing",
    }
    assert failed["TestWorstFirst"] == {
        "test_best_first_at_most_top_k_no_duplicates", "test_a_smaller_top_k_keeps_the_best",
    }
    assert failed["TestTooMany"] == {
        "test_best_first_at_most_top_k_no_duplicates", "test_a_smaller_top_k_keeps_the_best",
        "test_where_and_top_k_arguments_are_checked",
    }
    assert failed["TestLosesOffsets"] == {"test_passages_trace_back_to_their_documents"}
    assert failed["TestFailsOnBlank"] == {"test_blank_query"}
    assert failed["TestChatty"] == {"test_identity_is_stable"}


def test_the_retriever_kind_names_its_contract() -> None:
    from ragloom.kinds import kind
    from ragloom.testing import RetrieverContract

    assert kind("retriever").contract_type() is RetrieverContract
