"""Steps the cache cannot key: an argument with no stable identity (until a ``cache_version``
opts in), and a FunctionStep without an output model (plain dicts)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from ragloom import CacheSkipped, Document, ExecutionContext, FunctionStep, Pipeline, PipelineStep
from ragloom.config import build_pipeline
from ragloom.errors import ConfigurationError


class Guarded(PipelineStep[Document]):
    """Tags items; built with a lock (no stable identity: nothing says what it does)."""

    step_id = "tests/guarded"
    awaits = False

    def __init__(self, guard: Any, tag: str = "x", *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.guard = guard
        self.tag = tag
        self.calls = 0

    def transform(self, item: Document, context: ExecutionContext) -> Document:
        self.calls += 1
        return item.model_copy(update={"metadata": {**item.metadata, "tag": self.tag}})


DOCS = [Document(id=f"d{i}", content=f"document number {i}") for i in range(12)]


def _run(pipeline: Pipeline[Any]) -> tuple[Any, list[CacheSkipped]]:
    skipped: list[CacheSkipped] = []
    pipeline.subscribe(lambda e: skipped.append(e) if isinstance(e, CacheSkipped) else None)
    result = pipeline.run_sync(DOCS)
    assert not result.failed, result.failed
    return result, skipped


def _dump(result: Any) -> list[Any]:
    return [o if isinstance(o, dict) else o.model_dump(mode="json") for o in result]


def test_an_argument_without_identity_runs_uncached_with_one_warning(
    store: Any, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"guarded-{request.node.callspec.id}"  # this test's own warning (logged once)
    step = Guarded(threading.Lock(), name=name)
    with caplog.at_level(logging.WARNING, logger="ragloom"):
        first, skipped = _run(Pipeline(step, cache=store))
        second, again = _run(Pipeline(step, cache=store))
    assert len(skipped) == 1 and len(again) == 1  # one event per run
    event = skipped[0]
    assert event.step == name
    assert "parameter 'guard'" in event.reason and "has no stable identity" in event.reason
    assert "cache_version" in event.reason and "runs without a cache" in event.reason
    assert (first.cache_hits, first.cache_misses, second.cache_hits) == (0, 0, 0)
    assert step.calls == 2 * len(DOCS) and store.info().entries == 0
    assert _dump(first) == _dump(Pipeline(Guarded(threading.Lock()), cache=False).run_sync(DOCS))
    warnings = [r.getMessage() for r in caplog.records if name in r.getMessage()]
    assert warnings == [f"{name}: {event.reason}"]  # logged once per process


def test_a_cache_version_caches_it_again(store: Any) -> None:
    step = Guarded(threading.Lock()).configure(cache_version=1)
    cold, skipped = _run(Pipeline(step, cache=store))
    assert (cold.cache_misses, skipped) == (len(DOCS), [])
    warm, skipped = _run(Pipeline(step, cache=store))
    assert (warm.cache_hits, warm.cache_misses, skipped) == (len(DOCS), 0, [])
    assert step.calls == len(DOCS) and _dump(warm) == _dump(cold)
    # The version stands in for the lock: another lock, same version, still hits; a new
    # version (the argument changed what the step does) computes again.
    other = Guarded(threading.Lock()).configure(cache_version=1)
    assert _run(Pipeline(other, cache=store))[0].cache_hits == len(DOCS)
    bumped = Guarded(threading.Lock()).configure(cache_version=2)
    assert _run(Pipeline(bumped, cache=store))[0].cache_misses == len(DOCS)
    # Arguments that have an identity still count: another tag is another key.
    tagged = Guarded(threading.Lock(), tag="y").configure(cache_version=1)
    assert _run(Pipeline(tagged, cache=store))[0].cache_misses == len(DOCS)


def test_a_closure_over_a_lock_names_what_it_captured(store: Any) -> None:
    lock = threading.Lock()

    def shout(doc: Document) -> Document:
        with lock:
            return doc.model_copy(update={"content": doc.content.upper()})

    step = FunctionStep(shout, output_model=Document, name="shout")
    _, skipped = _run(Pipeline(step, cache=store))
    assert len(skipped) == 1 and "captured 'lock'" in skipped[0].reason
    _, skipped = _run(Pipeline(step.configure(cache_version="v1"), cache=store))
    assert skipped == [] and store.info().entries == len(DOCS)


def test_cache_version_in_a_pipeline_file(tmp_path: Path, store: Any) -> None:
    spec = tmp_path / "pipeline.toml"
    spec.write_text(
        'version = 1\n[[steps]]\nimport = "test_cache_uncacheable:Guarded"\n'
        'params = { guard = "a plain value" }\ncache_version = "2024-06"\n',
        encoding="utf-8",
    )
    pipeline = build_pipeline(spec, allow_imports=True)
    (step,) = pipeline.steps()
    assert step.cache_version == "2024-06"
    versioned = step.config_hash
    assert versioned != Guarded("a plain value").config_hash


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('cache_mode = "never"', "cache_mode"),
        ("cache_version = 1.5", "cache_version"),
    ],
)
def test_bad_cache_settings_in_a_pipeline_file_are_named(
    tmp_path: Path, extra: str, message: str
) -> None:
    spec = tmp_path / "pipeline.toml"
    spec.write_text(
        f'version = 1\n[[steps]]\nimport = "test_cache_uncacheable:Guarded"\n{extra}\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError) as caught:
        build_pipeline(spec, allow_imports=True)
    assert "steps[0]" in str(caught.value) and message in str(caught.value)


class Row(BaseModel):
    id: str
    length: int


def test_a_function_step_returning_dicts_says_why_it_is_not_cached(store: Any) -> None:
    step = FunctionStep(lambda d: {"id": d.id, "length": len(d.content)}, name="rows")
    result, skipped = _run(Pipeline(step, cache=store))
    assert [s.step for s in skipped] == ["rows"]
    assert "output_model" in skipped[0].reason and "plain dicts" in skipped[0].reason
    assert result[0] == {"id": "d0", "length": len(DOCS[0].content)}
    assert (result.cache_hits, result.cache_misses, store.info().entries) == (0, 0, 0)
    # Uncached pipelines hear nothing about it.
    assert _run(Pipeline(step, cache=False))[1] == []


def test_a_function_step_with_an_output_model_is_cached(store: Any) -> None:
    def row(doc: Document) -> Row:
        return Row(id=doc.id, length=len(doc.content))

    step = FunctionStep(row, output_model=Row, name="rows")
    cold, skipped = _run(Pipeline(step, cache=store))
    assert (cold.cache_misses, skipped) == (len(DOCS), [])
    warm, _ = _run(Pipeline(step, cache=store))
    assert warm.cache_hits == len(DOCS)
    assert [r.model_dump() for r in warm] == [r.model_dump() for r in cold]


def test_a_function_step_returning_dicts_under_an_output_model_fails_clearly(
    store: Any,
) -> None:
    step = FunctionStep(lambda d: {"id": d.id, "length": 1}, output_model=Row, name="rows")
    result = Pipeline(step, cache=store).run_sync(DOCS)
    assert len(result.failed) == len(DOCS)
    assert "declares output_model Row but produced dict" in result.failed[0].message
    assert store.info().entries == 0
