"""``ragloom plan``: decompose questions into sub-queries and route each one.

The decomposer defaults to ragloom-rules' ``heuristic``; the router to the routes fitted from
the collections of the index given with ``--index`` (:mod:`ragloom.index_routes`; no routing
without an index or with one collection), or with ``--routes FILE`` a ``keyword`` router over
the routes in that file, or any registered router named. A pipeline file with a ``query``
block (``--config``) names any other decomposer and router. Questions stream through the
pipeline (a file of millions of lines is fine) and are printed in input order.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import click

from .._printable import printable
from ..searcher import (
    DEFAULT_DECOMPOSER,
    DEFAULT_ROUTER,
    NO_ROUTER,
    ROUTES_ROUTER,
    load_routes,
    routes_router,
)
from ._app import EXIT_FAILED, EXIT_OK, interrupted

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from ..pipeline import Pipeline

__all__ = ["PlanSettings", "iter_questions", "load_routes", "plan", "run_plan"]


@dataclass
class PlanSettings:
    questions: list[str]
    file: str | None = None
    config: str | None = None
    routes: str | None = None
    as_json: bool = False
    allow_imports: bool = False
    decomposer: str | None = None
    router: str | None = None
    index: str | None = None


#: The note of a plan without an index to route by.
NO_INDEX = "no index: no routing (--index routes by its collections)"


def build_plan_pipeline(settings: PlanSettings) -> Pipeline[Any]:
    """The query pipeline from ``--config``, or the ragloom-rules defaults."""
    from ..config import build_pipeline, load_spec
    from ..errors import ConfigurationError, PluginNotFoundError

    if settings.config is not None:
        if (
            settings.routes is not None or settings.decomposer or settings.router
            or settings.index is not None
        ):
            raise click.UsageError(
                "--routes, --decomposer, --router and --index choose the components without "
                "a file; with --config name the decomposer and router in the pipeline file"
            )
        spec = load_spec(settings.config)
        if spec.query is None:
            raise ConfigurationError(
                f"{settings.config} is an ingestion pipeline (it has 'steps', no 'query' "
                "block); use `ragloom ingest --config` or `ragloom run` with paths"
            )
        return build_pipeline(settings.config, allow_imports=settings.allow_imports)
    from ..plugins import Registry

    registry = Registry()
    router: Any = settings.router or DEFAULT_ROUTER
    decomposer = settings.decomposer or DEFAULT_DECOMPOSER
    if settings.routes is None and router in (DEFAULT_ROUTER, NO_ROUTER):
        return _index_plan(settings, registry, decomposer)
    try:
        if settings.routes is not None:
            name = settings.router or ROUTES_ROUTER
            routes_router(registry, name, settings.routes)  # the file's mistakes, located
            router = {"name": name, "params": load_routes(settings.routes)}
        spec_data = {"name": "plan", "query": {"decomposer": decomposer, "router": router}}
        return build_pipeline(spec_data, registry=registry, source="ragloom plan defaults")
    except PluginNotFoundError as exc:
        raise ConfigurationError(
            f"{exc}; or pass a pipeline file with a 'query' block via --config"
        ) from None


def _index_plan(settings: PlanSettings, registry: Any, decomposer: str) -> Pipeline[Any]:
    """The plan over the routes fitted from ``--index`` (none without an index)."""
    from ..errors import ConfigurationError, PluginNotFoundError
    from ..index_routes import WholeIndex, index_router
    from ..multi_query import MultiQueryRoutingPipeline
    from ..query import WholeQuestion
    from ..searcher import WHOLE_QUESTION, index_probe, open_index

    try:
        planner: Any = (
            WholeQuestion() if decomposer == WHOLE_QUESTION
            else registry.create("decomposer", decomposer)
        )
    except PluginNotFoundError as exc:
        raise ConfigurationError(
            f"{exc}; or pass a pipeline file with a 'query' block via --config"
        ) from None
    router: Any
    if settings.router == NO_ROUTER:
        router = WholeIndex("routing off")
    elif settings.index is None:
        router = WholeIndex(NO_INDEX)
    else:
        # routed as a search routes: by what each ask's search of the whole index finds first
        store = open_index(settings.index, registry=registry, must_exist=True)
        try:
            router = index_router(store, registry=registry, probe=index_probe(store))
            pipeline = MultiQueryRoutingPipeline(planner, router).build(registry=registry)
        except BaseException:
            store.close()
            raise
        pipeline.own(store)
        return pipeline
    return MultiQueryRoutingPipeline(planner, router).build(registry=registry)


def check_question_file(file: str | None) -> None:
    """Refuse a ``--file`` that is missing, a folder, or not UTF-8 text, before any work."""
    if file is None or file == "-":
        return
    import os

    if not os.path.exists(file):
        raise click.BadParameter(f"no such file: {file}", param_hint="--file")
    if os.path.isdir(file):
        raise click.BadParameter(
            f"{file} is a folder, not a file of questions", param_hint="--file"
        )
    try:
        with open(file, encoding="utf-8") as handle:
            for _line in handle:
                pass
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{file} is not UTF-8 text ({exc.reason} at byte {exc.start})", param_hint="--file"
        ) from None
    except OSError as exc:
        raise click.BadParameter(
            f"cannot read {file}: {exc.strerror or exc}", param_hint="--file"
        ) from None


def iter_questions(questions: list[str], file: str | None) -> Iterator[str]:
    """Questions from the arguments, then one per non-blank line of ``file`` ('-': stdin)."""
    sources: list[str] = []
    for question in questions:
        if question == "-":
            sources.append("-")
        elif question.strip():
            yield question.strip()
    if file is not None:
        sources.append(file)
    for source in sources:
        if source == "-":
            stream = sys.stdin
            for line in stream:
                if line.strip():
                    yield line.strip()
        else:
            with open(source, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield line.strip()


class _InOrder:
    """Prints results in the order the questions were fed, whatever order they arrive in."""

    def __init__(self, settings: PlanSettings) -> None:
        self.settings = settings
        self.pending: deque[list[Any]] = deque()
        self.count = 0
        self.failed = 0

    def fed(self, query: str) -> None:
        self.pending.append([query, None])

    def result(self, query: str, value: Any) -> None:
        for entry in self.pending:
            if entry[1] is None and entry[0] == query:
                entry[1] = value
                break
        while self.pending and self.pending[0][1] is not None:
            query_text, done = self.pending.popleft()
            self.count += 1
            self.emit(query_text, done)

    def emit(self, query: str, value: Any) -> None:
        failed = isinstance(value, dict) and "error" in value
        if failed:
            self.failed += 1
        if self.settings.as_json:
            payload = value if failed else value.model_dump(mode="json")
            click.echo(json.dumps(payload, ensure_ascii=False))
            return
        if self.count > 1:
            click.echo("")
        click.echo(f"Q{self.count}: {printable(query)}")
        if failed:
            click.echo(f"  error ({value['step']}): {value['error']}")
            return
        click.echo(_plan_table(value.routing_plan))


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _search_cell(route: Any) -> str:
    """How a sub-query routed to collections is searched."""
    listed = "+".join(route.collections or ())
    if route.retrieval == "restrict":
        return f"only {listed}"
    if route.retrieval == "boost":
        return f"all, {listed} boosted"
    return "all"


def _plan_table(plan: list[Any]) -> str:
    scoped = any(
        getattr(route, "retrieval", None) or getattr(route, "note", None) for route in plan
    )
    headers: tuple[str, ...] = (
        ("#", "SUB-QUERY", "ROUTE", "SCORE", "SEARCH", "NOTE") if scoped
        else ("#", "SUB-QUERY", "ROUTE", "SCORE", "NOTE")
    )
    rows = []
    for i, route in enumerate(plan, 1):
        notes = []
        if getattr(route, "note", None):
            notes.append(route.note)
        if route.fallback_reason:
            notes.append(f"fallback: {route.fallback_reason}")
        if route.runner_up:
            notes.append(f"runner-up: {route.runner_up} {_score(route.runner_up_score)}")
        if getattr(route, "focus", None):
            notes.append("decided by its last sentence (searched too)")
        cells = [str(i), printable(route.sub_query), printable(route.route), _score(route.score)]
        if scoped:
            cells.append(_search_cell(route))
        rows.append((*cells, "; ".join(notes)))
    if not rows:
        return "  (no sub-queries)"
    from .._display import render_table

    return render_table(headers, rows, indent=2)


async def _drive(pipeline: Pipeline[Any], questions: Iterator[str], printer: _InOrder) -> None:
    import anyio

    from ..events import ItemFailed

    def observe(event: object) -> None:
        if isinstance(event, ItemFailed):
            item = event.item
            query = item if isinstance(item, str) else getattr(item, "query", event.item_id)
            printer.result(query, {"query": query, "error": event.reason, "step": event.step})

    def feed() -> Iterator[str]:
        for question in questions:
            printer.fed(question)
            yield question

    pipeline.subscribe(observe)
    stream = pipeline.stream(feed())
    try:
        # Nothing here awaits: a cancellation (Ctrl-C, SIGTERM) lands inside the pipeline's
        # own chain of steps (its source gives the event loop a turn at least every 50 ms), so
        # every step unwinds in this task.
        async for state in stream:
            printer.result(state.query, state)
    finally:
        with anyio.CancelScope(shield=True):
            await cast("AsyncGenerator[Any, None]", stream).aclose()


def run_plan(settings: PlanSettings) -> int:
    """Plan every question; return the exit status (1 when any question failed)."""
    if not settings.questions and settings.file is None:
        raise click.UsageError("give a QUESTION, --file FILE, or '-' to read stdin")
    if settings.file is None and not any(q.strip() for q in settings.questions):
        raise click.UsageError("no questions given: every QUESTION is blank")
    check_question_file(settings.file)
    import anyio

    pipeline = build_plan_pipeline(settings)
    printer = _InOrder(settings)
    try:
        anyio.run(_drive, pipeline, iter_questions(settings.questions, settings.file), printer)
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    finally:
        pipeline.close()
    if printer.count == 0:
        raise click.UsageError("no questions given: the input holds only blank lines")
    return EXIT_FAILED if printer.failed else EXIT_OK


def plan_options(func: Any) -> Any:
    options = [
        click.option(
            "--file",
            "-f",
            "file",
            default=None,
            help="Read questions from FILE, one per line ('-' for stdin).",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="One JSON object per question instead of tables.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.command("plan")
@click.argument("questions", nargs=-1)
@click.option(
    "--config",
    "-c",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Pipeline file with a 'query' block (decomposer, router).",
)
@click.option(
    "--routes",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Route set (JSON/YAML/TOML) for a keyword router instead of the sample one.",
)
@click.option(
    "--decomposer", default=None,
    help=f"A registered decomposer [default: {DEFAULT_DECOMPOSER}].",
)
@click.option(
    "--router", default=None,
    help="A registered router (e.g. ragloom-rules:sample), or 'none' [default: the routes "
    f"fitted from --index; with --routes {ROUTES_ROUTER}].",
)
@click.option(
    "--index", "index_path", default=None, type=click.Path(file_okay=False),
    help="Route by the collections of this index (routes fitted from what they hold).",
)
@click.option(
    "--allow-imports", is_flag=True, help="Let the pipeline file name 'module:attr' import paths."
)
@plan_options
def plan(
    questions: tuple[str, ...],
    config: str | None,
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    index_path: str | None,
    allow_imports: bool,
    file: str | None,
    as_json: bool,
) -> int:
    """Decompose each QUESTION into sub-queries and route every sub-query.

    Shows each sub-query with its route, the router's score, the runner-up and, when the
    default route was taken for lack of a decision, the fallback reason; routed by the
    collections of --index, also how each is searched (only its collection, or all with its
    collection boosted). QUESTION '-' (or --file -) reads questions from stdin, one per line.
    """
    settings = PlanSettings(
        questions=list(questions),
        file=file,
        config=config,
        routes=routes,
        as_json=as_json,
        allow_imports=allow_imports,
        decomposer=decomposer,
        router=router,
        index=index_path,
    )
    return run_plan(settings)
