"""The seam between an ingest run and what runs its pipeline (an engine): the engine maps the
pipeline over batches of documents, nothing else, the way an HTTP client's transport only
sends requests. Everything around it (paths, checks, fingerprints, outputs, the index, the
report) is the run's (:mod:`._run`), the same for every engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ..errors import ConfigurationError
from ..events import ItemFailed

if TYPE_CHECKING:
    from ..models import Document
    from ..pipeline import Pipeline
    from ..stores import PartWriter, StorePart
    from ._walk import InputFile, WalkResult

__all__ = [
    "BaseEngine",
    "BatchEvent",
    "BatchMapper",
    "BatchStats",
    "IndexPart",
    "Indexed",
    "LocalEngine",
    "Output",
    "PipelineWork",
    "UriReader",
]


@dataclass(frozen=True)
class PipelineWork:
    """What an engine maps over batches: the pipeline an ingestion runs, built (its cache and
    the embedding step an index needs included)."""

    pipeline: Pipeline[Any]
    #: Whether components named by import path may be built again elsewhere.
    allow_imports: bool = False
    #: Writes outputs bound for the run's index where the pipeline runs (the index's
    #: :class:`~ragloom.stores.PartWriter`), given to an engine whose
    #: :attr:`~BaseEngine.index_writes` says it uses one: then for each document it wrote it
    #: yields one :class:`Indexed` in place of its outputs, and an :class:`IndexPart` per part
    #: written, which the run commits as they come (a run that fails returns the index to
    #: where it stood). ``None``: the run writes the index itself.
    index_writer: PartWriter | None = None

    def spec(self) -> dict[str, Any]:
        """The pipeline as a declarative spec, for an engine that builds it in other processes.

        Raises:
            ConfigurationError: a component that cannot be written to a spec (named).
        """
        from ..config import dump_pipeline

        return dump_pipeline(self.pipeline)


@dataclass(frozen=True)
class Output:
    """One output of the pipeline (a chunk, or whatever its last step yields)."""

    item: Any


@dataclass
class BatchStats:
    """What one batch's run tells beside its outputs: cache counts, warnings (each once), and
    per chunker the non-empty documents it returned no chunk for."""

    cache_hits: int = 0
    cache_misses: int = 0
    warnings: list[str] = field(default_factory=list)
    no_chunks: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Indexed:
    """The outputs of one document, written to the index where the pipeline ran (with
    :attr:`PipelineWork.index_writer`) instead of being handed back: ``count`` of them."""

    document_id: str
    count: int


@dataclass(frozen=True)
class IndexPart:
    """A part of the index written where the pipeline ran, not yet visible: the run commits it
    (:meth:`~ragloom.stores.Store.commit_parts`, in batches of parts), or discards it when the
    run fails (:meth:`~ragloom.stores.Store.discard_parts`)."""

    part: StorePart


#: What :meth:`BatchMapper.map_batches` yields.
BatchEvent = Output | ItemFailed | BatchStats | Indexed | IndexPart


@runtime_checkable
class BatchMapper(Protocol):
    """Maps a pipeline over batches of documents: the whole of an engine's part in a run."""

    def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        """Run ``work``'s pipeline over each batch; yield, batch after batch:

        - an :class:`Output` per output, in input order (every output of a document before
          any output of a later one);
        - an :class:`~ragloom.events.ItemFailed` per item that failed, no later than the
          outputs that follow it (its ``exception`` may be dropped: only its fields are read);
        - one :class:`BatchStats` at the end of each batch;
        - with ``work.index_writer``, in place of the outputs of each document written with it
          (all of them: a document with a failed item is handed back as outputs), one
          :class:`Indexed` where its first output would be, and an :class:`IndexPart` per
          part written, before that batch's :class:`BatchStats`.

        Batches are read lazily (a batch's documents are loaded as they are read); an engine
        may regroup them into batches of its own size.
        """
        ...


class UriReader(Protocol):
    """How an engine walks and reads inputs given as URIs (``s3://bucket/docs``)."""

    def walk(self, uris: Sequence[str], *, collection: str | None = None) -> WalkResult:
        """The files under ``uris``, as :func:`~ragloom.ingest.walk_inputs` gives local ones."""
        ...

    def read(self, path: str, **kwargs: Any) -> Any:
        """Read one file (the signature of
        :func:`~ragloom.loaders_builtin.read_source_file`)."""
        ...


class BaseEngine:
    """What every engine has, with the defaults of an engine that runs here: no options, no
    session to start, no advice, local paths only, the index written by the run; a subclass
    maps batches."""

    #: Whether the engine writes the outputs bound for the index where it runs the pipeline,
    #: given :attr:`PipelineWork.index_writer` (an engine whose workers run elsewhere: the
    #: run then only commits what they wrote). ``False``: the run writes the index from the
    #: outputs it is handed, as it does for the local engine.
    index_writes: ClassVar[bool] = False

    def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        """See :meth:`BatchMapper.map_batches`."""
        raise NotImplementedError

    def configured(self, options: Mapping[str, str]) -> BaseEngine:
        """This engine with ``--engine-option`` settings applied (checked here, before any
        file is read).

        Raises:
            ConfigurationError: an unknown option or a bad value (named).
        """
        if options:
            raise ConfigurationError(
                f"the {type(self).__name__} engine takes no options, got "
                f"{', '.join(sorted(options))}"
            )
        return self

    def session(self) -> AbstractContextManager[BatchMapper]:
        """Held while a run with files maps its batches (an engine starts and stops its
        workers or its cluster connection here); yields the mapper."""
        return nullcontext(self)

    def advice(self, files: Sequence[InputFile]) -> str | None:
        """A warning for the report when a job of these files would clearly run faster on the
        local engine (``None``: none)."""
        return None

    def uri_reader(self) -> UriReader | None:
        """How this engine walks and reads inputs given as URIs (``None``: local paths
        only)."""
        return None


class LocalEngine(BaseEngine):
    """Runs the pipeline in this process, one pipeline run per batch (the default engine)."""

    async def map_batches(
        self, work: PipelineWork, batches: Iterator[Iterator[Document]]
    ) -> AsyncIterator[BatchEvent]:
        import anyio

        from ..events import CacheSkipped, StepFinished

        pipeline = work.pipeline
        checkpoint = anyio.lowlevel.checkpoint
        for batch in batches:
            stats = BatchStats()
            failed: list[ItemFailed] = []

            def observe(event: object, stats: BatchStats = stats,
                        failed: list[ItemFailed] = failed) -> None:
                if isinstance(event, ItemFailed):
                    failed.append(event)
                elif isinstance(event, StepFinished):
                    stats.cache_hits += event.cache_hits
                    stats.cache_misses += event.cache_misses
                elif isinstance(event, CacheSkipped):
                    line = f"{event.step}: {event.reason}"
                    if line not in stats.warnings:
                        stats.warnings.append(line)

            context = pipeline.context(batch)
            context.subscribe(observe)
            stream = pipeline.stream(context=context)
            try:
                # Nothing here awaits but the stream: a cancellation (Ctrl-C, SIGTERM) lands
                # inside the pipeline's own chain of steps (the source gives the event loop a
                # turn at least every 50 ms), never while a step is suspended handing out a
                # window, so every step unwinds in this task.
                async for out in stream:
                    while failed:
                        yield failed.pop(0)
                    yield Output(out)
            finally:
                # Shielded: an interrupted run closes every step's generator here, in this
                # task, so none is left for the event loop to finalize in another one.
                with anyio.CancelScope(shield=True):
                    await stream.aclose()  # type: ignore[attr-defined]
            while failed:
                yield failed.pop(0)
            for line in context.observer_errors:
                if line not in stats.warnings:
                    stats.warnings.append(line)
            for name, counted in context.stats.items():
                if counted.no_chunks:
                    stats.no_chunks.setdefault(name, []).extend(counted.no_chunks)
            yield stats
            await checkpoint()
