"""``ragloom ingest``: arguments, progress and the summary over :class:`ragloom.ingest.Ingestor`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._display import format_bytes
from .._printable import printable
from ._app import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error, interrupted

if TYPE_CHECKING:
    from ..config import PipelineSpec, StepSpec
    from ..engines import Engine
    from ..ingest import IngestReport
    from ..pipeline import Pipeline

__all__ = [
    "DEFAULT_CACHE",
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_OUT",
    "ByteSize",
    "IngestSettings",
    "ingest",
    "ingest_options",
    "run_ingest",
]

DEFAULT_OUT = "ragloom-chunks.jsonl"
DEFAULT_CACHE = os.path.join(".ragloom", "cache.sqlite")
DEFAULT_MAX_FILE_SIZE = 50 * 1000 * 1000
#: The largest --max-file-size accepted (a file is read into memory whole).
MAX_FILE_SIZE_LIMIT = 4 * 1000**3


class ByteSize(click.ParamType):  # type: ignore[type-arg]  # generic in click >= 8.2
    """A size such as ``50MB``, ``200k``, ``1.5GiB`` or ``1048576`` (pydantic's ``ByteSize``)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            size = value
        else:
            from pydantic import ByteSize as Parsed
            from pydantic import TypeAdapter, ValidationError

            text = str(value).strip()
            if text[-1:].lower() == "k":  # pydantic spells kilobytes "kb"
                text += "b"
            try:
                size = int(TypeAdapter(Parsed).validate_python(text))
            except (ValidationError, OverflowError, ValueError):
                self.fail(f"{value!r} is not a size (e.g. 50MB, 200k, 1048576)", param, ctx)
        if size < 1:
            self.fail(f"{value!r} must be at least 1 byte", param, ctx)
        if size > MAX_FILE_SIZE_LIMIT:
            self.fail(
                f"{value!r} is more than {format_bytes(MAX_FILE_SIZE_LIMIT)}: files are read "
                "into memory whole, choose a smaller limit",
                param,
                ctx,
            )
        return size


@dataclass
class IngestSettings:
    """Everything ``ragloom ingest`` (and ``ragloom run`` on an ingestion spec) needs."""

    paths: list[str]
    config: str | None = None
    out: str | None = None
    cache: str | None = None
    no_cache: bool = False
    quiet: bool = False
    chunk_size: int | None = None
    length: str | None = None
    allow_imports: bool = False
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    failures: str | None = None
    as_json: bool = False
    index: str | None = None
    sync: bool = False
    embedder: str | None = None
    engine: str | None = None
    engine_options: dict[str, str] | None = None
    collection: str | None = None
    wait: float | None = None
    #: The command the summary names (``ragloom run`` on an ingestion spec says ``run``).
    command: str = "ingest"


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


def _build(settings: IngestSettings) -> Pipeline[Any] | None:
    """The pipeline of ``--config`` (``None``: the default pipeline)."""
    from ..errors import ConfigurationError

    if settings.config is None:
        return None
    from ..config import build_pipeline, load_spec

    spec = load_spec(settings.config)
    if spec.query is not None:
        raise ConfigurationError(
            f"{settings.config} is a query pipeline (it has a 'query' block); use "
            "`ragloom plan --config` or `ragloom run` with questions"
        )
    spec = _with_cli_cache(spec, Path(settings.config).parent, settings)
    return build_pipeline(spec, source=settings.config, allow_imports=settings.allow_imports)


def _shown(settings: IngestSettings) -> Any:
    """Progress on stderr (none with --quiet or --json), driven by the ingestor's callbacks."""
    from ..ingest import ShownProgress

    return ShownProgress(quiet=settings.quiet or settings.as_json)


def _summary(report: IngestReport, command: str = "ingest") -> str:
    seconds = report.seconds
    # report.files counts the files found; a walk problem (a folder that cannot be listed, a
    # duplicate id) is not one of them, so only the files that could not be read are taken off.
    unread = len({f.source for f in report.failures if f.stage == "read"})
    done = report.files - unread
    lines = [
        f"ragloom {command}: {report.files} files, {report.documents} documents, "
        f"{report.chunks} chunks -> {report.out or report.index}",
        f"  files: {max(0, done - len(report.skipped))} read, {len(report.skipped)} skipped, "
        f"{len(report.failures)} failed items",
        f"  input: {format_bytes(report.bytes_read)} in {seconds:.2f} s "
        f"({report.bytes_read / 1e6 / seconds if seconds > 0 else 0:.2f} MB/s, "
        f"{report.documents / seconds if seconds > 0 else 0:.1f} docs/s)",
        f"  cache: {report.cache_hits} hits, {report.cache_misses} misses ({report.cache})",
    ]
    if report.index is not None:
        lines.append(
            f"  index: {report.indexed} documents written, {report.unchanged} unchanged, "
            f"{report.deleted} removed ({report.index})"
        )
    if report.routes is not None:
        lines.append(f"  {_routes_line(report.routes)}")
    lines += [f"  warning: {line}" for line in report.warnings]
    if report.optimize is not None and report.index is not None:
        lines.append(
            f"  next: ragloom index optimize --index {report.index}  ({report.optimize})"
        )
    for title, problems in (("skipped", report.skipped), ("failed items", report.failures)):
        if not problems:
            continue
        lines.append(f"  {title} ({len(problems)}):")
        for problem in problems[:20]:
            lines.append(f"    {problem.source}: {problem.reason}")
        if len(problems) > 20:
            lines.append(
                f"    ... and {len(problems) - 20} more (use --failures FILE or --json to list "
                "them all)"
            )
    # One printed line per line built: a name holding a newline cannot forge a line.
    return "\n".join(printable(line) for line in lines)


def _routes_line(routes: dict[str, Any]) -> str:
    """The collections of the index and what routes them."""
    named = [c for c in routes["collections"] if c["name"] is not None]
    listed = ", ".join(f"{c['name']} ({c['documents']})" for c in named) or "none"
    line = f"collections: {listed}; "
    if routes["routing"] != "fitted":
        return line + str(routes["routing"])
    how = "fitted now" if routes.get("fitted") else "up to date"
    # a search routes each ask by what its search of the whole index finds first; the fitted
    # router's own figures (``fit`` in --json) describe the fallback without a search
    return line + f"routes {how}; each ask searches where its search of the whole index points"


def run_ingest(settings: IngestSettings) -> int:
    """Run an ingestion; return the exit status."""
    if settings.chunk_size is not None and settings.config is not None:
        raise click.UsageError(
            "--chunk-size applies to the default chunkers; with --config "
            "set chunk sizes in the pipeline file"
        )
    if settings.length is not None and settings.config is not None:
        raise click.UsageError(
            "--length applies to the default chunkers; with --config set length_function in "
            "the pipeline file"
        )
    if settings.chunk_size is not None and settings.chunk_size < 1:
        raise click.BadParameter("must be at least 1", param_hint="--chunk-size")
    from ..ingest import Ingestor

    if settings.no_cache:
        cache: Any = False
    elif settings.cache is not None:
        cache = settings.cache
    elif settings.config is not None:
        cache = None  # the pipeline file's own (or none)
    else:
        cache = DEFAULT_CACHE
    if settings.sync and settings.index is None:
        raise click.UsageError("--sync needs --index: it removes gone files from an index")
    if settings.embedder is not None and settings.index is None:
        raise click.UsageError("--embedder applies with --index (vectors go to the index)")
    if settings.collection is not None and not settings.collection.strip():
        raise click.BadParameter("must be a name, not blank", param_hint="--collection")
    out = settings.out if settings.out is not None else (
        DEFAULT_OUT if settings.index is None else None
    )
    engine = _engine(settings)
    pipeline = _build(settings)
    store = None
    shown = _shown(settings)
    try:
        if settings.index is not None:
            from ._index import open_index, take_writer_lock

            store = open_index(settings.index, wait=settings.wait)
            take_writer_lock(store, settings.index)
        with Ingestor(
            pipeline,
            chunk_size=settings.chunk_size,
            length_function=settings.length,
            cache=cache,
            max_file_size=settings.max_file_size,
            store=store,
            embedder=settings.embedder,
            sync=settings.sync,
            collection=settings.collection,
            engine=engine,
        ) as ingestor:
            ingestor.output_names = ("--out", "--failures")
            try:
                report = ingestor.run(
                    settings.paths, out=out, failures=settings.failures, on_progress=shown
                )
            finally:
                shown.close()
    except KeyboardInterrupt as exc:
        kept = f"{out} was not written" if out else "the index keeps every document written"
        return interrupted(exc, f"{kept} (the cache keeps every item finished so far)")
    finally:
        if pipeline is not None:
            pipeline.close()
        if store is not None:
            store.close()
    return _finish(report, settings, out)


def _engine(settings: IngestSettings) -> Engine | None:
    """The registered engine ``--engine`` names, with its ``--engine-option`` settings
    (``None``: this process)."""
    if settings.engine is None:
        return None
    from ..errors import ConfigurationError, PluginNotFoundError
    from ..plugins import Registry

    try:
        engine = Registry().create("engine", settings.engine)
    except PluginNotFoundError as exc:  # names the plugin to install when it is ragloom's own
        raise ConfigurationError(str(exc)) from None
    return engine.configured(dict(settings.engine_options or {}))  # type: ignore[no-any-return]


def _finish(report: IngestReport, settings: IngestSettings, out: str | None) -> int:
    if report.nothing_found:
        error(
            f"nothing to ingest: no files found in {', '.join(settings.paths)}; "
            + (f"{out} was not written" if out else "the index was not changed")
        )
        return EXIT_USAGE
    if settings.as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
    elif not settings.quiet:
        click.echo(_summary(report, settings.command))
    return EXIT_FAILED if report.failures else EXIT_OK


def _engine_options(values: tuple[str, ...]) -> dict[str, str]:
    options: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--engine-option")
        options[key.strip()] = text
    return options


def ingest_options(func: Any) -> Any:
    """Options shared by ``ingest`` and ``run`` on an ingestion spec."""
    options = [
        click.option(
            "--out",
            "-o",
            default=None,
            type=click.Path(dir_okay=False),
            help=f"JSONL file of chunks, written atomically [default: {DEFAULT_OUT}, or none "
            "with --index].",
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
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        click.option("--quiet", "-q", is_flag=True, help="No progress and no summary."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class InputPath(click.Path):
    """A local file or folder that must exist, or a URI (``s3://bucket/docs``) passed on as it
    is to an engine that reads such filesystems."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "://" in value:
            return value
        return super().convert(value, param, ctx)


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=InputPath(exists=True))
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
@click.option(
    "--length",
    default=None,
    help="What --chunk-size counts for the default chunkers: a registered length function "
    "(chars, words, tokens).",
)
@click.option(
    "--index",
    "index",
    default=None,
    type=click.Path(file_okay=False),
    help="Also write chunks (with vectors) to this index folder (ragloom-lancedb), e.g. "
    ".ragloom/index; documents unchanged since the last ingest are left as they are.",
)
@click.option(
    "--sync", is_flag=True,
    help="With --index: remove documents under the PATHs given whose files are gone.",
)
@click.option(
    "--collection",
    default=None,
    help="The collection of every file ingested [default: each top-level folder under a PATH "
    "is a collection; files directly under PATH belong to PATH's own folder name].",
)
@click.option(
    "--embedder",
    default=None,
    help="With --index: a registered embedder [default: the one the index records, else "
    "model2vec when installed].",
)
@click.option(
    "--wait",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0),
    help="With --index: seconds to wait for another process writing the index (then: busy).",
)
@click.option(
    "--engine",
    default=None,
    help="Run on a registered engine instead of this process (e.g. ray, from ragloom-ray).",
)
@click.option(
    "--engine-option",
    "engine_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A setting of the engine (repeatable), e.g. address=ray://host:10001, workers=4.",
)
@ingest_options
def ingest(
    paths: tuple[str, ...],
    config: str | None,
    chunk_size: int | None,
    length: str | None,
    index: str | None,
    sync: bool,
    collection: str | None,
    embedder: str | None,
    wait: float,
    engine: str | None,
    engine_options: tuple[str, ...],
    out: str | None,
    cache: str | None,
    no_cache: bool,
    failures: str | None,
    max_file_size: int,
    allow_imports: bool,
    as_json: bool,
    quiet: bool,
) -> int:
    """Chunk the files under PATH... into a JSONL file, one chunk per line.

    Folders are walked in sorted order (hidden entries skipped). Each file is read by the
    loader for its format: Markdown, reStructuredText, plain text, source code and JSON (a
    Docling JSON document becomes "docling") are built in; HTML, PDF and DOCX need
    ragloom-loaders. Without --config the default chunkers of ragloom-text are used (Markdown,
    code and recursive text; Docling documents go to ragloom-docling's chunker when it is
    installed).

    Unreadable, binary, non-UTF-8 and oversized files fail one by one with a reason; empty
    files are skipped; the run goes on. Exit status: 0 all files done, 1 some items failed,
    2 usage or configuration error (or no files found; with --index: the index is busy,
    read-only or damaged beyond what the run repairs, or a PATH is outside its root), 130
    interrupted, 143 terminated; no output file is ever left half-written.
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
        length=length,
        allow_imports=allow_imports,
        max_file_size=max_file_size,
        failures=failures,
        as_json=as_json,
        index=index,
        sync=sync,
        embedder=embedder,
        engine=engine,
        engine_options=_engine_options(engine_options),
        collection=collection,
        wait=wait,
    )
    return run_ingest(settings)
