"""What each file's bytes gave, kept in the step cache, so an unchanged file is not loaded
again on a re-ingest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..errors import RagloomError
from ._files import source_metadata
from ._walk import InputFile

__all__ = ["FileMemo"]


class FileMemo:
    """What each file's bytes gave, kept in the step cache: ``(document id, fingerprint)`` of
    every document loaded from it.

    A re-ingest into an index reads every file again to find the changed ones; converting a
    file (HTML to Markdown, a PDF's pages) costs far more than hashing its bytes. When the
    cache holds the documents a file's exact bytes gave (under the same loader and pipeline)
    and the index holds each of them with that fingerprint, the file is unchanged and is not
    loaded: loading it again would give the same documents and skip them all. Entries are
    keyed by the file's id and bytes, the loader's and the pipeline's identity; a file that
    failed or had documents skipped is not remembered. ``ragloom cache clear`` forgets them.
    """

    STEP = "ragloom.ingest/files"

    def __init__(self, cache: Any, identity: str, skip_formats: Mapping[str, str]) -> None:
        self.cache = cache
        self.base = f"{self.STEP}\n{identity}\n{json.dumps(sorted(skip_formats))}\n"
        self.pending: list[Any] = []
        self.loaders: dict[int, str] = {}  # id(loader) -> its name and identity (loaders live
        # as long as the run)

    @classmethod
    def of(cls, cache: Any, identity: str, skip_formats: Mapping[str, str]) -> FileMemo | None:
        """The memo over ``cache`` (``None`` without a cache that reads and writes entries)."""
        if not (hasattr(cache, "get_many") and hasattr(cache, "put_many")):
            return None
        return cls(cache, identity, skip_formats)

    @staticmethod
    def read(file: InputFile, max_bytes: int) -> Any:
        """The file as :func:`load_file` reads it, or ``None`` when it cannot be read (then
        ``load_file`` reports why)."""
        from ..loaders_builtin import read_source_file
        from ..loading import LoadError

        try:
            return read_source_file(
                file.path, doc_id=file.doc_id, name=file.shown, max_bytes=max_bytes,
                metadata=source_metadata(file),
            )
        except LoadError:
            return None

    def key(self, file: InputFile, source: Any, loaders: Any) -> str | None:
        """The entry's key (``None`` when no loader takes the file or it has no identity)."""
        from ..identity import Uncacheable

        try:
            loader = loaders.pick(source)
            loader_identity = self.loaders.get(id(loader))
            if loader_identity is None:
                loader_identity = f"{loaders.name_of(loader)}:{loader.config_hash}"
                self.loaders[id(loader)] = loader_identity
        except (Uncacheable, RagloomError):
            return None
        digest = hashlib.sha256(source.data).hexdigest()
        text = f"{self.base}{loader_identity}\n{len(file.doc_id)}:{file.doc_id}\n{digest}"
        if file.collection is not None:
            text += f"\ncollection\n{file.collection}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def get(self, key: str | None) -> list[tuple[str, str]] | None:
        if key is None:
            return None
        try:
            entry = self.cache.get_many([key]).get(key)
            if entry is None:
                return None
            listed = json.loads(entry.payload)
        except (RagloomError, ValueError):
            return None  # an unreadable entry: the file is loaded as usual
        if not isinstance(listed, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, str) for v in p)
            for p in listed
        ):
            return None
        return [(d, p) for d, p in listed]

    def put(self, key: str, item_id: str, printed: list[tuple[str, str]]) -> None:
        from ..cache.base import CacheEntry

        payload = json.dumps(printed, ensure_ascii=False)
        self.pending.append(CacheEntry(key, self.STEP, item_id, payload, len(printed)))
        if len(self.pending) >= 1024:
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        if pending:
            try:
                self.cache.put_many(pending)
            except RagloomError:
                pass  # only a shortcut for the next run: it loads these files again
