"""``run_pipeline``: a pipeline over a dataset of documents, chunks and failures back."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from ragloom.config import build_pipeline
from ragloom.models import Document
from ragloom_ray import documents_dataset, run_pipeline

pytestmark = pytest.mark.usefixtures("ray_session")


def _documents(count: int) -> list[Document]:
    rng = random.Random(7)
    words = "river stone cloud maple ember harbor violet signal copper meadow".split()
    docs = []
    for i in range(count):
        text = "\n\n".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(4, 40))) + "."
            for _ in range(rng.randint(1, 6))
        )
        if i % 17 == 5:
            text += "\n\nThis paragraph says FAIL-THIS."
        docs.append(Document(id=f"doc-{i:03d}", content=text, metadata={"n": i, "tags": ["x"]}))
    return docs


def test_run_pipeline_gives_the_local_chunks_in_order_and_every_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "steps"))
    spec = {
        "steps": [
            {"chunker": "recursive", "params": {"chunk_size": 120}},
            {"import": "ragloom_ray_test_steps:FailOn", "params": {"marker": "FAIL-THIS"}},
            {"embedder": "model2vec"},
        ],
    }
    docs = _documents(80)
    with build_pipeline(spec, allow_imports=True) as pipeline:
        local = pipeline.run_sync(docs)
    assert local.failed and len(local) > 100

    shuffled = list(docs)
    random.Random(3).shuffle(shuffled)  # the dataset's order does not matter
    run = run_pipeline(
        spec, documents_dataset(shuffled, blocks=5), workers=2, batch_size=8,
        allow_imports=True,
    )
    run.chunks = run.chunks.materialize()  # sorted once, read twice below
    got = list(run.documents())
    assert got == sorted(local, key=lambda c: (c.parent_id, c.index))
    assert all(c.embedding is not None and len(c.embedding) == 256 for c in got)
    assert sorted((p.item, p.stage, p.reason) for p in run.failures) == sorted(
        (e.item_id, e.step, e.reason) for e in local.failed
    )
    assert run.cache_hits == 0

    run.chunks.write_parquet(str(tmp_path / "chunks"))
    table = pq.read_table(tmp_path / "chunks")
    assert table.num_rows == len(got)
    assert set(table.column_names) >= {"id", "document_id", "content", "metadata", "embedding"}
