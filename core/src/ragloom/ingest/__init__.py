"""Ingesting files: paths -> documents (loaders) -> a pipeline -> a JSONL file and/or a store.

``ragloom ingest`` is a thin command over :class:`Ingestor`; Python users get the same with::

    from ragloom.ingest import ingest
    report = ingest(["docs/"], out="chunks.jsonl", cache=".ragloom/cache.sqlite")
"""

from __future__ import annotations

import sys as _sys
import types as _types
from typing import Any

from ._files import FileDocuments, document_fingerprint, load_file, pipeline_identity
from ._index import embedder_record, gone_documents
from ._ingestor import DEFAULT_MAX_FILE_SIZE, Ingestor, default_pipeline, ingest
from ._job import run_job
from ._jsonl import AtomicJsonlWriter, OutputError, chunk_record
from ._outputs import check_outputs
from ._progress import ShownProgress
from ._report import IngestProgress, IngestReport, Problem, doc_of
from ._run import SEGMENT_CHARS
from ._walk import (
    InputFile,
    WalkProblem,
    WalkResult,
    display_path,
    file_id,
    input_root,
    walk_inputs,
)

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "SEGMENT_CHARS",
    "AtomicJsonlWriter",
    "IngestProgress",
    "IngestReport",
    "Ingestor",
    "InputFile",
    "OutputError",
    "Problem",
    "ShownProgress",
    "WalkProblem",
    "WalkResult",
    "FileDocuments",
    "check_outputs",
    "document_fingerprint",
    "gone_documents",
    "load_file",
    "pipeline_identity",
    "chunk_record",
    "default_pipeline",
    "display_path",
    "doc_of",
    "embedder_record",
    "file_id",
    "ingest",
    "input_root",
    "run_job",
    "walk_inputs",
]


class _CallableModule(_types.ModuleType):
    """This package, callable as :func:`ingest`: importing it makes ``ragloom.ingest`` the
    package rather than the function ``ragloom`` exports, and ``ragloom.ingest(...)`` must work
    either way."""

    def __call__(self, *args: Any, **kwargs: Any) -> IngestReport:
        return ingest(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
