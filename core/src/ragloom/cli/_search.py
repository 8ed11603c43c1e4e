"""``ragloom search``: plan a question, retrieve for each sub-query from the index, fuse."""

from __future__ import annotations

import json
from typing import Any, Literal

import click

from .._printable import printable
from ..kinds import QUERY_KINDS
from ..searcher import DEFAULT_DECOMPOSER, DEFAULT_TOP_K, query_settings
from ._app import EXIT_FAILED, EXIT_OK, interrupted
from ._index import index_option
from ._plan import _plan_table

__all__ = ["search"]

#: Options that choose the components without a pipeline file.
_NOT_WITH_CONFIG = (
    "index_path", "routes", "decomposer", "router", "top_k", "mode", "embedder", "collections",
    *query_settings(),
)


def query_kind_options(command: Any) -> Any:
    """``--SETTING NAME`` and ``--SETTING-option KEY=VALUE`` for each query-side kind of the
    table of kinds (``--rerank mmr --rerank-option lambda_mult=0.5``), on a command whose
    settings become :class:`~ragloom.searcher.SearchSettings` (see :func:`query_fields`)."""
    for row in reversed(QUERY_KINDS):
        assert row.setting is not None
        flag = row.setting.replace("_", "-")
        command = click.option(
            f"--{flag}-option", f"{row.setting}_options", multiple=True, metavar="KEY=VALUE",
            help=f"A parameter of the {row.name} (repeatable; a value that reads as JSON is "
            "JSON).",
        )(command)
        command = click.option(
            f"--{flag}", row.setting, default=None, metavar="NAME",
            help=f"A registered {row.name} ({row.description}) [default: none].",
        )(command)
    return command


def query_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The query-side kinds' settings taken out of a command's ``values`` (removed from it),
    as :class:`~ragloom.searcher.SearchSettings` fields (``KEY=VALUE`` pairs parsed)."""

    out: dict[str, Any] = {}
    for row in QUERY_KINDS:
        assert row.setting is not None
        name = values.pop(row.setting, None)
        pairs = values.pop(f"{row.setting}_options", ()) or ()
        if name is not None:
            out[row.setting] = name
        if pairs:
            out[f"{row.setting}_options"] = key_values(
                tuple(pairs), f"--{row.setting.replace('_', '-')}-option"
            )
    return out


def refuse_search_options(ctx: click.Context) -> None:
    """With --config, refuse the options of this command that choose the search without a
    file (``search``, ``ask`` and ``serve`` share them).

    Raises:
        click.UsageError: naming the options given.
    """
    own = {param.name for param in ctx.command.params}
    given = [
        "--" + name.replace("_path", "").replace("_", "-")
        for name in _NOT_WITH_CONFIG
        if name in own
        and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]
    if given:
        raise click.UsageError(
            f"{', '.join(given)}: these options choose the search without a file; with "
            "--config set them in the pipeline file's 'query' and 'retrieval' sections"
        )


def _print(result: Any) -> None:
    click.echo(f"Q: {printable(result.query)}")
    click.echo(_plan_table(result.routing_plan))
    for failure in result.failures:
        click.echo(f"  failed: {failure.sub_query!r} ({failure.route}): {failure.error}")
    if not result.passages:
        click.echo("  (no passages found)")
    for n, passage in enumerate(result.passages, 1):
        where = (
            f"[{passage.start}:{passage.end}]" if passage.start is not None else "(rendered)"
        )
        found = ", ".join(
            f"#{hit.rank} for {hit.sub_query!r}"
            + (f" in {'+'.join(hit.collections)}" if hit.collections else "")
            for hit in passage.found_by
        )
        name = printable(passage.document_id)  # a file name may hold a newline
        click.echo(f"\n  {n}. {name} {where}  score {passage.score:.4f}  {found}")
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
@click.option(
    "--router", default=None,
    help="A registered router, or 'none' (no routing) [default: the routes fitted from the "
    "index's collections; with --routes ragloom-rules:keyword].",
)
@click.option(
    "--collection", "collections", multiple=True, metavar="NAME",
    help="Search only this collection of the index (repeatable).",
)
@click.option("-k", "--top-k", "top_k", default=DEFAULT_TOP_K, show_default=True,
              type=click.IntRange(1), help="Passages per sub-query and in the answer.")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "text"]), default=None,
              help="How to search [default: hybrid when the index holds vectors, else text].")
@click.option("--embedder", default=None,
              help="Embed the questions with this registered embedder [default: the one the "
              "index records].")
@click.option(
    "--config", default=None, type=click.Path(exists=True, dir_okay=False),
    help="A pipeline file with 'query' and 'retrieval' sections (instead of the options "
    "above).",
)
@query_kind_options
@click.option("--allow-imports", is_flag=True, help="Let --config name module:attr imports.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question.")
@click.pass_context
def search(
    ctx: click.Context,
    /,
    questions: tuple[str, ...],
    index_path: str,
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    collections: tuple[str, ...],
    top_k: int,
    mode: Literal["hybrid", "vector", "text"] | None,  # a click.Choice
    embedder: str | None,
    config: str | None,
    allow_imports: bool,
    as_json: bool,
    **chosen: Any,
) -> int:
    """Answer each QUESTION from the index: decompose it, route every sub-query, retrieve
    passages for each, and fuse them (reciprocal rank fusion). '-' reads questions from
    stdin, one per line.

    Prints the plan and the fused passages with their documents and exact offsets. Exit
    status: 0 every question answered, 1 some question failed (every one of its sub-queries
    failed to retrieve), 2 usage error (no index, a damaged index, a blank question, a bad
    file).
    """
    blank = [n for n, q in enumerate(questions, 1) if not q.strip()]
    if blank and len(blank) < len(questions):
        raise click.UsageError(f"QUESTION {blank[0]} is blank: ask something")
    from ._plan import iter_questions

    asked = list(iter_questions(list(questions), None))  # '-': one question per line of stdin
    if not asked:
        raise click.UsageError("no questions given: every QUESTION is blank")
    if config is not None:
        refuse_search_options(ctx)
    from ..searcher import SearchSettings, answers_in_order, build_search

    settings = SearchSettings(
        index=index_path, routes=routes, decomposer=decomposer, router=router, mode=mode,
        embedder=embedder, top_k=top_k, config=config, allow_imports=allow_imports,
        collections=list(collections) or None, **query_fields(chosen),
    ) if config is None else SearchSettings(config=config, allow_imports=allow_imports)
    pipeline = build_search(settings)
    with pipeline:
        try:
            result = pipeline.run_sync(asked)
        except KeyboardInterrupt as exc:
            return interrupted(exc)
    failed = 0
    for n, (question, answer) in enumerate(zip(asked, answers_in_order(result, asked),
                                               strict=True)):
        if n and not as_json:
            click.echo("")
        if not isinstance(answer, str):
            if as_json:
                click.echo(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
            else:
                _print(answer)
            continue
        failed += 1
        if as_json:
            click.echo(json.dumps({"query": question, "error": answer}, ensure_ascii=False))
        else:
            click.echo(f"Q: {printable(question)}\n  error: {answer}")
    return EXIT_FAILED if failed else EXIT_OK


def key_values(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs of ``option`` as a component's parameters (a value that reads as
    JSON is JSON)."""
    options: dict[str, Any] = {}
    for pair in values:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint=option)
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options
