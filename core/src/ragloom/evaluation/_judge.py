"""Judging a search's passages against a labelled question: which facet each one answers."""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable, Sequence
from typing import Any

from ._questions import Expectation, Facet, LabelledQuestion

__all__ = ["DocumentIndex", "facet_ranks", "matches"]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def matches(expectation: Expectation, passage: Any) -> bool:
    """Whether ``passage`` (a :class:`~ragloom.multi_retrieval.FusedPassage`) answers
    ``expectation``: same document, holding every ``contains`` string and overlapping the
    ``span`` when those are given."""
    if passage.document_id != expectation.document:
        return False
    if expectation.contains:
        content = _norm(passage.content)
        if not all(_norm(text) in content for text in expectation.contains):
            return False
    if expectation.span is not None:
        if passage.start is None or passage.end is None:
            return False
        start, end = expectation.span
        if not (passage.start < end and start < passage.end):
            return False
    return True


def facet_ranks(facets: Sequence[Facet], passages: Sequence[Any]) -> list[int | None]:
    """For each facet, the rank (1-based) of the first passage answering one of its
    alternatives, or ``None``."""
    ranks: list[int | None] = []
    for facet in facets:
        rank = None
        for n, passage in enumerate(passages, 1):
            if any(matches(e, passage) for e in facet.alternatives):
                rank = n
                break
        ranks.append(rank)
    return ranks


class DocumentIndex:
    """The document ids an index holds, to tell a label naming an absent document from a miss.

    An empty index (or one that cannot list its documents) knows nothing: every label is
    taken as it is.
    """

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = frozenset(ids)
        self._by_name: dict[str, list[str]] = {}
        for doc in self.ids:
            self._by_name.setdefault(posixpath.basename(doc), []).append(doc)

    def knows(self, document: str) -> bool:
        return not self.ids or document in self.ids

    def suggestion(self, document: str) -> str | None:
        """The stored id the label most likely meant (same file name, else the closest)."""
        same = self._by_name.get(posixpath.basename(document), [])
        if len(same) == 1:
            return same[0]
        close = difflib.get_close_matches(document, sorted(self.ids), n=1, cutoff=0.6)
        return close[0] if close else None

    def judgeable(self, question: LabelledQuestion) -> tuple[list[Facet], list[str]]:
        """The question's facets with at least one known document (only known alternatives
        kept), and a warning for each label naming a document the index lacks."""
        kept: list[Facet] = []
        warnings: list[str] = []
        for facet in question.facets:
            known = [e for e in facet.alternatives if self.knows(e.document)]
            for entry in facet.alternatives:
                if entry in known:
                    continue
                hint = self.suggestion(entry.document)
                warnings.append(
                    f"{question.source or question.id}: expected document {entry.document!r} "
                    "is not in the index"
                    + (f" (did you mean {hint!r}?)" if hint else "")
                    + ("" if known else f"; facet {facet.label} is not judged")
                )
            if known:
                kept.append(facet.model_copy(update={"alternatives": known}))
        return kept, warnings
