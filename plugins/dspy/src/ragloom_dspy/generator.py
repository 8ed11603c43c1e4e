"""``SubQueryGenerator``: a DSPy module that splits a query into focused sub-queries.

It splits a multi-faceted query into focused sub-queries with ``dspy.ChainOfThought`` and never
raises on model trouble: an LM error or an unreadable answer becomes a fallback rewrite of the
query, reported as data (``fallback``, ``fallback_reason``) as well as in the rationale.
Sub-queries outside the length the signature asks for (5-12 words) are kept and reported in
``off_length``.
The LM is whatever DSPy's settings hold where it is called (``dspy.context(lm=...)``); the
batch methods carry the caller's DSPy context into their worker threads and tasks.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import dspy
from dspy.utils.exceptions import AdapterParseError

from ._heuristics import check_bounds, clamp, complexity_score, fallback_rewrite
from ._parsing import clean_sub_queries, parse_sub_queries
from .errors import NoLMConfiguredError
from .signatures import SUB_QUERY_WORDS, SubQueryListSignature, SubQuerySignature

__all__ = ["BELOW_MINIMUM", "SubQueryGenerator"]

logger = logging.getLogger(__name__)

#: ``fallback_reason`` of a result that kept fewer valid sub-queries than ``min_subqueries``.
BELOW_MINIMUM = "below minimum"
_MAX_REASON_CHARS = 300


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must not be empty")
    return query


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_REASON_CHARS else text[: _MAX_REASON_CHARS - 3] + "..."


def _check_word_range(word_range: Any) -> tuple[int, int] | None:
    if word_range is None:
        return None
    if (
        not isinstance(word_range, tuple | list)
        or len(word_range) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in word_range)
        or not 1 <= word_range[0] <= word_range[1]
    ):
        raise ValueError(
            f"word_range must be None or two integers (low, high) with 1 <= low <= high, "
            f"got {word_range!r}"
        )
    return (int(word_range[0]), int(word_range[1]))


def _off_length(sub_queries: list[str], word_range: tuple[int, int] | None) -> list[str]:
    if word_range is None:
        return []
    low, high = word_range
    return [s for s in sub_queries if not low <= len(s.split()) <= high]


def _reasoning(result: Any) -> str | None:
    # DSPy's ChainOfThought names its field ``reasoning``; an older API named it
    # ``rationale``, which no longer exists. Read the current field.
    value = result.get("reasoning") if hasattr(result, "get") else None
    return value if isinstance(value, str) and value.strip() else None


def _demo(index: int, demo: Mapping[str, Any], *, list_output: bool) -> dspy.Example:
    if not isinstance(demo, Mapping):
        raise ValueError(f"demos[{index}] must be a mapping, got {type(demo).__name__}")
    unknown = set(demo) - {"query", "sub_queries", "reasoning", "num_subqueries"}
    if unknown:
        raise ValueError(f"demos[{index}] has unknown keys {sorted(unknown)}")
    query, subs = demo.get("query"), demo.get("sub_queries")
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"demos[{index}] needs a non-empty 'query' string")
    if not isinstance(subs, list | tuple) or not subs or not all(isinstance(s, str) for s in subs):
        raise ValueError(f"demos[{index}] needs 'sub_queries', a non-empty list of strings")
    count = demo.get("num_subqueries", len(subs))
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"demos[{index}] 'num_subqueries' must be a positive integer")
    fields: dict[str, Any] = {
        "original_query": query,
        "num_subqueries": count,
        "sub_queries": list(subs) if list_output else json.dumps(list(subs)),
    }
    reasoning = demo.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, str):
            raise ValueError(f"demos[{index}] 'reasoning' must be a string")
        fields["reasoning"] = reasoning
    return dspy.Example(**fields).with_inputs("original_query", "num_subqueries")


class SubQueryGenerator(dspy.Module):  # type: ignore[misc]
    """Decompose a complex query into ``min_subqueries``..``max_subqueries`` focused sub-queries.

    ``max_concurrency`` bounds how many queries :meth:`batch_generate` (threads) and
    :meth:`abatch_generate` (tasks) send to the LM at once. ``list_output=True`` declares the
    output field as ``list[str]`` (:class:`SubQueryListSignature`) instead of a string
    holding JSON: use it with DSPy's ``JSONAdapter`` and an LM that honours a JSON schema
    (structured outputs, a llama.cpp grammar).

    ``word_range`` is the length the signature asks of each sub-query, ``(5, 12)`` words: a
    sub-query outside it is kept (dropping it could lose a facet of the query) but listed in
    the prediction's ``off_length`` and logged, so that callers can see the model ignored
    the rule; ``None`` turns the check off.

    Raises ``ValueError`` unless ``1 <= min_subqueries <= max_subqueries``,
    ``max_concurrency >= 1`` and ``word_range`` is ``None`` or ``(low, high)`` with
    ``1 <= low <= high``.
    """

    def __init__(
        self,
        min_subqueries: int = 2,
        max_subqueries: int = 5,
        max_concurrency: int = 8,
        *,
        list_output: bool = False,
        word_range: tuple[int, int] | None = SUB_QUERY_WORDS,
    ) -> None:
        super().__init__()
        check_bounds(min_subqueries, max_subqueries)
        self.word_range = _check_word_range(word_range)
        self.min_subqueries = min_subqueries
        self.max_subqueries = max_subqueries
        self.max_concurrency = _check_positive_int("max_concurrency", max_concurrency)
        self.list_output = bool(list_output)
        signature = SubQueryListSignature if self.list_output else SubQuerySignature
        self.generate = dspy.ChainOfThought(signature)

    # -- few-shot demos ----------------------------------------------------------------------------

    def set_demos(self, demos: Sequence[Mapping[str, Any]]) -> None:
        """Use worked examples as few-shot demos (small models follow the format better).

        Each demo is ``{"query": str, "sub_queries": [str, ...]}`` with optional
        ``"reasoning"`` and ``"num_subqueries"`` (default: the number of sub-queries).
        Raises ``ValueError`` naming the bad demo.
        """
        self.generate.predict.demos = [
            _demo(i, d, list_output=self.list_output) for i, d in enumerate(demos)
        ]

    # -- the complexity heuristic -------------------------------------------------------------

    def determine_complexity(self, query: str) -> int:
        """An estimate of how many sub-queries ``query`` needs, clamped to the bounds.

        One, plus one per signal: comparison words, conjunctions, more than ten words, list
        punctuation. Words match whole and case-insensitively ("and" is not in "standard").
        """
        return clamp(complexity_score(query), self.min_subqueries, self.max_subqueries)

    #: The older, private name of :meth:`determine_complexity`, kept for callers of it.
    _determine_complexity = determine_complexity

    def target_count(self, query: str, num_subqueries: int | None = None) -> int:
        """``num_subqueries`` clamped to the bounds, or the heuristic's count when ``None``."""
        if num_subqueries is None:
            return self.determine_complexity(query)
        if isinstance(num_subqueries, bool) or not isinstance(num_subqueries, int):
            raise ValueError(f"num_subqueries must be an integer or None, got {num_subqueries!r}")
        return clamp(num_subqueries, self.min_subqueries, self.max_subqueries)

    # -- one query ------------------------------------------------------------------------------

    def forward(self, query: str, num_subqueries: int | None = None) -> dspy.Prediction:
        """Sub-queries for ``query`` as a ``dspy.Prediction``.

        Fields: ``sub_queries`` (list of strings, never empty), ``rationale`` (the model's
        chain-of-thought ``reasoning``, or a description of the fallback), ``fallback``
        (whether the sub-queries are the fallback rewrite), ``fallback_reason`` (why, or
        ``"below minimum"`` when fewer valid sub-queries than ``min_subqueries`` were kept,
        else ``None``), ``num_subqueries`` (the count asked of the model) and
        ``off_length`` (the model's sub-queries outside ``word_range``, in order; ``[]`` for a
        fallback rewrite, which is the user's own words).
        Raises only for a bad argument (a non-string or blank query, a non-integer count) or
        :class:`~ragloom_dspy.errors.NoLMConfiguredError` when no LM is set at all.
        """
        query = _check_query(query)
        target = self.target_count(query, num_subqueries)
        self._require_lm()
        try:
            result = self.generate(original_query=query, num_subqueries=target)
        except Exception as exc:  # noqa: BLE001 - never crash on the model: fall back
            return self._failed(query, target, exc)
        return self._finish(query, target, result)

    async def aforward(self, query: str, num_subqueries: int | None = None) -> dspy.Prediction:
        """Async :meth:`forward`, through DSPy's async LM path (``acall``)."""
        query = _check_query(query)
        target = self.target_count(query, num_subqueries)
        self._require_lm()
        try:
            result = await self.generate.acall(original_query=query, num_subqueries=target)
        except Exception as exc:  # noqa: BLE001 - never crash on the model: fall back
            return self._failed(query, target, exc)
        return self._finish(query, target, result)

    def _require_lm(self) -> None:
        if self.generate.predict.lm is None and dspy.settings.lm is None:
            raise NoLMConfiguredError(
                "SubQueryGenerator has no LM: use dspy.context(lm=...) or dspy.configure(lm=...), "
                "or give the ragloom decomposer an lm/model"
            )

    def _failed(self, query: str, target: int, exc: Exception) -> dspy.Prediction:
        if isinstance(exc, AdapterParseError):
            reason = "unparseable LM output: the answer did not contain the expected fields"
        else:
            reason = _short(f"LM error: {type(exc).__name__}: {exc}")
        logger.warning("sub-query generation fell back for %r: %s", query, reason)
        return self._fallback(query, target, reason, None)

    def _fallback(
        self, query: str, target: int, reason: str, rationale: str | None
    ) -> dspy.Prediction:
        return dspy.Prediction(
            sub_queries=[fallback_rewrite(query)],
            rationale=rationale or f"Fallback rewrite of the original query: {reason}",
            fallback=True,
            fallback_reason=reason,
            num_subqueries=target,
            off_length=[],
        )

    def _finish(self, query: str, target: int, result: Any) -> dspy.Prediction:
        rationale = _reasoning(result)
        raw = result.get("sub_queries") if hasattr(result, "get") else None
        parsed = parse_sub_queries(raw)
        if parsed.items is None:
            reason = f"invalid output: {parsed.error}"
            logger.info("sub-query generation fell back for %r: %s", query, reason)
            return self._fallback(query, target, reason, rationale)
        sub_queries = clean_sub_queries(parsed.items)
        if not sub_queries:
            reason = "no valid sub-queries in the output (all empty or duplicates)"
            logger.info("sub-query generation fell back for %r: %s", query, reason)
            return self._fallback(query, target, reason, rationale)
        # Below the minimum: keep what the model got right and say it is short.
        short = len(sub_queries) < self.min_subqueries
        kept = sub_queries[: self.max_subqueries]
        off_length = _off_length(kept, self.word_range)
        if off_length:
            low, high = self.word_range or (0, 0)
            logger.info(
                "%d of %d sub-queries for %r are outside %d-%d words: %r",
                len(off_length), len(kept), query, low, high, off_length,
            )
        return dspy.Prediction(
            sub_queries=kept,
            rationale=rationale or "",
            fallback=False,
            fallback_reason=BELOW_MINIMUM if short else None,
            num_subqueries=target,
            off_length=off_length,
        )

    # -- many queries -----------------------------------------------------------------------------

    def _check_queries(self, queries: Sequence[str]) -> list[str]:
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of strings, not a string")
        return [_check_query(q) for q in queries]

    def batch_predict(self, queries: Sequence[str]) -> list[dspy.Prediction]:
        """:meth:`forward` over ``queries`` in threads, at most ``max_concurrency`` at once.

        Results are in input order and keep each query's rationale and fallback data. Each
        worker runs in a copy of the caller's context, so ``dspy.context(lm=...)`` set around
        the call applies to every query.
        """
        checked = self._check_queries(queries)
        if not checked:
            return []
        workers = min(self.max_concurrency, len(checked))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragloom-dspy") as pool:
            # One context copy per query: a Context cannot be entered by two threads at once.
            futures = [pool.submit(contextvars.copy_context().run, self, q) for q in checked]
            return [f.result() for f in futures]

    def batch_generate(self, queries: Sequence[str]) -> list[list[str]]:
        """One list of sub-queries per query, in input order, computed
        concurrently (see :meth:`batch_predict` for the predictions with rationales)."""
        return [p.sub_queries for p in self.batch_predict(queries)]

    async def abatch_predict(self, queries: Sequence[str]) -> list[dspy.Prediction]:
        """Async :meth:`batch_predict`: tasks on the running loop, at most ``max_concurrency``
        LM calls in flight, results in input order."""
        checked = self._check_queries(queries)
        results: list[dspy.Prediction | None] = [None] * len(checked)
        limiter = anyio.CapacityLimiter(self.max_concurrency)

        async def run(index: int, query: str) -> None:
            async with limiter:
                results[index] = await self.acall(query)

        async with anyio.create_task_group() as group:
            for index, query in enumerate(checked):
                group.start_soon(run, index, query)
        return [r for r in results if r is not None]

    async def abatch_generate(self, queries: Sequence[str]) -> list[list[str]]:
        """Async :meth:`batch_generate`."""
        return [p.sub_queries for p in await self.abatch_predict(queries)]
