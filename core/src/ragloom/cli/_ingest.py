"""``ragloom ingest``: files and folders -> documents -> a pipeline -> chunks in a JSONL file.

Memory stays flat whatever the corpus size: files are read one at a time by the generator that
feeds the pipeline, chunks are written as they come out, and the pipeline is run over
segments of at most :data:`SEGMENT_CHARS` characters of input, so no engine window or cache
window ever holds more than one segment of documents.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ._app import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from ._files import FileFailure, SourceFile, read_source, walk_inputs
from ._jsonl import AtomicJsonlWriter, chunk_record
from ._progress import Progress, format_bytes

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from ..config import PipelineSpec, StepSpec
    from ..models import Document
    from ..pipeline import Pipeline

__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_OUT",
    "IngestSettings",
    "ingest",
    "ingest_options",
    "run_ingest",
]

DEFAULT_OUT = "ragloom-chunks.jsonl"
DEFAULT_CACHE = os.path.join(".ragloom", "cache.sqlite")
DEFAULT_MAX_FILE_SIZE = 50 * 1000 * 1000
#: Characters of input per pipeline run segment (bounds every in-flight window).
SEGMENT_CHARS = 16 * 1000 * 1000
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


class ByteSize(click.ParamType):  # type: ignore[type-arg]  # generic in click >= 8.2
    """A size such as ``50MB``, ``200k`` or ``1048576``."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().replace(" ", "")
        number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(number) :]
        try:
            size = int(float(number) * _SIZE_UNITS[unit])
        except (KeyError, ValueError):
            self.fail(f"{value!r} is not a size (e.g. 50MB, 200k, 1048576)", param, ctx)
        if size < 1:
            self.fail(f"{value!r} must be at least 1 byte", param, ctx)
        return size


@dataclass
class IngestSettings:
    """Everything ``ragloom ingest`` (and ``ragloom run`` on an ingestion spec) needs."""

    paths: list[str]
    config: str | None = None
    out: str = DEFAULT_OUT
    cache: str | None = None
    no_cache: bool = False
    quiet: bool = False
    chunk_size: int | None = None
    allow_imports: bool = False
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    failures: str | None = None


@dataclass
class _Tally:
    """What the run did: counts, failures (kept small: strings only), cache hits."""

    total: int = 0
    documents: int = 0
    chunks: int = 0
    bytes_read: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


class _Tracker:
    """Which documents are done, from the order outputs and failures come back in.

    Outputs follow input order, so when an output of document ``d`` arrives every document
    fed before ``d`` is finished. Documents are recognised by ``metadata["source"]``, which
    chunks inherit.
    """

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.pending: deque[tuple[str, int]] = deque()
        self.counts: Counter[str] = Counter()

    def fed(self, source: str, size: int) -> None:
        self.pending.append((source, size))
        self.counts[source] += 1

    def read_failed(self) -> None:
        self.progress.advance(1)

    def _finish_before(self, source: str, *, inclusive: bool) -> None:
        if not self.counts.get(source):
            return
        done = nbytes = 0
        while self.pending:
            head, size = self.pending[0]
            if head == source and not inclusive:
                break
            self.pending.popleft()
            self.counts[head] -= 1
            if not self.counts[head]:
                del self.counts[head]
            done += 1
            nbytes += size
            if head == source:
                break
        self.progress.advance(done, nbytes)

    def output(self, item: Any) -> None:
        source = _source_of(item)
        if source is not None:
            self._finish_before(source, inclusive=False)

    def failed(self, item: Any) -> None:
        source = _source_of(item)
        if source is not None:
            self._finish_before(source, inclusive=True)

    def finish(self) -> None:
        done = len(self.pending)
        nbytes = sum(size for _s, size in self.pending)
        self.pending.clear()
        self.counts.clear()
        self.progress.advance(done, nbytes)


def _source_of(item: Any) -> str | None:
    metadata = getattr(item, "metadata", None)
    if isinstance(metadata, dict):
        source = metadata.get("source")
        if isinstance(source, str):
            return source
    return None


def _documents(
    files: list[SourceFile], settings: IngestSettings, tally: _Tally, tracker: _Tracker
) -> Iterator[Document]:
    """Read files one at a time; unusable ones become failures, never silent drops."""
    from ..models import Document

    for file in files:
        loaded = read_source(file.path, settings.max_file_size)
        if isinstance(loaded, tuple):
            kind, reason = loaded
            tally.failures.append(FileFailure(file.path, file.doc_id, reason, kind).to_dict())
            tracker.read_failed()
            continue
        metadata: dict[str, Any] = {
            "source": file.path,
            "size": loaded.size,
            "format": loaded.content_format,
        }
        if loaded.language:
            metadata["language"] = loaded.language
        tally.documents += 1
        tally.bytes_read += loaded.size
        tracker.fed(file.path, loaded.size)
        yield Document(
            id=file.doc_id,
            content=loaded.text,
            content_format=loaded.content_format,
            metadata=metadata,
        )


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


async def _drive(
    pipeline: Pipeline[Any],
    documents: Iterator[Document],
    writer: AtomicJsonlWriter,
    tally: _Tally,
    tracker: _Tracker,
) -> None:
    import anyio

    from ..events import ItemFailed, StepFinished

    def observe(event: object) -> None:
        if isinstance(event, ItemFailed):
            item = event.item
            tally.failures.append(
                {
                    "item": event.item_id,
                    "source": _source_of(item) or event.item_id,
                    "stage": event.step,
                    "kind": event.error_type,
                    "reason": event.reason,
                }
            )
            tracker.failed(item)
        elif isinstance(event, StepFinished):
            tally.cache_hits += event.cache_hits
            tally.cache_misses += event.cache_misses

    pipeline.subscribe(observe)
    checkpoint = anyio.lowlevel.checkpoint
    write = writer.write
    for segment in _segments(documents, SEGMENT_CHARS):
        stream = pipeline.stream(segment)
        try:
            n = 0
            async for out in stream:
                write(chunk_record(out))
                tracker.output(out)
                n += 1
                if n % 256 == 0:
                    await checkpoint()  # lets Ctrl-C (a cancellation) in
        finally:
            await cast("AsyncGenerator[Any, None]", stream).aclose()
        tally.chunks = writer.count
        await checkpoint()
    tally.chunks = writer.count


def _absolute(cache: Any, base: Path) -> Any:
    path = getattr(cache, "path", None)
    if path is None or Path(os.path.expanduser(path)).is_absolute():
        return cache
    return cache.model_copy(update={"path": str(base / path)})


def _with_cli_cache(spec: PipelineSpec, base: Path, settings: IngestSettings) -> PipelineSpec:
    """The spec with --cache/--no-cache applied before anything is built.

    Building a spec opens its cache files, so an overridden cache must leave the spec first
    (else its file would be created anyway). Relative cache paths are made absolute from the
    pipeline file's folder, as ``build_pipeline`` does for a path.
    """

    def step(node: StepSpec) -> StepSpec:
        update: dict[str, Any] = {}
        if node.cache is not None and node.cache is not False:
            update["cache"] = None if settings.no_cache else _absolute(node.cache, base)
        if node.routes:
            update["routes"] = [
                route.model_copy(update={"step": step(route.step)}) for route in node.routes
            ]
        if node.default is not None:
            update["default"] = step(node.default)
        return node.model_copy(update=update) if update else node

    if settings.no_cache:
        cache: Any = False
    elif settings.cache is not None or spec.cache is None or spec.cache is False:
        cache = None if settings.cache is not None else spec.cache
    else:
        cache = _absolute(spec.cache, base)
    steps = [step(node) for node in spec.steps or []]
    return spec.model_copy(update={"cache": cache, "steps": steps})


def _build(settings: IngestSettings) -> Pipeline[Any]:
    """The configured ingestion pipeline, or the default chunker router."""
    from ..errors import ConfigurationError, PluginNotFoundError

    if settings.config is not None:
        from ..config import build_pipeline, load_spec

        spec = load_spec(settings.config)
        if spec.query is not None:
            raise ConfigurationError(
                f"{settings.config} is a query pipeline (it has a 'query' block); use "
                "`ragloom plan --config` or `ragloom run` with questions"
            )
        spec = _with_cli_cache(spec, Path(settings.config).parent, settings)
        return build_pipeline(
            spec, source=settings.config, allow_imports=settings.allow_imports
        )
    from ..pipeline import Pipeline
    from ..plugins import Registry

    registry = Registry()
    params = {"chunk_size": settings.chunk_size} if settings.chunk_size is not None else {}
    try:
        chunker = registry.create("chunker", "auto", params)
    except PluginNotFoundError as exc:
        raise ConfigurationError(
            f"no default chunker: {exc}. Install ragloom-text (pip install ragloom-text) or "
            "pass a pipeline file with --config"
        ) from None
    if "docling" in registry.names("chunker"):
        # Serialized Docling documents deserve the Docling chunker, not a text splitter.
        from ..chunking import ChunkerRouter
        from ..filters import ContentFormatFilter

        docling = registry.create("chunker", "docling", {})
        chunker = (
            ChunkerRouter(name="DefaultChunkers")
            .route(ContentFormatFilter(include_formats=["docling"]), docling)
            .default(chunker)
        )
    return Pipeline(chunker, name="ingest")


def _cache_paths(path: str) -> list[str]:
    return [path, path + "-wal", path + "-shm", path + "-journal"]


def _configure_cache(pipeline: Pipeline[Any], settings: IngestSettings) -> str:
    """Apply --cache / --no-cache / the default; return a description for the summary."""
    from ..cache import SQLiteCacheStore

    if settings.no_cache:
        pipeline.cache = False
        return "off"
    if settings.cache is not None:
        pipeline.cache = SQLiteCacheStore(settings.cache)
        return settings.cache
    if pipeline.cache is False:
        return "off (pipeline file)"
    if pipeline.cache is not None:
        return str(getattr(pipeline.cache, "path", type(pipeline.cache).__name__))
    pipeline.cache = SQLiteCacheStore(DEFAULT_CACHE)
    return DEFAULT_CACHE


def _close_caches(pipeline: Pipeline[Any]) -> None:
    stores = [pipeline.cache, *(step.cache for step in pipeline.walk())]
    seen: set[int] = set()
    for store in stores:
        if store is None or store is False or id(store) in seen:
            continue
        seen.add(id(store))
        close = getattr(store, "close", None)
        if close is not None:
            close()


def _summary(tally: _Tally, settings: IngestSettings, cache: str, seconds: float) -> str:
    failed = len(tally.failures)
    lines = [
        f"ragloom ingest: {tally.total} documents, {tally.chunks} chunks -> {settings.out}",
        f"  documents: {max(0, tally.total - failed)} ok, {failed} failed items",
        f"  input: {format_bytes(tally.bytes_read)} in {seconds:.2f} s "
        f"({tally.bytes_read / 1e6 / seconds if seconds > 0 else 0:.2f} MB/s, "
        f"{tally.total / seconds if seconds > 0 else 0:.1f} docs/s)",
        f"  cache: {tally.cache_hits} hits, {tally.cache_misses} misses ({cache})",
    ]
    if failed:
        lines.append(f"  failed items ({failed}):")
        shown = tally.failures[:20]
        for failure in shown:
            lines.append(f"    {failure['source']}: {failure['reason']}")
        if failed > len(shown):
            more = (
                f" (all listed in {settings.failures})"
                if settings.failures
                else (" (use --failures FILE to list them all)")
            )
            lines.append(f"    ... and {failed - len(shown)} more{more}")
    return "\n".join(lines)


def run_ingest(settings: IngestSettings) -> int:
    """Run an ingestion; return the exit status."""
    if settings.chunk_size is not None and settings.config is not None:
        raise click.UsageError(
            "--chunk-size applies to the default chunkers; with --config "
            "set chunk sizes in the pipeline file"
        )
    if settings.chunk_size is not None and settings.chunk_size < 1:
        raise click.BadParameter("must be at least 1", param_hint="--chunk-size")
    import anyio

    started = time.perf_counter()
    pipeline = _build(settings)
    try:
        cache = _configure_cache(pipeline, settings)
        exclude = [settings.out]
        if settings.failures:
            exclude.append(settings.failures)
        store_path = getattr(pipeline.cache, "path", None)
        if store_path is not None:
            exclude += _cache_paths(str(store_path))
        walked = walk_inputs(settings.paths, exclude=exclude)
        tally = _Tally(total=len(walked.files))
        tally.failures.extend(f.to_dict() for f in walked.failures)
        progress = Progress(
            len(walked.files), stream=sys.stderr, mode="off" if settings.quiet else None
        )
        tracker = _Tracker(progress)
        if not walked.files and not settings.quiet:
            click.echo(f"ragloom: no files found in {', '.join(settings.paths)}", err=True)
        with AtomicJsonlWriter(settings.out) as writer:
            documents = _documents(walked.files, settings, tally, tracker)
            try:
                anyio.run(_drive, pipeline, documents, writer, tally, tracker)
            except KeyboardInterrupt:
                progress.close()
                click.echo(
                    f"\nragloom: interrupted; {settings.out} was not written (the cache keeps "
                    "every item finished so far)",
                    err=True,
                )
                return EXIT_INTERRUPTED
            tracker.finish()
            progress.close()
            if settings.failures:
                with AtomicJsonlWriter(settings.failures) as failure_file:
                    for failure in tally.failures:
                        failure_file.write(failure)
                    failure_file.commit()
            writer.commit()
    finally:
        _close_caches(pipeline)
    tally.total += len(walked.failures)
    if not settings.quiet:
        click.echo(_summary(tally, settings, cache, time.perf_counter() - started))
    return EXIT_FAILED if tally.failures else EXIT_OK


def ingest_options(func: Any) -> Any:
    """Options shared by ``ingest`` and ``run`` on an ingestion spec."""
    options = [
        click.option(
            "--out",
            "-o",
            default=DEFAULT_OUT,
            show_default=True,
            type=click.Path(dir_okay=False),
            help="JSONL file of chunks (written atomically).",
        ),
        click.option(
            "--cache",
            "cache",
            default=None,
            type=click.Path(dir_okay=False),
            help=f"SQLite cache file [default: the pipeline file's, else {DEFAULT_CACHE}].",
        ),
        click.option("--no-cache", is_flag=True, help="Do not read or write any cache."),
        click.option(
            "--failures",
            default=None,
            type=click.Path(dir_okay=False),
            help="Also write failed items (file + reason) to this JSONL file.",
        ),
        click.option(
            "--max-file-size",
            default=str(DEFAULT_MAX_FILE_SIZE),
            type=ByteSize(),
            show_default=True,
            help="Larger files fail as oversized (e.g. 50MB).",
        ),
        click.option(
            "--allow-imports",
            is_flag=True,
            help="Let the pipeline file name 'module:attr' import paths.",
        ),
        click.option("--quiet", "-q", is_flag=True, help="No progress and no summary."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--config",
    "-c",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Pipeline file (TOML, YAML or JSON) with ingestion 'steps'.",
)
@click.option(
    "--chunk-size",
    type=int,
    default=None,
    help="Chunk size of the default chunkers (without --config).",
)
@ingest_options
def ingest(
    paths: tuple[str, ...],
    config: str | None,
    chunk_size: int | None,
    out: str,
    cache: str | None,
    no_cache: bool,
    failures: str | None,
    max_file_size: int,
    allow_imports: bool,
    quiet: bool,
) -> int:
    """Chunk the files under PATH... into a JSONL file, one chunk per line.

    Folders are walked in sorted order (hidden entries skipped). Each file's format comes
    from its extension: Markdown, reStructuredText, HTML, plain text, source code, JSON (a
    Docling JSON document becomes "docling"). Without --config the default chunkers of
    ragloom-text are used (Markdown, code and recursive text; Docling documents go to
    ragloom-docling's chunker when it is installed).

    Unreadable, binary, non-UTF-8, empty and oversized files fail one by one with a reason;
    the run goes on. Exit status: 0 all items done, 1 some failed, 2 usage or configuration
    error, 130 interrupted (no output file is left half-written).
    """
    if cache is not None and no_cache:
        raise click.UsageError("--cache and --no-cache exclude each other")
    settings = IngestSettings(
        paths=list(paths),
        config=config,
        out=out,
        cache=cache,
        no_cache=no_cache,
        quiet=quiet,
        chunk_size=chunk_size,
        allow_imports=allow_imports,
        max_file_size=max_file_size,
        failures=failures,
    )
    return run_ingest(settings)
