"""What runs on the Ray workers: the pipeline, built once per worker, over batches of files.

A worker is an actor of Ray Data's actor pool. It builds the pipeline from its declarative spec
with its own plugin registry (after checking that it has the distributions the driver has),
opens the installed loaders, and then turns each batch of files into rows: one row per output
(its JSONL line, and the chunk itself when a store is written), one per failed or skipped item,
one per document (its fingerprint, whether it failed) and one per file (its counts). Rows keep
the files' order, so the driver sees exactly what a local run produces, in the same order.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ROW_SCHEMA", "IngestWorker", "WorkerConfig"]

#: Kinds of rows a worker emits.
CHUNK, PROBLEM, SKIPPED, DOCUMENT, FILE, STATS = (
    "chunk", "problem", "skipped", "document", "file", "stats",
)


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("file", pa.int64()),
        ("kind", pa.string()),
        ("text", pa.large_string()),
        ("blob", pa.large_binary()),
    ])


ROW_SCHEMA = _schema  # built when first used (pyarrow is imported only then)


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs, as plain data (pickled once per actor).

    ``spec`` is the effective pipeline (what the driver would run, embedding step and cache
    included); ``requirements`` the distributions it needs (``{dist: version}`` on the
    driver); ``identity`` the pipeline identity for store fingerprints (``None``: none);
    ``known`` the store's fingerprints when unchanged documents are skipped (an object
    reference, fetched once per worker); ``jsonl``: outputs must be strict JSON lines;
    ``keep_items``: ship each output itself (for a store, or the Python API).
    """

    spec: dict[str, Any]
    requirements: dict[str, str]
    allow_imports: bool = False
    max_file_size: int = 50 * 1000 * 1000
    skip_formats: dict[str, str] = field(default_factory=dict)
    identity: str | None = None
    known: Any = None
    jsonl: bool = True
    keep_items: bool = False


def _doc_of(item: Any) -> str | None:
    parent = getattr(item, "parent_id", None)
    if isinstance(parent, str):
        return parent
    ident = getattr(item, "id", None)
    return ident if isinstance(ident, str) else None


class IngestWorker:
    """A Ray Data callable class: batches of files (``file``, ``path``, ``doc_id``, ``shown``,
    ``collection``)
    in, rows (:func:`ROW_SCHEMA`) out."""

    def __init__(self, config: WorkerConfig) -> None:
        from ragloom.config import build_pipeline
        from ragloom.loaders_builtin import LoaderSet
        from ragloom.plugins import Registry

        from ._requirements import check_requirements

        registry = Registry()
        check_requirements(
            config.requirements, disabled=registry.disabled, allowed=registry.allow
        )
        self.config = config
        self.pipeline = build_pipeline(
            config.spec, registry=registry, allow_imports=config.allow_imports,
            source="the pipeline spec sent by the driver",
        )
        self.loaders = LoaderSet.from_registry(registry)
        self.known: Mapping[str, str] | None = None
        if config.known is not None:
            import ray

            self.known = ray.get(config.known)
        self._encode = json.JSONEncoder(ensure_ascii=False, default=str, allow_nan=False).encode

    def __call__(self, batch: Mapping[str, Any]) -> Any:
        import pyarrow as pa
        from ragloom.ingest import InputFile

        files = [
            (int(i), InputFile(str(p), str(d), str(s), str(c) or None))
            for i, p, d, s, c in zip(
                batch["file"], batch["path"], batch["doc_id"], batch["shown"],
                batch["collection"], strict=True,
            )
        ]
        rows = self.process(files)
        columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
        return pa.Table.from_arrays(
            [pa.array(list(c), type=t.type) for c, t in zip(columns, ROW_SCHEMA(), strict=True)],
            schema=ROW_SCHEMA(),
        )

    # -- one batch -------------------------------------------------------------------------

    def process(self, files: list[tuple[int, Any]]) -> list[tuple[int, str, Any, Any]]:
        """The rows of ``files``: per file, its read problems, outputs, item failures,
        documents and the file's own row, in this order."""
        from ragloom.ingest import document_fingerprint, load_file

        from ._fs import is_uri, read_uri_file

        config = self.config
        per_file: dict[int, list[tuple[int, str, Any, Any]]] = {}
        tails: dict[int, list[tuple[int, str, Any, Any]]] = {}
        counts: dict[int, dict[str, int]] = {}
        doc_file: dict[str, int] = {}
        fed: list[Any] = []
        fingerprints: dict[str, str | None] = {}
        for index, file in files:
            got = load_file(
                file, self.loaders, max_file_size=config.max_file_size,
                skip_formats=config.skip_formats,
                read=read_uri_file if is_uri(file.path) else None,
            )
            rows = per_file[index] = []
            tails[index] = []
            rows += [(index, SKIPPED, _problem(p), None) for p in got.skipped]
            rows += [(index, PROBLEM, _problem(p), None) for p in got.failures]
            count = counts[index] = {
                "size": got.size, "bytes_read": got.bytes_read, "documents": 0, "unchanged": 0,
                "chunks": 0,
            }
            for document in got.documents:
                fingerprint = (
                    document_fingerprint(config.identity, document)
                    if config.identity is not None else None
                )
                if self.known is not None and fingerprint is not None and (
                    self.known.get(document.id) == fingerprint
                ):
                    count["unchanged"] += 1
                    continue
                count["documents"] += 1
                doc_file.setdefault(document.id, index)
                fingerprints[document.id] = fingerprint
                fed.append(document)
        stats = {"cache_hits": 0, "cache_misses": 0}
        warnings: list[str] = []
        failed_docs: set[str] = set()
        if fed:
            import anyio

            anyio.run(self._run, fed, doc_file, per_file, counts, failed_docs, stats, warnings)
        for document in fed:
            doc_id = document.id
            index = doc_file[doc_id]
            tails[index].append((index, DOCUMENT, json.dumps({
                "id": doc_id, "fingerprint": fingerprints[doc_id],
                "failed": doc_id in failed_docs,
            }), None))
        out: list[tuple[int, str, Any, Any]] = []
        for index, _file in files:
            out += per_file[index]
            out += tails[index]
            out.append((index, FILE, json.dumps(counts[index]), None))
        if files:
            last = files[-1][0]
            out.append((last, STATS, json.dumps({**stats, "warnings": warnings}), None))
        return out

    async def _run(
        self,
        fed: list[Any],
        doc_file: dict[str, int],
        per_file: dict[int, list[tuple[int, str, Any, Any]]],
        counts: dict[int, dict[str, int]],
        failed_docs: set[str],
        stats: dict[str, int],
        warnings: list[str],
    ) -> None:
        from ragloom.events import CacheSkipped, ItemFailed, StepFinished
        from ragloom.ingest import Problem
        from ragloom.ingest._jsonl import chunk_record

        config = self.config
        current = doc_file[fed[0].id]

        def file_of(doc_id: str | None) -> int:
            return doc_file.get(doc_id, current) if doc_id is not None else current

        def observe(event: object) -> None:
            if isinstance(event, ItemFailed):
                item = event.item
                doc_id = _doc_of(item) or event.item_id
                source = getattr(item, "metadata", {}).get("source") if item is not None else None
                problem = Problem(
                    event.item_id, str(source or doc_id), event.step, event.error_type,
                    event.reason,
                )
                index = file_of(doc_id)
                per_file[index].append((index, PROBLEM, _problem(problem), None))
                failed_docs.add(doc_id)
            elif isinstance(event, StepFinished):
                stats["cache_hits"] += event.cache_hits
                stats["cache_misses"] += event.cache_misses
            elif isinstance(event, CacheSkipped):
                line = f"{event.step}: {event.reason}"
                if line not in warnings:
                    warnings.append(line)

        pipeline = self.pipeline
        context = pipeline.context(fed)
        context.subscribe(observe)
        stream = pipeline.stream(context=context)
        try:
            async for item in stream:
                doc_id = _doc_of(item)
                if doc_id in doc_file:
                    current = doc_file[doc_id]  # outputs follow input order
                index = file_of(doc_id)
                line = None
                if config.jsonl:
                    try:
                        line = self._encode(chunk_record(item))
                    except ValueError as exc:
                        problem = Problem(
                            str(getattr(item, "id", "?")), str(doc_id), "write", "ValueError",
                            f"not written: its JSON would not be standard ({exc}); metadata "
                            "must hold finite numbers",
                        )
                        per_file[index].append((index, PROBLEM, _problem(problem), None))
                        if doc_id is not None:
                            failed_docs.add(doc_id)
                        continue
                blob = pickle.dumps(item, protocol=5) if config.keep_items else None
                per_file[index].append((index, CHUNK, line, blob))
                counts[index]["chunks"] += 1
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        for line in context.observer_errors:
            if line not in warnings:
                warnings.append(line)

    def __del__(self) -> None:
        pipeline = getattr(self, "pipeline", None)
        if pipeline is not None:
            try:
                pipeline.close()
            except Exception:  # noqa: BLE001 - a worker going away
                pass


def _problem(problem: Any) -> str:
    return json.dumps(problem.to_dict(), ensure_ascii=False)
