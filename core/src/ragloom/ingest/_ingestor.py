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

import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._install import install_hint
from ..errors import ConfigurationError, PluginNotFoundError, RagloomError
from ._files import document_fingerprint, pipeline_identity
from ._index import (
    check_dimension,
    describe_embedder,
    embedder_record,
    gone_documents,
    location,
    recorded_embedder,
    recorded_root,
    refresh_routes,
    root_record,
    store_dir,
    sync_scope,
)
from ._jsonl import AtomicJsonlWriter
from ._memo import FileMemo
from ._outputs import check_outputs
from ._progress import ProgressCallback, ShownProgress
from ._report import IngestReport, Problem
from ._run import Run
from ._seam import LocalEngine, PipelineWork
from ._states import FileStates
from ._walk import input_root, walk_inputs

if TYPE_CHECKING:
    from ..models import Document
    from ..pipeline import Pipeline
    from ..plugins import Registry
    from ..stores import PartWriter, Store
    from ._seam import BaseEngine, UriReader

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "Ingestor",
    "default_pipeline",
    "ingest",
]

#: Files larger than this fail as oversized unless another limit is given.
DEFAULT_MAX_FILE_SIZE = 50 * 1000 * 1000


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
        engine: what runs the pipeline over the documents (an :class:`~ragloom.engines.Engine`;
            default: :class:`~ragloom.engines.LocalEngine`, this process). Everything else
            about the run (paths, checks, fingerprints, outputs, the index) is the same; an
            engine that writes the index where it runs (``index_writes``) is given the
            store's part writer when no JSONL output is asked for: the run commits the parts
            it writes as they come, and a run that fails returns the index to where it stood
            before it.

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
        engine: BaseEngine | None = None,
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
        #: How errors name the two outputs (``out`` and ``failures``; the CLI sets its options').
        self.output_names: tuple[str, str] = ("out", "failures")
        #: What maps the pipeline over batches of documents (default: this process).
        self.engine: BaseEngine = engine if engine is not None else LocalEngine()
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
            recorded = recorded_embedder(self.store)
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
                f"the index at {location(self.store)} was built with the embedder "
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
        base = store_dir(store)
        recorded = recorded_root(properties, base)
        root = recorded if recorded is not None else input_root(texts)
        found = store.check() if callable(getattr(store, "check", None)) else None
        if found is not None and found.unreadable:
            from ..stores import StoreError

            raise StoreError(
                f"the index at {location(store)} is damaged: {'; '.join(found.problems)}; "
                f"repair it with `ragloom index check --repair --index {location(store)}` and "
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
                    f"the index at {location(store)} was built with the embedder "
                    f"{describe_embedder(held)}; this ingest embeds with "
                    f"{describe_embedder(made)}: ingest with the embedder {held['name']!r}, or "
                    f"clear the index (`ragloom index clear --index {location(store)}`) to "
                    "rebuild it with the other one; nothing was changed"
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
        from functools import partial

        from .._sync import run_sync

        return run_sync(partial(
            self.arun, list(paths), out=out, failures=failures, on_progress=on_progress,
            show_progress=show_progress,
        ))

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
        uris = self._uri_reader(texts)
        for text in texts:
            if uris is None and not os.path.lexists(text):
                raise ConfigurationError(f"no such file or folder: {text}")
        own = store_dir(self.store)
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
        walked = uris.walk(texts, collection=self.collection) if uris is not None else (
            walk_inputs(
                texts, exclude=self._cache_files(), exclude_dirs=[own] if own else [],
                root=root, collection=self.collection,
            )
        )
        check_outputs(
            walked, out, failures, self._cache_files(), arguments=texts, names=self.output_names
        )
        self._open_cache()
        report = IngestReport(
            files=len(walked.files),
            out=None if out is None else os.fspath(out),
            index=location(self.store),
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
        writer = AtomicJsonlWriter(out, flag=self.output_names[0]) if out is not None else None
        try:
            run = Run(
                self.store, (self.max_file_size, self.skip_formats), report, writer,
                on_progress, fingerprint, walked,
            )
            run.read = None if uris is None else uris.read
            run.part_writer = self._index_writer(out)
            if skip_unchanged and identity is not None and uris is None:
                run.memo = FileMemo.of(self.pipeline.cache, identity, self.skip_formats)
                run.states = FileStates.of(
                    self.store, identity, loaders, (self.max_file_size, self.skip_formats)
                )
            if self._repaired:
                run.warnings.append(self._repaired)
            documents = run.documents(
                loaders, known if self.store is not None else None, skip=skip_unchanged
            )
            note = self.engine.advice(walked.files)
            if note:
                run.warnings.append(note)
            try:
                work = PipelineWork(self.pipeline, index_writer=run.part_writer)
                with self.engine.session() as mapper:
                    await run.drive(mapper, work, documents)
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
                        known, walked.files, scope=sync_scope(texts, root, walked)
                    )
                if stale:
                    report.deleted = self.store.delete(stale)
                if run.states is not None:
                    run.states.forget([d.split("#", 1)[0] for d in stale])
                    run.states.save(self.store)
            report.warnings.extend(run.warnings)
            due = getattr(self.store, "optimize_due", None)
            if callable(due):
                report.optimize = due()
            if self.store is not None and self.fit_routes:
                report.routes = refresh_routes(self.store, self.registry)
            if failures is not None:
                with AtomicJsonlWriter(failures, flag=self.output_names[1]) as failure_file:
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

    def _index_writer(self, out: str | os.PathLike[str] | None) -> PartWriter | None:
        """The index's part writer, when the engine writes the index where it runs the
        pipeline and the store gives one (``None``: the run writes the index from the outputs
        it is handed, as for the local engine, and whenever a JSONL file wants every output
        back anyway)."""
        if self.store is None or out is not None or not self.engine.index_writes:
            return None
        return self.store.part_writer()

    def _uri_reader(self, texts: list[str]) -> UriReader | None:
        """How the engine walks and reads the paths when they are URIs (``None``: local
        paths, walked here)."""
        uris = [t for t in texts if "://" in t]
        reader = self.engine.uri_reader() if uris else None
        if reader is None:
            return None
        if len(uris) != len(texts):
            raise ConfigurationError(
                "inputs must be all local paths or all URIs of one filesystem, not a mix"
            )
        return reader

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
