"""Measuring retrieval on your own labelled questions (``ragloom eval``, ``ragloom.evaluate``).

A question file says, for each question, which documents (or passages) answer each of its
facets; :func:`evaluate` runs the same search ``ragloom search`` runs, once per set-up and
index, and scores what came back with trec_eval's measures (facet recall, hit rate and
completeness at several k, MRR, nDCG@10), per question kind and overall, with per-question
detail and the time each search took.
"""

from __future__ import annotations

from ._html import render_html
from ._judge import DocumentIndex, facet_ranks, matches
from ._metrics import complete_at, ndcg_at, recall_at, reciprocal_rank, success_at
from ._questions import Expectation, Facet, LabelledQuestion, QuestionSet, load_questions
from ._report import (
    SCHEMA_VERSION,
    AtK,
    Difference,
    EvaluationReport,
    FacetOutcome,
    Latency,
    QuestionOutcome,
    Scores,
    SetupResult,
)
from ._run import DEFAULT_KS, aevaluate, evaluate

__all__ = [
    "DEFAULT_KS",
    "SCHEMA_VERSION",
    "AtK",
    "Difference",
    "DocumentIndex",
    "EvaluationReport",
    "Expectation",
    "Facet",
    "FacetOutcome",
    "LabelledQuestion",
    "Latency",
    "QuestionOutcome",
    "QuestionSet",
    "Scores",
    "SetupResult",
    "aevaluate",
    "complete_at",
    "evaluate",
    "facet_ranks",
    "load_questions",
    "matches",
    "ndcg_at",
    "recall_at",
    "reciprocal_rank",
    "render_html",
    "success_at",
]
