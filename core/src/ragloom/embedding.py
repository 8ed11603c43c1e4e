"""The embedder family: batches of texts in, one vector per text out.

An :class:`Embedder` turns texts into float vectors of a fixed :attr:`~Embedder.dimension`.
Embedding is the costly step of ingestion, so it works on batches and its results are cached per
chunk: re-ingesting after editing one file re-embeds only that file's chunks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from .component import Component
from .errors import ComponentTypeError

__all__ = ["Embedder", "as_vectors"]


class Embedder(Component, ABC):
    """Turns texts into vectors.

    Implement :attr:`dimension` and :meth:`embed`. ``embed`` may return a list of lists of
    floats or a 2-D array (anything with ``tolist()``, such as a NumPy ``float32`` array); the
    core checks the shape. Queries are embedded with :meth:`embed_query`, which models with
    separate query and document encoders override.
    """

    #: Texts per call to :meth:`embed` when the engine batches chunks.
    batch_size: ClassVar[int] = 256

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

    Raises:
        ComponentTypeError: another number of rows, a row of another length, or values that
            are not finite numbers.
    """
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
