"""What an ingestion did: counts, skipped files, failures, cache and index activity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IngestProgress", "IngestReport", "Problem"]


@dataclass(frozen=True, slots=True)
class Problem:
    """A file or item that produced nothing, and why.

    ``stage`` says where: ``walk`` (finding files), ``read`` (reading or loading a file), a
    step's name (processing), or ``write`` (an output that cannot be written as JSON).
    ``kind`` is a short label (``empty``, ``LoadError``, ``InvalidInputError``...).
    """

    item: str
    source: str
    stage: str
    kind: str
    reason: str

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

    done: int
    total: int
    bytes_read: int


@dataclass
class IngestReport:
    """The outcome of one ingestion.

    ``ok`` is true when every file found became output (or was skipped as empty, or was
    unchanged in the index). ``nothing_found`` is true when the paths held no file at all: then
    no output was written or replaced.
    """

    files: int = 0
    documents: int = 0
    chunks: int = 0
    bytes_read: int = 0
    skipped: list[Problem] = field(default_factory=list)
    failures: list[Problem] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0
    #: Documents already in the index with the same content and pipeline (not processed again).
    unchanged: int = 0
    #: Documents written to the index.
    indexed: int = 0
    #: Documents removed from the index because their files are gone (``sync``).
    deleted: int = 0
    seconds: float = 0.0
    out: str | None = None
    index: str | None = None
    cache: str = "off"
    #: Warnings worth showing a user (a step run without its cache, an observer that raised).
    warnings: list[str] = field(default_factory=list)
    #: With an index: its collections and the routes fitted from them (``collections``, each
    #: with ``name``, ``documents``, ``chunks``; ``routing``: ``"fitted"`` or why there is no
    #: routing; ``fitted``: whether this run fitted them; ``fit``: what held-out utterances
    #: measured). ``None`` without an index or when the index has no local folder.
    routes: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.failures and not self.nothing_found

    @property
    def nothing_found(self) -> bool:
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
        }
