"""``RayEngine``: ``ragloom ingest --engine ray`` maps the ingest's pipeline over Ray workers.

The ingest run is the core's (:class:`ragloom.ingest.Ingestor`, the same for every engine): it
checks the paths and outputs, walks and loads the files, fingerprints documents against the
index and writes every output. This engine does the one thing an engine does,
:meth:`~ragloom.engines.Engine.map_batches`: it sends batches of documents to a pool of Ray
actors (:class:`~ragloom_ray._worker.IngestWorker`, each building the pipeline once from its
declarative spec with its own plugins), a few batches ahead of the one the run is waiting for,
and hands back each batch's results in input order, as the local engine yields them.
"""

from __future__ import annotations

import json
import logging
import math
import os
import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragloom.engines import Engine
from ragloom.errors import ConfigurationError, ItemProcessingError, RagloomError

if TYPE_CHECKING:
    from ragloom.engines import BatchEvent, PipelineWork, UriReader
    from ragloom.ingest import InputFile, WalkResult
    from ragloom.models import Document

__all__ = ["RayEngine", "RayRunError", "RaySettings"]

#: Characters of documents per batch at the most (a batch also stops at ``batch_size``
#: documents): bounds what one task ships and holds.
BATCH_CHARS = 4 * 1000 * 1000


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
    - ``batch_size``: documents per batch (one task of a worker; default 32);
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
    """Maps an ingest's pipeline over Ray workers, with outputs identical to a local run.

    Args are the defaults of :class:`RaySettings`; ``--engine-option`` settings override them
    (:meth:`configured`).
    """

    step_id: ClassVar[str] = "ragloom-ray/engine"
    #: Workers write their batches' outputs into an index (when the run gives a part writer).
    index_writes: ClassVar[bool] = True

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
        settings = RaySettings.parse(options)
        self.settings = RaySettings(
            **{**settings.__dict__, "address": address, "runtime_env": runtime_env}
        )

    def config(self) -> Mapping[str, Any]:
        return dict(self.settings.__dict__)

    def configured(self, options: Mapping[str, str]) -> RayEngine:
        """This engine with ``--engine-option`` settings applied.

        Raises:
            ConfigurationError: an unknown option or a bad value (named).
        """
        settings = RaySettings.parse(options, self.settings)
        engine = RayEngine()
        engine.settings = settings
        return engine

    @contextmanager
    def session(self) -> Iterator[RayEngine]:
        """Ray joined (or started, and stopped after) while the run maps its batches."""
        started = _connect(self.settings)
        try:
            yield self
        finally:
            if started:
                import ray

                ray.shutdown()

    def uri_reader(self) -> UriReader:
        """Inputs given as URIs of a filesystem pyarrow reads (``s3://``, ``gs://``,
        ``file://``...)."""
        return _Uris()

    def advice(self, files: Sequence[InputFile]) -> str | None:
        try:
            import ray
        except ImportError:  # the engine needs Ray: reported when its session starts
            return None
        return _advice(files, self.settings, running=ray.is_initialized())

    async def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        """Send batches of at most ``batch_size`` documents to the actor pool, up to two per
        worker ahead of the batch whose results are being handed back; yield each batch's
        results in input order. With ``work.index_writer``, each worker writes its batches'
        outputs into the index itself and hands back what it wrote (see
        :func:`ragloom_ray._worker.written`).

        Raises:
            ConfigurationError: a cache file the cluster's nodes cannot share, a plugin
                missing on the workers (named).
            RayRunError: a batch failed on every attempt (its worker died each time).
        """
        import ray

        from ._cache import absolute_cache_paths, cache_files, check_cache_sharing
        from ._requirements import requirements
        from ._worker import IngestWorker, WorkerConfig

        settings = self.settings
        spec = absolute_cache_paths(work.spec())
        check_cache_sharing(cache_files(spec), ray.nodes())
        writer = reachable_writer(work.index_writer, ray.nodes())
        needed = requirements(spec, work.pipeline.registry, uses=(writer,))
        config = WorkerConfig(spec=spec, requirements=needed, index_writer=writer)
        size = settings.workers or max(
            1, int(ray.cluster_resources().get("CPU", 1) // settings.cpus_per_worker)
        )
        remote = ray.remote(IngestWorker).options(
            num_cpus=settings.cpus_per_worker,
            runtime_env=settings.runtime_env,
            # a worker process that dies is started again, and its batch runs again up to
            # task_retries times: a file that kills its worker every time ends the run
            max_restarts=-1,
            max_task_retries=settings.task_retries,
        )
        actors: list[Any] = []
        load: list[int] = []  # batches sent to each actor and not handed back yet
        waiting: deque[tuple[int, Any]] = deque()

        def send(batch: list[Document]) -> None:
            if len(actors) < size and all(load):  # every worker busy: start one more
                actors.append(remote.remote(config))
                load.append(0)
            pick = min(range(len(actors)), key=load.__getitem__)
            load[pick] += 1
            waiting.append((pick, actors[pick].process.remote(batch)))

        pending = _batches(batches, settings.batch_size)
        try:
            for batch in pending:
                send(batch)
                if len(waiting) < 2 * size:
                    continue
                async for event in _results(waiting, load):
                    yield event
            while waiting:
                async for event in _results(waiting, load):
                    yield event
        finally:
            for actor in actors:
                ray.kill(actor)


async def _results(waiting: deque[tuple[int, Any]], load: list[int]) -> AsyncIterator[Any]:
    """The results of the batch sent first (waited for in a thread: the event loop stays
    free for a cancellation)."""
    import anyio
    import ray
    from ragloom.engines import BatchStats, Indexed, IndexPart, Output
    from ragloom.events import ItemFailed

    pick, ref = waiting.popleft()
    try:
        events = await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
    except Exception as exc:
        raise _unwrap(exc) from exc
    load[pick] -= 1
    for event in events:  # outputs come bare (IngestWorker.process)
        yield event if isinstance(event, ItemFailed | BatchStats | Indexed | IndexPart) else (
            Output(event)
        )


def _batches(batches: Iterator[Iterator[Document]], size: int) -> Iterator[list[Document]]:
    """The documents regrouped in lists of at most ``size`` documents and about
    :data:`BATCH_CHARS` characters."""
    batch: list[Document] = []
    chars = 0
    for segment in batches:
        for document in segment:
            batch.append(document)
            chars += len(document.content)
            if len(batch) >= size or chars >= BATCH_CHARS:
                yield batch
                batch, chars = [], 0
    if batch:
        yield batch


def reachable_writer(writer: Any, nodes: Sequence[Mapping[str, Any]]) -> Any:
    """The index's part writer if every worker can write where it writes (``None``: the
    workers hand their outputs back and the driver writes the parts): a folder of the
    driver's machine is out of reach of the workers of a cluster of several live nodes
    (``ray.nodes()``); object storage is reachable from anywhere."""
    if writer is None or not getattr(writer, "machine_local", True):
        return writer
    return writer if sum(1 for n in nodes if n.get("Alive", True)) <= 1 else None


class _Uris:
    """Inputs as URIs: walked and read through pyarrow's filesystems."""

    def walk(self, uris: Sequence[str], *, collection: str | None = None) -> WalkResult:
        from ._fs import walk_uris

        return walk_uris(uris, collection=collection)

    def read(self, path: str, **kwargs: Any) -> Any:
        from ._fs import read_uri_file

        return read_uri_file(path, **kwargs)


#: Below this many bytes of input, a run on a Ray started for it is dominated by starting
#: Ray and its workers (measured on 2 cores: see _advice).
SMALL_JOB_BYTES = 64 * 1000 * 1000


def _advice(files: Sequence[InputFile], settings: RaySettings, *, running: bool) -> str | None:
    """A warning when the local engine would clearly be faster: a small job on a Ray this run
    starts itself (not ``running`` already, nor a cluster given by address or
    ``RAY_ADDRESS``)."""
    if running or settings.address or os.environ.get("RAY_ADDRESS"):
        return None
    total = 0
    for file in files:
        if "://" in file.path:
            return None
        try:
            total += os.stat(file.path).st_size
        except OSError:
            continue
        if total >= SMALL_JOB_BYTES:
            return None
    return (
        f"ray engine: {len(files)} file(s), {total / 1e6:.1f} MB: starting a local Ray and its "
        "workers costs more than this job: the local engine would run it faster"
    )


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


