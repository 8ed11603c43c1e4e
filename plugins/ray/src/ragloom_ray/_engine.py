"""``RayEngine``: ``ragloom ingest --engine ray`` runs the same ingestion on Ray Data.

The driver (where ``ragloom ingest`` runs) walks the inputs, builds the pipeline as a local run
would (default chunkers or the pipeline file, the cache, the embedding step of an index) and
writes it out as a declarative spec. Ray Data then reads the files as a dataset and applies
``IngestWorker`` with ``map_batches`` in an actor pool: each worker builds the pipeline once from
the spec, with its own installed plugins, and turns batches of files into rows. The driver
streams the rows back in file order and writes them as a local run does: the JSONL file
(atomically), the failures file, the store (its own batched per-document upsert), the report.
"""

from __future__ import annotations

import json
import logging
import math
import os
import pickle
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragloom.engines import Engine, IngestJob
from ragloom.errors import ConfigurationError, ItemProcessingError, RagloomError

from ._cache import absolute_cache_paths

if TYPE_CHECKING:
    from ragloom.ingest import IngestReport

__all__ = ["RayEngine", "RayRunError", "RaySettings"]

#: Chunks gathered before they are written to a store in one batch (as a local run does).
STORE_BATCH_CHUNKS = 4096


class RayRunError(ItemProcessingError):
    """The run on Ray stopped (a batch failed on every attempt: its worker died each time, or
    Ray itself failed); nothing was written."""


@dataclass(frozen=True)
class RaySettings:
    """The engine's settings (``--engine-option KEY=VALUE``).

    - ``address``: the Ray cluster to join (``auto``, ``ray://host:10001``, ``host:6379``);
      default: the one ``RAY_ADDRESS`` names, else a local Ray started for this run;
    - ``workers``: workers of the actor pool, each with its own pipeline (default: the
      cluster's CPUs divided by ``cpus_per_worker``);
    - ``batch_size``: files per batch (one Ray task; default 32);
    - ``cpus_per_worker``: CPUs Ray reserves for each worker (default 1);
    - ``task_retries``: times a batch whose worker died is run again (default 3);
    - ``runtime_env``: a Ray runtime environment for the workers, as JSON
      (``{"pip": ["ragloom-text"], "env_vars": {...}}``).
    """

    address: str | None = None
    workers: int | None = None
    batch_size: int = 32
    cpus_per_worker: float = 1.0
    task_retries: int = 3
    runtime_env: dict[str, Any] | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str], base: RaySettings | None = None) -> RaySettings:
        """Settings from ``--engine-option`` strings over ``base``.

        Raises:
            ConfigurationError: an unknown key or a value of the wrong kind (named).
        """
        values: dict[str, Any] = dict((base or cls()).__dict__)
        known = sorted(values)
        for key, text in options.items():
            if key not in values:
                raise ConfigurationError(
                    f"unknown ray engine option {key!r}; valid options: {', '.join(known)}"
                )
            text = text.strip()
            if key == "address":
                values[key] = text or None
            elif key in ("workers", "batch_size", "task_retries"):
                values[key] = _integer(key, text, minimum=0 if key == "task_retries" else 1)
            elif key == "cpus_per_worker":
                try:
                    number = float(text)
                except ValueError:
                    number = -1.0
                if not number > 0 or math.isinf(number):
                    raise ConfigurationError(
                        f"ray engine option cpus_per_worker must be a number > 0, got {text!r}"
                    )
                values[key] = number
            else:  # runtime_env
                try:
                    env = json.loads(text)
                except ValueError as exc:
                    raise ConfigurationError(
                        f"ray engine option runtime_env must be a JSON object: {exc}"
                    ) from None
                if not isinstance(env, dict):
                    raise ConfigurationError("ray engine option runtime_env must be a JSON object")
                values[key] = env
        return cls(**values)


def _integer(key: str, text: str, *, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ConfigurationError(
            f"ray engine option {key} must be an integer >= {minimum}, got {text!r}"
        )
    return value


class RayEngine(Engine):
    """Runs ingestions on Ray Data with outputs identical to a local run.

    Args are the defaults of :class:`RaySettings`; a job's ``options`` override them.
    """

    step_id: ClassVar[str] = "ragloom-ray/engine"

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        batch_size: int = 32,
        cpus_per_worker: float = 1.0,
        task_retries: int = 3,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        options = {
            "batch_size": str(batch_size), "cpus_per_worker": str(cpus_per_worker),
            "task_retries": str(task_retries),
        }
        if workers is not None:
            options["workers"] = str(workers)
        self.settings = RaySettings.parse(options)
        self.settings = RaySettings(
            **{**self.settings.__dict__, "address": address, "runtime_env": runtime_env}
        )

    def config(self) -> Mapping[str, Any]:
        return dict(self.settings.__dict__)

    # -- the job ---------------------------------------------------------------------------

    def ingest(self, job: IngestJob, *, on_progress: Any = None) -> IngestReport:
        """Run ``job`` on Ray; return its report (as a local run's).

        Raises:
            ConfigurationError: an engine option, an input or output path, a cache file the
                cluster's nodes cannot share, or a plugin missing on the workers (named).
        """
        from ragloom.ingest import IngestReport, Problem, check_outputs, walk_inputs

        from ._cache import cache_files, check_cache_sharing
        from ._fs import is_uri, walk_uris

        started = time.perf_counter()
        settings = RaySettings.parse(job.options, self.settings)
        texts = list(job.paths)
        uris = [p for p in texts if is_uri(p)]
        if uris and len(uris) != len(texts):
            raise ConfigurationError(
                "inputs must be all local paths or all URIs of one filesystem, not a mix"
            )
        if not uris:
            for text in texts:
                if not os.path.lexists(text):
                    raise ConfigurationError(f"no such file or folder: {text}")
        spec = None
        if job.spec is not None:
            spec = absolute_cache_paths(json.loads(json.dumps(job.spec)))
        job_cache = os.path.abspath(os.path.expanduser(job.cache)) if job.cache else None
        caches = cache_files(spec, [job_cache] if job_cache else [])
        cache_side = [p + s for p in caches for s in ("", "-wal", "-shm", "-journal")]
        outputs = [os.fspath(p) for p in (job.out, job.failures) if p is not None]
        collection = _collection(job.collection)
        index_dir = [job.index] if job.index is not None and not is_uri(job.index) else []
        walked = walk_uris(uris, collection=collection) if uris else walk_inputs(
            texts, exclude=outputs + cache_side, exclude_dirs=index_dir,  # never read the index
            collection=collection,
        )
        check_outputs(walked, job.out, job.failures, cache_side)
        if not walked.files:  # nothing to run: nothing written, no Ray started
            report = IngestReport(
                files=0, out=job.out, index=job.index, cache=caches[0] if caches else "off"
            )
            report.failures.extend(
                Problem(p.doc_id, p.path, "walk", p.kind, p.reason) for p in walked.problems
            )
            report.seconds = time.perf_counter() - started
            return report
        started_ray = _connect(settings)
        try:
            import ray

            check_cache_sharing(caches, ray.nodes())
            return _Driver(self, job, settings, spec, job_cache, walked, on_progress,
                           started).run(IngestReport, Problem)
        finally:
            if started_ray:
                import ray

                ray.shutdown()


def _collection(name: str | None) -> str | None:
    """The job's collection, as a local run takes it (a blank name refused)."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"collection must be a non-blank name, got {name!r}")
    return name.strip()


def _connect(settings: RaySettings) -> bool:
    """Join or start Ray; ``True`` when this call started it (and must stop it)."""
    try:
        import ray
    except ImportError:
        raise ConfigurationError(
            "the ray engine needs Ray Data (pip install 'ray[data]')"
        ) from None
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {
        "include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING,
    }
    try:
        ray.init(address=settings.address, **kwargs)
    except ConnectionError as exc:
        raise ConfigurationError(
            f"cannot reach the Ray cluster at {settings.address}: {exc}"
        ) from None
    return True


class _Driver:
    """One run on Ray: set-up on the driver, the dataset, the outputs."""

    def __init__(
        self,
        engine: RayEngine,
        job: IngestJob,
        settings: RaySettings,
        spec: dict[str, Any] | None,
        cache: str | None,
        walked: Any,
        on_progress: Callable[[Any], None] | None,
        started: float,
    ) -> None:
        self.engine = engine
        self.job = job
        self.settings = settings
        self.spec = spec
        self.cache = cache
        self.walked = walked
        self.on_progress = on_progress
        self.started = started

    def run(self, report_type: Any, problem_type: Any) -> IngestReport:
        from ragloom.config import build_pipeline
        from ragloom.ingest import AtomicJsonlWriter, Ingestor, gone_documents, pipeline_identity
        from ragloom.plugins import Registry

        from ._lines import LineWriter as _LineWriter

        job = self.job
        walked = self.walked
        registry = Registry()
        store = _open_store(job.index, registry) if job.index is not None else None
        pipeline = None
        try:
            if self.spec is not None:
                pipeline = build_pipeline(
                    self.spec, registry=registry, allow_imports=job.allow_imports
                )
            with Ingestor(
                pipeline,
                chunk_size=job.chunk_size if pipeline is None else None,
                length_function=job.length_function if pipeline is None else None,
                cache=self.cache,
                max_file_size=job.max_file_size,
                store=store,
                embedder=job.embedder,
                sync=job.sync,
                registry=registry,
            ) as ingestor:
                report = report_type(
                    files=len(walked.files), out=job.out,
                    index=None if store is None else _location(store),
                    cache=ingestor.cache_label,
                )
                report.failures.extend(
                    problem_type(p.doc_id, p.path, "walk", p.kind, p.reason)
                    for p in walked.problems
                )
                effective = _effective_spec(self.spec, self.cache, ingestor, registry)
                identity = pipeline_identity(ingestor.pipeline) if store is not None else None
                known = store.fingerprints() if store is not None else {}
                skip_unchanged = store is not None and job.out is None and identity is not None
                config = _worker_config(
                    effective, registry, job, ingestor.skip_formats, identity,
                    known if skip_unchanged else None, keep_items=store is not None,
                )
                writer = _LineWriter(job.out) if job.out is not None else None
                try:
                    sink = _Sink(report, writer, store, self.on_progress, len(walked.files))
                    for table in _execute(walked.files, config, self.settings):
                        sink.take(table)
                    sink.finish()
                    if sink.files_done != len(walked.files):  # pragma: no cover - a Ray bug
                        raise RayRunError(
                            f"ragloom-ray: {len(walked.files) - sink.files_done} files came "
                            "back from Ray without a result; nothing was written"
                        )
                    if store is not None and job.sync:
                        report.deleted = store.delete(gone_documents(known, walked.files))
                    if job.failures is not None:
                        with AtomicJsonlWriter(job.failures) as failure_file:
                            for problem in report.failures:
                                failure_file.write(problem.to_dict())
                            failure_file.commit()
                    if writer is not None:
                        writer.commit()
                finally:
                    if writer is not None:
                        writer.abort()
        finally:
            if pipeline is not None:
                pipeline.close()
            if store is not None:
                store.close()
        report.seconds = time.perf_counter() - self.started
        return report  # type: ignore[no-any-return]


def _effective_spec(
    spec: dict[str, Any] | None, cache: str | None, ingestor: Any, registry: Any
) -> dict[str, Any]:
    """The spec of the pipeline the ingestor runs: the job's spec (or the default pipeline's)
    with the cache and the embedding step the ingestor added.

    A job's own spec is kept as it is (rather than written out again from the built pipeline),
    so components named by import path (``allow_imports``) reach the workers too.
    """
    from ragloom.config import dump_pipeline

    if spec is None:
        dumped = absolute_cache_paths(dump_pipeline(ingestor.pipeline, registry=registry))
        if cache is not None:  # the ingestor opens a cache given by path when it runs
            dumped["cache"] = {"store": "sqlite", "path": cache}
        return dumped
    out: dict[str, Any] = json.loads(json.dumps(spec))
    if cache is not None:
        out["cache"] = {"store": "sqlite", "path": cache}
    embedder = ingestor.embedder
    if embedder is not None:  # the ingestor ended the pipeline with an embedding step
        ref = registry.name_of(embedder)
        if ref is None or ref[0] != "embedder":
            raise ConfigurationError(
                f"the embedder {type(embedder).__name__} is not registered: the ray engine "
                "names it to the workers (register it under ragloom.embedders)"
            )
        step: dict[str, Any] = {"embedder": ref[1]}
        params = dict(embedder.config())
        if params:
            step["params"] = params
        out["steps"] = [*out.get("steps", []), step]
    return out


def _worker_config(
    spec: dict[str, Any],
    registry: Any,
    job: IngestJob,
    skip_formats: Mapping[str, str],
    identity: str | None,
    known: dict[str, str] | None,
    *,
    keep_items: bool,
) -> Any:
    import ray

    from ._requirements import requirements
    from ._worker import WorkerConfig

    return WorkerConfig(
        spec=spec,
        requirements=requirements(spec, registry),
        allow_imports=job.allow_imports,
        max_file_size=job.max_file_size,
        skip_formats=dict(skip_formats),
        identity=identity,
        known=ray.put(known) if known is not None else None,
        jsonl=job.out is not None,
        keep_items=keep_items,
    )


def _execute(files: list[Any], config: Any, settings: RaySettings) -> Any:
    """Run the workers over ``files``; yield their row tables in file order."""
    import ray
    import ray.data

    from ._worker import IngestWorker

    rows = [
        {
            "file": i,
            "path": f.path if "://" in f.path else os.path.abspath(f.path),
            "doc_id": f.doc_id,
            "shown": f.shown,
            # every file walked has one; "" stands for none (a blank name is refused)
            "collection": f.collection or "",
        }
        for i, f in enumerate(files)
    ]
    blocks = max(1, math.ceil(len(rows) / settings.batch_size))
    workers = settings.workers or max(
        1, int(ray.cluster_resources().get("CPU", 1) // settings.cpus_per_worker)
    )
    with _data_context():
        dataset = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
            IngestWorker,
            fn_constructor_args=(config,),
            batch_size=None,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(workers, blocks)),
            num_cpus=settings.cpus_per_worker,
            runtime_env=settings.runtime_env,
            **retries(settings.task_retries),
        )
        try:
            yield from dataset.iter_batches(batch_size=None, batch_format="pyarrow")
        except Exception as exc:
            raise _unwrap(exc) from exc


def retries(count: int) -> dict[str, Any]:
    """The remote argument that bounds how often a batch runs again after its worker died.

    Ray Data retries such a batch forever by default, so a file that kills its worker every
    time (a parser crashing the process) would never let the run end; with a bound the run
    fails with Ray's error instead. Ray 2.58-2.63 take it as an extra keyword of
    ``map_batches`` (deprecated, with no named replacement yet: the warning is silenced).
    """
    return {"max_task_retries": count}


class _data_context:
    """Ray Data settings for one run, restored after: blocks in input order (so outputs are in
    file order), no progress bars (the CLI has its own)."""

    def __enter__(self) -> None:
        import ray.data

        ctx = ray.data.DataContext.get_current()
        self.saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        self.logger = logging.getLogger("ray.data")
        self.level = self.logger.level
        self.logger.setLevel(max(self.level, logging.WARNING))
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")

    def __exit__(self, *exc: object) -> None:
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = self.saved
        self.logger.setLevel(self.level)
        self.warnings.__exit__(None, None, None)


def _unwrap(exc: BaseException) -> BaseException:
    """The ragloom error a worker raised (a plugin missing there...), out of Ray's wrapping."""
    from ._requirements import MissingOnWorker

    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, RagloomError):
            return type(current)(str(current))
        pending += [current.__cause__, current.__context__, getattr(current, "cause", None)]
    text = str(exc)
    marker = "ragloom-ray: "
    if marker in text:
        line = next(line for line in text.splitlines() if marker in line)
        message = line[line.index(marker):]
        return MissingOnWorker(message) if "cannot build the pipeline" in message else (
            RayRunError(message)
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return RayRunError(
        f"ragloom-ray: the run on Ray failed and nothing was written: {type(exc).__name__}: "
        f"{first} (a batch failed on every attempt, e.g. its worker process died each time; "
        "see the Ray logs)"
    )


class _Sink:
    """Takes the workers' rows in file order and writes them as a local run does."""

    def __init__(
        self,
        report: Any,
        writer: Any,
        store: Any,
        on_progress: Callable[[Any], None] | None,
        total: int,
    ) -> None:
        self.report = report
        self.writer = writer
        self.store = store
        self.on_progress = on_progress
        self.total = total
        self.files_done = 0
        self.bytes_done = 0
        self.by_doc: dict[str, list[Any]] = {}
        self.batch: list[Any] = []
        self.batch_chunks = 0

    def take(self, table: Any) -> None:
        from ragloom.ingest import IngestProgress, Problem

        report = self.report
        columns = table.to_pydict()
        for kind, text, blob in zip(
            columns["kind"], columns["text"], columns["blob"], strict=True
        ):
            if kind == "chunk":
                if self.writer is not None:
                    self.writer.write_line(text)
                report.chunks += 1
                if self.store is not None:
                    item = pickle.loads(blob)
                    doc_id = getattr(item, "parent_id", None) or getattr(item, "id", None)
                    if doc_id is not None:
                        self.by_doc.setdefault(doc_id, []).append(item)
            elif kind in ("problem", "skipped"):
                problem = Problem(**json.loads(text))
                (report.failures if kind == "problem" else report.skipped).append(problem)
            elif kind == "document":
                info = json.loads(text)
                chunks = self.by_doc.pop(info["id"], [])
                if self.store is not None and not info["failed"]:
                    from ragloom.stores import IndexedDocument

                    fingerprint = info["fingerprint"] or ""
                    self.batch.append(IndexedDocument(info["id"], fingerprint, chunks))
                    self.batch_chunks += len(chunks)
                    if self.batch_chunks >= STORE_BATCH_CHUNKS:
                        self.flush()
            elif kind == "file":
                info = json.loads(text)
                report.bytes_read += info["bytes_read"]
                report.documents += info["documents"]
                report.unchanged += info["unchanged"]
                self.files_done += 1
                self.bytes_done += info["size"]
                if self.on_progress is not None:
                    self.on_progress(IngestProgress(self.files_done, self.total, self.bytes_done))
            elif kind == "stats":
                info = json.loads(text)
                report.cache_hits += info["cache_hits"]
                report.cache_misses += info["cache_misses"]
                for line in info["warnings"]:
                    if line not in report.warnings:
                        report.warnings.append(line)

    def flush(self) -> None:
        if self.store is None or not self.batch:
            return
        batch, self.batch, self.batch_chunks = self.batch, [], 0
        self.store.write(batch)
        self.report.indexed += len(batch)

    def finish(self) -> None:
        self.flush()


def _open_store(path: str, registry: Any) -> Any:
    from ragloom.errors import PluginNotFoundError
    from ragloom.plugins import install_hint

    try:
        return registry.create("store", "lancedb", {"path": path})
    except PluginNotFoundError:
        raise ConfigurationError(
            f"an index needs ragloom-lancedb: {install_hint('ragloom-lancedb')}"
        ) from None


def _location(store: Any) -> str:
    try:
        return str(store.info().location)
    except Exception:  # noqa: BLE001 - only a label
        return type(store).__name__

