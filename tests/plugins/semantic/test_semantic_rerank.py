"""ragloom-semantic's ``mmr`` reranker: the kit's reranker contract, what maximal marginal
relevance picks, and its parameter checks."""

from __future__ import annotations

import numpy as np
import pytest
from ragloom import ConfigurationError
from ragloom.testing import RerankerContract
from ragloom.testing.answerers import contract_questions
from ragloom.testing.retrievers import contract_corpus
from ragloom_semantic.rerank import MMRReranker, mmr_order


class TestMMRByWordCounts(RerankerContract):
    @pytest.fixture
    def reranker(self) -> MMRReranker:
        return MMRReranker(lambda_mult=0.5)


def test_mmr_skips_a_near_copy_of_a_passage_already_picked() -> None:
    # two passages say the same thing (1 and 2), the third something else, a bit less relevant
    vectors = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0]])
    relevance = [1.0, 0.95, 0.8]
    assert mmr_order(relevance, vectors, 3, lambda_mult=1.0) == [0, 1, 2]
    assert mmr_order(relevance, vectors, 3, lambda_mult=0.5) == [0, 2, 1]
    assert mmr_order(relevance, vectors, 2, lambda_mult=0.5) == [0, 2]
    # a zero vector is similar to nothing; ties go to the earlier passage
    assert mmr_order([1.0, 1.0], np.zeros((2, 2)), 2, lambda_mult=0.5) == [0, 1]
    assert mmr_order([], np.zeros((0, 2)), 3, lambda_mult=0.5) == []


def test_lambda_one_keeps_the_fused_order_and_lower_spreads_the_asks() -> None:
    question, result = contract_questions(contract_corpus())[0]
    passages = result.passages
    kept = MMRReranker(lambda_mult=1).rerank(question, passages, 3)
    assert kept == passages[:3]
    spread = MMRReranker(lambda_mult=0.3).rerank(question, passages, 2)
    # the refund ask's two invoice paragraphs are not both kept before the cards' passage
    assert {p.document_id for p in spread} == {"invoices", "payment-methods"}


def test_the_embedder_gives_the_vectors_when_there_is_one() -> None:
    class Axis:
        """Passages about cards on one axis, the others on another."""

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] if "card" in t else [0.0, 1.0] for t in texts])

    question, result = contract_questions(contract_corpus())[0]
    chosen = MMRReranker(lambda_mult=0.5, embedder=Axis()).rerank(question, result.passages, 2)
    assert ["card" in p.content for p in chosen].count(True) == 1


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), True, "0.5"])
def test_lambda_must_be_a_number_in_0_1(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="lambda_mult must be a number in"):
        MMRReranker(lambda_mult=bad)  # type: ignore[arg-type]
