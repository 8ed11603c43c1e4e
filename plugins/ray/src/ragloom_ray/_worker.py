"""What runs on the Ray workers: the pipeline, built once per worker, mapped over batches of
documents by the core's own local engine.

A worker is a Ray actor. It builds the pipeline from the declarative spec the driver dumped
(after checking that it has the distributions the driver has) with its own plugin registry,
then runs :class:`ragloom.engines.LocalEngine` over each batch of documents it is sent and hands
back what that engine yields: the outputs in input order, the failed items, the batch's
statistics. The driver's ingest run takes them exactly as it takes a local run's.

Given the index's part writer (an ingest into an index with no JSONL file), a worker writes
its batch's outputs into the index itself, uncommitted, and hands back what was written in
their place (:func:`written`): the driver commits the parts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragloom.models import Document

__all__ = ["IngestWorker", "PipelineHolder", "WorkerConfig"]


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs, as plain data (pickled once per actor).

    ``spec`` is the pipeline the driver runs (``dump_pipeline``'s output: embedding step and
    cache included); ``requirements`` the distributions it needs (``{dist: version}`` on the
    driver). ``allow_imports``: the spec may name components by import path (a spec the driver
    dumped from a pipeline it built names only what the driver already imported).
    """

    spec: dict[str, Any]
    requirements: dict[str, str]
    allow_imports: bool = True
    #: The index's part writer (``None``: outputs go back to the driver).
    index_writer: Any = None


def build_worker_pipeline(config: WorkerConfig) -> Any:
    """The pipeline of ``config``, built with this process's registry once its distributions
    were checked.

    Raises:
        MissingOnWorker: a distribution the driver has is missing, disabled or another
            version here (named).
    """
    from ragloom.config import build_pipeline
    from ragloom.plugins import Registry

    from ._requirements import check_requirements

    registry = Registry()
    check_requirements(config.requirements, disabled=registry.disabled, allowed=registry.allow)
    return build_pipeline(
        config.spec, registry=registry, allow_imports=config.allow_imports,
        source="the pipeline spec sent by the driver",
    )


class PipelineHolder:
    """A worker's pipeline: built once from ``config``, closed when the worker goes away."""

    def __init__(self, config: WorkerConfig) -> None:
        self.pipeline = build_worker_pipeline(config)

    def __del__(self) -> None:
        pipeline = getattr(self, "pipeline", None)
        if pipeline is not None:
            try:
                pipeline.close()
            except Exception:  # noqa: BLE001 - a worker going away
                pass


class IngestWorker(PipelineHolder):
    """A Ray actor: the pipeline built once, mapped over batches of documents."""

    def __init__(self, config: WorkerConfig) -> None:
        super().__init__(config)
        self.index_writer = config.index_writer

    def ready(self) -> bool:
        """``True`` once the pipeline is built (a failed build raises here)."""
        return True

    def process(self, documents: list[Document]) -> list[Any]:
        """What the local engine yields for ``documents``, for the driver: each output bare
        (a pydantic chunk pickles faster alone than inside an ``Output``), failures without
        their exception objects (which need not pickle), the batch's statistics last."""
        import anyio

        # not a coroutine method: Ray would make this actor an async one, with an event loop
        # of its own
        events = anyio.run(_mapped, self.pipeline, documents)
        if self.index_writer is None:
            return events
        return written(events, self.index_writer)


def written(events: list[Any], writer: Any) -> list[Any]:
    """A batch's events with the outputs of each document that has no failed item written
    with ``writer`` (one part for the batch): an ``Indexed`` in place of each such document's
    outputs, the ``IndexPart`` before the batch's statistics. A failed document's outputs stay
    as they are (the driver drops them from the index, as a local run does)."""
    from ragloom.engines import BatchStats, Indexed, IndexPart
    from ragloom.events import ItemFailed
    from ragloom.ingest import doc_of

    failed = {doc_of(e.item) or e.item_id for e in events if isinstance(e, ItemFailed)}
    chunks: dict[str, list[Any]] = {}
    for event in events:
        if not isinstance(event, ItemFailed | BatchStats):
            doc_id = doc_of(event)
            if doc_id is not None and doc_id not in failed:
                chunks.setdefault(doc_id, []).append(event)
    if not chunks:
        return events
    part = writer.write(list(chunks.items()))
    out: list[Any] = []
    for event in events:
        if isinstance(event, BatchStats):
            out.append(IndexPart(part))
        elif not isinstance(event, ItemFailed):
            doc_id = doc_of(event)
            if doc_id in chunks:
                if event is chunks[doc_id][0]:
                    out.append(Indexed(doc_id, len(chunks[doc_id])))
                continue
        out.append(event)
    return out


async def _mapped(pipeline: Any, documents: list[Document]) -> list[Any]:
    from ragloom.engines import LocalEngine, Output, PipelineWork
    from ragloom.events import ItemFailed

    events: list[Any] = []
    mapped = LocalEngine().map_batches(PipelineWork(pipeline), iter([iter(documents)]))
    try:
        async for event in mapped:
            if isinstance(event, Output):
                events.append(event.item)
            elif isinstance(event, ItemFailed):
                events.append(dataclasses.replace(event, exception=None))
            else:
                events.append(event)
    finally:
        await mapped.aclose()  # type: ignore[attr-defined]
    return events
