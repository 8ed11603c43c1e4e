"""A store in one JSON file: exact vector search, word-count text search, hybrid."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragloom import Document, Store
from ragloom.stores import (
    IndexedDocument,
    ScoredChunk,
    SearchMode,
    StoreError,
    StoreInfo,
    matches_where,
)

_WORD = re.compile(r"\w+")


class JsonStore(Store):
    """Every document's chunks (with vectors) in ``<path>/store.json``, rewritten atomically
    after each change. Vector search is exact (cosine over every chunk); text search ranks
    chunks by how many query words they contain; hybrid fuses both by reciprocal rank. Meant
    for small corpora and tests: everything is held in memory."""

    step_id = "__DIST__/json-store"

    def __init__(self, path: str = ".ragloom/json-store") -> None:
        self.path = Path(path).expanduser()
        self.file = self.path / "store.json"
        self._lock = threading.Lock()
        self.data: dict[str, dict[str, Any]] = {}
        if self.file.exists():
            try:
                self.data = json.loads(self.file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StoreError(f"the store {self.file} cannot be read: {exc}") from None

    def config(self) -> Mapping[str, Any]:
        return {"path": str(self.path)}

    # -- writing ------------------------------------------------------------------------------

    def _save(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        temp = self.file.with_name("store.json.tmp")
        temp.write_text(json.dumps(self.data), encoding="utf-8")
        os.replace(temp, self.file)

    def _dimension(self) -> int | None:
        for doc in self.data.values():
            for chunk in doc["chunks"]:
                if chunk.get("embedding") is not None:
                    return len(chunk["embedding"])
        return None

    def write(self, documents: Sequence[IndexedDocument]) -> None:
        with self._lock:
            dimension = self._dimension()
            for doc in documents:
                for chunk in doc.chunks:
                    if chunk.embedding is None:
                        continue
                    dimension = dimension or len(chunk.embedding)
                    if len(chunk.embedding) != dimension:
                        raise StoreError(
                            f"{self.file}: the store holds vectors of {dimension} values, "
                            f"chunk {chunk.id!r} has {len(chunk.embedding)}"
                        )
            for doc in documents:
                self.data[doc.document_id] = {
                    "fingerprint": doc.fingerprint,
                    "chunks": [c.model_dump(mode="json") for c in doc.chunks],
                }
            self._save()

    def delete(self, document_ids: Iterable[str]) -> int:
        with self._lock:
            gone = [i for i in dict.fromkeys(document_ids) if self.data.pop(i, None) is not None]
            if gone:
                self._save()
            return len(gone)

    # -- reading ------------------------------------------------------------------------------

    def fingerprints(self) -> dict[str, str]:
        with self._lock:
            return {k: v["fingerprint"] for k, v in self.data.items()}

    def info(self) -> StoreInfo:
        with self._lock:
            chunks = sum(len(d["chunks"]) for d in self.data.values())
            return StoreInfo(str(self.path), len(self.data), chunks, self._dimension())

    def _rows(self, where: Mapping[str, Any] | None) -> Iterator[dict[str, Any]]:
        for doc in self.data.values():
            for row in doc["chunks"]:
                if matches_where(row.get("metadata") or {}, where):
                    yield row

    def search(
        self,
        *,
        vector: Sequence[float] | None = None,
        text: str | None = None,
        top_k: int = 10,
        where: Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
    ) -> list[ScoredChunk]:
        if mode is None:
            mode = "hybrid" if vector is not None and text is not None else (
                "vector" if vector is not None else "text"
            )
        if mode in ("vector", "hybrid") and vector is None:
            raise StoreError(f"{self.file}: a {mode} search needs a query vector")
        if mode in ("text", "hybrid") and text is None:
            raise StoreError(f"{self.file}: a {mode} search needs a query text")
        with self._lock:
            dimension = self._dimension()
            if vector is not None and dimension not in (None, len(vector)):
                raise StoreError(
                    f"{self.file}: the store holds vectors of {dimension} values, the query "
                    f"has {len(vector)}"
                )
            rows = list(self._rows(where))
        rankings = []
        if mode in ("vector", "hybrid"):
            assert vector is not None
            rankings.append(_by_vector(rows, vector))
        if mode in ("text", "hybrid"):
            rankings.append(_by_text(rows, text or ""))
        if len(rankings) == 1:
            ranked = rankings[0]
        else:
            fused: dict[str, tuple[float, dict[str, Any]]] = {}
            for ranking in rankings:
                for rank, (_score, row) in enumerate(ranking, 1):
                    score, _ = fused.get(row["id"], (0.0, row))
                    fused[row["id"]] = (score + 1 / (60 + rank), row)
            ranked = sorted(fused.values(), key=lambda pair: -pair[0])
        return [
            ScoredChunk(Document.model_validate({**row, "embedding": None}), float(score))
            for score, row in ranked[:top_k]
        ]


def _by_vector(
    rows: list[dict[str, Any]], vector: Sequence[float]
) -> list[tuple[float, dict[str, Any]]]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    scored = []
    for row in rows:
        other = row.get("embedding")
        if other is None:
            continue
        other_norm = math.sqrt(sum(x * x for x in other)) or 1.0
        cosine = sum(x * y for x, y in zip(vector, other, strict=True)) / (norm * other_norm)
        scored.append((cosine, row))
    return sorted(scored, key=lambda pair: -pair[0])


def _by_text(rows: list[dict[str, Any]], text: str) -> list[tuple[float, dict[str, Any]]]:
    words = set(_WORD.findall(text.lower()))
    scored = []
    for row in rows:
        count = sum(word in words for word in _WORD.findall(row["content"].lower()))
        if count:
            scored.append((float(count), row))
    return sorted(scored, key=lambda pair: -pair[0])
