"""WordCountStep: in pipelines, cached, rebuilt from its config, registered."""

from __future__ import annotations

import anyio
import pytest
from ragloom import Document, Pipeline, build_pipeline
from ragloom.cache import MemoryCacheStore
from ragloom.plugins import Registry
from ragloom.testing import run_step

from __PACKAGE__.step import WordCountStep

DOCS = [Document(id="a", content="one two, three"), Document(id="b", content="")]


def test_counts_words_and_keeps_the_rest() -> None:
    result = Pipeline(WordCountStep()).run_sync(DOCS)
    assert [d.metadata["words"] for d in result] == [3, 0]
    assert [d.content for d in result] == [d.content for d in DOCS]
    assert result.failed == []


def test_outputs_are_cached_and_replayed() -> None:
    store = MemoryCacheStore()
    step = WordCountStep(key="n").configure(cache_mode="always")
    cold = anyio.run(lambda: run_step(step, DOCS, cache=store))
    warm = anyio.run(lambda: run_step(step, DOCS, cache=store))
    assert [d.model_dump() for d in warm] == [d.model_dump() for d in cold]
    assert warm.cache_hits == len(DOCS)


def test_rebuilds_from_its_config_with_the_same_identity() -> None:
    step = WordCountStep(key="n")
    assert WordCountStep(**step.config()).config_hash == step.config_hash
    assert WordCountStep(key="m").config_hash != step.config_hash


def test_refuses_what_is_not_a_document() -> None:
    with pytest.raises(TypeError, match="Document"):
        Pipeline(WordCountStep()).run_sync(["plain text"])


def test_registered_and_named_in_a_pipeline_file() -> None:
    assert Registry().resolve("step", "__DIST__:__PREFIX__-word-count") is WordCountStep
    spec = {"steps": [{"step": "__DIST__:__PREFIX__-word-count", "params": {"key": "n"}}]}
    with build_pipeline(spec) as pipeline:
        assert pipeline.run_sync(DOCS[:1])[0].metadata["n"] == 3
