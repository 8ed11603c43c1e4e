"""The embedder family: batches of texts in, one vector per text out.

An :class:`Embedder` turns texts into float vectors of a fixed :attr:`~Embedder.dimension`.
Embedding is the costly step of ingestion, so it works on batches and its results are cached per
chunk: re-ingesting after editing one file re-embeds only that file's chunks.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .component import Component
from .errors import ComponentTypeError, ConfigurationError
from .models import Document
from .step import PipelineStep

if TYPE_CHECKING:
    from .context import ExecutionContext

__all__ = ["EmbeddingStep", "Embedder", "as_vectors"]


class Embedder(Component, ABC):
    """Turns texts into vectors.

    Implement :attr:`dimension` and :meth:`embed`. ``embed`` may return a list of lists of
    floats or a 2-D array (anything with ``tolist()``, such as a NumPy ``float32`` array); the
    core checks the shape. Queries are embedded with :meth:`embed_query`, which models with
    separate query and document encoders override.
    """

    #: Texts per call to :meth:`embed` when the engine batches chunks.
    batch_size: ClassVar[int] = 256
    #: Whether the step cache keeps this embedder's vectors, one entry per chunk. An embedder
    #: that computes a vector in less time than an entry takes to write and read back (a
    #: static model embeds a chunk in tens of microseconds; a cached vector costs about a
    #: hundred) sets ``False``: its chunks are embedded again whenever they are processed,
    #: and the cache holds no vectors of it. (In an index, chunks of documents that did not
    #: change are not processed at all: their fingerprints skip them.)
    cache_vectors: ClassVar[bool] = True

    @property
    @abstractmethod
    def dimension(self) -> int:
        """The length of every vector this embedder returns."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> Any:
        """One vector per text, in order: ``len(texts)`` rows of :attr:`dimension` floats."""

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query. Default: :meth:`embed` of the text alone."""
        return as_vectors(self.embed([text]), 1, self.dimension, type(self).__name__)[0]


def as_vectors(rows: Any, count: int, dimension: int, who: str) -> list[list[float]]:
    """``rows`` (an array or nested sequence) as ``count`` lists of ``dimension`` floats.

    A 2-D NumPy array of real numbers (what most embedders return) is checked whole by NumPy
    and converted in one ``tolist()``; anything else is checked value by value.

    Raises:
        ComponentTypeError: another number of rows, a row of another length, or values that
            are not finite numbers.
    """
    checked = _checked_array(rows, count, dimension, who)
    if checked is not None:
        return checked
    data = rows.tolist() if hasattr(rows, "tolist") else rows
    if not isinstance(data, list | tuple) or len(data) != count:
        got = len(data) if isinstance(data, list | tuple) else type(rows).__name__
        raise ComponentTypeError(f"{who} returned {got} vectors for {count} texts")
    out: list[list[float]] = []
    for i, row in enumerate(data):
        vector = row.tolist() if hasattr(row, "tolist") else row
        if not isinstance(vector, list | tuple) or len(vector) != dimension:
            size = len(vector) if isinstance(vector, list | tuple) else type(vector).__name__
            raise ComponentTypeError(
                f"{who} returned a vector of {size} values for text {i}, expected {dimension}"
            )
        values = [float(v) for v in vector]
        if any(v != v or v in (float("inf"), float("-inf")) for v in values):
            raise ComponentTypeError(f"{who} returned a vector with NaN or infinity for text {i}")
        out.append(values)
    return out


def _checked_array(rows: Any, count: int, dimension: int, who: str) -> list[list[float]] | None:
    """``rows`` as lists when it is a 2-D NumPy array of floats or integers of the right shape
    with finite values; ``None`` to let the general path check it (and name the fault)."""
    if type(rows).__module__ != "numpy" or getattr(rows, "ndim", None) != 2:
        return None
    np: Any = sys.modules["numpy"]  # imported by whoever made the array; not a dependency

    if rows.dtype.kind not in "fiu" or rows.shape != (count, dimension):
        return None
    if rows.dtype.kind == "f" and not bool(np.isfinite(rows).all()):
        bad = int(np.flatnonzero(~np.isfinite(rows).all(axis=1))[0])
        raise ComponentTypeError(f"{who} returned a vector with NaN or infinity for text {bad}")
    values: list[list[float]] = rows.astype(np.float64, copy=False).tolist()
    return values


class EmbeddingStep(PipelineStep[Document]):
    """Gives each chunk (or document) its vector: the embedder runs on batches of them.

    What is embedded is :func:`~ragloom.search_text.search_text`: the chunk's text under its
    document's title and heading path, which say what a passage is about when it does not.

    Each output is its input with ``embedding`` set; nothing else changes. Results are cached
    per chunk like any step's, so an unchanged chunk is never embedded twice, unless the
    embedder is cheaper to run than its cache (:attr:`Embedder.cache_vectors` false: then this
    step runs uncached). In a pipeline file a step ``embedder = "model2vec"`` builds one of
    these around the named embedder.
    """

    event_name = "Embedding"
    kind = "embedder"
    input_type = Document
    cache_scope = "content"

    def __init__(
        self,
        embedder: Embedder,
        *,
        batch_size: int | None = None,
        cache: Any = None,
        policy: Any = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(embedder, Embedder):
            raise ComponentTypeError(
                f"EmbeddingStep needs an Embedder, got {type(embedder).__name__}"
            )
        label = name or f"Embed[{type(embedder).__name__}]"
        super().__init__(cache=cache, policy=policy, name=label)
        size = embedder.batch_size if batch_size is None else batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigurationError(f"batch_size must be an integer >= 1, got {size!r}")
        self.embedder = embedder
        self.batch_size = size  # type: ignore[misc]
        if not embedder.cache_vectors:
            self.output_model = None  # type: ignore[misc]  # the engine then caches nothing

    @property
    def component(self) -> Embedder:
        """The embedder this step runs (what a pipeline file names)."""
        return self.embedder

    def config(self) -> dict[str, Any]:
        from .search_text import SEARCH_TEXT_VERSION

        return {"embedder": self.embedder.config_hash, "text": SEARCH_TEXT_VERSION}

    def validate_input(self, item: Document) -> None:
        if not isinstance(item, Document):
            from ._inputs import wrong_item
            from .errors import InvalidInputError

            raise InvalidInputError(str(wrong_item(item, f"a ragloom.Document for {self.name}")))

    def transform_batch(
        self, items: list[Document], context: ExecutionContext
    ) -> list[Document]:
        from .search_text import search_text

        embedder = self.embedder
        # A chunk is embedded with its title and heading path (its text is unchanged).
        vectors = as_vectors(
            embedder.embed([search_text(item) for item in items]),
            len(items),
            embedder.dimension,
            type(embedder).__name__,
        )
        from ._construct import construct_document

        return [
            construct_document({**item.__dict__, "embedding": vector})
            if type(item) is Document
            else item.model_copy(update={"embedding": vector})
            for item, vector in zip(items, vectors, strict=True)
        ]

    def transform(self, item: Document, context: ExecutionContext) -> list[Document]:
        return self.transform_batch([item], context)
