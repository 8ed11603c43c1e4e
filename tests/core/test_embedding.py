"""The embedding step: vectors checked whole when they are an array, and embedders whose
vectors are cheaper to compute than to cache run uncached."""

from __future__ import annotations

import anyio
import pytest
from ragloom import Document, Pipeline, SQLiteCacheStore
from ragloom.embedding import Embedder, EmbeddingStep, as_vectors
from ragloom.errors import ComponentTypeError

np = pytest.importorskip("numpy")


def by_values(rows: list[list[object]], count: int, dimension: int) -> list[list[float]]:
    """What the value-by-value path makes of ``rows`` (lists, not an array)."""
    return as_vectors(rows, count, dimension, "E")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
def test_an_array_gives_what_the_value_by_value_path_gives(dtype) -> None:
    rows = (np.random.default_rng(7).standard_normal((5, 4)) * 10).astype(dtype)
    out = as_vectors(rows, 5, 4, "E")
    assert out == by_values(rows.tolist(), 5, 4)
    assert all(type(v) is float for row in out for v in row)


def test_an_array_of_the_wrong_shape_or_with_nan_is_named() -> None:
    rows = np.ones((3, 4), dtype=np.float32)
    with pytest.raises(ComponentTypeError, match="returned 3 vectors for 2 texts"):
        as_vectors(rows, 2, 4, "E")
    with pytest.raises(ComponentTypeError, match="3 values for text 0, expected 4"):
        as_vectors(rows[:, :3], 3, 4, "E")
    with pytest.raises(ComponentTypeError, match="returned 12 vectors for 3 texts"):
        as_vectors(rows.reshape(-1), 3, 4, "E")  # 1-D: not rows
    for bad in (np.nan, np.inf, -np.inf):
        broken = rows.copy()
        broken[2, 1] = bad
        with pytest.raises(ComponentTypeError, match="NaN or infinity for text 2"):
            as_vectors(broken, 3, 4, "E")
    with pytest.raises(ComponentTypeError, match="NaN or infinity for text 1"):
        by_values([[1.0], [float("nan")]], 2, 1)


class Counting(Embedder):
    step_id = "test/counting"
    calls = 0

    def config(self) -> dict[str, object]:
        return {}

    @property
    def dimension(self) -> int:
        return 2

    def embed(self, texts):
        type(self).calls += len(texts)
        return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)


class Cheap(Counting):
    step_id = "test/cheap"
    cache_vectors = False
    calls = 0


@pytest.mark.parametrize("embedder", [Counting, Cheap])
def test_cache_vectors_decides_whether_vectors_are_cached(tmp_path, embedder) -> None:
    chunks = [Document(id=f"c{i}", content="x" * (i + 1)) for i in range(40)]
    step = EmbeddingStep(embedder())
    assert step.output_model is (Document if embedder.cache_vectors else None)
    with SQLiteCacheStore(tmp_path / "cache.sqlite") as cache:
        for run in range(2):
            pipeline = Pipeline(EmbeddingStep(embedder()), cache=cache)
            out = anyio.run(pipeline.run, chunks)
            assert [c.embedding for c in out] == [[float(i + 1), 1.0] for i in range(40)]
            pipeline.close()
        entries = cache.info().entries
    if embedder.cache_vectors:
        assert embedder.calls == 40 and entries == 40  # the second run replayed them
    else:
        assert embedder.calls == 80 and entries == 0  # embedded twice, nothing cached
