"""The reranker family: reorder a question's fused passages before the cut to ``top_k``.

A search fuses the hits of a question's searches into one list (see
:mod:`ragloom.multi_retrieval`). With a reranker (``rerank = "mmr"`` in a pipeline file's
``retrieval`` section or a routes file, ``--rerank mmr`` on the command line,
``SearchSettings(rerank="mmr")``), the search keeps every fused passage instead of the first
``top_k`` and the reranker chooses the ``top_k`` of the answer, in its order. A passage keeps
its fused ``score`` and ``found_by``: the reranker changes which passages are kept and their
order only.

ragloom-semantic's ``mmr`` (maximal marginal relevance over the passages' vectors) is the
first-party one: it needs no model of its own and spreads the answer over the asks of a
compound question. Plugins contribute others under the ``ragloom.rerankers`` entry-point group
(or ``register("reranker", name, factory)``); :class:`ragloom.testing.RerankerContract` checks
them.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from .errors import ComponentTypeError
from .query_stages import FusedStage

if TYPE_CHECKING:
    from .passages import FusedPassage

__all__ = ["Reranker"]


class Reranker(FusedStage):
    """Chooses and orders a question's passages from its fused ones.

    Implement :meth:`rerank`. Its factory may take ``embedder`` (the embedder of the search's
    queries, ``None`` for a search by text) and ``store`` (the index searched): a search built
    from a file, settings or the command line hands them over.
    """

    @abstractmethod
    def rerank(
        self, question: str, passages: list[FusedPassage], top_k: int
    ) -> list[FusedPassage]:
        """At most ``top_k`` of ``passages`` (the fused order, best first, each with its fused
        ``score`` in [0, 1]), in the order of the answer."""

    def on_fused(
        self, question: str, passages: list[FusedPassage], top_k: int
    ) -> list[FusedPassage]:
        """:meth:`rerank`, checked: a list of the passages given, each once, at most
        ``top_k``.

        Raises:
            ComponentTypeError: the reranker broke that rule (a search fails the question
                rather than answer with passages it never found).
        """
        chosen = self.rerank(question, list(passages), top_k)
        name = type(self).__name__
        if not isinstance(chosen, list):
            raise ComponentTypeError(
                f"{name}.rerank returned {type(chosen).__name__}, expected a list of passages"
            )
        given = {p.chunk_id for p in passages}
        seen: set[str] = set()
        for passage in chosen:
            chunk_id = getattr(passage, "chunk_id", None)
            if chunk_id not in given:
                raise ComponentTypeError(
                    f"{name}.rerank returned a passage it was not given ({chunk_id!r})"
                )
            if chunk_id in seen:
                raise ComponentTypeError(f"{name}.rerank returned {chunk_id!r} twice")
            seen.add(chunk_id)
        if len(chosen) > top_k:
            raise ComponentTypeError(
                f"{name}.rerank returned {len(chosen)} passages, more than top_k={top_k}"
            )
        return chosen
