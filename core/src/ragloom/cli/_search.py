"""``ragloom search``: plan a question, retrieve for each sub-query from the index, fuse."""

from __future__ import annotations

import json
from typing import Any

import click

from ._app import EXIT_FAILED, EXIT_OK, interrupted
from ._index import index_option, open_index
from ._plan import (
    DEFAULT_DECOMPOSER,
    DEFAULT_ROUTER,
    ROUTES_ROUTER,
    _plan_table,
    load_routes,
)

__all__ = ["search"]


def _block(
    index_path: str, routes: str | None, decomposer: str | None, router: str | None,
    top_k: int, mode: str | None,
) -> tuple[Any, Any]:
    from ..plugins import Registry
    from ..retrieval import StoreRetriever
    from ..search import MultiQueryRetrievalPipeline

    registry = Registry()
    store = open_index(index_path, registry=registry, must_exist=True)
    try:
        embedder = None
        if store.info().dimension is not None and mode != "text":
            embedder = registry.create("embedder", "model2vec")
        params = load_routes(routes) if routes is not None else {}
        router_name = router or (ROUTES_ROUTER if routes is not None else DEFAULT_ROUTER)
        block = MultiQueryRetrievalPipeline(
            registry.create("decomposer", decomposer or DEFAULT_DECOMPOSER),
            registry.create("router", router_name, params),
            StoreRetriever(store, embedder, mode=mode, top_k=top_k),  # type: ignore[arg-type]
            top_k=top_k,
            registry=registry,
            store=store,
            embedder=embedder,
        )
    except BaseException:
        store.close()
        raise
    return block, store


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
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question.")
def search(
    questions: tuple[str, ...],
    index_path: str,
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    top_k: int,
    mode: str | None,
    as_json: bool,
) -> int:
    """Answer each QUESTION from the index: decompose it, route every sub-query, retrieve
    passages for each, and fuse them (reciprocal rank fusion).

    Prints the plan and the fused passages with their documents and exact offsets. Exit
    status: 0 every question answered, 1 some question failed, 2 usage error (no index).
    """
    asked = [q.strip() for q in questions if q.strip()]
    if not asked:
        raise click.UsageError("no questions given: every QUESTION is blank")
    block, store = _block(index_path, routes, decomposer, router, top_k, mode)
    failed = 0
    try:
        pipeline = block.build()
        result = pipeline.run_sync(asked)
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    finally:
        store.close()
    by_query = {r.query: r for r in result}
    errors = {f.item_id: f.reason for f in result.failed}
    for n, question in enumerate(asked):
        answer = by_query.get(question)
        if answer is None:
            failed += 1
            reason = errors.get(question, "no result")
            if as_json:
                click.echo(json.dumps({"query": question, "error": reason}, ensure_ascii=False))
            else:
                click.echo(f"Q: {question}\n  error: {reason}")
            continue
        if as_json:
            click.echo(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
        else:
            if n:
                click.echo("")
            _print(answer)
    return EXIT_FAILED if failed else EXIT_OK
