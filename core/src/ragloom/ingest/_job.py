"""An :class:`~ragloom.engines.IngestJob` (plain data) run as an ingest: what
:meth:`ragloom.engines.Engine.ingest` does with it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, PluginNotFoundError
from ._ingestor import Ingestor

if TYPE_CHECKING:
    from ..engines import Engine, IngestJob
    from ._progress import ProgressCallback
    from ._report import IngestReport

__all__ = ["run_job"]


def run_job(
    job: IngestJob, *, engine: Engine | None = None, on_progress: ProgressCallback | None = None
) -> IngestReport:
    """Run ``job`` on ``engine`` (default: this process): the pipeline built from its spec,
    its index opened (``lancedb``, from ragloom-lancedb), one :class:`Ingestor` run.

    Raises:
        ConfigurationError: an engine option (checked first), a path, an output, or a
            plugin missing (named).
    """
    from ..config import build_pipeline
    from ..plugins import Registry, install_hint

    if engine is not None:
        engine = engine.configured(job.options)
    elif job.options:
        raise ConfigurationError("engine options need an engine")
    registry = Registry()
    pipeline: Any = None
    store: Any = None
    try:
        if job.spec is not None:
            pipeline = build_pipeline(job.spec, registry=registry, allow_imports=job.allow_imports)
        if job.index is not None:
            try:
                store = registry.create("store", "lancedb", {"path": job.index})
            except PluginNotFoundError:
                raise ConfigurationError(
                    f"an index needs ragloom-lancedb: {install_hint('ragloom-lancedb')}"
                ) from None
        with Ingestor(
            pipeline,
            chunk_size=job.chunk_size if pipeline is None else None,
            length_function=job.length_function if pipeline is None else None,
            cache=job.cache,
            max_file_size=job.max_file_size,
            store=store,
            embedder=job.embedder,
            sync=job.sync,
            collection=job.collection,
            registry=registry,
            engine=engine,
        ) as ingestor:
            return ingestor.run(
                list(job.paths), out=job.out, failures=job.failures, on_progress=on_progress
            )
    finally:
        if pipeline is not None:
            pipeline.close()
        if store is not None:
            store.close()
