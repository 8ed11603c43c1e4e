"""``ragloom ask``: search a question as ``ragloom search`` does, then answer it with citations.

The search options are ``ragloom search``'s own (copied from that command, so both always
take the same ones with the same defaults); ``--answerer`` names the answerer (default: the
offline extractive one) and ``--answerer-option KEY=VALUE`` passes it settings.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import click

from .._printable import printable
from ..answering import DEFAULT_ANSWERER
from ._app import EXIT_FAILED, EXIT_OK, interrupted
from ._search import key_values, query_fields, refuse_search_options
from ._search import search as _search

__all__ = ["ask"]

#: ``ragloom search``'s parameters that are not search settings.
_NOT_SHARED = ("questions", "as_json")
#: Command parameter names that differ from :class:`~ragloom.searcher.SearchSettings` fields.
_FIELD = {"index_path": "index"}


def _options(values: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as answerer options (a value that reads as JSON is JSON)."""
    return key_values(values, "--answerer-option")


def _print(answer: Any) -> None:
    click.echo(f"Q: {printable(answer.question)}")
    click.echo(answer.text)
    if answer.citations:
        click.echo("\nSources:")
        spans: dict[int, list[str]] = {}
        for citation in answer.citations:
            where = (
                f"[{citation.start}:{citation.end}]" if citation.start is not None
                else "(rendered)"
            )
            spans.setdefault(citation.passage, []).append(where)
        for number, places in spans.items():
            passage = answer.retrieval.passages[number - 1]
            click.echo(f"  [{number}] {passage.document_id} {' '.join(places)}")
    for warning in answer.warnings:
        click.echo(f"ragloom: warning: {warning}", err=True)


def _run(ctx: click.Context, question: str, answerer: str | None,
         answerer_options: tuple[str, ...], as_json: bool, **search: Any) -> int:
    """Answer QUESTION from the index with citations: the search of ``ragloom search`` (the
    same options and defaults), then an answerer (default: extractive, offline: the best
    sentences of each ask's passages, quoted with their exact spans).

    Prints the answer, each claim followed by the numbers of the passages it cites, then the
    sources (document and exact offsets). --json prints one object: the answer, its claims and
    citations (chunk id, document, start, end, quote) and the search result under
    'retrieval'. Exit status: 0 answered (an answer may say "not found in the documents"), 1
    the search or the answerer failed, 2 usage error (no index, a blank question, an unknown
    answerer, a bad file).
    """
    from ..answering import create_answerer
    from ..errors import ItemProcessingError
    from ..searcher import Searcher, SearchSettings

    if not question.strip():
        raise click.UsageError("QUESTION is blank: ask something")
    config = search.get("config")
    if config is not None:
        refuse_search_options(ctx)
    chosen = query_fields(search)
    fields = {
        _FIELD.get(name, name): value for name, value in search.items()
        if _FIELD.get(name, name) in SearchSettings.model_fields
        and (config is None or name in ("config", "allow_imports"))
    }
    # a repeatable option given no value is a setting left at its default
    fields = {k: (list(v) or None) if isinstance(v, tuple) else v for k, v in fields.items()}
    settings = SearchSettings(
        **{k: v for k, v in fields.items() if v is not None},
        **(chosen if config is None else {}),
    )
    built = create_answerer(answerer, _options(answerer_options))
    try:
        with Searcher(settings) as searcher:
            try:
                retrieval = searcher.search(question.strip())
                answer = built.answer_sync(question.strip(), retrieval)
            except ItemProcessingError as exc:
                if as_json:
                    click.echo(json.dumps({"query": question, "error": str(exc)},
                                          ensure_ascii=False))
                else:
                    click.echo(f"Q: {printable(question)}\n  error: {exc}")
                return EXIT_FAILED
    except KeyboardInterrupt as exc:
        return interrupted(exc)
    if as_json:
        click.echo(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False))
    else:
        _print(answer)
    return EXIT_OK


def _build() -> click.Command:
    shared = [p for p in _search.params if p.name not in _NOT_SHARED]
    params: list[click.Parameter] = [
        click.Argument(["question"]),
        *shared,
        click.Option(
            ["--answerer"], default=None,
            help=f"A registered answerer (ragloom plugins lists them) [default: "
            f"{DEFAULT_ANSWERER}].",
        ),
        click.Option(
            ["--answerer-option", "answerer_options"], multiple=True, metavar="KEY=VALUE",
            help="A setting of the answerer (repeatable; a value that reads as JSON is JSON), "
            "e.g. model=openai/gpt-4o-mini for the dspy answerer.",
        ),
        click.Option(["--json", "as_json"], is_flag=True,
                     help="One JSON object: the answer, its citations and the search result."),
    ]
    return click.Command(
        "ask", params=params, callback=click.pass_context(_run),
        help=inspect.cleandoc(_run.__doc__ or ""),
    )


ask = _build()
