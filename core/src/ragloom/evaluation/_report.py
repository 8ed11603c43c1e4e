"""The results of an evaluation, as objects (``ragloom.evaluate``) and as JSON (``--json``).

The JSON of ``ragloom eval --json`` is :class:`EvaluationReport` dumped with pydantic
(``model_dump(mode="json")``); its schema is ``EvaluationReport.model_json_schema()`` and
``schema_version`` changes whenever a field changes meaning or goes away.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._metrics import complete_at, ndcg_at, recall_at, reciprocal_rank, success_at

__all__ = [
    "SCHEMA_VERSION",
    "AnswerOutcome",
    "AtK",
    "Difference",
    "EvaluationReport",
    "FacetOutcome",
    "Latency",
    "QuestionOutcome",
    "Scores",
    "SetupResult",
]

SCHEMA_VERSION = 1
#: The cut-off of nDCG.
NDCG_K = 10


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class FacetOutcome(_Frozen):
    """One facet of a question: what answers it, and where the search first returned it."""

    label: str
    expected: list[str]
    #: Rank (1-based) of the first passage answering the facet; ``None``: missed.
    rank: int | None = None
    document_id: str | None = None
    chunk_id: str | None = None
    #: The sub-queries that retrieved that passage.
    found_by: list[str] = Field(default_factory=list)
    #: Whether the answer cites a passage answering the facet (``None``: no answerer ran).
    cited: bool | None = None
    #: Over an index of several collections, routed by them: the collections of the facet's
    #: documents, and whether some sub-query was routed to one of them (``None``: the search
    #: does not route by collection).
    collections: list[str] = Field(default_factory=list)
    routed: bool | None = None


class AnswerOutcome(_Frozen):
    """What the answerer made of one question's passages (``ragloom eval --answerer``)."""

    text: str = ""
    #: Whether the answer cites anything.
    found: bool = False
    #: The asks the answer says the documents do not answer.
    not_found: list[str] = Field(default_factory=list)
    #: Citations in the answer, and how many of them point, with an exact quote, to a passage
    #: the search returned.
    citations: int = 0
    valid_citations: int = 0
    #: Why the answerer failed (the answer then cites nothing).
    error: str | None = None


class QuestionOutcome(_Frozen):
    """One question searched: its plan, each facet's outcome and how long it took."""

    id: str
    question: str
    kind: str
    sub_queries: list[str] = Field(default_factory=list)
    routes: list[str] = Field(default_factory=list)
    facets: list[FacetOutcome] = Field(default_factory=list)
    #: Facets not judged: every document they name is absent from the index.
    unjudged: list[str] = Field(default_factory=list)
    #: The documents of the returned passages, best first.
    returned: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    #: Why the search failed (the question then counts as finding nothing).
    error: str | None = None
    #: The answer and its citations, when an answerer ran.
    answer: AnswerOutcome | None = None

    @property
    def ranks(self) -> list[int | None]:
        return [facet.rank for facet in self.facets]


class AtK(_Frozen):
    """Metrics at one cut-off ``k``."""

    k: int
    #: Found facets over all facets (micro-averaged over the questions).
    recall: float
    #: Share of questions with some facet found (hit rate, trec_eval ``success``).
    success: float
    #: Share of questions with every facet found.
    complete: float


class Scores(_Frozen):
    """Aggregate metrics over a group of questions."""

    questions: int
    facets: int
    at: list[AtK]
    #: Mean reciprocal rank of the first answering passage.
    mrr: float
    #: Mean nDCG at ``NDCG_K`` (10).
    ndcg: float
    #: With an answerer: the share of facets the answer cites a passage for (micro-averaged);
    #: ``None`` without one.
    citation_recall: float | None = None
    #: With an answerer: the share of citations that point, with an exact quote, to a passage
    #: the search returned (1.0 by construction for a well-behaved answerer); ``None`` without
    #: an answerer or when nothing was cited.
    citation_precision: float | None = None
    #: Routing by collection (an index of several collections, routed by them): the share of
    #: facets with a sub-query routed to the facet's collection (micro-averaged), and the share
    #: of questions with every facet so routed; ``None`` when the search does not route by
    #: collection.
    routed_facets: float | None = None
    routed_questions: float | None = None

    def recall(self, k: int) -> float:
        return next(a.recall for a in self.at if a.k == k)

    def success(self, k: int) -> float:
        return next(a.success for a in self.at if a.k == k)

    @classmethod
    def of(cls, outcomes: Sequence[QuestionOutcome], ks: Sequence[int]) -> Scores:
        judged = [o for o in outcomes if o.facets]
        facets = sum(len(o.facets) for o in judged)
        n = len(judged)

        def mean(values: list[float]) -> float:
            return sum(values) / len(values) if values else 0.0

        at = [
            AtK(
                k=k,
                recall=(
                    sum(recall_at(o.ranks, k) * len(o.facets) for o in judged) / facets
                    if facets else 0.0
                ),
                success=mean([success_at(o.ranks, k) for o in judged]),
                complete=mean([complete_at(o.ranks, k) for o in judged]),
            )
            for k in ks
        ]
        answered = [o for o in outcomes if o.answer is not None]
        recall = precision = None
        if answered:
            cited_facets = [f.cited for o in judged if o.answer is not None for f in o.facets]
            recall = sum(1 for c in cited_facets if c) / len(cited_facets) if cited_facets else 0.0
            citations = sum(o.answer.citations for o in answered if o.answer is not None)
            valid = sum(o.answer.valid_citations for o in answered if o.answer is not None)
            precision = valid / citations if citations else None
        routed = [o for o in judged if any(f.routed is not None for f in o.facets)]
        routed_facets = routed_questions = None
        if routed:
            flags = [f.routed is True for o in routed for f in o.facets]
            routed_facets = sum(flags) / len(flags)
            routed_questions = mean([float(all(f.routed for f in o.facets)) for o in routed])
        return cls(
            questions=n, facets=facets, at=at,
            mrr=mean([reciprocal_rank(o.ranks) for o in judged]),
            ndcg=mean([ndcg_at(o.ranks, NDCG_K) for o in judged]),
            citation_recall=recall, citation_precision=precision,
            routed_facets=routed_facets, routed_questions=routed_questions,
        )


class Latency(_Frozen):
    """Seconds per question of one set-up, as measured around each search."""

    p50_ms: float
    p95_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        if not seconds:
            return cls(p50_ms=0.0, p95_ms=0.0, mean_ms=0.0)
        ordered = sorted(seconds)
        p95 = (
            statistics.quantiles(ordered, n=20, method="inclusive")[18]
            if len(ordered) > 1 else ordered[0]
        )
        return cls(
            p50_ms=statistics.median(ordered) * 1000, p95_ms=p95 * 1000,
            mean_ms=statistics.fmean(ordered) * 1000,
        )


class SetupResult(_Frozen):
    """One set-up (search settings over one index) evaluated on every question."""

    name: str
    index: str
    settings: dict[str, Any]
    overall: Scores
    by_kind: dict[str, Scores]
    latency: Latency
    #: Wall seconds for the whole set-up (opening the index and model included).
    seconds: float
    concurrency: int
    failed: int
    questions: list[QuestionOutcome]
    #: The answerer that answered each question (``None``: search only).
    answerer: str | None = None


class Difference(_Frozen):
    """A facet found by some set-ups and missed by others (at the largest k)."""

    question_id: str
    question: str
    facet: str
    #: Rank of the facet per set-up name (``None``: missed).
    ranks: dict[str, int | None]

    @property
    def found_by(self) -> list[str]:
        return [name for name, rank in self.ranks.items() if rank is not None]

    @property
    def missed_by(self) -> list[str]:
        return [name for name, rank in self.ranks.items() if rank is None]


class EvaluationReport(_Frozen):
    """Everything ``ragloom eval`` found: one :class:`SetupResult` per set-up, in order."""

    schema_version: int = SCHEMA_VERSION
    ragloom_version: str
    questions_file: str
    ks: list[int]
    ndcg_k: int = NDCG_K
    setups: list[SetupResult]
    warnings: list[str] = Field(default_factory=list)
    differences: list[Difference] = Field(default_factory=list)

    def setup(self, name: str) -> SetupResult:
        """The set-up called ``name``."""
        for result in self.setups:
            if result.name == name:
                return result
        raise KeyError(f"no set-up {name!r}; set-ups: {', '.join(s.name for s in self.setups)}")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def differences(setups: Sequence[SetupResult], k: int) -> list[Difference]:
    """The facets on which the set-ups disagree (found at rank <= k by some, not by others)."""
    if len(setups) < 2:
        return []
    found: list[Difference] = []
    first = setups[0]
    for n, outcome in enumerate(first.questions):
        for facet in outcome.facets:
            ranks: dict[str, int | None] = {}
            for setup in setups:
                rank = next(
                    (f.rank for f in setup.questions[n].facets if f.label == facet.label), None
                )
                ranks[setup.name] = rank if rank is not None and rank <= k else None
            if len({rank is None for rank in ranks.values()}) > 1:
                found.append(Difference(
                    question_id=outcome.id, question=outcome.question, facet=facet.label,
                    ranks=ranks,
                ))
    return found
