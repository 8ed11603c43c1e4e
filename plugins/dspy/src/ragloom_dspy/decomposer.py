"""``DSPyDecomposer``: the DSPy sub-query generator as a ragloom ``QueryTransformer``.

Registered as ``dspy`` in the ``ragloom.decomposers`` entry-point group.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import dspy
from ragloom.errors import ConfigurationError
from ragloom.query import QueryTransformer

from ._lm import LMBinding, on_asyncio
from .generator import SubQueryGenerator

__all__ = ["DSPyDecomposer"]

logger = logging.getLogger(__name__)


class DSPyDecomposer(QueryTransformer):
    """Decompose a query into sub-queries with DSPy (:class:`SubQueryGenerator`).

    The LM is ``lm`` (a DSPy LM object), or built from ``model`` (a DSPy model string such as
    ``"openai/gpt-4o-mini"``) and ``lm_options`` (keyword arguments of ``dspy.LM``), or, when
    neither is given, the LM of the DSPy context the pipeline runs in. ``adapter`` (``"chat"``
    or ``"json"``) selects DSPy's output format; ``None`` keeps the context's (ChatAdapter).
    ``demos`` are few-shot examples (see :meth:`SubQueryGenerator.set_demos`);
    ``list_output`` types the answer as a list (for JSON-schema-constrained LMs).
    The model's trouble never fails a query: the generator falls back to a rewrite of it.

    Raises:
        ConfigurationError: bad bounds (``1 <= min_subqueries <= max_subqueries``), both or
            neither consistent ``lm``/``model``, ``lm_options`` without ``model``, an unknown
            adapter.
    """

    step_id: ClassVar[str] = "ragloom-dspy/decomposer"

    def __init__(
        self,
        *,
        lm: Any = None,
        model: str | None = None,
        lm_options: Mapping[str, Any] | None = None,
        min_subqueries: int = 2,
        max_subqueries: int = 5,
        adapter: str | None = None,
        demos: Sequence[Mapping[str, Any]] | None = None,
        list_output: bool = False,
    ) -> None:
        try:
            self.generator = SubQueryGenerator(
                min_subqueries, max_subqueries, list_output=list_output
            )
            self.binding = LMBinding(lm=lm, model=model, lm_options=lm_options, adapter=adapter)
            if demos is not None:
                self.generator.set_demos(demos)
            self.demos = [dict(d) for d in demos] if demos else []
        except ConfigurationError:
            raise
        except ValueError as exc:
            raise ConfigurationError(f"DSPyDecomposer: {exc}") from None

    @property
    def lm(self) -> Any:
        """The DSPy LM in use, or ``None`` for the LM of the current DSPy context."""
        return self.binding.lm

    def config(self) -> Mapping[str, Any]:
        config = {
            **self.binding.config(),
            "min_subqueries": self.generator.min_subqueries,
            "max_subqueries": self.generator.max_subqueries,
        }
        if self.demos:
            config["demos"] = self.demos
        if self.generator.list_output:
            config["list_output"] = True
        return config

    async def predict(self, query: str) -> dspy.Prediction:
        """The generator's full prediction for ``query`` (sub-queries, rationale, fallback)."""
        if not on_asyncio():
            import anyio

            return await anyio.to_thread.run_sync(self._predict_sync, query)
        with self.binding.context():
            return await self.generator.acall(query)

    def _predict_sync(self, query: str) -> dspy.Prediction:
        with self.binding.context():
            return self.generator(query)

    async def transform(self, query: str) -> list[str]:
        """The sub-queries of ``query``; ``[]`` for a blank query (the pipeline's empty policy
        then decides)."""
        if not query.strip():
            return []
        prediction = await self.predict(query)
        if prediction.fallback:
            logger.info(
                "DSPyDecomposer fell back to a rewrite of %r: %s", query, prediction.fallback_reason
            )
        return list(prediction.sub_queries)
