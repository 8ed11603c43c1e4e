"""``ragloom run PIPELINE_FILE [INPUT...]``: run any declarative pipeline file.

An ingestion spec (``steps``) runs on the INPUT paths exactly like ``ragloom ingest --config``;
a query spec (a ``query`` block) plans the INPUT questions like ``ragloom plan --config``.
"""

from __future__ import annotations

import click

from ._ingest import DEFAULT_MAX_FILE_SIZE, ByteSize, IngestSettings, run_ingest
from ._plan import PlanSettings, run_plan

__all__ = ["run"]


def _deprecated_summary_json(value: bool) -> bool:
    """``--summary-json``, the old name of ``--json`` for an ingestion's summary: still accepted
    (hidden), with a warning on stderr."""
    if value:
        click.echo("ragloom: warning: --summary-json is deprecated: use --json", err=True)
    return value


@click.command("run")
@click.argument("pipeline_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("inputs", nargs=-1)
@click.option(
    "--out",
    "-o",
    default=None,
    type=click.Path(dir_okay=False),
    help="Ingestion: JSONL file of chunks [default: ragloom-chunks.jsonl].",
)
@click.option(
    "--cache",
    default=None,
    type=click.Path(dir_okay=False),
    help="Ingestion: SQLite cache file (overrides the pipeline file's).",
)
@click.option("--no-cache", is_flag=True, help="Ingestion: do not use any cache.")
@click.option(
    "--failures",
    default=None,
    type=click.Path(dir_okay=False),
    help="Ingestion: also write failed items to this JSONL file.",
)
@click.option(
    "--max-file-size",
    default=str(DEFAULT_MAX_FILE_SIZE),
    type=ByteSize(),
    show_default=True,
    help="Ingestion: larger files fail as oversized.",
)
@click.option(
    "--file",
    "-f",
    "file",
    default=None,
    help="Query: read questions from FILE, one per line ('-' for stdin).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: the summary as one object (ingestion), one object per question (query).",
)
@click.option(
    "--allow-imports", is_flag=True, help="Let the pipeline file name 'module:attr' import paths."
)
@click.option("--quiet", "-q", is_flag=True, help="Ingestion: no progress and no summary.")
@click.option(
    "--summary-json",
    is_flag=True,
    hidden=True,
    callback=lambda _ctx, _param, value: _deprecated_summary_json(value),
    help="Deprecated spelling of --json.",
)
def run(
    pipeline_file: str,
    inputs: tuple[str, ...],
    out: str | None,
    cache: str | None,
    no_cache: bool,
    failures: str | None,
    max_file_size: int,
    file: str | None,
    as_json: bool,
    allow_imports: bool,
    quiet: bool,
    summary_json: bool,
) -> int:
    """Run PIPELINE_FILE: an ingestion pipeline on INPUT paths, or a query pipeline on INPUT
    questions ('-' reads questions from stdin).

    Exit status: 0 all items done, 1 some failed, 2 usage or configuration error.
    """
    import os

    from ..config import load_spec

    spec = load_spec(pipeline_file)
    if spec.query is not None:
        if summary_json:
            raise click.UsageError(
                f"--summary-json applies to ingestion pipelines; {pipeline_file} is a query "
                "pipeline (use --json)"
            )
        ingestion_only = {
            "--out": out,
            "--cache": cache,
            "--no-cache": no_cache,
            "--failures": failures,
            "--quiet": quiet,
        }
        used = [name for name, value in ingestion_only.items() if value]
        if used:
            raise click.UsageError(
                f"{', '.join(used)} apply to ingestion pipelines; "
                f"{pipeline_file} is a query pipeline"
            )
        return run_plan(
            PlanSettings(
                questions=list(inputs),
                file=file,
                config=pipeline_file,
                as_json=as_json,
                allow_imports=allow_imports,
            )
        )
    if file is not None:
        raise click.UsageError(
            f"--file applies to query pipelines; {pipeline_file} is an ingestion pipeline"
        )
    if not inputs:
        raise click.UsageError(
            f"{pipeline_file} is an ingestion pipeline: give the files or folders to ingest"
        )
    missing = [path for path in inputs if not os.path.exists(path)]
    if missing:
        raise click.BadParameter(
            f"no such file or folder: {', '.join(missing)}", param_hint="INPUT"
        )
    if cache is not None and no_cache:
        raise click.UsageError("--cache and --no-cache exclude each other")
    settings = IngestSettings(
        paths=list(inputs),
        config=pipeline_file,
        out=out,
        cache=cache,
        no_cache=no_cache,
        quiet=quiet,
        allow_imports=allow_imports,
        max_file_size=max_file_size,
        failures=failures,
        as_json=as_json or summary_json,
        command="run",
    )
    return run_ingest(settings)
