"""The retriever family: a query in, scored passages out; and fusing several result lists.

A :class:`Retriever` answers one (sub-)query with the chunks that best match it, each with its
score. Passages keep their chunk's lineage (document id, exact offsets), so an answer can always
be traced back to the text it came from. :class:`StoreRetriever` is the built-in one: it
searches a :class:`~ragloom.stores.Store` by vector, full text or both.
:func:`reciprocal_rank_fusion` merges the lists of several sub-queries into one, and
:func:`spread_documents` lets a fused list show many documents before it shows one of them
again.
"""

from __future__ import annotations

import json
import math
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from .component import Component
from .errors import ConfigurationError, InvalidInputError
from .stores import ScoredChunk, SearchMode, Store, matches_where

__all__ = [
    "Retriever",
    "StoreRetriever",
    "demote_boilerplate",
    "reciprocal_rank_fusion",
    "spread_documents",
]

_T = TypeVar("_T")

#: The rank constant of reciprocal rank fusion (Cormack et al., 2009).
DEFAULT_RRF_K = 60

#: How many more passages to fetch when part of a condition is checked after the search.
_OVERFETCH = 4
#: Searches a :class:`StoreRetriever` keeps (the least recently asked dropped first).
MEMO_SEARCHES = 256


class Retriever(Component, ABC):
    """Finds the passages that best answer a query, best first."""

    @abstractmethod
    def retrieve(
        self, query: str, *, top_k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> list[ScoredChunk]:
        """At most ``top_k`` (default: the retriever's own) scored chunks for ``query``,
        restricted to chunks whose metadata satisfies ``where``."""


class StoreRetriever(Retriever):
    """Searches a store: by vector (the query embedded with ``embedder``), by full text, or
    both fused (``mode``; default: hybrid with an embedder, text without).

    ``where`` and ``top_k`` given here apply to every query; those given to :meth:`retrieve`
    narrow them further (every condition must hold, a key restricted by both included; a
    call's ``top_k`` wins). A blank query finds what its empty vector and empty text find:
    nothing, with the built-in stores.

    A search asked again while the store is at the same version is answered from the last
    :data:`MEMO_SEARCHES` searches: routing searches an ask to decide where it goes, then
    searches it again where it went, and a server is asked the same asks over and over. Only
    a store that tells its version (``read_version()``, as the LanceDB store does while its
    handle only reads) has its searches kept; any write makes the kept ones stale.
    """

    identity_ignores = frozenset({"store"})  # where it searches, not how

    def __init__(
        self,
        store: Store,
        embedder: Any = None,
        *,
        mode: SearchMode | None = None,
        top_k: int = 10,
        where: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise ConfigurationError(f"StoreRetriever needs a Store, got {type(store).__name__}")
        if mode not in (None, "vector", "text", "hybrid"):
            raise ConfigurationError(
                f"mode must be 'vector', 'text' or 'hybrid', got {mode!r}"
            )
        if mode in ("vector", "hybrid") and embedder is None:
            raise ConfigurationError(f"mode {mode!r} needs an embedder to embed the query")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigurationError(f"top_k must be an integer >= 1, got {top_k!r}")
        self.store = store
        self.embedder = embedder
        self.mode: SearchMode = mode or ("hybrid" if embedder is not None else "text")
        self.top_k = top_k
        self.where = dict(where or {})
        self._kept: OrderedDict[tuple[Any, ...], list[ScoredChunk]] = OrderedDict()
        self._kept_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_kept"], state["_kept_lock"] = OrderedDict(), None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kept_lock = threading.Lock()

    def config(self) -> Mapping[str, Any]:
        return {"mode": self.mode, "top_k": self.top_k, "where": self.where}

    def retrieve(
        self, query: str, *, top_k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> list[ScoredChunk]:
        if not isinstance(query, str):
            raise InvalidInputError(f"a query is a string, got {type(query).__name__}")
        if top_k is not None and (
            isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1
        ):
            raise InvalidInputError(f"top_k must be an integer >= 1, got {top_k!r}")
        if where is not None and not isinstance(where, Mapping):
            raise InvalidInputError(f"where must be a mapping, got {type(where).__name__}")
        wanted = top_k or self.top_k
        call = dict(where or {})
        # A key restricted both here and by the call must satisfy both: the store searches
        # with the call's condition, and the retriever's own is checked on what it finds.
        both = {k: v for k, v in self.where.items() if k in call and call[k] != v}
        conditions = {**self.where, **call} or None
        key = self._key(query, wanted, conditions, both)
        if key is not None:
            with self._kept_lock:
                kept = self._kept.get(key)
                if kept is not None:
                    self._kept.move_to_end(key)
                    return list(kept)
        vector = None
        if self.mode in ("vector", "hybrid"):
            vector = self.embedder.embed_query(query)
        found = self.store.search(
            vector=vector,
            text=query if self.mode in ("text", "hybrid") else None,
            top_k=wanted * _OVERFETCH if both else wanted,
            where=conditions,
            mode=self.mode,
        )
        if both:
            found = [hit for hit in found if matches_where(hit.chunk.metadata, both)][:wanted]
        if key is not None:
            with self._kept_lock:
                self._kept[key] = list(found)
                while len(self._kept) > MEMO_SEARCHES:
                    self._kept.popitem(last=False)
        return found

    def _key(
        self, query: str, top_k: int, conditions: Mapping[str, Any] | None,
        both: Mapping[str, Any],
    ) -> tuple[Any, ...] | None:
        """What a kept search is found by (``None``: this search is not kept)."""
        reader = getattr(self.store, "read_version", None)
        version = reader() if callable(reader) else None
        if version is None:
            return None
        try:
            where = json.dumps([conditions, both], sort_keys=True)
        except (TypeError, ValueError):
            return None  # a condition that is not JSON: searched every time
        return (version, query, top_k, where, self.mode)


def demote_boilerplate(hits: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """``hits`` with the chunks that hold nothing to read moved after the others (each group
    keeps its order)."""
    from .search_text import is_boilerplate

    flags = [is_boilerplate(str(getattr(hit.chunk, "content", ""))) for hit in hits]
    if not any(flags):
        return list(hits)
    return [h for h, f in zip(hits, flags, strict=True) if not f] + [
        h for h, f in zip(hits, flags, strict=True) if f
    ]


def spread_documents(
    items: Sequence[_T], per_document: int, document_of: Callable[[_T], Hashable]
) -> list[_T]:
    """``items`` (best first) with every document's first ``per_document`` items where they
    were, among the other documents' first ones, and every further item of a document after
    all of those (each group keeps its order): the list's first places show as many different
    documents as it holds before any document shows its next passage. Nothing is dropped.
    ``per_document=0`` keeps the order given.

    Raises:
        ConfigurationError: ``per_document`` is not an integer >= 0.
    """
    if _count("per_document", per_document, 0) == 0:
        return list(items)
    shown: dict[Hashable, int] = {}
    first: list[_T] = []
    later: list[_T] = []
    for item in items:
        document = document_of(item)
        count = shown.get(document, 0)
        shown[document] = count + 1
        (first if count < per_document else later).append(item)
    return first + later


def _count(name: str, value: Any, least: int) -> int:
    """``value``, checked to be an integer of at least ``least`` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigurationError(f"{name} must be an integer >= {least}, got {value!r}")
    return value


def reciprocal_rank_fusion(
    results: Sequence[tuple[float, Sequence[ScoredChunk]]],
    *,
    k: int = DEFAULT_RRF_K,
    top_k: int | None = None,
    consensus: float = 1.0,
) -> list[tuple[float, Any, list[tuple[int, int]]]]:
    """Fuse ranked lists: ``results`` holds ``(weight, hits)`` per list, best hit first.

    Each list that finds a chunk gives it ``weight / (k + rank)`` (rank from 1). A chunk's
    fused score is its best gain plus ``consensus`` times the sum of its other gains: with
    ``consensus=1`` (the default) that is reciprocal rank fusion as Cormack et al. define it,
    the sum; below 1, a chunk found fairly well by every list no longer outranks the chunks
    that one list ranks first (what fusing the searches of a question's different asks
    needs: each ask's best passages first, agreement as a tie-breaker). Chunks are identified
    by id: a chunk found by several lists appears once, and a chunk listed twice in one list
    counts once there, at its better rank. Returns ``(score, chunk, [(list index, rank),
    ...])`` best first, at most ``top_k``; ties keep the order in which the chunks were first
    found (list by list, rank by rank).

    Raises:
        ConfigurationError: ``k`` is below 1, ``consensus`` is not in [0, 1], or a weight is
            not a positive finite number.
    """
    if isinstance(k, bool) or not isinstance(k, int | float) or k < 1:
        raise ConfigurationError(f"the fusion constant k must be >= 1, got {k!r}")
    if (
        isinstance(consensus, bool)
        or not isinstance(consensus, int | float)
        or not 0 <= consensus <= 1
    ):
        raise ConfigurationError(f"consensus must be a number in [0, 1], got {consensus!r}")
    fused: dict[str, list[Any]] = {}
    for source, (weight, hits) in enumerate(results):
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or weight <= 0
        ):
            raise ConfigurationError(f"list {source}: a fusion weight must be > 0, got {weight!r}")
        seen: set[str] = set()
        for rank, hit in enumerate(hits, start=1):
            key = str(getattr(hit.chunk, "id", id(hit.chunk)))
            if key in seen:
                continue
            seen.add(key)
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = [0.0, hit.chunk, [], 0.0]
            gain = weight / (k + rank)
            entry[0] += gain
            entry[3] = max(entry[3], gain)
            entry[2].append((source, rank))
    scored = [
        (total if consensus == 1 else best + consensus * (total - best), chunk, found)
        for total, chunk, found, best in fused.values()
    ]
    out = sorted(scored, key=lambda e: -e[0])  # stable: first found wins ties
    return out if top_k is None else out[:top_k]
