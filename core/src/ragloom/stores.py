"""The store family: an index of chunks and their vectors, kept per document.

A :class:`Store` holds the chunks of many documents. Writing a document replaces all of its
chunks (so re-ingesting a changed document never leaves stale chunks behind), deleting a
document removes all of them, and each document carries a *fingerprint* of what it was when its
chunks were made, so an ingest can skip documents that did not change and delete those that are
gone. Search is by vector, by full text, or both fused, with metadata conditions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .component import Component
from .errors import RagloomError

__all__ = [
    "IndexedDocument",
    "PartWriter",
    "ScoredChunk",
    "SearchMode",
    "Store",
    "StoreBusyError",
    "StoreCheck",
    "StoreError",
    "StoreInfo",
    "StorePart",
    "matches_where",
]

SearchMode = Literal["vector", "text", "hybrid"]


class StoreError(RagloomError):
    """A store cannot be used (unreadable, read-only, another vector dimension, ...)."""


class StoreBusyError(StoreError):
    """Another process is writing the store, and it did not finish within the wait allowed."""


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What :meth:`Store.check` found.

    ``problems`` are one line each (empty: consistent); ``damaged`` are the ids of documents
    whose chunks do not match what the store recorded for them (missing, extra, or a write that
    did not finish); ``unreadable`` is true when data could not be read at all (then the
    documents it held cannot be named); ``busy`` when another process held the writer lock
    during the check (a write under way explains unfinished documents).
    """

    location: str
    problems: tuple[str, ...] = ()
    damaged: tuple[str, ...] = ()
    unreadable: bool = False
    busy: bool = False
    full: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """One document's chunks as a store keeps them.

    ``fingerprint`` identifies what produced the chunks (the document's content and the
    pipeline that cut and embedded it); ``chunks`` are :class:`~ragloom.models.Document` chunks,
    each with its ``embedding`` when the store searches by vector. An empty ``chunks`` list
    records the document (and its fingerprint) with no chunks, e.g. an empty file.
    """

    document_id: str
    fingerprint: str
    chunks: Sequence[Any] = ()


@dataclass(frozen=True, slots=True)
class StorePart:
    """Chunks a :class:`PartWriter` wrote into a store without making them visible: plain
    picklable data, committed (or discarded) by the store that gave the writer.

    ``documents`` are the documents whose chunks it holds, each with its chunk count, in the
    order written; ``data`` is the store's own description of what was written (for
    ragloom-lancedb, the Lance fragments).
    """

    documents: tuple[tuple[str, int], ...]
    data: Any


class PartWriter(Protocol):
    """Writes documents' chunks into a store where a pipeline runs (another process, another
    machine), without committing them: a small picklable object a store gives
    (:meth:`Store.part_writer`); :meth:`Store.commit_parts` makes what it wrote visible."""

    #: Whether it writes into a folder of this machine, which processes on other machines
    #: cannot reach (``False``: object storage, reachable from anywhere).
    machine_local: bool

    def write(self, documents: Sequence[tuple[str, Sequence[Any]]]) -> StorePart:
        """Write the chunks of each ``(document id, chunks)``, each chunk with its embedding
        when the store searches by vector; nothing is visible until the part is committed.

        Raises:
            InvalidInputError: a chunk the store cannot hold (no embedding, metadata that is
                not JSON, one document twice); nothing is written.
            StoreError: another vector dimension than the store's, or a failed write.
        """
        ...


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """A chunk found by a search, with its score (higher is better)."""

    chunk: Any
    score: float


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What :meth:`Store.info` reports."""

    location: str
    documents: int
    chunks: int
    dimension: int | None
    details: dict[str, Any] = field(default_factory=dict)


class Store(Component, ABC):
    """An index of chunks and vectors, written and deleted per document.

    ``where`` conditions (in :meth:`search`) are metadata conditions: ``{"key": value}`` keeps
    chunks whose ``metadata["key"]`` equals ``value`` or, when it is a list, contains it; a list
    or tuple of values means any one of them. All conditions must hold. :func:`matches_where` is
    the reference meaning every store implements.

    Implementations raise :class:`StoreError` with a message naming the store's location for
    anything that makes it unusable (damaged, read-only, a vector of another dimension than the
    index holds).
    """

    @abstractmethod
    def write(self, documents: Sequence[IndexedDocument]) -> None:
        """Replace each document's chunks (and fingerprint) with the given ones."""

    @abstractmethod
    def delete(self, document_ids: Iterable[str]) -> int:
        """Remove these documents and all their chunks; return how many documents were removed."""

    @abstractmethod
    def fingerprints(self) -> dict[str, str]:
        """Every stored document id with its fingerprint."""

    @abstractmethod
    def search(
        self,
        *,
        vector: Sequence[float] | None = None,
        text: str | None = None,
        top_k: int = 10,
        where: Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
    ) -> list[ScoredChunk]:
        """The ``top_k`` best chunks, best first.

        ``mode`` defaults to ``"hybrid"`` when both ``vector`` and ``text`` are given, else to
        whichever is given. Raises ``StoreError`` for a mode whose query part is missing.
        """

    @abstractmethod
    def info(self) -> StoreInfo:
        """Location, document and chunk counts, vector dimension."""

    def part_writer(self) -> PartWriter | None:
        """A writer of uncommitted parts (:class:`PartWriter`), for a pipeline that runs
        elsewhere and writes its outputs there; the store remembers where it stands now, for
        :meth:`discard_parts`. ``None``: the store is written through :meth:`write` only (the
        default)."""
        return None

    def commit_parts(self, fingerprints: Mapping[str, str], parts: Sequence[StorePart]) -> None:
        """Make ``parts`` (written by this store's :meth:`part_writer`) visible: each document
        of ``fingerprints`` gets the chunks the parts hold for it (none when no part does) in
        place of its old ones, and its fingerprint, as :meth:`write` would give it. Every
        document of a part must be among ``fingerprints``. A commit that fails leaves the
        store as it was.

        Raises:
            InvalidInputError: a part of another store, a document of a part that is not
                among ``fingerprints`` or is in two parts, an empty fingerprint; nothing is
                changed.
            StoreError: as for :meth:`write`.
        """
        raise NotImplementedError(f"{type(self).__name__} gives no part writer")

    def discard_parts(self, parts: Sequence[StorePart]) -> None:
        """The run that wrote parts failed: return the store to where it stood when
        :meth:`part_writer` was called (undoing the commits since, of parts or writes) and
        remove what ``parts`` (never committed) wrote. Default: nothing to do."""

    def clear(self) -> int:
        """Remove every document; return how many were removed."""
        return self.delete(list(self.fingerprints()))

    def check(self, full: bool = False) -> StoreCheck:
        """Whether documents, chunks and data agree (``full``: read everything). Default: a
        store that cannot check itself reports no problem."""
        return StoreCheck(location=str(self.info().location), full=full)

    def take_writer_lock(self, on_wait: Any = None) -> None:
        """Become the store's only writer until :meth:`close` (a store shared by processes
        waits for the other writer, calling ``on_wait()`` once if given, or raises
        :class:`StoreBusyError`). Default: nothing."""

    def properties(self) -> dict[str, Any]:
        """What the store records about itself for its users (an ingest's root, its embedder):
        plain JSON data. Default: nothing."""
        return {}

    def set_properties(self, values: Mapping[str, Any]) -> None:
        """Record ``values`` (merged into :meth:`properties`). Default: not kept."""

    def file_states(self) -> dict[str, str]:
        """What an ingest recorded of each input file when it last read it: ``{file id:
        state}``, as given to :meth:`set_file_states`. Default: nothing kept."""
        return {}

    def set_file_states(self, states: Mapping[str, str]) -> None:
        """Keep ``states`` (replacing what was kept): an ingest records each file's size and
        times and a hash of the documents it gave, and skips the file unread while both
        still hold (see :mod:`ragloom.ingest`). Only a shortcut: an ingest checks each state
        against the documents the store holds. Default: not kept (every file is read)."""

    def close(self) -> None:
        """Release the store's resources. Idempotent."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def matches_where(metadata: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether chunk ``metadata`` satisfies ``where`` (see :class:`Store`)."""
    if not where:
        return True
    for key, wanted in where.items():
        if key not in metadata:
            return False
        actual = metadata[key]
        options = list(wanted) if isinstance(wanted, list | tuple | set | frozenset) else [wanted]
        values = actual if isinstance(actual, list | tuple) else [actual]
        if not any(_same(v, o) for v in values for o in options):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python; metadata conditions keep booleans and numbers apart.
    return a == b and isinstance(a, bool) == isinstance(b, bool)
