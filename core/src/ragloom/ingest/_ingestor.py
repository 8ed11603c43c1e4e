"""``Ingestor``: files and folders -> documents -> a pipeline -> a JSONL file and/or a store.

Memory stays flat whatever the corpus size: files are read one at a time by the generator that
feeds the pipeline, outputs are written as they come out, and the pipeline runs over segments
of at most :data:`SEGMENT_CHARS` characters of input, so no engine or cache window ever holds
more than one segment of documents. Outputs bound for a store are written in batches of about
:data:`STORE_BATCH_CHUNKS` chunks by one background thread, at most one batch at a time, while
the pipeline goes on with the next one (a store's own work, LanceDB's for one, runs outside
Python's GIL): at most two batches are held at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._install import install_hint
from ..errors import ConfigurationError, PluginNotFoundError, RagloomError
from ._files import document_fingerprint, load_file, pipeline_identity, source_metadata
from ._jsonl import AtomicJsonlWriter, chunk_record
from ._report import IngestProgress, IngestReport, Problem
from ._walk import InputFile, WalkResult, file_id, input_root, walk_inputs

if TYPE_CHECKING:
    from ..models import Document
    from ..pipeline import Pipeline
    from ..plugins import Registry
    from ..stores import Store

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "SEGMENT_CHARS",
    "Ingestor",
    "default_pipeline",
    "ingest",
]

#: Files larger than this fail as oversized unless another limit is given.
DEFAULT_MAX_FILE_SIZE = 50 * 1000 * 1000
#: Characters of input per pipeline run segment (bounds every in-flight window).
SEGMENT_CHARS = 16 * 1000 * 1000
#: Chunks gathered before they are written to a store in one batch (a batch goes on gathering
#: until the document that crosses this count is complete). One batch is written while the next
#: is gathered, never more.
STORE_BATCH_CHUNKS = 4096

ProgressCallback = Callable[[IngestProgress], None]


def default_pipeline(
    *,
    chunk_size: int | None = None,
    length_function: str | None = None,
    registry: Registry | None = None,
) -> Pipeline[Any]:
    """The pipeline ``ragloom ingest`` runs without a pipeline file: ragloom-text's ``auto``
    chunkers (Markdown, code, recursive text) and, when ragloom-docling is installed, its
    chunker for Docling documents. Components are named with their distribution, so no other
    installed plugin can take their place.

    Raises:
        ConfigurationError: ragloom-text is not installed, or a parameter is invalid.
    """
    from ..chunking import ChunkerRouter
    from ..filters import ContentFormatFilter
    from ..pipeline import Pipeline
    from ..plugins import Registry

    registry = registry or Registry()
    params: dict[str, Any] = {}
    if chunk_size is not None:
        params["chunk_size"] = chunk_size
    if length_function is not None:
        params["length_function"] = length_function
    try:
        chunker = registry.create("chunker", "ragloom-text:auto", params)
    except PluginNotFoundError as exc:
        # the error says how to install ragloom-text when it is missing
        raise ConfigurationError(f"no default chunker: {exc}; or give a pipeline file") from None
    if _has_docling(registry):
        docling = registry.create("chunker", "ragloom-docling:docling", {})
        chunker = (
            ChunkerRouter(name="DefaultChunkers")
            .route(ContentFormatFilter(include_formats=["docling"]), docling)
            .default(chunker)
        )
    return Pipeline(chunker, name="ingest", registry=registry)


def _has_docling(registry: Registry) -> bool:
    providers = registry.providers("chunker").get("docling", [])
    return any(p.dist == "ragloom-docling" for p in providers)


def _needs_plugin() -> dict[str, str]:
    """Formats the default pipeline cannot chunk without a plugin: documents in them are
    skipped (with this note) rather than cut as raw text."""
    return {"docling": f"a Docling document: {install_hint('ragloom-docling')} to chunk it"}


class Ingestor:
    """Ingests files: each is read by the loader for its format, turned into documents, run
    through a pipeline, and its outputs written to a JSONL file, a store, or both.

    Args:
        pipeline: the pipeline to run (default: :func:`default_pipeline`).
        chunk_size: the chunk size of the default pipeline (not with ``pipeline``).
        length_function: what ``chunk_size`` counts in the default pipeline, a registered
            length function (``chars``, ``words``, ``tokens``; not with ``pipeline``).
        cache: a cache file path (opened here, closed by :meth:`close`), a ``CacheStore``,
            ``False`` (no cache) or ``None`` (the pipeline's own setting).
        max_file_size: larger files fail as oversized.
        store: an index to write the outputs to, document by document: a changed document's
            chunks replace its old ones; a document unchanged since it was indexed (same
            content, same pipeline) is left as it is in the index (and not processed at all
            when no JSONL output is asked for). A run takes the store's writer lock (held
            until the store is closed), ids are
            relative to the root the store records (the first run records the common root of
            its paths), and the store is checked first: documents whose chunks are damaged are
            removed (and written again when their files are among the paths).
        embedder: with a store, the embedder that gives chunks their vectors (an ``Embedder``
            or a registered name; ``None``: the ``model2vec`` embedder when installed, else
            none: the store then searches by text only).
        sync: with a store, remove the documents under the paths given whose files are gone.
        collection: the collection of every document ingested (recorded in each chunk's
            metadata as ``collection``); ``None``: each top-level folder under a path given
            is a collection, and files directly under it belong to its own folder's name.
        fit_routes: with a store in a local folder, fit the routes of its collections again
            (:mod:`ragloom.index_routes`) when the run changed what it holds, and save them
            beside its tables.
        registry: the plugin registry (default: the pipeline's, else a new one).
        loaders: the ``LoaderSet`` that reads files (default: every installed loader,
            :meth:`ragloom.loaders_builtin.LoaderSet.from_registry`).

    Raises:
        ConfigurationError: ``pipeline`` with ``chunk_size`` or ``length_function``, a
            ``max_file_size`` below 1, ``sync`` without a store, a cache or embedder of the
            wrong type, ragloom-text missing for the default pipeline, or (when the store
            records one) its embedder cannot be made here.

    Use it as a context manager, or call :meth:`close`, to close what it opened.
    """

    def __init__(
        self,
        pipeline: Pipeline[Any] | None = None,
        *,
        chunk_size: int | None = None,
        length_function: str | None = None,
        cache: Any = None,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        store: Store | None = None,
        embedder: Any = None,
        sync: bool = False,
        collection: str | None = None,
        fit_routes: bool = True,
        registry: Registry | None = None,
        loaders: Any = None,
    ) -> None:
        from ..plugins import Registry

        if collection is not None and (not isinstance(collection, str) or not collection.strip()):
            raise ConfigurationError(f"collection must be a non-blank name, got {collection!r}")
        self.collection = None if collection is None else collection.strip()
        self.fit_routes = fit_routes

        if pipeline is not None and (chunk_size is not None or length_function is not None):
            raise ConfigurationError(
                "chunk_size and length_function set the default pipeline; with a pipeline of "
                "your own set them in it"
            )
        if isinstance(max_file_size, bool) or not isinstance(max_file_size, int):
            raise ConfigurationError(f"max_file_size must be an integer, got {max_file_size!r}")
        if max_file_size < 1:
            raise ConfigurationError(f"max_file_size must be at least 1 byte, got {max_file_size}")
        if sync and store is None:
            raise ConfigurationError("sync needs a store: it removes documents from an index")
        self.registry = registry or getattr(pipeline, "registry", None) or Registry()
        self._owned: list[Any] = []
        self._cache_path: str | None = None
        self._cache_store: Any = None
        #: Formats skipped with a note (the default pipeline lacks the plugin for them).
        self.skip_formats: dict[str, str] = {}
        if pipeline is None:
            pipeline = default_pipeline(
                chunk_size=chunk_size, length_function=length_function, registry=self.registry
            )
            self._owned.append(pipeline)
            if not _has_docling(self.registry):
                self.skip_formats = _needs_plugin()
        self.pipeline = pipeline
        self.cache_label = self._set_cache(cache)
        self.max_file_size = max_file_size
        self.store = store
        self.sync = sync
        self.embedder: Any = None
        if store is not None:
            self.pipeline = self._with_embedding(embedder)
        self._loaders = loaders
        self._repaired = ""
        #: What the index should record once the run has files (its root, its embedder).
        self._record: dict[str, Any] = {}

    # -- set-up ----------------------------------------------------------------------------

    def _set_cache(self, cache: Any) -> str:
        if cache is None:
            current = self.pipeline.cache
            if current is None or current is False:
                return "off"
            return str(getattr(current, "path", type(current).__name__))
        if cache is False:
            self.pipeline.cache = False
            return "off"
        if isinstance(cache, str | os.PathLike):
            # Opened when a run starts, once its outputs were checked: a refused run (an
            # output that is the cache, a device given as the cache) creates nothing.
            self._cache_path = os.fspath(cache)
            self.pipeline.cache = False
            return str(cache)
        if not hasattr(cache, "get_many"):
            raise ConfigurationError(
                f"cache must be a path, a CacheStore, False or None, got {type(cache).__name__}"
            )
        self.pipeline.cache = cache
        return str(getattr(cache, "path", type(cache).__name__))

    def _with_embedding(self, embedder: Any) -> Pipeline[Any]:
        """The pipeline, ending with an embedding step when the store needs vectors."""
        from ..embedding import Embedder, EmbeddingStep
        from ..pipeline import Pipeline

        if any(isinstance(step, EmbeddingStep) for step in self.pipeline.walk()):
            return self.pipeline
        if embedder is None:
            recorded = _recorded_embedder(self.store)
            if recorded is not None and recorded.get("name"):
                embedder = self._recorded(recorded)
            else:
                names = self.registry.names("embedder")
                if "model2vec" not in names:
                    return self.pipeline  # a text-only index
                embedder = "model2vec"
        if isinstance(embedder, str):
            embedder = self.registry.create("embedder", embedder)
        if not isinstance(embedder, Embedder):
            raise ConfigurationError(
                f"embedder must be an Embedder or a registered name, got {type(embedder).__name__}"
            )
        self.embedder = embedder
        step = EmbeddingStep(embedder)(self.pipeline.terminal)
        pipeline = Pipeline(
            step,
            policy=self.pipeline.policy,
            cache=self.pipeline.cache,
            observers=self.pipeline.observers,
            name=self.pipeline.name,
            registry=self.pipeline.registry,
        )
        self._owned.append(pipeline)
        return pipeline

    def _recorded(self, recorded: Mapping[str, Any]) -> Any:
        """The embedder the index records (by name and parameters)."""
        try:
            return self.registry.create(
                "embedder", str(recorded["name"]), dict(recorded.get("params") or {})
            )
        except RagloomError as exc:
            raise ConfigurationError(
                f"the index at {_location(self.store)} was built with the embedder "
                f"{recorded['name']!r}, which cannot be made here ({exc}); install it, or "
                "clear the index to rebuild it with another embedder"
            ) from None

    def _prepare_index(self, texts: list[str]) -> str | None:
        """Lock the index, record its root and embedder, and check it before its fingerprints
        are trusted; return the root ids are relative to (``None``: no store)."""
        store = self.store
        if store is None:
            return None
        take = getattr(store, "take_writer_lock", None)
        if callable(take):
            take()
        properties: dict[str, Any] = getattr(store, "properties", dict)()
        base = _store_dir(store)
        recorded = recorded_root(properties, base)
        root = recorded if recorded is not None else input_root(texts)
        found = store.check() if callable(getattr(store, "check", None)) else None
        if found is not None and found.unreadable:
            from ..stores import StoreError

            raise StoreError(
                f"the index at {_location(store)} is damaged: {'; '.join(found.problems)}; "
                f"repair it with `ragloom index check --repair --index {_location(store)}` and "
                "ingest again (nothing was changed)"
            )
        for text in texts:
            absolute = os.path.abspath(text)
            if absolute != root and not absolute.startswith(root.rstrip(os.sep) + os.sep):
                raise ConfigurationError(
                    f"{text} is outside the index's root {root}: every document's id is its "
                    f"file's path under that root; ingest it into another index, or clear "
                    f"this one and ingest a folder holding both"
                )
        check_dimension(store, self.pipeline)
        values: dict[str, Any] = {}
        if recorded is None:
            values["root"] = root_record(root, base)
        made = self._embedder_record()
        held = properties.get("embedder")
        if made is not None and held != made:
            if isinstance(held, dict) and held.get("name") and store.fingerprints():
                raise ConfigurationError(
                    f"the index at {_location(store)} was built with the embedder "
                    f"{_describe(held)}; this ingest embeds with {_describe(made)}: ingest with "
                    f"--embedder {held['name']}, or clear the index (`ragloom index clear "
                    f"--index {_location(store)}`) to rebuild it with the other one; nothing "
                    "was changed"
                )
            values["embedder"] = made
        if found is not None and not found.ok:
            repaired = getattr(store, "repair", None)
            if callable(repaired):
                _, removed = repaired()
            else:  # pragma: no cover - every store that checks itself repairs itself
                removed = []
            self._repaired = (
                f"the index was damaged ({'; '.join(found.problems)}): removed "
                f"{len(removed)} damaged document(s); those among these files were indexed "
                "again"
            )
        self._record = values
        return root

    def _embedder_record(self) -> dict[str, Any] | None:
        """Name and parameters of the pipeline's embedder, as the index records them."""
        from ..embedding import EmbeddingStep

        steps = [s for s in self.pipeline.walk() if isinstance(s, EmbeddingStep)]
        if not steps:
            return None
        embedder = steps[-1].embedder
        return embedder_record(self.registry, embedder)

    def _loader_set(self) -> Any:
        if self._loaders is None:
            from ..loaders_builtin import LoaderSet

            self._loaders = LoaderSet.from_registry(self.registry)
        return self._loaders

    # -- running ---------------------------------------------------------------------------

    def run(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        out: str | os.PathLike[str] | None = None,
        failures: str | os.PathLike[str] | None = None,
        on_progress: ProgressCallback | None = None,
        show_progress: bool = False,
    ) -> IngestReport:
        """Ingest ``paths`` (files and folders); see :meth:`arun`."""
        from .._sync import run_sync

        return run_sync(self._arun_kw, list(paths), out, failures, on_progress, show_progress)

    async def _arun_kw(
        self, paths: list[Any], out: Any, failures: Any, on_progress: Any, show_progress: bool
    ) -> IngestReport:
        return await self.arun(
            paths, out=out, failures=failures, on_progress=on_progress,
            show_progress=show_progress,
        )

    async def arun(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        out: str | os.PathLike[str] | None = None,
        failures: str | os.PathLike[str] | None = None,
        on_progress: ProgressCallback | None = None,
        show_progress: bool = False,
    ) -> IngestReport:
        """Ingest ``paths``: write outputs to ``out`` (JSON Lines, replaced atomically: an
        interrupted run leaves the old file as it was) and/or the store; list failed items in
        ``failures`` (JSON Lines) too.

        ``on_progress`` is called with an :class:`IngestProgress` each time a file is done;
        ``show_progress=True`` shows it on stderr (a rich bar on a terminal or in a notebook,
        plain lines otherwise; it needs rich, which comes with ``ragloom[cli]``).

        When the paths hold no file, nothing is written or replaced
        (``report.nothing_found``).

        Raises:
            ConfigurationError: an output path is unusable (an input file, the cache, a device
                or FIFO, a folder, under a file, in a folder that cannot be written), or a
                plugin the pipeline needs is missing.
            ModuleNotFoundError: ``show_progress=True`` without rich installed.
        """
        if not show_progress:
            return await self._arun(paths, out, failures, on_progress)
        from .._display import require_rich

        require_rich()
        shown = ShownProgress(on_progress)
        try:
            return await self._arun(paths, out, failures, shown)
        finally:
            shown.close()

    async def _arun(
        self,
        paths: Iterable[str | os.PathLike[str]],
        out: str | os.PathLike[str] | None,
        failures: str | os.PathLike[str] | None,
        on_progress: ProgressCallback | None,
    ) -> IngestReport:
        started = time.perf_counter()
        texts = [os.fspath(p) for p in paths]
        for text in texts:
            if not os.path.lexists(text):
                raise ConfigurationError(f"no such file or folder: {text}")
        own = _store_dir(self.store)
        for text in texts:
            absolute = os.path.abspath(text)
            if own is not None and (absolute == own or absolute.startswith(own + os.sep)):
                raise ConfigurationError(
                    f"refusing to ingest {text}: it is inside the index being written "
                    f"({own}); an index is never read as input"
                )
        self._repaired = ""
        self._record = {}
        root = self._prepare_index(texts)
        walked = walk_inputs(
            texts, exclude=self._cache_files(), exclude_dirs=[own] if own else [], root=root,
            collection=self.collection,
        )
        check_outputs(walked, out, failures, self._cache_files(), arguments=texts)
        self._open_cache()
        report = IngestReport(
            files=len(walked.files),
            out=None if out is None else os.fspath(out),
            index=_location(self.store),
            cache=self.cache_label,
        )
        report.failures.extend(
            Problem(p.doc_id, p.path, "walk", p.kind, p.reason) for p in walked.problems
        )
        if not walked.files:
            report.seconds = time.perf_counter() - started
            return report
        loaders = self._loader_set()
        check_dimension(self.store, self.pipeline)
        if self.store is not None and self._record and hasattr(self.store, "set_properties"):
            self.store.set_properties(self._record)
        identity = pipeline_identity(self.pipeline)
        fingerprint = self._fingerprinter(identity)
        known = self.store.fingerprints() if self.store is not None else {}
        skip_unchanged = self.store is not None and out is None and fingerprint is not None
        writer = AtomicJsonlWriter(out, flag="--out") if out is not None else None
        try:
            run = _Run(self, report, writer, on_progress, fingerprint, walked)
            if skip_unchanged and identity is not None:
                run.memo = _FileMemo.of(self.pipeline.cache, identity, self.skip_formats)
            if self._repaired:
                run.warnings.append(self._repaired)
            documents = run.documents(
                loaders, known if self.store is not None else None, skip=skip_unchanged
            )
            try:
                await run.drive(documents)
            except BaseException:
                run.close_store(failed=True)
                raise
            else:
                run.close_store()
            finally:
                if run.memo is not None:
                    run.memo.flush()
            if self.store is not None:
                stale = list(run.stale)
                if self.sync:
                    stale += gone_documents(
                        known, walked.files, scope=_scope(texts, root, walked)
                    )
                if stale:
                    report.deleted = self.store.delete(stale)
            report.warnings.extend(run.warnings)
            due = getattr(self.store, "optimize_due", None)
            if callable(due):
                report.optimize = due()
            if self.store is not None and self.fit_routes:
                report.routes = _refresh_routes(self.store, self.registry)
            if failures is not None:
                with AtomicJsonlWriter(failures, flag="--failures") as failure_file:
                    for problem in report.failures:
                        failure_file.write(problem.to_dict())
                    failure_file.commit()
            if writer is not None:
                writer.commit()
        finally:
            if writer is not None:
                writer.abort()  # nothing if it was committed
        report.seconds = time.perf_counter() - started
        return report

    def _open_cache(self) -> None:
        """Open the cache file given by path (once): after the run's checks passed."""
        if self._cache_path is None or self._cache_store is not None:
            return
        from ..cache import SQLiteCacheStore

        self._cache_store = store = SQLiteCacheStore(self._cache_path)
        self._owned.append(store)
        self.pipeline.cache = store

    def _cache_files(self) -> list[str]:
        caches = [self.pipeline.cache, *(step.cache for step in self.pipeline.walk())]
        paths: list[str] = []
        if self._cache_path is not None:
            base = self._cache_path
            paths += [base, base + "-wal", base + "-shm", base + "-journal"]
        for cache in caches:
            path = getattr(cache, "path", None)
            if path is not None:
                base = os.fspath(path)
                paths += [base, base + "-wal", base + "-shm", base + "-journal"]
        return paths

    def _fingerprinter(self, identity: str | None) -> Callable[[Document], str] | None:
        """``document -> fingerprint`` of what indexing it would produce with a pipeline of
        ``identity`` (``None`` when the pipeline has no stable identity: then nothing is
        skipped as unchanged)."""
        if identity is None:
            return None
        return lambda document: document_fingerprint(identity, document)

    # -- resources -------------------------------------------------------------------------

    def close(self) -> None:
        """Close what this ingestor opened (a cache file, the pipelines it built)."""
        owned, self._owned = self._owned, []
        for resource in reversed(owned):
            resource.close()

    def __enter__(self) -> Ingestor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ingest(
    paths: Iterable[str | os.PathLike[str]],
    *,
    out: str | os.PathLike[str] | None = None,
    pipeline: Pipeline[Any] | None = None,
    cache: Any = None,
    store: Store | None = None,
    on_progress: ProgressCallback | None = None,
    show_progress: bool = False,
    **settings: Any,
) -> IngestReport:
    """Ingest ``paths`` in one call: an :class:`Ingestor` built with these arguments, run once
    and closed (what ``ragloom ingest`` does).

    Args:
        paths: files and folders (folders are walked in sorted order, hidden entries skipped).
        out: a JSON Lines file to write the outputs to, replaced atomically.
        pipeline: the pipeline to run (default: :func:`default_pipeline`).
        cache: a cache file path, a ``CacheStore``, ``False`` or ``None``, as for
            :class:`Ingestor`.
        store: an index to write the outputs to, document by document (documents unchanged
            since they were indexed are skipped when no ``out`` is asked for).
        on_progress: called with an :class:`IngestProgress` each time a file is done.
        show_progress: show progress on stderr (needs rich).
        **settings: the other arguments of :class:`Ingestor` (``chunk_size``,
            ``length_function``, ``embedder``, ``sync``, ``max_file_size``, ``registry``).

    Returns:
        What happened: counts, skipped files and failures with their reasons.

    Raises:
        ConfigurationError: a path does not exist, an output is unusable, or a setting is
            invalid (see :class:`Ingestor` and :meth:`Ingestor.arun`).
    """
    with Ingestor(pipeline, cache=cache, store=store, **settings) as ingestor:
        return ingestor.run(
            paths, out=out, on_progress=on_progress, show_progress=show_progress
        )


class ShownProgress:
    """An ``on_progress`` callback that shows files done (and bytes read) on stderr, then
    calls ``then`` (another callback) if given. ``quiet=True`` shows nothing."""

    def __init__(self, then: ProgressCallback | None = None, *, quiet: bool = False) -> None:
        self.then = then
        self.quiet = quiet
        self.progress: Any = None
        self.started = time.perf_counter()

    def __call__(self, update: IngestProgress) -> None:
        if not self.quiet:
            if self.progress is None:
                from .._display import Progress

                self.progress = Progress(
                    update.total, label="files", show_bytes=True, started=self.started
                )
            self.progress.update(update.done, nbytes=update.bytes_read)
        if self.then is not None:
            self.then(update)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()


def check_outputs(
    walked: WalkResult,
    out: Any,
    failures: Any,
    cache_files: list[str],
    *,
    arguments: Iterable[str] = (),
) -> None:
    """Refuse output paths that would destroy something or cannot be written.

    An output that is one of the files to ingest is refused, with one exception: a file found
    while walking a folder (not named in ``arguments``) that is recognisably an earlier output
    of ragloom (empty, or JSON Lines of chunks or failures) is left out of the inputs and
    replaced, so ``ragloom ingest . -o chunks.jsonl`` can be run again.

    Raises:
        ConfigurationError: naming both paths when an output is an input file, the cache or
            the other output; naming the path when it is a device, a FIFO, a folder, under a
            file, or in a folder that cannot be written.
    """
    inputs = {os.path.realpath(f.path): f for f in walked.files}
    named = {os.path.realpath(a) for a in arguments}
    caches = {os.path.realpath(p) for p in cache_files}
    seen: dict[str, str] = {}
    for flag, value in (("--out", out), ("--failures", failures)):
        if value is None:
            continue
        path = os.fspath(value)
        real = os.path.realpath(path)
        if real in caches:
            raise ConfigurationError(
                f"refusing to write {flag} {path}: it is the cache file; choose another path"
            )
        if real in seen:
            raise ConfigurationError(
                f"refusing to write {flag} {path}: it is also the {seen[real]} file; give "
                "them different paths"
            )
        seen[real] = flag
        found = inputs.get(real)
        if found is not None:
            if real in named or not _earlier_output(found.path):
                raise ConfigurationError(
                    f"refusing to write {flag} {path}: it is the input file {found.shown}, "
                    "which would be overwritten; choose another path"
                )
            walked.files = [f for f in walked.files if f is not found]
        _check_writable(flag, Path(path))


def _earlier_output(path: str) -> bool:
    """Whether ``path`` looks like a file ragloom wrote: empty, or JSON Lines whose first
    record is a chunk or a failure record."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
    except OSError:
        return False
    if not first.strip():
        return not first  # an empty file (a file of blank lines is someone's text)
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and (
        {"id", "parent", "start", "end", "content"} <= record.keys()
        or {"item", "source", "stage", "kind", "reason"} <= record.keys()
    )


def _check_writable(flag: str, path: Path) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise ConfigurationError(
            f"cannot write {flag} {path}: a part of its folder is a file, not a folder"
        ) from None
    except OSError as exc:
        raise ConfigurationError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO "
        kind += "" if stat.S_ISDIR(st.st_mode) else "or socket)"
        raise ConfigurationError(
            f"refusing to write {flag} {path}: it is {kind}; write to a regular file or a new path"
        )
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigurationError(
            f"cannot write {flag} {path}: {probe} is a file, not a folder"
        )
    if probe.exists() and not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigurationError(f"cannot write {flag} {path}: {probe} is not writable")


def _refresh_routes(store: Any, registry: Any) -> dict[str, Any] | None:
    """Fit the index's routes again when what it holds changed; what they are now."""
    from ..index_routes import refresh_routes

    fitted, fresh = refresh_routes(store, registry=registry)
    if fitted is None:
        return None
    return {
        "collections": [c.to_dict() for c in fitted.collections],
        "routing": "fitted" if fitted.note is None else fitted.note,
        "fitted": fresh,
        "fit": fitted.fit,
    }


def _location(store: Any) -> str | None:
    if store is None:
        return None
    location = getattr(store, "location", None)  # without reading the store, when it says
    if isinstance(location, str):
        return location
    try:
        return str(store.info().location)
    except Exception:  # noqa: BLE001 - only a label
        return type(store).__name__


def gone_documents(
    known: Mapping[str, str],
    files: list[InputFile],
    scope: tuple[set[str], list[str], list[str]] | None = None,
) -> list[str]:
    """Stored document ids whose files are not among ``files`` (a file's documents are its id
    and ids derived from it with ``#``); with ``scope`` (the file ids named, the folder
    prefixes walked, the folder prefixes that could not be listed), only those under the
    paths walked and not under a folder that could not be listed."""
    present = {f.doc_id for f in files}

    def under(doc_id: str) -> bool:
        if scope is None:
            return True
        named, walked, unlisted = scope
        base = doc_id.split("#", 1)[0]
        if any(doc_id.startswith(p) or base.startswith(p) for p in unlisted):
            return False
        if doc_id in named or base in named:
            return True
        return any(p == "" or doc_id.startswith(p) for p in walked)

    return [
        doc_id for doc_id in known
        if doc_id not in present and doc_id.split("#", 1)[0] not in present and under(doc_id)
    ]


def _scope(
    texts: list[str], root: str | None, walked: WalkResult
) -> tuple[set[str], list[str], list[str]]:
    """What ``--sync`` may remove from: the files named, the folders walked (as id
    prefixes, ``""`` for the root itself), and the folders that could not be listed."""
    base = root or walked.root
    named: set[str] = set()
    folders: list[str] = []
    for text in texts:
        relative = os.path.relpath(os.path.abspath(text), base).replace(os.sep, "/")
        if os.path.isdir(text):
            folders.append("" if relative == "." else file_id(relative) + "/")
        else:
            named.add(file_id(relative))
    unlisted = [p.doc_id for p in walked.problems if p.kind == "unreadable"]
    return named, folders, unlisted


def recorded_root(properties: Mapping[str, Any], base: str | None) -> str | None:
    """The absolute root an index records in ``properties`` (relative to its folder
    ``base``), or ``None`` before its first ingest."""
    recorded = properties.get("root")
    if not isinstance(recorded, str) or not recorded:
        return None
    return os.path.normpath(os.path.join(base or os.getcwd(), recorded))


def root_record(root: str, base: str | None) -> str:
    """How an index in the folder ``base`` records ``root``: relative to its folder, so a
    project moved as a whole keeps its ids (absolute on another drive, or without a folder)."""
    if base is None:
        return root
    try:
        return os.path.relpath(root, base)
    except ValueError:  # another drive (Windows)
        return root


def _store_dir(store: Any) -> str | None:
    """The absolute folder of a store kept in a local folder (``None`` otherwise)."""
    path = getattr(store, "path", None)
    if path is None:
        return None
    return str(os.path.abspath(os.fspath(path)))


def _recorded_embedder(store: Any) -> dict[str, Any] | None:
    if store is None:
        return None
    properties = getattr(store, "properties", None)
    recorded = properties().get("embedder") if callable(properties) else None
    return recorded if isinstance(recorded, dict) else None


def _describe(record: Mapping[str, Any]) -> str:
    params = record.get("params") or {}
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()) if v is not None)
    return f"{record.get('name') or record.get('class')!r}" + (f" ({shown})" if shown else "")


def embedder_record(registry: Any, embedder: Any) -> dict[str, Any]:
    """``{"name", "params", "class"}`` of ``embedder``: its registered name (qualified with
    its distribution; ``None`` when it is not registered) and :meth:`config` parameters, which
    rebuild it through the registry."""
    name: str | None = None
    found = registry.name_of(embedder)
    if found is not None and found[0] == "embedder":
        label = found[1]
        short = label.split(":")[-1]
        providers = [
            p for p in registry.providers("embedder").get(short, [])
            if ":" not in label or p.qualified == label
        ]
        name = providers[0].qualified if len(providers) == 1 else label
    try:
        params = json.loads(json.dumps(dict(embedder.config())))
    except (TypeError, ValueError):
        params = {}
    cls = type(embedder)
    return {"name": name, "params": params, "class": f"{cls.__module__}:{cls.__qualname__}"}


def check_dimension(store: Any, pipeline: Any) -> None:
    """Refuse, before anything is read or written, an index whose vectors have another
    dimension than the pipeline's embedder makes (they could never be stored together).

    Raises:
        StoreError: naming the index, both dimensions and the embedder.
    """
    from ..embedding import EmbeddingStep
    from ..stores import StoreError

    if store is None:
        return
    steps = [s for s in pipeline.walk() if isinstance(s, EmbeddingStep)]
    if not steps:
        return
    # A store that tells its dimension alone may read less than its whole info.
    held = getattr(store, "dimension", None)
    if not isinstance(held, int) or isinstance(held, bool):
        held = store.info().dimension
    if held is None:
        return
    embedder = steps[-1].embedder
    made = embedder.dimension
    if made != held:
        raise StoreError(
            f"the index at {_location(store)} holds vectors of dimension {held}, but "
            f"the embedder {type(embedder).__name__} makes vectors of dimension {made}: "
            "ingest with the embedder the index was built with, or clear the index to "
            "rebuild it with this one; nothing was changed"
        )


class _Run:
    """One ingestion run: feeding documents, collecting outputs, tracking progress."""

    def __init__(
        self,
        ingestor: Ingestor,
        report: IngestReport,
        writer: AtomicJsonlWriter | None,
        on_progress: ProgressCallback | None,
        fingerprint: Callable[[Document], str] | None,
        walked: WalkResult,
    ) -> None:
        self.ingestor = ingestor
        self.report = report
        self.writer = writer
        self.on_progress = on_progress
        self.fingerprint = fingerprint
        self.total = len(walked.files)
        self.done_files = 0
        self.bytes_done = 0
        self.warnings: list[str] = []
        #: Documents fed and not known finished, in order: (doc id, file index, size).
        self.pending: deque[tuple[str, int, int]] = deque()
        self.open_docs: dict[int, int] = {}  # file index -> documents not finished
        self.failed_docs: set[str] = set()
        #: Chunker name -> non-empty documents it returned no chunk for.
        self.no_chunks: dict[str, list[str]] = {}
        self.by_doc: dict[str, list[Any]] = {}
        self.fingerprints: dict[str, str] = {}
        self.batch: list[Any] = []
        self.batch_chunks = 0
        #: The store write under way in the background thread: (its future, its documents).
        self.writing: tuple[Any, int] | None = None
        self.writer_pool: Any = None
        self.files = walked.files
        #: File contents -> the fingerprints of their documents, in the cache (see _FileMemo).
        self.memo: _FileMemo | None = None
        #: Documents unchanged in the index but processed anyway (for a JSONL output): their
        #: chunks are not written to the index again.
        self.kept: set[str] = set()
        #: Documents the index holds for files that no longer give them (removed at the end).
        self.stale: list[str] = []

    # -- reading ---------------------------------------------------------------------------

    def documents(
        self, loaders: Any, known: dict[str, str] | None, skip: bool = True
    ) -> Iterator[Document]:
        """Read files one at a time; unusable ones become failures, empty ones are skipped.

        With ``known`` (the index's fingerprints), a document unchanged since it was indexed
        is left alone in the index: not processed at all when ``skip``, else (a JSONL output
        wants its chunks) processed but not written to the index again. Documents the index
        holds for a file that no longer gives them (an emptied file) become :attr:`stale`.
        """
        report = self.report
        memo = self.memo if known is not None and skip else None
        held = known if known is not None else {}
        by_file: dict[str, list[str]] = {}
        for doc_id in held:
            by_file.setdefault(doc_id.split("#", 1)[0], []).append(doc_id)
        for index, file in enumerate(self.files):
            read, key = None, None
            if memo is not None:
                source = memo.read(file, self.ingestor.max_file_size)
                if source is not None:
                    key = memo.key(file, source, loaders)
                    listed = memo.get(key)
                    if listed and all(held.get(d) == p for d, p in listed):
                        # The same bytes, read by the same loader, gave these documents, and
                        # the index holds them as they were: nothing to load or process.
                        report.unchanged += len(listed)
                        report.bytes_read += len(source.data)
                        self._file_done(index, len(source.data))
                        continue
                    read = _already_read(source)
            loaded = load_file(
                file, loaders, max_file_size=self.ingestor.max_file_size,
                skip_formats=self.ingestor.skip_formats, read=read,
            )
            report.skipped.extend(loaded.skipped)
            report.failures.extend(loaded.failures)
            report.bytes_read += loaded.bytes_read
            if known is not None and not loaded.failures:
                given = {d.id for d in loaded.documents} | {
                    p.item for p in loaded.skipped if p.kind != "empty"
                }
                self.stale.extend(
                    d for d in by_file.get(file.doc_id, ())
                    if d not in given and (d == file.doc_id or d.startswith(file.doc_id + "#"))
                )
            fed = 0
            printed: list[tuple[str, str]] = []
            for document in loaded.documents:
                if self.fingerprint is not None:
                    print_ = self.fingerprint(document)
                    printed.append((document.id, print_))
                    if known is not None and known.get(document.id) == print_:
                        report.unchanged += 1
                        if skip:
                            continue
                        self.kept.add(document.id)
                    else:
                        self.fingerprints[document.id] = print_
                report.documents += 1
                self.pending.append((document.id, index, loaded.size))
                self.open_docs[index] = self.open_docs.get(index, 0) + 1
                fed += 1
                yield document
            if memo is not None and key is not None and printed and not (
                loaded.skipped or loaded.failures
            ):
                memo.put(key, file.doc_id, printed)
            if not fed:
                self._file_done(index, loaded.size)

    # -- running ---------------------------------------------------------------------------

    async def drive(self, documents: Iterator[Document]) -> None:
        import anyio

        from ..events import CacheSkipped, ItemFailed, StepFinished

        pipeline = self.ingestor.pipeline
        report = self.report

        def observe(event: object) -> None:
            if isinstance(event, ItemFailed):
                item = event.item
                doc_id = _doc_of(item) or event.item_id
                source = getattr(item, "metadata", {}).get("source") if item is not None else None
                report.failures.append(Problem(
                    event.item_id, str(source or doc_id), event.step, event.error_type,
                    event.reason,
                ))
                self.failed_docs.add(doc_id)
                if getattr(item, "parent_id", None) is None:
                    # A whole document failed: nothing more will come out of it.
                    self._finish_through(doc_id)
            elif isinstance(event, StepFinished):
                report.cache_hits += event.cache_hits
                report.cache_misses += event.cache_misses
            elif isinstance(event, CacheSkipped):
                line = f"{event.step}: {event.reason}"
                if line not in self.warnings:
                    self.warnings.append(line)

        checkpoint = anyio.lowlevel.checkpoint
        for segment in _segments(documents, SEGMENT_CHARS):
            context = pipeline.context(segment)
            context.subscribe(observe)
            stream = pipeline.stream(context=context)
            try:
                # Nothing here awaits: a cancellation (Ctrl-C, SIGTERM) lands inside the
                # pipeline's own chain of steps (the source gives the event loop a turn at
                # least every 50 ms), never while a step is suspended handing out a window,
                # so every step unwinds in this task.
                async for out in stream:
                    self._output(out)
            finally:
                # Shielded: an interrupted run closes every step's generator here, in this
                # task, so none is left for the event loop to finalize in another one.
                with anyio.CancelScope(shield=True):
                    await stream.aclose()  # type: ignore[attr-defined]
            for line in context.observer_errors:
                if line not in self.warnings:
                    self.warnings.append(line)
            for name, stats in context.stats.items():
                if stats.no_chunks:
                    self.no_chunks.setdefault(name, []).extend(stats.no_chunks)
            await checkpoint()
        self._no_chunks_reported()
        self._finish_through(None)
        self._flush_store()
        self._wait_store()

    def _no_chunks_reported(self) -> None:
        """One warning per chunker that returned no chunk for non-empty documents (with the
        count), and each such document listed with the skipped ones."""
        from ..context import warn_no_chunks

        if not self.no_chunks:
            return
        for line in warn_no_chunks(self.no_chunks):
            if line not in self.warnings:
                self.warnings.append(line)
        shown = {f.doc_id: f.shown for f in self.files}
        for name, ids in self.no_chunks.items():
            for doc_id in ids:
                self.report.skipped.append(Problem(
                    doc_id, shown.get(doc_id, doc_id), name, "no-chunks",
                    f"{name} returned no chunks for this non-empty document",
                ))

    def _output(self, out: Any) -> None:
        doc_id = _doc_of(out)
        if doc_id is not None:
            self._finish_before(doc_id)
        if self.writer is not None:
            try:
                self.writer.write(chunk_record(out))
            except ValueError as exc:
                source = getattr(out, "metadata", {}).get("source") or doc_id
                self.report.failures.append(Problem(
                    str(getattr(out, "id", "?")), str(source), "write", "ValueError",
                    f"not written: its JSON would not be standard ({exc}); metadata must hold "
                    "finite numbers",
                ))
                if doc_id is not None:
                    self.failed_docs.add(doc_id)
                return
        self.report.chunks += 1
        if self.ingestor.store is not None and doc_id is not None:
            self.by_doc.setdefault(doc_id, []).append(out)

    # -- completion, progress and the store --------------------------------------------------

    def _finish_before(self, doc_id: str) -> None:
        """Outputs follow input order: every document fed before ``doc_id`` is finished."""
        while self.pending and self.pending[0][0] != doc_id:
            self._complete(self.pending.popleft())

    def _finish_through(self, doc_id: str | None) -> None:
        """Finish every pending document up to ``doc_id`` included (``None``: all)."""
        if doc_id is not None and all(d != doc_id for d, _i, _s in self.pending):
            return
        while self.pending:
            entry = self.pending.popleft()
            self._complete(entry)
            if entry[0] == doc_id:
                return

    def _complete(self, entry: tuple[str, int, int]) -> None:
        doc_id, index, size = entry
        if (
            self.ingestor.store is not None
            and doc_id not in self.failed_docs
            and doc_id not in self.kept
        ):
            from ..stores import IndexedDocument

            chunks = self.by_doc.pop(doc_id, [])
            self.batch.append(IndexedDocument(doc_id, self.fingerprints.pop(doc_id, ""), chunks))
            self.batch_chunks += len(chunks)
            if self.batch_chunks >= STORE_BATCH_CHUNKS:
                self._flush_store()
        else:
            self.by_doc.pop(doc_id, None)
            self.fingerprints.pop(doc_id, None)
        left = self.open_docs.get(index, 1) - 1
        if left <= 0:
            self.open_docs.pop(index, None)
            self._file_done(index, size)
        else:
            self.open_docs[index] = left

    def _file_done(self, index: int, size: int) -> None:
        self.done_files += 1
        self.bytes_done += size
        if self.on_progress is not None:
            self.on_progress(IngestProgress(self.done_files, self.total, self.bytes_done))

    def _flush_store(self) -> None:
        """Hand the gathered batch to the writer thread, once the previous write is done."""
        store = self.ingestor.store
        if store is None or not self.batch:
            return
        batch, self.batch, self.batch_chunks = self.batch, [], 0
        self._wait_store()
        if self.writer_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self.writer_pool = ThreadPoolExecutor(1, thread_name_prefix="ragloom-ingest-store")
        self.writing = (self.writer_pool.submit(store.write, batch), len(batch))

    def _wait_store(self) -> None:
        """Wait for the write under way; its error, if any, is raised here."""
        if self.writing is None:
            return
        future, count = self.writing
        self.writing = None
        future.result()
        self.report.indexed += count

    def close_store(self, failed: bool = False) -> None:
        """Wait for the write under way (its error is raised unless the run ``failed``
        already: then that error goes on its way) and stop the writer thread."""
        try:
            if not failed:
                self._wait_store()
            elif self.writing is not None:
                self.writing[0].exception()  # wait, without masking the error in flight
                self.writing = None
        finally:
            if self.writer_pool is not None:
                self.writer_pool.shutdown(wait=True)
                self.writer_pool = None


def _already_read(source: Any) -> Callable[..., Any]:
    """A reader for :func:`load_file` that hands over a file already read."""

    def read(*_args: Any, **_kwargs: Any) -> Any:
        return source

    return read


class _FileMemo:
    """What each file's bytes gave, kept in the step cache: ``(document id, fingerprint)`` of
    every document loaded from it.

    A re-ingest into an index reads every file again to find the changed ones; converting a
    file (HTML to Markdown, a PDF's pages) costs far more than hashing its bytes. When the
    cache holds the documents a file's exact bytes gave (under the same loader and pipeline)
    and the index holds each of them with that fingerprint, the file is unchanged and is not
    loaded: loading it again would give the same documents and skip them all. Entries are
    keyed by the file's id and bytes, the loader's and the pipeline's identity; a file that
    failed or had documents skipped is not remembered. ``ragloom cache clear`` forgets them.
    """

    STEP = "ragloom.ingest/files"

    def __init__(self, cache: Any, identity: str, skip_formats: Mapping[str, str]) -> None:
        self.cache = cache
        self.base = f"{self.STEP}\n{identity}\n{json.dumps(sorted(skip_formats))}\n"
        self.pending: list[Any] = []
        self.loaders: dict[int, str] = {}  # id(loader) -> its name and identity (loaders live
        # as long as the run)

    @classmethod
    def of(cls, cache: Any, identity: str, skip_formats: Mapping[str, str]) -> _FileMemo | None:
        """The memo over ``cache`` (``None`` without a cache that reads and writes entries)."""
        if not (hasattr(cache, "get_many") and hasattr(cache, "put_many")):
            return None
        return cls(cache, identity, skip_formats)

    @staticmethod
    def read(file: InputFile, max_bytes: int) -> Any:
        """The file as :func:`load_file` reads it, or ``None`` when it cannot be read (then
        ``load_file`` reports why)."""
        from ..loaders_builtin import read_source_file
        from ..loading import LoadError

        try:
            return read_source_file(
                file.path, doc_id=file.doc_id, name=file.shown, max_bytes=max_bytes,
                metadata=source_metadata(file),
            )
        except LoadError:
            return None

    def key(self, file: InputFile, source: Any, loaders: Any) -> str | None:
        """The entry's key (``None`` when no loader takes the file or it has no identity)."""
        from ..identity import Uncacheable

        try:
            loader = loaders.pick(source)
            loader_identity = self.loaders.get(id(loader))
            if loader_identity is None:
                loader_identity = f"{loaders.name_of(loader)}:{loader.config_hash}"
                self.loaders[id(loader)] = loader_identity
        except (Uncacheable, RagloomError):
            return None
        digest = hashlib.sha256(source.data).hexdigest()
        text = f"{self.base}{loader_identity}\n{len(file.doc_id)}:{file.doc_id}\n{digest}"
        if file.collection is not None:
            text += f"\ncollection\n{file.collection}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def get(self, key: str | None) -> list[tuple[str, str]] | None:
        if key is None:
            return None
        try:
            entry = self.cache.get_many([key]).get(key)
            if entry is None:
                return None
            listed = json.loads(entry.payload)
        except (RagloomError, ValueError):
            return None  # an unreadable entry: the file is loaded as usual
        if not isinstance(listed, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, str) for v in p)
            for p in listed
        ):
            return None
        return [(d, p) for d, p in listed]

    def put(self, key: str, item_id: str, printed: list[tuple[str, str]]) -> None:
        from ..cache.base import CacheEntry

        payload = json.dumps(printed, ensure_ascii=False)
        self.pending.append(CacheEntry(key, self.STEP, item_id, payload, len(printed)))
        if len(self.pending) >= 1024:
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        if pending:
            try:
                self.cache.put_many(pending)
            except RagloomError:
                pass  # only a shortcut for the next run: it loads these files again


def _doc_of(item: Any) -> str | None:
    """The id of the input document an output (or a failed item) belongs to."""
    parent = getattr(item, "parent_id", None)
    if isinstance(parent, str):
        return parent
    ident = getattr(item, "id", None)
    return ident if isinstance(ident, str) else None


def _segments(items: Iterator[Document], budget: int) -> Iterator[Iterator[Document]]:
    """Split a stream of documents into consecutive runs of about ``budget`` characters."""
    pending: list[Document] = []

    def segment(head: Document) -> Iterator[Document]:
        used = len(head.content)
        yield head
        for item in items:
            if used + len(item.content) > budget:
                pending.append(item)
                return
            used += len(item.content)
            yield item

    while True:
        head = pending.pop() if pending else next(items, None)
        if head is None:
            return
        yield segment(head)

