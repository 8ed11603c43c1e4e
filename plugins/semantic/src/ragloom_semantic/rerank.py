"""``MMRReranker``: maximal marginal relevance over the passages' vectors (no model of its own).

Carbonell and Goldstein's MMR (1998) picks the answer's passages one at a time: each time the
passage with the best ``lambda_mult * relevance - (1 - lambda_mult) * redundancy``, where
relevance is the passage's fused score over the best one's (in [0, 1]) and redundancy its
highest cosine similarity to a passage already picked. A passage that says again what a better
one said gives way to one that says something else, so the answer to a compound question
covers its asks instead of repeating the first one's best passages. ``lambda_mult=1`` keeps the
fused order; lower values trade relevance for diversity.

The vectors are the search's embedder's (the one the index records, which embedded the chunks:
``ragloom search`` hands it over; the store returns passages without their vectors, and a
static model embeds a question's few dozen passages in about a millisecond). A search by text
only has no embedder: word-count vectors of the passages stand in (cosine over their word
counts).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from ragloom import ConfigurationError
from ragloom.reranking import Reranker

if TYPE_CHECKING:
    from ragloom.multi_retrieval import FusedPassage

__all__ = ["DEFAULT_LAMBDA", "MMRReranker", "mmr_order"]

#: The weight of relevance against redundancy, chosen on the development halves of the
#: evaluation sets (docs/evaluation.md).
DEFAULT_LAMBDA = 0.5

_WORD = re.compile(r"\w+")


def mmr_order(
    relevance: Sequence[float], vectors: Any, top_k: int, lambda_mult: float
) -> list[int]:
    """The indexes MMR picks, in order: at most ``top_k`` of ``len(relevance)``; ties go to
    the earlier index. ``vectors``: one row per item (normalised here; a zero row is
    similar to nothing)."""
    count = len(relevance)
    if count == 0 or top_k < 1:
        return []
    rows = np.asarray(vectors, dtype=np.float64).reshape(count, -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    similarity = unit @ unit.T
    rel = np.asarray(relevance, dtype=np.float64)
    redundancy = np.full(count, -np.inf)
    free = np.ones(count, dtype=bool)
    picked: list[int] = []
    for _ in range(min(top_k, count)):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        gain = lambda_mult * rel - (1.0 - lambda_mult) * penalty
        gain[~free] = -np.inf
        best = int(np.argmax(gain))  # the first of equal gains: the fused order breaks ties
        picked.append(best)
        free[best] = False
        redundancy = np.maximum(redundancy, similarity[best])
    return picked


class MMRReranker(Reranker):
    """Maximal marginal relevance over the fused passages (see the module docstring).

    Args:
        lambda_mult: the weight of relevance against redundancy, in [0, 1] (1: the fused
            order unchanged).
        embedder: the embedder of the passages' vectors (a search hands over its own);
            ``None``: word-count vectors.
    """

    step_id = "ragloom-semantic/mmr"

    def __init__(self, lambda_mult: float = DEFAULT_LAMBDA, embedder: Any = None) -> None:
        if (
            isinstance(lambda_mult, bool)
            or not isinstance(lambda_mult, int | float)
            or not math.isfinite(lambda_mult)
            or not 0 <= lambda_mult <= 1
        ):
            raise ConfigurationError(
                f"lambda_mult must be a number in [0, 1] (1: the fused order), got "
                f"{lambda_mult!r}"
            )
        self.lambda_mult = float(lambda_mult)
        self.embedder = embedder

    def config(self) -> Mapping[str, Any]:
        return {"lambda_mult": self.lambda_mult}

    def rerank(
        self, question: str, passages: list[FusedPassage], top_k: int
    ) -> list[FusedPassage]:
        if len(passages) <= 1 or self.lambda_mult == 1:
            return passages[:top_k]
        texts = [p.content for p in passages]
        vectors = self.embedder.embed(texts) if self.embedder is not None else _word_counts(
            texts
        )
        best = max(p.score for p in passages)
        relevance = [p.score / best if best > 0 else 0.0 for p in passages]
        return [passages[i] for i in mmr_order(relevance, vectors, top_k, self.lambda_mult)]


def _word_counts(texts: Sequence[str]) -> Any:
    """One row of word counts per text (casefolded words, over the texts' vocabulary)."""
    vocabulary: dict[str, int] = {}
    rows = [[vocabulary.setdefault(w, len(vocabulary)) for w in _WORD.findall(t.casefold())]
            for t in texts]
    out = np.zeros((len(texts), max(1, len(vocabulary))))
    for i, row in enumerate(rows):
        np.add.at(out[i], row, 1.0)
    return out
