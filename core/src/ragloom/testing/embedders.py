"""The embedder contract: subclass it, provide an ``embedder`` fixture, get it checked.

Example::

    from ragloom.testing import EmbedderContract

    class TestMyEmbedder(EmbedderContract):
        @pytest.fixture
        def embedder(self):
            return MyEmbedder()

        @pytest.fixture
        def variants(self):  # optional: embedders over other models
            return [MyEmbedder(model="other")]
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from ..embedding import Embedder, as_vectors

__all__ = ["EmbedderContract"]

_TEXTS = [
    "Retrieval-augmented generation finds passages before it answers.",
    "The cat sat on the warm windowsill all afternoon.",
    "Quarterly revenue rose by twelve percent, beating forecasts.",
    "def add(a, b):\n    return a + b\n",
    "# Title\n\nA paragraph of Markdown with *emphasis* and a [link](https://example.com).",
    "short",
]

_UNICODE = [
    "naïve café résumé — Ünïcödé façade",
    "数据检索与生成",
    "مرحبا بالعالم",
    "emoji 🙂🚀 and symbols © ® ™ • → ≥",
    "e\u0301 combining accents, zero\u200bwidth, non\u00a0breaking",
    "control\x00chars\x07inside\ttabs\nand lines",
    "   ",
]


def _close(a: Sequence[float], b: Sequence[float], tolerance: float) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=tolerance, abs_tol=tolerance)
        for x, y in zip(a, b, strict=True)
    )


class EmbedderContract:
    """The embedder family's contract. Provide an ``embedder`` fixture returning an instance.

    Optionally provide ``variants``: embedders over *other* models (or another model
    configuration that changes vectors); their identities must differ from the embedder's and
    from each other's.

    Class attributes tune the checks: ``tolerance`` (how far a vector embedded in a batch may
    be from the same text embedded alone; ``1e-5``), ``query_matches_documents`` (``True`` when
    :meth:`~ragloom.embedding.Embedder.embed_query` must equal embedding the text as a
    document, as for symmetric models; ``False``).
    """

    tolerance: ClassVar[float] = 1e-5
    query_matches_documents: ClassVar[bool] = False

    @pytest.fixture
    def embedder(self) -> Embedder:  # pragma: no cover - the author overrides it
        raise NotImplementedError("provide an `embedder` fixture returning your embedder")

    @pytest.fixture
    def variants(self) -> list[Embedder]:
        """Embedders whose model differs from the ``embedder`` fixture's (none by default)."""
        return []

    def _embed(self, embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
        rows = embedder.embed(list(texts))
        dtype = getattr(rows, "dtype", None)
        if dtype is not None:
            assert getattr(dtype, "kind", "f") == "f", f"vectors of dtype {dtype}, not floats"
        return as_vectors(rows, len(texts), embedder.dimension, type(embedder).__name__)

    def test_is_an_embedder_with_dimension_and_identity(self, embedder: Embedder) -> None:
        assert isinstance(embedder, Embedder)
        dimension = embedder.dimension
        assert isinstance(dimension, int) and not isinstance(dimension, bool) and dimension > 0
        assert embedder.dimension == dimension
        assert isinstance(embedder.batch_size, int) and embedder.batch_size > 0
        assert isinstance(embedder.config_hash, str) and len(embedder.config_hash) == 32
        assert dict(embedder.config()) == dict(embedder.config())

    def test_vectors_have_the_dimension_and_are_finite(self, embedder: Embedder) -> None:
        vectors = self._embed(embedder, _TEXTS)
        assert len(vectors) == len(_TEXTS)
        assert all(len(v) == embedder.dimension for v in vectors)
        distinct = {tuple(v) for v in vectors}
        assert len(distinct) > 1, "every text got the same vector"

    def test_deterministic(self, embedder: Embedder) -> None:
        first = self._embed(embedder, _TEXTS)
        second = self._embed(embedder, _TEXTS)
        for a, b in zip(first, second, strict=True):
            assert _close(a, b, self.tolerance)

    def test_batch_equals_one_by_one_in_order(self, embedder: Embedder) -> None:
        texts = _TEXTS + _UNICODE
        batch = self._embed(embedder, texts)
        for i, text in enumerate(texts):
            alone = self._embed(embedder, [text])[0]
            assert _close(batch[i], alone, self.tolerance), f"text {i} ({text!r}) differs"
        backwards = self._embed(embedder, texts[::-1])[::-1]
        for i, (a, b) in enumerate(zip(batch, backwards, strict=True)):
            assert _close(a, b, self.tolerance), f"text {i} depends on its place in the batch"

    def test_empty_batch(self, embedder: Embedder) -> None:
        assert self._embed(embedder, []) == []

    def test_empty_string_and_unicode(self, embedder: Embedder) -> None:
        vectors = self._embed(embedder, ["", *_UNICODE])
        assert len(vectors) == len(_UNICODE) + 1

    def test_a_full_batch(self, embedder: Embedder) -> None:
        size = embedder.batch_size
        texts = [f"{_TEXTS[i % len(_TEXTS)]} #{i}" for i in range(size)]
        assert len(self._embed(embedder, texts)) == size

    def test_embed_query(self, embedder: Embedder) -> None:
        for text in ("What is retrieval-augmented generation?", "", "数据 🙂"):
            vector = embedder.embed_query(text)
            rows = as_vectors([vector], 1, embedder.dimension, type(embedder).__name__)
            if self.query_matches_documents:
                assert _close(rows[0], self._embed(embedder, [text])[0], self.tolerance)

    def test_concurrent_calls_agree(self, embedder: Embedder) -> None:
        """The engine may embed batches from several worker threads at once."""
        batches = [[f"{t} ({k})" for t in _TEXTS] for k in range(4)]
        expected = [self._embed(embedder, b) for b in batches]
        results: list[Any] = [None] * len(batches)
        errors: list[BaseException] = []

        def work(k: int) -> None:
            try:
                results[k] = self._embed(embedder, batches[k])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        for got, want in zip(results, expected, strict=True):
            for a, b in zip(got, want, strict=True):
                assert _close(a, b, self.tolerance)

    def test_identity_is_stable_and_rebuilds(self, embedder: Embedder) -> None:
        rebuilt = type(embedder)(**dict(embedder.config()))
        assert rebuilt.config_hash == embedder.config_hash, "config() must rebuild the embedder"
        assert rebuilt.dimension == embedder.dimension
        for a, b in zip(
            self._embed(rebuilt, _TEXTS), self._embed(embedder, _TEXTS), strict=True
        ):
            assert _close(a, b, self.tolerance)

    def test_identity_changes_with_the_model(
        self, embedder: Embedder, variants: list[Embedder]
    ) -> None:
        if not variants:
            pytest.skip("no `variants` fixture: embedders over other models")
        hashes = [embedder.config_hash, *(v.config_hash for v in variants)]
        assert len(set(hashes)) == len(hashes), "another model must give another identity"
