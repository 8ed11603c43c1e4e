"""The retriever family: a query in, scored passages out.

A :class:`Retriever` answers one (sub-)query with the chunks that best match it, each with its
score. Passages keep their chunk's lineage (document id, exact offsets), so an answer can always
be traced back to the text it came from.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from .component import Component
from .stores import ScoredChunk

__all__ = ["Retriever"]


class Retriever(Component, ABC):
    """Finds the passages that best answer a query, best first."""

    @abstractmethod
    def retrieve(
        self, query: str, *, top_k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> list[ScoredChunk]:
        """At most ``top_k`` (default: the retriever's own) scored chunks for ``query``,
        restricted to chunks whose metadata satisfies ``where``."""
