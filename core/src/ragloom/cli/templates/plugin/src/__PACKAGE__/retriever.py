"""A retriever over a chunks file (``ragloom ingest --out``): BM25 over words."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloom import Document, Retriever
from ragloom.errors import ConfigurationError, InvalidInputError
from ragloom.stores import ScoredChunk, matches_where

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class ChunksFileRetriever(Retriever):
    """Finds passages in a chunks file (``ragloom ingest DOCS --out chunks.jsonl``), ranked by
    BM25 (``k1``, ``b``) over words: no index and no model. The file is read once."""

    step_id = "__DIST__/chunks-file"

    def __init__(self, path: str, top_k: int = 5, k1: float = 1.2, b: float = 0.75) -> None:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"k1 must be >= 0 and b within [0, 1], got k1={k1!r}, b={b!r}")
        self.path = path
        self.top_k = top_k
        self.k1 = float(k1)
        self.b = float(b)
        self._chunks = self._read(Path(path).expanduser())
        self._terms = [Counter(_words(c.content)) for c in self._chunks]
        self._lengths = [sum(t.values()) for t in self._terms]
        self._average = sum(self._lengths) / len(self._lengths) if self._lengths else 0.0
        frequency: Counter[str] = Counter()
        for terms in self._terms:
            frequency.update(terms.keys())
        total = len(self._chunks)
        self._idf = {w: math.log(1 + (total - n + 0.5) / (n + 0.5)) for w, n in frequency.items()}

    @staticmethod
    def _read(path: Path) -> list[Document]:
        chunks = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read the chunks file {path}: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                chunks.append(
                    Document(
                        id=record["id"], content=record["content"],
                        content_format=record.get("content_format") or "text",
                        metadata=record.get("metadata") or {}, parent_id=record.get("parent"),
                        index=record.get("index"), start=record.get("start"),
                        end=record.get("end"),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigurationError(
                    f"{path}, line {number}: not a chunk record ({exc})"
                ) from None
        return chunks

    def config(self) -> Mapping[str, Any]:
        return {"path": self.path, "top_k": self.top_k, "k1": self.k1, "b": self.b}

    def retrieve(
        self, query: str, *, top_k: int | None = None, where: Mapping[str, Any] | None = None
    ) -> list[ScoredChunk]:
        if top_k is not None and (isinstance(top_k, bool) or top_k < 1):
            raise InvalidInputError(f"top_k must be >= 1, got {top_k!r}")
        wanted = set(_words(query))
        scored = []
        for n, (chunk, terms) in enumerate(zip(self._chunks, self._terms, strict=True)):
            if not matches_where(chunk.metadata, where):
                continue
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * self._lengths[n] / (self._average or 1))
            for word in wanted & terms.keys():
                tf = terms[word]
                score += self._idf[word] * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((-score, n, chunk))
        scored.sort(key=lambda t: t[:2])
        return [ScoredChunk(chunk, -s) for s, _n, chunk in scored[: top_k or self.top_k]]
