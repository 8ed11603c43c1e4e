"""What an ingestion did: counts, skipped files, failures, cache and index activity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IngestProgress", "IngestReport", "Problem", "doc_of"]


def doc_of(item: Any) -> str | None:
    """The id of the input document an output (or a failed item) belongs to."""
    parent = getattr(item, "parent_id", None)
    if isinstance(parent, str):
        return parent
    ident = getattr(item, "id", None)
    return ident if isinstance(ident, str) else None


@dataclass(frozen=True, slots=True)
class Problem:
    """A file or item that produced nothing, and why.

    ``stage`` says where: ``walk`` (finding files), ``read`` (reading or loading a file), a
    step's name (processing), or ``write`` (an output that cannot be written as JSON).
    ``kind`` is a short label (``empty``, ``LoadError``, ``InvalidInputError``...).
    """

    #: The id of the document or item (a file's document id when the file failed whole).
    item: str
    #: The file it came from, as given or found under a folder.
    source: str
    #: Where it failed: ``walk``, ``read``, a step's name, or ``write``.
    stage: str
    #: A short label: ``empty``, ``LoadError``, ``InvalidInputError``...
    kind: str
    #: What went wrong, in a sentence.
    reason: str

    @classmethod
    def of_failure(cls, event: Any) -> Problem:
        """The problem an :class:`~ragloom.events.ItemFailed` event reports."""
        item = event.item
        source = getattr(item, "metadata", {}).get("source") if item is not None else None
        doc_id = doc_of(item) or event.item_id
        return cls(event.item_id, str(source or doc_id), event.step, event.error_type,
                   event.reason)

    def to_dict(self) -> dict[str, str]:
        return {
            "item": self.item,
            "source": self.source,
            "stage": self.stage,
            "kind": self.kind,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """Where an ingestion stands: files done of all files found, and bytes read."""

    #: Files done (written, skipped or failed).
    done: int
    #: Files found.
    total: int
    #: Bytes of input read so far.
    bytes_read: int


@dataclass
class IngestReport:
    """The outcome of one ingestion.

    ``ok`` is true when every file found became output (or was skipped as empty, or was
    unchanged in the index). ``nothing_found`` is true when the paths held no file at all: then
    no output was written or replaced.
    """

    #: Files found under the paths.
    files: int = 0
    #: Documents read from them (a file may hold several).
    documents: int = 0
    #: Outputs the pipeline produced (chunks, with the default pipeline).
    chunks: int = 0
    #: Bytes of input read.
    bytes_read: int = 0
    #: Files skipped, not failed (an empty file, a format no installed plugin chunks).
    skipped: list[Problem] = field(default_factory=list)
    #: Files and items that failed, each with its reason.
    failures: list[Problem] = field(default_factory=list)
    #: Items replayed from the cache (an item counts at each cached step).
    cache_hits: int = 0
    #: Items a cached step computed because the cache did not hold them.
    cache_misses: int = 0
    #: Documents already in the index with the same content and pipeline (not processed again).
    unchanged: int = 0
    #: Documents written to the index.
    indexed: int = 0
    #: Documents removed from the index because their files are gone (``sync``).
    deleted: int = 0
    #: How long the ingestion took.
    seconds: float = 0.0
    #: The JSONL file written, if one was asked for.
    out: str | None = None
    #: Where the store is, if one was written.
    index: str | None = None
    #: The cache used: its path, or ``off``.
    cache: str = "off"
    #: Warnings worth showing a user (a step run without its cache, an observer that raised).
    warnings: list[str] = field(default_factory=list)
    #: With an index: its collections and the routes fitted from them (``collections``, each
    #: with ``name``, ``documents``, ``chunks``; ``routing``: ``"fitted"`` or why there is no
    #: routing; ``fitted``: whether this run fitted them; ``fit``: what held-out utterances
    #: measured). ``None`` without an index or when the index has no local folder.
    routes: dict[str, Any] | None = None
    #: With an index: why ``ragloom index optimize`` is worth running now (the index has
    #: outgrown exact vector search), else ``None``.
    optimize: str | None = None

    @property
    def ok(self) -> bool:
        """Nothing failed, and some file was found."""
        return not self.failures and not self.nothing_found

    @property
    def nothing_found(self) -> bool:
        """The paths held no file: nothing was written or replaced."""
        return self.files == 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``ragloom ingest --json`` prints)."""
        return {
            "ok": self.ok,
            "files": self.files,
            "documents": self.documents,
            "chunks": self.chunks,
            "bytes_read": self.bytes_read,
            "seconds": round(self.seconds, 4),
            "out": self.out,
            "index": self.index,
            "cache": {"location": self.cache, "hits": self.cache_hits,
                      "misses": self.cache_misses},
            "unchanged": self.unchanged,
            "indexed": self.indexed,
            "deleted": self.deleted,
            "skipped": [p.to_dict() for p in self.skipped],
            "failures": [p.to_dict() for p in self.failures],
            "warnings": list(self.warnings),
            "routes": self.routes,
            "optimize": self.optimize,
        }
