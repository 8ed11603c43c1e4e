"""Model2VecEmbedder: the kit's embedder contract, the model's identity, errors."""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
from ragloom.errors import ConfigurationError, InvalidInputError
from ragloom.testing import EmbedderContract
from ragloom_semantic import Model2VecEmbedder, bundled_model_path, load_static_model


def _copy_model(target: Path, scale: float | None = None) -> Path:
    """A copy of the bundled model; with ``scale``, its weights changed (every other dimension
    multiplied), which changes the vectors."""
    shutil.copytree(bundled_model_path(), target)
    if scale is not None:
        from safetensors.numpy import load_file, save_file

        weights = load_file(str(target / "model.safetensors"))
        table = weights["embeddings"].astype(np.float32)
        table[:, ::2] *= scale
        save_file({"embeddings": table.astype(np.float16)}, str(target / "model.safetensors"))
    return target


@pytest.fixture(scope="module")
def changed_model(tmp_path_factory) -> Path:
    return _copy_model(tmp_path_factory.mktemp("models") / "changed", scale=3.0)


class TestBundledModel(EmbedderContract):
    query_matches_documents = True

    @pytest.fixture
    def embedder(self):
        return Model2VecEmbedder()

    @pytest.fixture
    def variants(self, changed_model):
        return [Model2VecEmbedder(model_path=str(changed_model))]


class TestLocalModelFolder(EmbedderContract):
    query_matches_documents = True

    @pytest.fixture
    def embedder(self, changed_model):
        return Model2VecEmbedder(model_path=str(changed_model))


def test_registered_as_model2vec() -> None:
    (ep,) = [e for e in entry_points(group="ragloom.embedders") if e.name == "model2vec"]
    assert ep.load() is Model2VecEmbedder


def test_vectors_are_the_models_normalised_means() -> None:
    texts = ["Retrieval finds passages.", "数据 and café", "", "x " * 600]
    vectors = Model2VecEmbedder().embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (4, 256)
    reference = load_static_model().encode(texts, use_multiprocessing=False)
    assert np.allclose(vectors, reference, atol=1e-3)  # model2vec pools in float16
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 3]], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # no tokens: a zero row


def test_identity_follows_the_model_files_not_the_path(tmp_path) -> None:
    bundled = Model2VecEmbedder()
    copy = _copy_model(tmp_path / "copy")
    same = Model2VecEmbedder(model_path=str(copy))
    assert same.config() == {"model_path": str(copy)}
    assert same.config_hash == bundled.config_hash  # the same files elsewhere: the same vectors
    config = (copy / "config.json").read_text()
    (copy / "config.json").write_text(config.replace('"normalize": true', '"normalize": false'))
    assert Model2VecEmbedder(model_path=str(copy)).config_hash != bundled.config_hash


def test_a_changed_model_gives_other_vectors(changed_model) -> None:
    texts = ["Retrieval finds passages."]
    assert not np.allclose(
        Model2VecEmbedder().embed(texts), Model2VecEmbedder(str(changed_model)).embed(texts)
    )


def test_bad_model_path_and_bad_input(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="never downloads"):
        Model2VecEmbedder(model_path="minishlab/potion-base-8M")
    with pytest.raises(ConfigurationError, match="missing config.json"):
        Model2VecEmbedder(model_path=str(tmp_path))
    embedder = Model2VecEmbedder()
    with pytest.raises(InvalidInputError, match="not one string"):
        embedder.embed("a text")
    with pytest.raises(InvalidInputError, match="text 1 to embed is a int"):
        embedder.embed(["fine", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="query"):
        embedder.embed_query(None)  # type: ignore[arg-type]


def test_the_dimension_is_read_without_loading_the_model(tmp_path) -> None:
    from ragloom_semantic._model import StaticEncoder, header_dimension

    assert header_dimension(bundled_model_path()) == load_static_model().dim == 256
    encoder = StaticEncoder(_copy_model(tmp_path / "copy"))
    assert encoder.dim == 256
    assert encoder._model is None  # asking for the dimension (to check an index) loads nothing
    assert encoder.encode(["x"]).shape == (1, encoder.dim)
    odd = _copy_model(tmp_path / "odd")
    weights = odd / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes((2**40).to_bytes(8, "little") + data[8:])  # a header it cannot read
    assert header_dimension(odd) is None


def test_vectors_are_not_kept_in_the_step_cache() -> None:
    from ragloom.embedding import EmbeddingStep

    assert Model2VecEmbedder.cache_vectors is False
    assert EmbeddingStep(Model2VecEmbedder()).output_model is None
