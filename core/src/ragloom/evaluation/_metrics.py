"""Ranking metrics with trec_eval's definitions, over the ranks at which facets were found.

A question's outcome is, for each facet, the rank (1-based) of the first passage that answers
it, or ``None`` when no returned passage does. Every facet is one relevant unit of gain 1:

- recall@k: the share of facets found at rank <= k (trec_eval ``recall_k``);
- success@k (hit rate): 1 when some facet is found at rank <= k (``success_k``);
- complete@k: 1 when every facet is found at rank <= k (all asks of the question answered);
- reciprocal rank: 1 / the rank of the first passage that answers any facet (``recip_rank``);
- nDCG@k: discounted gain of the facets at their ranks, ``sum 1/log2(rank + 1)``, over the
  ideal (every facet at the top), as trec_eval's ``ndcg_cut_k`` with binary relevance.

A passage that answers a facet already found adds nothing (it is not new information), and a
passage answering two facets counts for both at its rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["complete_at", "ndcg_at", "recall_at", "reciprocal_rank", "success_at"]

Ranks = Sequence[int | None]


def recall_at(ranks: Ranks, k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def success_at(ranks: Ranks, k: int) -> float:
    return 1.0 if any(r is not None and r <= k for r in ranks) else 0.0


def complete_at(ranks: Ranks, k: int) -> float:
    return 1.0 if ranks and all(r is not None and r <= k for r in ranks) else 0.0


def reciprocal_rank(ranks: Ranks) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_at(ranks: Ranks, k: int) -> float:
    if not ranks:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(ranks), k) + 1))
    return dcg / ideal
