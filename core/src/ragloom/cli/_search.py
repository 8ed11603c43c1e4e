"""``ragloom search``: plan a question, retrieve for each sub-query from the index, fuse."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from ._app import EXIT_FAILED, EXIT_OK, interrupted
from ._index import index_option, open_index
from ._plan import (
    DEFAULT_DECOMPOSER,
    DEFAULT_ROUTER,
    ROUTES_ROUTER,
    _plan_table,
    routes_router,
)

if TYPE_CHECKING:
    from ..pipeline import Pipeline

__all__ = ["search"]

#: The embedder of queries against an index with vectors, named fully (no other installed
#: plugin can take its place).
DEFAULT_EMBEDDER = "ragloom-semantic:model2vec"

#: Options that choose the components without a pipeline file.
_NOT_WITH_CONFIG = ("index_path", "routes", "decomposer", "router", "top_k", "mode")


def _default_pipeline(
    index_path: str, routes: str | None, decomposer: str | None, router: str | None,
    top_k: int, mode: str | None,
) -> Pipeline[Any]:
    """The search pipeline of the defaults (or of --routes/--decomposer/--router); it owns the
    index it opened."""
    from ..plugins import Registry
    from ..retrieval import StoreRetriever
    from ..search import MultiQueryRetrievalPipeline

    registry = Registry()
    # The components first (a mistake in the routes file is reported before anything opens).
    router_name = router or (ROUTES_ROUTER if routes is not None else DEFAULT_ROUTER)
    chosen = (
        routes_router(registry, router_name, routes)
        if routes is not None
        else registry.create("router", router_name)
    )
    planner = registry.create("decomposer", decomposer or DEFAULT_DECOMPOSER)
    store = open_index(index_path, registry=registry, must_exist=True)
    try:
        embedder = None
        if store.info().dimension is not None and mode != "text":
            embedder = registry.create("embedder", DEFAULT_EMBEDDER)
        block = MultiQueryRetrievalPipeline(
            planner,
            chosen,
            StoreRetriever(store, embedder, mode=mode, top_k=top_k),  # type: ignore[arg-type]
            top_k=top_k,
            registry=registry,
            store=store,
            embedder=embedder,
        )
        pipeline = block.build()
    except BaseException:
        store.close()
        raise
    pipeline.registry = registry
    pipeline.own(store)
    return pipeline


def _config_pipeline(config: str, allow_imports: bool) -> Pipeline[Any]:
    """The search pipeline of a pipeline file with ``query`` and ``retrieval`` sections."""
    from ..config import build_pipeline, load_spec
    from ..errors import ConfigurationError

    spec = load_spec(config)
    if spec.query is None or spec.retrieval is None:
        what = "an ingestion pipeline (it has 'steps')" if spec.query is None else (
            "a query block without a 'retrieval' section (`ragloom plan --config` runs it)"
        )
        raise ConfigurationError(
            f"{config} is {what}; `ragloom search --config` needs a 'query' block and a "
            "'retrieval' section naming the store to search"
        )
    return build_pipeline(config, allow_imports=allow_imports)


def _print(result: Any) -> None:
    click.echo(f"Q: {result.query}")
    click.echo(_plan_table(result.routing_plan))
    for failure in result.failures:
        click.echo(f"  failed: {failure.sub_query!r} ({failure.route}): {failure.error}")
    if not result.passages:
        click.echo("  (no passages found)")
    for n, passage in enumerate(result.passages, 1):
        where = (
            f"[{passage.start}:{passage.end}]" if passage.start is not None else "(rendered)"
        )
        found = ", ".join(f"#{hit.rank} for {hit.sub_query!r}" for hit in passage.found_by)
        click.echo(f"\n  {n}. {passage.document_id} {where}  score {passage.score:.4f}  {found}")
        text = " ".join(passage.content.split())
        click.echo(f"     {text[:300]}{'...' if len(text) > 300 else ''}")


@click.command("search")
@click.argument("questions", nargs=-1, required=True)
@index_option
@click.option(
    "--routes", default=None, type=click.Path(exists=True, dir_okay=False),
    help="Route set (JSON/YAML/TOML): routes may say how their sub-queries are retrieved.",
)
@click.option("--decomposer", default=None, help=f"[default: {DEFAULT_DECOMPOSER}]")
@click.option("--router", default=None, help=f"[default: {DEFAULT_ROUTER}]")
@click.option("-k", "--top-k", "top_k", default=5, show_default=True, type=click.IntRange(1),
              help="Passages per sub-query and in the answer.")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "text"]), default=None,
              help="How to search [default: hybrid when the index holds vectors, else text].")
@click.option(
    "--config", default=None, type=click.Path(exists=True, dir_okay=False),
    help="A pipeline file with 'query' and 'retrieval' sections (instead of the options "
    "above).",
)
@click.option("--allow-imports", is_flag=True, help="Let --config name module:attr imports.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question.")
@click.pass_context
def search(
    ctx: click.Context,
    questions: tuple[str, ...],
    index_path: str,
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    top_k: int,
    mode: str | None,
    config: str | None,
    allow_imports: bool,
    as_json: bool,
) -> int:
    """Answer each QUESTION from the index: decompose it, route every sub-query, retrieve
    passages for each, and fuse them (reciprocal rank fusion).

    Prints the plan and the fused passages with their documents and exact offsets. Exit
    status: 0 every question answered, 1 some question failed (every one of its sub-queries
    failed to retrieve), 2 usage error (no index, a blank question, a bad file).
    """
    asked = [q.strip() for q in questions if q.strip()]
    if not asked:
        raise click.UsageError("no questions given: every QUESTION is blank")
    blank = [n for n, q in enumerate(questions, 1) if not q.strip()]
    if blank:
        raise click.UsageError(f"QUESTION {blank[0]} is blank: ask something")
    if config is not None:
        given = [
            "--" + name.replace("_path", "").replace("_", "-")
            for name in _NOT_WITH_CONFIG
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise click.UsageError(
                f"{', '.join(given)}: these options choose the search without a file; with "
                "--config set them in the pipeline file's 'query' and 'retrieval' sections"
            )
        pipeline = _config_pipeline(config, allow_imports)
    else:
        pipeline = _default_pipeline(index_path, routes, decomposer, router, top_k, mode)
    with pipeline:
        try:
            result = pipeline.run_sync(asked)
        except KeyboardInterrupt as exc:
            return interrupted(exc)
    answers: dict[str, list[Any]] = {}
    for answer in result:
        answers.setdefault(answer.query, []).append(answer)
    errors: dict[str, list[str]] = {}
    for failure in result.failed:
        query = getattr(failure.item, "query", failure.item)
        errors.setdefault(query if isinstance(query, str) else "", []).append(failure.reason)
    failed = 0
    for n, question in enumerate(asked):
        if answers.get(question):
            answer = answers[question].pop(0)
            if as_json:
                click.echo(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
            else:
                if n:
                    click.echo("")
                _print(answer)
            continue
        failed += 1
        reasons = errors.get(question) or errors.get("") or ["no result"]
        reason = reasons.pop(0) if len(reasons) > 1 else reasons[0]
        if as_json:
            click.echo(json.dumps({"query": question, "error": reason}, ensure_ascii=False))
        else:
            if n:
                click.echo("")
            click.echo(f"Q: {question}\n  error: {reason}")
    return EXIT_FAILED if failed else EXIT_OK
