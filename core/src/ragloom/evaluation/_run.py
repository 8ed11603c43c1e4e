"""Running an evaluation: every set-up over every index, every question searched and judged."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..searcher import Searcher, SearchSettings, settings_from
from ._judge import DocumentIndex, facet_ranks, matches
from ._questions import LabelledQuestion, QuestionSet, load_questions
from ._report import (
    AnswerOutcome,
    EvaluationReport,
    FacetOutcome,
    Latency,
    QuestionOutcome,
    Scores,
    SetupResult,
    differences,
)

__all__ = ["DEFAULT_KS", "Progress", "aevaluate", "evaluate"]

#: The cut-offs reported when none are given.
DEFAULT_KS = (1, 3, 5, 10)
#: Questions searched at once per set-up.
DEFAULT_CONCURRENCY = 4

#: ``progress(done, total, setup_name)``: called as questions finish.
Progress = Callable[[int, int, str], None]

SetupSpec = SearchSettings | Mapping[str, Any]


def evaluate(
    questions: str | os.PathLike[str] | QuestionSet | Sequence[Any],
    index: str | Sequence[str] | None = None,
    *,
    setups: Mapping[str, SetupSpec] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    answerer: Any = None,
    answerer_options: Mapping[str, Any] | None = None,
) -> EvaluationReport:
    """Search every labelled question with each set-up and score the passages returned.

    Args:
        questions: a question file's path, a :class:`QuestionSet`, or question mappings.
        index: the index folder(s) to search (default: the set-ups' own, else
            ``.ragloom/index``); several indexes are each evaluated with every set-up.
        setups: set-up name -> :class:`~ragloom.SearchSettings` (or its fields as a mapping);
            default: one set-up, ``default``, with the command line's defaults. A set-up that
            does not set ``top_k`` searches ``max(ks)`` passages.
        ks: the cut-offs of recall, hit rate and completeness.
        concurrency: questions searched at once within a set-up.
        progress: called with (questions done, total, set-up name) as questions finish.
        answerer: an answerer (a registered name or an
            :class:`~ragloom.answering.Answerer`) that also answers every question from its
            passages: each facet then says whether the answer cites a passage answering it
            (citation recall), and every citation is checked against the passages returned
            (citation precision). ``answerer_options`` build a named one.

    Raises:
        ConfigurationError: a bad question file, set-up or ``ks``, an unknown answerer.
    """
    from .._sync import run_sync

    return run_sync(
        lambda: aevaluate(
            questions, index, setups=setups, ks=ks, concurrency=concurrency, progress=progress,
            answerer=answerer, answerer_options=answerer_options,
        )
    )


async def aevaluate(
    questions: str | os.PathLike[str] | QuestionSet | Sequence[Any],
    index: str | Sequence[str] | None = None,
    *,
    setups: Mapping[str, SetupSpec] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    answerer: Any = None,
    answerer_options: Mapping[str, Any] | None = None,
) -> EvaluationReport:
    """:func:`evaluate` in an event loop."""
    from .. import __version__
    from ..answering import Answerer, create_answerer

    question_set = _question_set(questions)
    answering = (
        answerer if isinstance(answerer, Answerer) or answerer is None
        else create_answerer(answerer, answerer_options)
    )
    cutoffs = _cutoffs(ks)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    plans = _plans(setups, index, cutoffs)
    results: list[SetupResult] = []
    warnings: list[str] = []
    for name, settings in plans:
        result, said = await _run_setup(
            name, settings, question_set, cutoffs, concurrency, progress, answering
        )
        results.append(result)
        warnings.extend(w for w in said if w not in warnings)
    return EvaluationReport(
        ragloom_version=__version__, questions_file=question_set.source, ks=list(cutoffs),
        setups=results, warnings=warnings, differences=differences(results, max(cutoffs)),
    )


def _question_set(questions: Any) -> QuestionSet:
    if isinstance(questions, QuestionSet):
        return questions
    if isinstance(questions, str | os.PathLike):
        return load_questions(Path(questions))
    return QuestionSet.of(list(questions))


def _cutoffs(ks: Sequence[int]) -> tuple[int, ...]:
    values = sorted(set(ks))
    if not values or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in values):
        raise ConfigurationError(f"ks must be integers >= 1, got {list(ks)!r}")
    return tuple(values)


def _plans(
    setups: Mapping[str, SetupSpec] | None,
    index: str | Sequence[str] | None,
    ks: Sequence[int],
) -> list[tuple[str, SearchSettings]]:
    """(name, settings) for every set-up over every index, names made unique per index."""
    named: dict[str, SearchSettings] = {}
    for name, spec in (setups or {"default": SearchSettings()}).items():
        if not name or not str(name).strip():
            raise ConfigurationError("a set-up needs a name")
        named[name] = spec if isinstance(spec, SearchSettings) else settings_from(
            spec, SearchSettings()
        )
    indexes = [index] if isinstance(index, str) else list(index or [])
    labels = _index_labels(indexes)
    plans: list[tuple[str, SearchSettings]] = []
    for name, settings in named.items():
        if "top_k" not in settings.model_fields_set and settings.config is None:
            settings = settings.model_copy(update={"top_k": max(ks)})
        if not indexes or settings.config is not None:
            plans.append((name, settings))
            continue
        for path, label in zip(indexes, labels, strict=True):
            update = {"index": path}
            plans.append((
                name if len(indexes) == 1 else f"{name}@{label}",
                settings.model_copy(update=update),
            ))
    return plans


def _index_labels(paths: Sequence[str]) -> list[str]:
    """Short names that tell the indexes apart: the last path parts that differ."""
    parts = [Path(p).resolve().parts for p in paths]
    for depth in range(1, max((len(p) for p in parts), default=1) + 1):
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return [str(p) for p in paths]


async def _run_setup(
    name: str,
    settings: SearchSettings,
    questions: QuestionSet,
    ks: Sequence[int],
    concurrency: int,
    progress: Progress | None,
    answerer: Any = None,
) -> tuple[SetupResult, list[str]]:
    import anyio

    started = time.perf_counter()
    searcher = await anyio.to_thread.run_sync(lambda: Searcher(settings))
    try:
        documents = DocumentIndex(await anyio.to_thread.run_sync(searcher.document_ids))
        collections = await anyio.to_thread.run_sync(_collections_of, searcher)
        warnings: list[str] = []
        if not documents.ids:
            warnings.append(f"{name}: the index lists no documents; labels are not checked")
        outcomes: list[QuestionOutcome | None] = [None] * len(questions)
        limiter = anyio.CapacityLimiter(concurrency)
        done = 0

        async def one(n: int, question: LabelledQuestion) -> None:
            nonlocal done
            facets, said = documents.judgeable(question)
            warnings.extend(said)
            async with limiter:
                began = time.perf_counter()
                try:
                    answer: Any = await searcher.asearch(question.question)
                    error = None
                except Exception as exc:  # noqa: BLE001 - a failed search scores nothing
                    answer, error = None, str(exc)
                seconds = time.perf_counter() - began
                answered = (
                    await _answer(answerer, question.question, answer)
                    if answerer is not None else None
                )
            outcomes[n] = _outcome(
                question, facets, answer, error, seconds, answered, collections
            )
            done += 1
            if progress is not None:
                progress(done, len(questions), name)

        async with anyio.create_task_group() as tg:
            for n, question in enumerate(questions):
                tg.start_soon(one, n, question)
    finally:
        searcher.close()
    finished = [o for o in outcomes if o is not None]
    kinds: dict[str, list[QuestionOutcome]] = {}
    for outcome in finished:
        kinds.setdefault(outcome.kind, []).append(outcome)
    result = SetupResult(
        name=name,
        index=settings.config or settings.index,
        settings=_shown(settings),
        overall=Scores.of(finished, ks),
        by_kind={kind: Scores.of(found, ks) for kind, found in sorted(kinds.items())},
        latency=Latency.of([o.seconds for o in finished if o.error is None]),
        seconds=time.perf_counter() - started,
        concurrency=concurrency,
        failed=sum(1 for o in finished if o.error is not None),
        questions=finished,
        answerer=None if answerer is None else answerer.identity(),
    )
    return result, warnings


def _collections_of(searcher: Searcher) -> dict[str, list[str]] | None:
    """Each document's collections, when the search routes by the collections of its index
    (several collections, the routes fitted from them); else ``None``."""
    from ..index_routes import document_collections

    if not getattr(searcher, "routes_by_collection", False) or searcher.store is None:
        return None
    by_document: dict[str, list[str]] = {}
    for name, ids in document_collections(searcher.store).items():
        for document_id in ids:
            by_document.setdefault(document_id, []).append(name)
    return by_document


def _routed(collections: list[str], plan: Sequence[Any]) -> bool:
    """Whether a sub-query of ``plan`` was routed to one of ``collections``: its search was
    restricted to it or boosted it (a best guess too close to call searched the whole index,
    and a fallback names no collection)."""
    wanted = set(collections)
    return any(wanted & set(r.collections or ()) for r in plan if r.retrieval is not None)


def _shown(settings: SearchSettings) -> dict[str, Any]:
    """The settings that differ from the defaults, and always how many passages were asked."""
    shown = settings.model_dump(exclude_defaults=True, exclude={"allow_imports"})
    if settings.config is None:
        shown["top_k"] = settings.top_k
    return shown


async def _answer(answerer: Any, question: str, retrieval: Any) -> Any:
    """The answer to ``question`` from ``retrieval`` (``None`` for a failed search), or the
    reason the answerer failed (a string)."""
    from ..multi_retrieval import RetrievalResult

    if retrieval is None:
        retrieval = RetrievalResult(query=question)
    try:
        return await answerer.answer(question, retrieval)
    except Exception as exc:  # noqa: BLE001 - a failed answer cites nothing
        return f"{type(exc).__name__}: {exc}"


def _answer_outcome(answered: Any, retrieval: Any) -> AnswerOutcome:
    from ..answering import check_citation
    from ..multi_retrieval import RetrievalResult

    if isinstance(answered, str):
        return AnswerOutcome(error=answered)
    retrieval = retrieval if retrieval is not None else RetrievalResult(query=answered.question)
    citations = answered.citations
    return AnswerOutcome(
        text=answered.text, found=answered.found, not_found=list(answered.not_found),
        citations=len(citations),
        valid_citations=sum(1 for c in citations if check_citation(c, retrieval) is None),
    )


def _outcome(
    question: LabelledQuestion, facets: list[Any], answer: Any, error: str | None,
    seconds: float, answered: Any = None, collections: dict[str, list[str]] | None = None,
) -> QuestionOutcome:
    passages = list(answer.passages) if answer is not None else []
    ranks = facet_ranks(facets, passages)
    judged = {facet.label for facet in facets}
    cited_passages = []
    if answered is not None and not isinstance(answered, str):
        numbers = {c.passage for c in answered.citations}
        cited_passages = [p for n, p in enumerate(passages, 1) if n in numbers]
    outcomes = []
    for facet, rank in zip(facets, ranks, strict=True):
        cited = None if answered is None else any(
            matches(e, p) for p in cited_passages for e in facet.alternatives
        )
        passage = passages[rank - 1] if rank is not None else None
        homes = sorted({
            name for e in facet.alternatives for name in (collections or {}).get(e.document, [])
        })
        routed = (
            _routed(homes, answer.routing_plan if answer is not None else [])
            if collections is not None and homes else None
        )
        outcomes.append(FacetOutcome(
            label=facet.label,
            expected=[e.describe() for e in facet.alternatives],
            rank=rank,
            document_id=passage.document_id if passage is not None else None,
            chunk_id=passage.chunk_id if passage is not None else None,
            found_by=[hit.sub_query for hit in passage.found_by] if passage is not None else [],
            cited=cited,
            collections=homes,
            routed=routed,
        ))
    return QuestionOutcome(
        id=question.id,
        question=question.question,
        kind=question.question_kind,
        sub_queries=list(answer.sub_queries) if answer is not None else [],
        routes=[r.route for r in answer.routing_plan] if answer is not None else [],
        facets=outcomes,
        unjudged=[f.label for f in question.facets if f.label not in judged],
        returned=[p.document_id or "" for p in passages],
        seconds=seconds,
        error=error,
        answer=None if answered is None else _answer_outcome(answered, answer),
    )
