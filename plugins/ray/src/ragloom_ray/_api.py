"""Running a pipeline over a ``ray.data.Dataset`` of documents, from Python.

A documents dataset has one row per document: ``id`` and ``content`` (strings), and optionally
``content_format`` and ``metadata`` (a JSON object as text, or a dict). :func:`documents_dataset`
makes one from :class:`~ragloom.models.Document` objects; ``ray.data.read_parquet`` or any other
reader gives one from data on any filesystem Ray reads.

:func:`run_pipeline` applies the pipeline with ``map_batches`` in an actor pool (the pipeline
built once per worker from its declarative spec) and returns a :class:`PipelineRun`: the chunks
as a dataset, ordered by (document id, position of the chunk among its document's outputs),
and every failed item with its reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragloom.errors import ConfigurationError

from ._worker import PipelineHolder

if TYPE_CHECKING:
    import ray.data
    from ragloom.ingest import Problem
    from ragloom.models import Document
    from ragloom.pipeline import Pipeline

__all__ = ["CHUNK_COLUMNS", "PipelineRun", "documents_dataset", "run_pipeline"]

#: The columns of a chunks dataset, in order (``metadata`` is JSON text; ``embedding`` is
#: null for chunks without a vector).
CHUNK_COLUMNS = (
    "document_id", "position", "id", "parent_id", "index", "start", "end", "content",
    "content_format", "metadata", "embedding",
)


def _chunk_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("document_id", pa.string()),
        ("position", pa.int64()),
        ("id", pa.string()),
        ("parent_id", pa.string()),
        ("index", pa.int64()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("content", pa.large_string()),
        ("content_format", pa.string()),
        ("metadata", pa.large_string()),
        ("embedding", pa.list_(pa.float64())),
        ("failure", pa.string()),
    ])


@dataclass
class PipelineRun:
    """The outcome of :func:`run_pipeline`.

    ``chunks`` is a dataset with the columns of :data:`CHUNK_COLUMNS`, sorted by
    ``(document_id, position)``; ``failures`` lists every item that produced no output, with
    its reason (the same :class:`~ragloom.ingest.Problem` records an ingestion reports).
    """

    chunks: ray.data.Dataset
    failures: list[Problem] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0

    def documents(self) -> Iterator[Document]:
        """The chunks as :class:`~ragloom.models.Document` objects, in order."""
        for row in self.chunks.iter_rows():
            yield row_document(row)


def row_document(row: Mapping[str, Any]) -> Document:
    """A chunk row (or a documents-dataset row) as a :class:`~ragloom.models.Document`."""
    from ragloom.models import Document

    metadata = row.get("metadata")
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    values: dict[str, Any] = {
        "id": row["id"], "content": row["content"], "metadata": dict(metadata or {}),
    }
    for name in ("content_format", "parent_id", "index", "start", "end", "embedding"):
        value = row.get(name)
        if value is not None:
            values[name] = value.tolist() if hasattr(value, "tolist") else value
    return Document(**values)


def documents_dataset(
    documents: Iterable[Document], *, blocks: int | None = None
) -> ray.data.Dataset:
    """A documents dataset (one row per document) of ``documents``."""
    import ray.data

    rows = [
        {
            "id": d.id,
            "content": d.content,
            "content_format": str(d.content_format),
            "metadata": json.dumps(d.metadata, ensure_ascii=False, default=str),
        }
        for d in documents
    ]
    if blocks is None:
        return ray.data.from_items(rows)
    return ray.data.from_items(rows, override_num_blocks=blocks)


def _spec_of(
    pipeline: Pipeline[Any] | Mapping[str, Any] | str | os.PathLike[str],
    allow_imports: bool,
) -> tuple[dict[str, Any], Any]:
    """``(spec, registry)``: the declarative spec the workers build, and the driver's registry
    (to name the distributions it needs)."""
    from ragloom.config import build_pipeline, dump_pipeline
    from ragloom.pipeline import Pipeline
    from ragloom.plugins import Registry

    from ._cache import absolute_cache_paths

    if isinstance(pipeline, Pipeline):
        registry = pipeline.registry or Registry()
        return absolute_cache_paths(dump_pipeline(pipeline, registry=registry)), registry
    registry = Registry()
    if isinstance(pipeline, str | os.PathLike):
        built = build_pipeline(pipeline, registry=registry, allow_imports=allow_imports)
        try:
            return absolute_cache_paths(dump_pipeline(built, registry=registry)), registry
        finally:
            built.close()
    if isinstance(pipeline, Mapping):
        spec = json.loads(json.dumps(pipeline))
        return absolute_cache_paths(spec), registry
    raise ConfigurationError(
        "run_pipeline needs a Pipeline, a pipeline file path or a spec mapping, got "
        f"{type(pipeline).__name__}"
    )


def run_pipeline(
    pipeline: Pipeline[Any] | Mapping[str, Any] | str | os.PathLike[str],
    documents: ray.data.Dataset,
    *,
    workers: int | None = None,
    batch_size: int = 64,
    cpus_per_worker: float = 1.0,
    task_retries: int = 3,
    allow_imports: bool = False,
    runtime_env: Mapping[str, Any] | None = None,
) -> PipelineRun:
    """Apply ``pipeline`` to ``documents`` on Ray; return the chunks and the failures.

    ``pipeline`` is a built pipeline (its components must be registered, so that it can be
    written as a spec), a pipeline file, or a spec mapping (``dump_pipeline``'s output; import
    paths need ``allow_imports``). Each worker of the actor pool (``workers``, default: one per
    CPU of the cluster) builds it once; ``batch_size`` documents go to a worker at a time.
    Ray must be initialised (``ray.init(...)``) by the caller. The run is executed and its
    results materialised (kept in Ray's object store) before this returns.

    Raises:
        ConfigurationError: the pipeline cannot be written as a spec, a cache file the
            cluster's nodes cannot share, or a plugin missing on the workers (named).
    """
    import pyarrow.compute as pc
    import ray
    import ray.data
    from ragloom.ingest import Problem

    from ._cache import cache_files, check_cache_sharing
    from ._engine import _data_context, _unwrap, retries
    from ._requirements import requirements
    from ._worker import WorkerConfig

    if not ray.is_initialized():
        raise ConfigurationError("run_pipeline needs Ray: call ray.init(...) first")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    spec, registry = _spec_of(pipeline, allow_imports)
    check_cache_sharing(cache_files(spec), ray.nodes())
    config = WorkerConfig(
        spec=spec, requirements=requirements(spec, registry, loaders=False),
        allow_imports=allow_imports,
    )
    size = workers or max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_worker))
    remote = retries(task_retries)
    if runtime_env:
        remote["runtime_env"] = dict(runtime_env)
    with _data_context():
        mapped = documents.map_batches(
            PipelineWorker,
            fn_constructor_args=(config,),
            batch_size=batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=size),
            num_cpus=cpus_per_worker,
            **remote,
        )
        try:
            done = mapped.materialize()
            # One light pass over the results for the rows that are not chunks: a failure
            # each, and one of cache counts per batch.
            extra = pc.field("failure").is_valid() | (pc.field("position") < 0)
            failures: list[Problem] = []
            hits = misses = 0
            for row in _where(done, extra).select_columns(["failure", "content"]).iter_rows():
                if row["failure"] is not None:
                    failures.append(Problem(**json.loads(row["failure"])))
                else:
                    stats = json.loads(row["content"])
                    hits += stats["cache_hits"]
                    misses += stats["cache_misses"]
        except Exception as exc:
            raise _unwrap(exc) from exc
    is_chunk = pc.field("failure").is_null() & (pc.field("position") >= 0)
    chunks = _where(done, is_chunk).drop_columns(["failure"]).sort(["document_id", "position"])
    return PipelineRun(chunks, failures, hits, misses)


def _where(dataset: ray.data.Dataset, condition: Any) -> ray.data.Dataset:
    """The rows of ``dataset`` where a pyarrow ``condition`` holds."""
    return dataset.map_batches(
        lambda table: table.filter(condition), batch_format="pyarrow", batch_size=None
    )


class PipelineWorker(PipelineHolder):
    """A Ray Data callable class: batches of documents in, chunk rows out (plus one row per
    failed item, and one of cache counts per batch)."""

    def __call__(self, table: Any) -> Any:
        import anyio
        import pyarrow as pa

        documents = [row_document(row) for row in table.to_pylist()]
        rows: list[dict[str, Any]] = []
        if documents:
            anyio.run(self._run, documents, rows)
        return pa.Table.from_pylist(rows, schema=_chunk_schema())

    async def _run(self, documents: list[Document], rows: list[dict[str, Any]]) -> None:
        from ragloom.engines import BatchStats, LocalEngine, Output, PipelineWork
        from ragloom.events import ItemFailed
        from ragloom.ingest import Problem, doc_of

        stats = {"cache_hits": 0, "cache_misses": 0}
        positions: dict[str, int] = {}
        mapped = LocalEngine().map_batches(PipelineWork(self.pipeline), iter([iter(documents)]))
        try:
            async for event in mapped:
                if isinstance(event, ItemFailed):
                    problem = Problem.of_failure(event)
                    rows.append(_empty(failure=json.dumps(problem.to_dict(), ensure_ascii=False)))
                    continue
                if isinstance(event, BatchStats):
                    stats["cache_hits"] += event.cache_hits
                    stats["cache_misses"] += event.cache_misses
                    continue
                assert isinstance(event, Output)
                item = event.item
                doc_id = doc_of(item) or ""
                position = positions.get(doc_id, 0)
                positions[doc_id] = position + 1
                rows.append({
                    "document_id": doc_id,
                    "position": position,
                    "id": item.id,
                    "parent_id": item.parent_id,
                    "index": item.index,
                    "start": item.start,
                    "end": item.end,
                    "content": item.content,
                    "content_format": str(item.content_format),
                    "metadata": json.dumps(item.metadata, ensure_ascii=False, default=str),
                    "embedding": item.embedding,
                    "failure": None,
                })
        finally:
            await mapped.aclose()  # type: ignore[attr-defined]
        rows.append(_empty(position=-1, content=json.dumps(stats)))


def _empty(**values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(_chunk_schema().names)
    row.update(values)
    return row
