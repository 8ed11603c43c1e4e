"""The evaluation's metrics equal trec_eval's (through ir-measures and pytrec_eval) on random
rankings: recall@k, success@k, reciprocal rank and nDCG@10 with binary relevance."""

from __future__ import annotations

import random

import pytest
from ragloom.evaluation import ndcg_at, recall_at, reciprocal_rank, success_at

ir_measures = pytest.importorskip("ir_measures")

KS = (1, 3, 5, 10)
MEASURES = [
    *(ir_measures.parse_measure(f"R@{k}") for k in KS),
    *(ir_measures.parse_measure(f"Success@{k}") for k in KS),
    ir_measures.parse_measure("RR"),
    ir_measures.parse_measure("nDCG@10"),
]


def _ours(ranks: list[int | None]) -> dict[str, float]:
    values = {f"R@{k}": recall_at(ranks, k) for k in KS}
    values |= {f"Success@{k}": success_at(ranks, k) for k in KS}
    values["RR"] = reciprocal_rank(ranks)
    values["nDCG@10"] = ndcg_at(ranks, 10)
    return values


def _case(rng: random.Random, qid: str) -> tuple[list, list, list[int | None]]:
    """A random ranking of passages and random relevant units (facets): each facet is one
    relevant passage, found at its rank or not returned at all."""
    depth = rng.randint(0, 25)
    pool = [f"d{n}" for n in range(40)]
    rng.shuffle(pool)
    ranked = pool[:depth]
    facets = rng.randint(1, 6)
    relevant = rng.sample(pool, facets)
    qrels = [ir_measures.Qrel(qid, doc, 1) for doc in relevant]
    # Distinct, decreasing scores: trec_eval orders by score.
    run = [ir_measures.ScoredDoc(qid, doc, 100.0 - n) for n, doc in enumerate(ranked)]
    ranks = [ranked.index(doc) + 1 if doc in ranked else None for doc in relevant]
    return qrels, run, ranks


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_trec_eval_on_random_rankings(seed: int) -> None:
    rng = random.Random(seed)
    qrels, run, expected_ranks = [], [], {}
    for q in range(25):
        qid = f"q{q}"
        case_qrels, case_run, ranks = _case(rng, qid)
        qrels += case_qrels
        run += case_run
        expected_ranks[qid] = ranks
    reference: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(MEASURES, qrels, run):
        reference.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for qid, ranks in expected_ranks.items():
        ours = _ours(ranks)
        theirs = reference.get(qid, {})
        for name, value in ours.items():
            # trec_eval leaves out a query its run does not rank at all: every measure is 0.
            assert value == pytest.approx(theirs.get(name, 0.0), abs=1e-9), (qid, name, ranks)


def test_a_facet_found_twice_counts_once_and_a_miss_counts_zero() -> None:
    assert recall_at([2, None], 10) == 0.5
    assert reciprocal_rank([None, None]) == 0.0
    assert ndcg_at([1, 2], 10) == pytest.approx(1.0)
    assert ndcg_at([2], 10) == pytest.approx(1 / 1.584962500721156)
