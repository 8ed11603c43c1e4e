"""The engine seam: an engine only maps the pipeline over batches of documents; the ingest run
around it (paths, outputs, failures, the report) is the core's, the same for every engine."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from ragloom.engines import BatchEvent, Engine, IngestJob, LocalEngine, PipelineWork
from ragloom.errors import ConfigurationError
from ragloom.ingest import Ingestor, run_job
from ragloom.models import Document

pytest.importorskip("ragloom_text")

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-docs"


class OneByOne(Engine):
    """An engine of a few lines: the local engine over batches of one document each; it counts
    its batches and sessions."""

    def __init__(self) -> None:
        self.batches = 0
        self.sessions = 0

    @contextmanager
    def session(self) -> Iterator[OneByOne]:
        self.sessions += 1
        yield self

    async def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        def singles() -> Iterator[Iterator[Document]]:
            for batch in batches:
                for document in batch:
                    self.batches += 1
                    yield iter([document])

        async for event in LocalEngine().map_batches(work, singles()):
            yield event


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("engines") / "docs"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("*.json"))  # no docling here
    (root / "empty.txt").write_text("")
    (root / "blob.txt").write_bytes(b"abc\0def")
    return root


def _run(docs: Path, out: Path, engine: Engine | None) -> Any:
    with Ingestor(cache=False, engine=engine) as ingestor:
        return ingestor.run([docs], out=out, failures=out.with_suffix(".failures"))


def test_an_engine_that_only_maps_batches_gives_the_local_run(docs: Path, tmp_path: Path) -> None:
    local = _run(docs, tmp_path / "local.jsonl", None)
    engine = OneByOne()
    other = _run(docs, tmp_path / "other.jsonl", engine)
    assert (tmp_path / "other.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert (tmp_path / "other.failures").read_bytes() == (tmp_path / "local.failures").read_bytes()
    for name in ("files", "documents", "chunks", "bytes_read"):
        assert getattr(other, name) == getattr(local, name), name
    assert [p.item for p in other.skipped] == ["empty.txt"]
    assert [p.item for p in other.failures] == ["blob.txt"]
    assert engine.batches == local.documents > 3 and engine.sessions == 1

    # Nothing to run: the engine's session is not started, nothing is written.
    empty = tmp_path / "nothing"
    empty.mkdir()
    report = _run(empty, tmp_path / "none.jsonl", engine)
    assert report.nothing_found and engine.sessions == 1
    assert not (tmp_path / "none.jsonl").exists()


def test_a_job_is_checked_as_a_local_run_and_errors_name_no_cli_option(
    docs: Path, tmp_path: Path
) -> None:
    out = str(tmp_path / "o.jsonl")
    with pytest.raises(ConfigurationError, match="engine takes no options, got workers"):
        run_job(IngestJob(paths=(str(docs),), options={"workers": "2"}), engine=OneByOne())
    with pytest.raises(
        ConfigurationError, match=r"^refusing to write failures .*: it is also the out file"
    ):
        run_job(IngestJob(paths=(str(docs),), out=out, failures=out), engine=OneByOne())
    report = OneByOne().ingest(IngestJob(paths=(str(docs),), out=out))
    assert report.chunks > 0 and Path(out).exists()
