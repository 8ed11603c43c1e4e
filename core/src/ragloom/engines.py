"""The engine family: running an ingestion on something other than this process.

``ragloom ingest --engine NAME`` hands the whole job to a registered :class:`Engine` (for example
``ray`` from ragloom-ray, which runs the same pipeline on Ray Data). The job is plain data, so an
engine can ship it to other processes and machines: the pipeline travels as its declarative
spec (``dump_pipeline``), and each worker builds it again with its own plugin registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from .component import Component

__all__ = ["Engine", "IngestJob"]


@dataclass(frozen=True)
class IngestJob:
    """Everything an ingestion needs, as plain data.

    ``spec`` is a pipeline spec (``dump_pipeline``'s output; ``None``: the default pipeline
    with ``chunk_size`` and ``length_function``). ``out`` is a JSONL path, ``index`` a store
    folder, ``cache`` a cache file (``None``: no cache). ``collection`` is the collection of
    every document (``None``: each top-level folder under a path is one, as
    :func:`ragloom.ingest.walk_inputs` assigns them); an engine records it in every document's
    metadata as a local run does. ``options`` are the engine's own settings
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


class Engine(Component, ABC):
    """Runs :class:`IngestJob` s; returns the same :class:`~ragloom.ingest.IngestReport` as a
    local run (same outputs, every failure reported)."""

    @abstractmethod
    def ingest(self, job: IngestJob, *, on_progress: Any = None) -> Any:
        """Run ``job``; return its ``IngestReport``.

        Raises:
            ConfigurationError: the job cannot run here (an option, a cache path that the
                workers cannot share, a plugin missing on the workers: named).
        """
