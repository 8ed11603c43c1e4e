"""An :class:`~ragloom.engines.IngestJob` (plain data) run as an ingest: what
:meth:`ragloom.engines.Engine.ingest` does with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, PluginNotFoundError
from ._ingestor import Ingestor

if TYPE_CHECKING:
    from ._progress import ProgressCallback
    from ._report import IngestReport
    from ._seam import BaseEngine

__all__ = ["IngestJob", "run_job"]


@dataclass(frozen=True)
class IngestJob:
    """Everything an ingestion needs, as plain data (what :meth:`Engine.ingest` runs).

    ``spec`` is a pipeline spec (``dump_pipeline``'s output; ``None``: the default pipeline
    with ``chunk_size`` and ``length_function``). ``out`` is a JSONL path, ``index`` a store
    folder, ``cache`` a cache file (``None``: the pipeline's own setting). ``collection`` is the
    collection of every document (``None``: each top-level folder under a path is one, as
    :func:`ragloom.ingest.walk_inputs` assigns them). ``options`` are the engine's own settings
    (``--engine-option key=value``).
    """

    paths: tuple[str, ...]
    spec: dict[str, Any] | None = None
    out: str | None = None
    failures: str | None = None
    index: str | None = None
    sync: bool = False
    embedder: str | None = None
    cache: str | None = None
    max_file_size: int = 50 * 1000 * 1000
    chunk_size: int | None = None
    length_function: str | None = None
    allow_imports: bool = False
    collection: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def run_job(
    job: IngestJob,
    *,
    engine: BaseEngine | None = None,
    on_progress: ProgressCallback | None = None,
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
