"""The engine family: where an ingestion's pipeline runs.

An ingestion is one run whatever runs its pipeline: :class:`~ragloom.ingest.Ingestor` checks the
paths and the outputs, walks and loads the files, fingerprints documents against the index,
writes the JSONL file, the failures file, the index and the report. An :class:`Engine` does one
thing inside that run: it maps the pipeline over batches of documents
(:meth:`BatchMapper.map_batches`), the way an HTTP client's transport only sends requests.
:class:`LocalEngine` (the default) runs the pipeline in this process; ``ragloom ingest --engine
NAME`` picks a registered engine instead (for example ``ray`` from ragloom-ray, which runs the
same pipeline on Ray workers). The pipeline reaches another process as its declarative spec
(:meth:`PipelineWork.spec`), and each worker builds it again with its own plugin registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from .component import Component
from .ingest._job import IngestJob
from .ingest._seam import (
    BaseEngine,
    BatchEvent,
    BatchMapper,
    BatchStats,
    Indexed,
    IndexPart,
    LocalEngine,
    Output,
    PipelineWork,
    UriReader,
)

if TYPE_CHECKING:
    from .models import Document

__all__ = [
    "BatchEvent",
    "BatchMapper",
    "BatchStats",
    "Engine",
    "IndexPart",
    "Indexed",
    "IngestJob",
    "LocalEngine",
    "Output",
    "PipelineWork",
    "UriReader",
]


class Engine(Component, BaseEngine, ABC):
    """Where an ingestion's pipeline runs. A subclass maps the pipeline over batches of
    documents (:meth:`map_batches`); the run around it (paths, checks, fingerprints, outputs,
    the index, the report) is the core's, identical for every engine."""

    @abstractmethod
    def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        """See :meth:`BatchMapper.map_batches`."""

    def ingest(self, job: IngestJob, *, on_progress: Any = None) -> Any:
        """Run ``job`` with this engine; return its :class:`~ragloom.ingest.IngestReport`
        (the same outputs as a local run, every failure reported).

        Raises:
            ConfigurationError: an engine option, an input or output path, a plugin missing
                (named).
        """
        from .ingest import run_job

        return run_job(job, engine=self, on_progress=on_progress)


