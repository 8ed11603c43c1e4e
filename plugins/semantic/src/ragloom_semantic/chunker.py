"""``SemanticChunker``: a ragloom ``Chunker`` that cuts where the topic changes."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal

from ragloom import Chunker, ChunkSpan, ConfigurationError, Document

from ._model import Encoder, ModelPathError, check_model_dir, get_encoder
from ._segment import BREAKPOINT_TYPES, semantic_spans

__all__ = ["SemanticChunker"]

_DEFAULT_THRESHOLDS = {"percentile": 90.0, "absolute": 0.5}
_OVERSIZED: Mapping[str, Any] = {"oversized": True}


def _int_param(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class SemanticChunker(Chunker):
    """Splits text into chunks of at most ``chunk_size`` characters, cutting where the meaning
    of adjacent sentence windows drifts apart.

    Sentences are found by a regular expression over the whole text (terminal punctuation
    followed by whitespace, or a blank line) and embedded in one batch with a model2vec static
    model. At each gap between sentences, the ``window`` sentences before it are compared with
    the ``window`` after it (cosine of summed sentence vectors). Gaps become breakpoints when
    the similarity drops: with ``breakpoint_type="percentile"`` where the distance
    ``1 - similarity`` is above the ``breakpoint_threshold``-th percentile of the document's
    gaps, with ``"absolute"`` where the similarity is below ``breakpoint_threshold``. A section
    still longer than ``chunk_size`` is cut at its least similar gaps; a piece shorter than
    ``min_chunk_size`` joins its more similar neighbour when both fit; a sentence longer than
    ``chunk_size`` is split between words, then between characters.

    Every chunk is an exact ``[start, end)`` span; spans tile the document (whitespace goes
    with the text before it); no chunk exceeds ``chunk_size`` except one grapheme cluster
    longer than it, flagged ``metadata["oversized"] = True``; an empty document has no chunks.

    Args:
        chunk_size: maximum chunk length in characters.
        breakpoint_type: ``"percentile"`` or ``"absolute"``.
        breakpoint_threshold: percentile in ``[0, 100]`` (default 90) or similarity in
            ``[-1, 1]`` (default 0.5).
        window: sentences on each side of a gap that are compared.
        min_chunk_size: pieces shorter than this join a neighbour when they fit (0: never).
        paragraph_bias: subtracted from the similarity at paragraph breaks (blank lines), so
            that between nearly equal candidates the cut falls between paragraphs (0: off).
        model_path: a local model2vec model folder (``None``: the bundled model).
        encoder: an object with ``name`` and ``encode(texts)`` used instead of a model (tests,
            custom embeddings); not part of :meth:`config`.

    Raises:
        ConfigurationError: a bad parameter (named) or a ``model_path`` that is not a local
            model2vec folder.
    """

    step_id: ClassVar[str] = "ragloom-semantic/chunker"
    # Exact spans covering the document (checked per item), cut from the text alone.
    lossless = True
    cache_scope = "content"

    def __init__(
        self,
        chunk_size: int = 1000,
        *,
        breakpoint_type: Literal["percentile", "absolute"] = "percentile",
        breakpoint_threshold: float | None = None,
        window: int = 2,
        min_chunk_size: int = 100,
        paragraph_bias: float = 0.1,
        model_path: str | None = None,
        encoder: Encoder | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.chunk_size = _int_param("chunk_size", chunk_size, 1)
        self.window = _int_param("window", window, 1)
        self.min_chunk_size = _int_param("min_chunk_size", min_chunk_size, 0)
        if breakpoint_type not in BREAKPOINT_TYPES:
            raise ConfigurationError(
                f"breakpoint_type must be one of {', '.join(map(repr, BREAKPOINT_TYPES))}, "
                f"got {breakpoint_type!r}"
            )
        if breakpoint_threshold is None:
            breakpoint_threshold = _DEFAULT_THRESHOLDS[breakpoint_type]
        if (
            isinstance(breakpoint_threshold, bool)
            or not isinstance(breakpoint_threshold, int | float)
            or not math.isfinite(breakpoint_threshold)
        ):
            raise ConfigurationError(
                f"breakpoint_threshold must be a finite number, got {breakpoint_threshold!r}"
            )
        low, high = (0.0, 100.0) if breakpoint_type == "percentile" else (-1.0, 1.0)
        if not low <= breakpoint_threshold <= high:
            raise ConfigurationError(
                f"breakpoint_threshold must be in [{low:g}, {high:g}] for "
                f"breakpoint_type={breakpoint_type!r}, got {breakpoint_threshold!r}"
            )
        if (
            isinstance(paragraph_bias, bool)
            or not isinstance(paragraph_bias, int | float)
            or not 0 <= paragraph_bias <= 2
        ):
            raise ConfigurationError(
                f"paragraph_bias must be a number in [0, 2], got {paragraph_bias!r}"
            )
        if encoder is None and model_path is not None:
            try:
                check_model_dir(model_path)
            except ModelPathError as exc:
                raise ConfigurationError(str(exc)) from None
        if encoder is not None and not isinstance(encoder, Encoder):
            raise ConfigurationError(
                "encoder must have a name and an encode(texts) method, got "
                f"{type(encoder).__name__}"
            )
        self.breakpoint_type: str = breakpoint_type
        self.breakpoint_threshold = float(breakpoint_threshold)
        self.paragraph_bias = float(paragraph_bias)
        self.model_path = None if model_path is None else str(model_path)
        self._encoder = encoder

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = get_encoder(self.model_path)
        return self._encoder

    def config(self) -> Mapping[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "breakpoint_type": self.breakpoint_type,
            "breakpoint_threshold": self.breakpoint_threshold,
            "window": self.window,
            "min_chunk_size": self.min_chunk_size,
            "paragraph_bias": self.paragraph_bias,
            "model_path": self.model_path,
        }

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        """``(start, end, oversized)`` of each chunk of ``text``."""
        return semantic_spans(
            text,
            self.encoder.encode,
            chunk_size=self.chunk_size,
            breakpoint_type=self.breakpoint_type,
            breakpoint_threshold=self.breakpoint_threshold,
            window=self.window,
            min_chunk_size=self.min_chunk_size,
            paragraph_bias=self.paragraph_bias,
        )

    def split(self, document: Document) -> Iterator[ChunkSpan]:
        for start, end, oversized in self.spans(document.content):
            yield ChunkSpan(start, end, _OVERSIZED if oversized else None)
