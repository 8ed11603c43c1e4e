"""``Model2VecEmbedder``: a ragloom ``Embedder`` over a model2vec static model, offline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from ragloom.embedding import Embedder
from ragloom.errors import ConfigurationError, InvalidInputError

from ._model import ModelPathError, StaticEncoder, check_model_dir, get_encoder, model_digest

__all__ = ["Model2VecEmbedder"]


class Model2VecEmbedder(Embedder):
    """Embeds texts with a model2vec static model: the mean of the text's token vectors,
    L2-normalised, as ``float32`` rows (a text with no tokens, e.g. ``""``, gets a zero row).

    The default model is the one bundled in ragloom-semantic (``m2v-minilm-256``, 256
    dimensions, English); ``model_path`` names another local model2vec folder. Nothing is ever
    downloaded. Queries and documents share one encoder.

    Its cache identity (what its cached vectors are keyed by) is a digest of
    the model's files, not from the path: the same model anywhere has the same identity, and
    changing a model's files in place changes it (the files are read again by a new process;
    one that already loaded the model keeps using what it loaded).

    Encoding is single-threaded numpy plus a per-word cache of token ids (the Rust tokenizer
    only sees words that are not printable ASCII), which restarts past 100,000 words, so its
    memory (about 30 MB) does not grow with what is embedded; one call of :meth:`embed` with a
    few hundred texts is the efficient unit. Calls from several threads are safe.

    Its vectors are not kept in the step cache (``cache_vectors = False``): a chunk is embedded
    in about 30 microseconds, less than writing and reading back a cached vector costs.

    Args:
        model_path: a local model2vec model folder (``None``: the bundled model).

    Raises:
        ConfigurationError: ``model_path`` is not a local model2vec folder.
    """

    step_id: ClassVar[str] = "ragloom-semantic/model2vec"
    batch_size: ClassVar[int] = 512
    cache_vectors: ClassVar[bool] = False

    def __init__(self, model_path: str | None = None) -> None:
        if model_path is not None:
            try:
                check_model_dir(model_path)
            except ModelPathError as exc:
                raise ConfigurationError(str(exc)) from None
        self.model_path = None if model_path is None else str(model_path)
        self._encoder: StaticEncoder | None = None
        self._digest: str | None = None

    @property
    def encoder(self) -> StaticEncoder:
        """The shared encoder of the model (loaded on first use)."""
        if self._encoder is None:
            self._encoder = get_encoder(self.model_path)
        return self._encoder

    @property
    def model_digest(self) -> str:
        """SHA-256 over the model's files (config, tokenizer, weights)."""
        if self._digest is None:
            self._digest = model_digest(self.model_path)
        return self._digest

    @property
    def dimension(self) -> int:
        return self.encoder.dim

    def config(self) -> Mapping[str, Any]:
        return {"model_path": self.model_path}

    def cache_identity(self) -> Any:
        """The model's digest: its only argument, ``model_path``, matters only through the files
        it names (the same model anywhere shares cached vectors)."""
        return {"model": self.model_digest}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimension)`` float32 rows of norm 1 (0 for a text with no tokens).

        Raises:
            InvalidInputError: ``texts`` is a string, or holds something else than strings.
        """
        if isinstance(texts, str):
            raise InvalidInputError("embed takes a sequence of texts, not one string")
        batch = list(texts)
        for i, text in enumerate(batch):
            if not isinstance(text, str):
                raise InvalidInputError(
                    f"text {i} to embed is a {type(text).__name__}, not a string"
                )
        return self.encoder.encode(batch)

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (the same encoder as documents)."""
        if not isinstance(text, str):
            raise InvalidInputError(f"a query to embed is a {type(text).__name__}, not a string")
        vector: list[float] = self.encoder.encode([text])[0].tolist()
        return vector

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_path={self.model_path!r})"
