"""A hashing embedder: vectors from words and character trigrams, no model."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Embedder

_WORD = re.compile(r"\w+")


class HashingEmbedder(Embedder):
    """Feature hashing: every word and character trigram of a text adds +1 or -1 to one of
    ``dimension`` slots chosen by a salted BLAKE2 hash; vectors are L2-normalised, so texts
    that share words point the same way. ``salt`` picks another hashing (another "model")."""

    step_id = "__DIST__/hashing"

    def __init__(self, dimension: int = 256, salt: str = "") -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 2:
            raise ValueError(f"dimension must be an integer >= 2, got {dimension!r}")
        self._dimension = dimension
        self.salt = salt

    def config(self) -> Mapping[str, Any]:
        return {"dimension": self._dimension, "salt": self.salt}

    @property
    def dimension(self) -> int:
        return self._dimension

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        return [f"w:{w}" for w in words] + [f"g:{g}" for g in grams]

    def _one(self, text: str) -> list[float]:
        row = [0.0] * self._dimension
        for feature in self._features(text):
            data = f"{self.salt}\0{feature}".encode("utf-8", "surrogatepass")
            digest = hashlib.blake2b(data, digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self._dimension
            row[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in row))
        return [v / norm for v in row] if norm else row

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]
