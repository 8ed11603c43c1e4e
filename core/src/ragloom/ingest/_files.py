"""Pieces of an ingestion as pure functions, for engines that run them elsewhere.

An engine that spreads an ingestion over processes or machines (ragloom-ray) must read files
and identify documents exactly as :class:`~ragloom.ingest.Ingestor` does, or its outputs would
differ from a local run's. These functions are those steps with no state of a run:

- :func:`load_file`: one input file -> its documents ready for the pipeline, plus what was
  skipped or failed while reading it;
- :func:`pipeline_identity` and :func:`document_fingerprint`: the fingerprint a store keeps for
  a document (what indexing it would produce), computed the same way everywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..collection import COLLECTION_KEY
from ._report import Problem

if TYPE_CHECKING:
    from ..loading import SourceFile
    from ..models import Document
    from ..pipeline import Pipeline
    from ._walk import InputFile

__all__ = [
    "COLLECTION_KEY",
    "FileDocuments",
    "document_fingerprint",
    "load_file",
    "pipeline_identity",
    "source_metadata",
]

#: ``read(path, *, doc_id, name, max_bytes, metadata) -> SourceFile`` (the signature of
#: :func:`ragloom.loaders_builtin.read_source_file`).
Reader = Callable[..., "SourceFile"]


@dataclass
class FileDocuments:
    """What reading one input file gave.

    ``documents`` go to the pipeline (each with ``metadata["format"]`` set); ``skipped`` are
    files or documents left out with a note (an empty file, a format the pipeline cannot
    chunk); ``failures`` are read problems (a :class:`~ragloom.loading.LoadError`).
    ``bytes_read`` counts towards the report's bytes (the file's size when it was loaded, else
    0); ``size`` is what the file counts for progress.
    """

    documents: list[Document] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    failures: list[Problem] = field(default_factory=list)
    bytes_read: int = 0
    size: int = 0


def load_file(
    file: InputFile,
    loaders: Any,
    *,
    max_file_size: int,
    skip_formats: Mapping[str, str] | None = None,
    read: Reader | None = None,
) -> FileDocuments:
    """Read ``file`` and load it into documents, as an ingestion does.

    ``loaders`` is a :class:`~ragloom.loaders_builtin.LoaderSet`; ``skip_formats`` maps a
    content format to the note a document of that format is skipped with; ``read`` reads the
    file (default: :func:`~ragloom.loaders_builtin.read_source_file`; another reader, e.g. one
    over a remote filesystem, must raise :class:`~ragloom.loading.LoadError` the same way).
    Never raises for a problem of the file: it becomes a failure or a skip.
    """
    from ..loading import LoadError

    if read is None:
        from ..loaders_builtin import read_source_file

        read = read_source_file
    out = FileDocuments()
    try:
        source = read(
            file.path, doc_id=file.doc_id, name=file.shown, max_bytes=max_file_size,
            metadata=source_metadata(file),
        )
        if not source.data.strip():
            out.skipped.append(Problem(
                file.doc_id, file.shown, "read", "empty",
                "empty file" if not source.data else "file holds only whitespace",
            ))
            out.size = len(source.data)
            return out
        documents = loaders.load(source)
    except LoadError as exc:
        out.failures.append(Problem(file.doc_id, file.shown, "read", type(exc).__name__, str(exc)))
        return out
    out.bytes_read = out.size = len(source.data)
    notes = skip_formats or {}
    for document in documents:
        note = notes.get(str(document.content_format))
        if note is not None:
            out.skipped.append(Problem(document.id, file.shown, "read", "skipped", note))
            continue
        meta = dict(document.metadata)
        meta.setdefault("format", str(document.content_format))
        if file.collection is not None:
            meta[COLLECTION_KEY] = file.collection
        out.documents.append(document.model_copy(update={"metadata": meta}))
    return out


def source_metadata(file: InputFile) -> dict[str, Any]:
    """The metadata a file's source starts with: its path, and its collection if it has one."""
    metadata: dict[str, Any] = {"source": file.shown}
    if file.collection is not None:
        metadata[COLLECTION_KEY] = file.collection
    return metadata


def pipeline_identity(pipeline: Pipeline[Any]) -> str | None:
    """The identity of what ``pipeline`` produces (its steps' config hashes), or ``None`` when
    a step has no stable identity (then no document is ever skipped as unchanged)."""
    from ..identity import Uncacheable

    try:
        return hashlib.sha256(
            "\n".join(step.config_hash for step in pipeline.walk()).encode()
        ).hexdigest()
    except Uncacheable:
        return None


def document_fingerprint(identity: str, document: Document) -> str:
    """The fingerprint a store keeps for ``document`` indexed by a pipeline of ``identity``
    (its collection counts: a document moved to another collection is written again, its
    chunks now saying so)."""
    text = f"{identity}\n{document.content_hash}\n{document.content_format}"
    collection = document.metadata.get(COLLECTION_KEY)
    if isinstance(collection, str):
        text += f"\ncollection\n{collection}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]
