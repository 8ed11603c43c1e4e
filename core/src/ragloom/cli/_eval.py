"""``ragloom eval``: search labelled questions, score what comes back, compare set-ups."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from ..searcher import DEFAULT_DECOMPOSER
from ._app import EXIT_OK, interrupted
from ._search import query_fields, query_kind_options

if TYPE_CHECKING:
    from ..evaluation import EvaluationReport, SetupResult
    from ..searcher import SearchSettings

__all__ = ["eval_command", "parse_setup"]

#: Marks a page this command wrote (such a file may be replaced by the next run).
_HTML_MARK = "<title>ragloom eval:"


def parse_setup(text: str, base: SearchSettings) -> tuple[str, SearchSettings]:
    """``NAME=CONFIG`` of ``--compare``: CONFIG is a pipeline file, or ``key=value`` settings
    separated by commas (``mode=text,decomposer=none``) applied over the command's own."""
    from ..searcher import SearchSettings, settings_from

    name, sep, config = text.partition("=")
    name = name.strip()
    if not sep or not name or not config.strip():
        raise click.BadParameter(
            f"{text!r}: expected NAME=CONFIG (a pipeline file, or settings such as "
            "mode=text,decomposer=none)", param_hint="--compare",
        )
    config = config.strip()
    if "=" not in config:
        if not os.path.isfile(config):
            raise click.BadParameter(
                f"{name}: {config!r} is neither a pipeline file nor key=value settings",
                param_hint="--compare",
            )
        return name, SearchSettings(config=config, allow_imports=base.allow_imports)
    values: dict[str, Any] = {}
    for pair in config.split(","):
        key, eq, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise click.BadParameter(f"{name}: {pair!r} is not key=value", param_hint="--compare")
        values[key] = value.strip()
    if values.get("decomposer") in ("off", "whole"):
        values["decomposer"] = "none"
    if values.get("router") == "off":
        values["router"] = "none"
    if "collections" in values:
        values["collections"] = [c for c in values["collections"].split("+") if c.strip()]
    try:
        return name, settings_from(values, base)
    except Exception as exc:  # noqa: BLE001 - pydantic or ours, one message
        raise click.BadParameter(f"{name}: {_short(exc)}", param_hint="--compare") from None


def _short(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
    return str(exc)


def _ks(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: a comma-separated list of integers such as 1,3,5,10",
                                 param_hint="--at") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"{text!r}: each k must be >= 1", param_hint="--at")
    return sorted(set(values))


def _check_html_target(path: str, questions: str) -> None:
    """Refuse to write the page over the question file or a file this command did not write."""
    target = Path(path)
    if target.is_dir():
        raise click.BadParameter(f"{path} is a folder", param_hint="--html")
    if target.exists():
        if target.resolve() == Path(questions).resolve():
            raise click.BadParameter(f"{path} is the question file", param_hint="--html")
        with open(target, encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
        if _HTML_MARK not in head:
            raise click.BadParameter(
                f"{path} exists and is not a page `ragloom eval` wrote: choose another file "
                "or remove it", param_hint="--html",
            )
    if not target.parent.resolve().is_dir():
        raise click.BadParameter(f"no folder {target.parent} for {path}", param_hint="--html")


def _write_html(path: str, page: str) -> None:
    import tempfile

    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(page)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _f(value: float) -> str:
    return f"{value:.3f}"


def _maybe(value: float | None) -> str:
    return "-" if value is None else _f(value)


def _print_report(report: EvaluationReport, details: str) -> None:
    from .._display import render_table

    ks = report.ks
    headers = (
        "SET-UP", "Q", "FACETS", *(f"R@{k}" for k in ks), *(f"HIT@{k}" for k in ks), "MRR",
        f"NDCG@{report.ndcg_k}", "P50 MS", "P95 MS",
    )
    rows = [
        (
            s.name, str(s.overall.questions), str(s.overall.facets),
            *(_f(s.overall.recall(k)) for k in ks), *(_f(s.overall.success(k)) for k in ks),
            _f(s.overall.mrr), _f(s.overall.ndcg), f"{s.latency.p50_ms:.0f}",
            f"{s.latency.p95_ms:.0f}",
        )
        for s in report.setups
    ]
    if any(s.answerer is not None for s in report.setups):
        headers = (*headers, "CITE-R", "CITE-P")
        rows = [
            (*row, _maybe(s.overall.citation_recall), _maybe(s.overall.citation_precision))
            for row, s in zip(rows, report.setups, strict=True)
        ]
    if any(s.overall.routed_facets is not None for s in report.setups):
        # routing by collection: facets whose collection some ask was routed to, and
        # questions with every facet so routed
        headers = (*headers, "ROUTED", "ROUTED-Q")
        rows = [
            (*row, _maybe(s.overall.routed_facets), _maybe(s.overall.routed_questions))
            for row, s in zip(rows, report.setups, strict=True)
        ]
    click.echo(f"ragloom eval: {report.questions_file}")
    click.echo(render_table(headers, rows))
    click.echo("\nby kind:")
    kind_rows = [
        (s.name, kind, str(sc.questions), str(sc.facets), *(_f(sc.recall(k)) for k in ks),
         _f(sc.mrr))
        for s in report.setups for kind, sc in s.by_kind.items()
    ]
    click.echo(render_table(
        ("SET-UP", "KIND", "Q", "FACETS", *(f"R@{k}" for k in ks), "MRR"), kind_rows
    ))
    for s in report.setups:
        if s.failed:
            click.echo(f"\n{s.name}: {s.failed} question(s) failed to search")
    if details != "none":
        for setup in report.setups:
            _print_questions(setup, max(ks), misses_only=details == "misses")
    if report.differences:
        click.echo(f"\ndifferences at k={max(ks)} (facet found by some set-ups, missed by others):")
        for d in report.differences:
            click.echo(
                f"  {d.question_id} facet {d.facet}: found by {', '.join(d.found_by)}; "
                f"missed by {', '.join(d.missed_by)}"
            )
    for warning in report.warnings:
        click.echo(f"ragloom: warning: {warning}", err=True)


def _print_questions(setup: SetupResult, k: int, *, misses_only: bool) -> None:
    shown = [
        q for q in setup.questions
        if not misses_only or q.error or any(f.rank is None or f.rank > k for f in q.facets)
    ]
    if not shown:
        return
    what = "questions with a facet missed" if misses_only else "questions"
    click.echo(f"\n{setup.name}: {what} ({len(shown)} of {len(setup.questions)}):")
    for q in shown:
        click.echo(f"  {q.id} [{q.kind}] {q.question}")
        for sub, route in zip(q.sub_queries, q.routes, strict=False):
            click.echo(f"      -> {sub} ({route})")
        for facet in q.facets:
            where = "missed" if facet.rank is None else f"#{facet.rank}"
            cited = "" if facet.cited is None else ("  cited" if facet.cited else "  not cited")
            click.echo(
                f"      facet {facet.label}: {where:>6}  {' | '.join(facet.expected)}{cited}"
            )
        for label in q.unjudged:
            click.echo(f"      facet {label}: not judged (its documents are not in the index)")
        if q.error:
            click.echo(f"      error: {q.error}")


@click.command("eval")
@click.argument("questions", type=click.Path(dir_okay=False))
@click.option("--index", "indexes", multiple=True, type=click.Path(file_okay=False),
              help="Index folder; give it several times to compare indexes "
              "[default: .ragloom/index].")
@click.option("--routes", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Route set (JSON/YAML/TOML) for the router.")
@click.option("--decomposer", default=None,
              help=f"A registered decomposer, or 'none' to search each question whole "
              f"[default: {DEFAULT_DECOMPOSER}].")
@click.option("--router", default=None,
              help="A registered router, or 'none' (no routing) [default: the routes fitted "
              "from the index's collections; with --routes ragloom-rules:keyword].")
@click.option("--collection", "collections", multiple=True, metavar="NAME",
              help="Search only this collection of the index (repeatable).")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "text"]), default=None,
              help="How to search [default: hybrid when the index holds vectors, else text].")
@click.option("-k", "--top-k", "top_k", default=None, type=click.IntRange(1),
              help="Passages per sub-query and in the answer [default: the largest --at].")
@click.option("-c", "--config", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A pipeline file with 'query' and 'retrieval' sections.")
@click.option("--compare", "compare", multiple=True, metavar="NAME=CONFIG",
              help="Another set-up beside the default: a pipeline file, or settings such as "
              "mode=text,decomposer=none,router=none,top_k=20,collections=a+b (repeatable).")
@click.option("--at", "at", default="1,3,5,10", show_default=True,
              help="The k of recall@k and hit rate@k.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1),
              help="Questions searched at once.")
@click.option("--details", type=click.Choice(["misses", "all", "none"]), default="misses",
              show_default=True, help="Which questions to list with their plan and facets.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--html", "html", default=None, type=click.Path(dir_okay=False),
              help="Also write the report as a self-contained HTML page.")
@click.option("--allow-imports", is_flag=True, help="Let pipeline files name module:attr imports.")
@query_kind_options
@click.option("--answerer", default=None,
              help="Also answer every question with this answerer (e.g. extractive) and report "
              "citation recall and precision.")
@click.option("--answerer-option", "answerer_options", multiple=True, metavar="KEY=VALUE",
              help="A setting of the answerer (repeatable), as for `ragloom ask`.")
def eval_command(
    questions: str,
    indexes: tuple[str, ...],
    routes: str | None,
    decomposer: str | None,
    router: str | None,
    collections: tuple[str, ...],
    mode: str | None,
    top_k: int | None,
    config: str | None,
    compare: tuple[str, ...],
    at: str,
    concurrency: int,
    details: str,
    as_json: bool,
    html: str | None,
    allow_imports: bool,
    answerer: str | None = None,
    answerer_options: tuple[str, ...] = (),
    **chosen: Any,
) -> int:
    """Search every question of QUESTIONS (a labelled question file: JSON Lines, JSON or YAML)
    and score the passages against the documents each facet expects: facet recall, hit rate
    and completeness at each k, MRR and nDCG@10, per question kind and overall, with each
    question's plan and misses, and search latency.

    With --compare, other set-ups run beside the default on the same questions and indexes,
    side by side, with the facets one found and another missed. With --answerer, every
    question is also answered, and each set-up reports citation recall (facets the answer
    cites a passage for) and citation precision (citations pointing, with an exact quote, to a
    passage returned). Exit status: 0 evaluated, 2 a bad question file, set-up, index or
    answerer.
    """
    from ..evaluation import evaluate, load_questions
    from ..searcher import SearchSettings

    ks = _ks(at)
    question_set = load_questions(questions)
    if html is not None:
        _check_html_target(html, questions)
    fields: dict[str, Any] = {
        "routes": routes, "decomposer": decomposer, "router": router, "mode": mode,
        "config": config, "allow_imports": allow_imports,
        "collections": list(collections) or None,
        **query_fields(chosen),
    }
    if top_k is not None:
        fields["top_k"] = top_k
    if config is not None and indexes:
        raise click.UsageError("--index chooses the index without a file; with --config the "
                               "pipeline file's 'retrieval' section names it")
    base = SearchSettings(**{k: v for k, v in fields.items() if v is not None})
    base.check()
    setups: dict[str, SearchSettings] = {"default": base}
    for text in compare:
        name, settings = parse_setup(text, base)
        if name in setups:
            raise click.BadParameter(f"set-up {name!r} is named twice", param_hint="--compare")
        setups[name] = settings
    answering = None
    if answerer is not None or answerer_options:
        from ..answering import create_answerer
        from ._ask import _options

        answering = create_answerer(answerer, _options(answerer_options))
    progress = _progress(len(question_set) * len(setups) * max(1, len(indexes)), as_json)
    try:
        with progress:
            report = evaluate(
                question_set, list(indexes) or None, setups=setups, ks=ks,
                concurrency=concurrency,
                progress=lambda done, total, name: progress.advance(), answerer=answering,
            )
    except KeyboardInterrupt as exc:
        return interrupted(exc, "nothing was written")
    if html is not None:
        from ..evaluation import render_html

        _write_html(html, render_html(report))
    if as_json:
        click.echo(report.to_json())
        for warning in report.warnings:
            click.echo(f"ragloom: warning: {warning}", err=True)
    else:
        _print_report(report, details)
        if html is not None:
            click.echo(f"\nreport page: {html}")
    return EXIT_OK


def _progress(total: int, quiet: bool) -> Any:
    from .._display import Progress

    mode: Literal["off"] | None = "off" if quiet and not sys.stderr.isatty() else None
    return Progress(total, label="questions", mode=mode)
