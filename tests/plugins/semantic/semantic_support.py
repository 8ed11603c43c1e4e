"""Helpers of the ragloom-semantic tests: a tiny deterministic encoder and small route sets."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+")


class HashingEncoder:
    """Bag of words hashed into ``dim`` buckets, L2-normalised: texts that share words are
    similar, texts that share none are orthogonal. Counts its calls and texts."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0
        self.texts = 0

    @property
    def name(self) -> str:
        return f"hashing-{self.dim}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


ROUTES = [
    {
        "name": "weather",
        "description": "weather forecasts, rain, snow and temperature",
        "examples": [
            "what's the weather like tomorrow",
            "will it rain this afternoon",
            "how cold will it be tonight",
            "is it going to be sunny at the weekend",
        ],
    },
    {
        "name": "billing",
        "description": "payments, invoices, charges and refunds",
        "examples": [
            "I was charged twice for my subscription",
            "how do I get a refund for my order",
            "update the credit card on my account",
            "where can I download my invoice",
        ],
    },
    {
        "name": "cooking",
        "description": "recipes, ingredients and cooking food",
        "examples": [
            "how long should I boil an egg",
            "give me a recipe for pasta with tomato sauce",
            "what can I cook with chicken and rice",
            "how do I bake bread at home",
        ],
    },
]

IN_SCOPE = {
    "weather": ["is it going to snow on saturday", "what temperature is it outside right now"],
    "billing": ["please refund the payment you took yesterday", "my card was charged two times"],
    "cooking": ["recipe for chocolate cake", "how do I cook rice in a pot"],
}
