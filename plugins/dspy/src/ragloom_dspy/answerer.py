"""``DSPyAnswerer``: answers with citations written by any model DSPy supports.

Registered as ``dspy`` in the ``ragloom.answerers`` entry-point group. For each ask of the
retrieval result, :class:`CitedAnswerGenerator` (a ``dspy.Module`` over
:class:`CitedAnswerSignature`) gets the whole question, the asks, the ask and the passages
that ask found, numbered as in the result; it answers from them and names the numbers it
cites. The answerer checks every number: a passage it was not given is refused (and
reported in the answer's ``warnings``); an answer left without a valid citation, or one the
model says is not in the passages, becomes :data:`~ragloom.answering.NOT_FOUND` rather than an
uncited claim. The per-ask answers are then composed into one, each followed by the passages
it cites; a citation spans its whole passage (the text the model was shown).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import dspy
from dspy.utils.exceptions import AdapterParseError
from ragloom.answering import (
    NOT_FOUND,
    Answer,
    Answerer,
    AnswerError,
    Claim,
    asks_of,
    cite,
    compose,
    passages_for,
)
from ragloom.errors import ConfigurationError
from ragloom.multi_retrieval import FusedPassage, RetrievalResult

from ._lm import LMBinding, on_asyncio
from .errors import NoLMConfiguredError
from .generator import _short

__all__ = ["CitedAnswerGenerator", "CitedAnswerSignature", "DSPyAnswerer", "parse_citations"]


class CitedAnswerSignature(dspy.Signature):  # type: ignore[misc]
    """Answer one part of a question from the numbered passages, and cite them.

    Use only what the passages say: never add facts of your own. Cite the number of every
    passage the answer rests on. If the passages do not answer this part, answer exactly
    "Not found in the documents." and cite nothing.
    """

    question: str = dspy.InputField(desc="The user's whole question (for context).")
    asks: str = dspy.InputField(desc="The parts the question was split into, one per line.")
    ask: str = dspy.InputField(desc="The part of the question to answer now.")
    passages: str = dspy.InputField(
        desc="The passages found for this part, each starting '[n] (document)' on its line."
    )
    answer: str = dspy.OutputField(
        desc="A short answer to the part from the passages only, or 'Not found in the "
        "documents.'"
    )
    cited: str = dspy.OutputField(
        desc="The numbers of the passages the answer rests on, as a JSON array such as "
        "[1, 3]; [] when not found."
    )


class CitedAnswerGenerator(dspy.Module):  # type: ignore[misc]
    """The DSPy module behind :class:`DSPyAnswerer`: ``dspy.Predict(CitedAnswerSignature)``
    (a module of its own, to be optimized with DSPy's tools and put back)."""

    def __init__(self) -> None:
        super().__init__()
        self.respond = dspy.Predict(CitedAnswerSignature)

    def forward(self, question: str, asks: str, ask: str, passages: str) -> dspy.Prediction:
        return self.respond(question=question, asks=asks, ask=ask, passages=passages)

    async def aforward(
        self, question: str, asks: str, ask: str, passages: str
    ) -> dspy.Prediction:
        return await self.respond.acall(question=question, asks=asks, ask=ask, passages=passages)


_NUMBER = re.compile(r"\d+")
#: Citation marks a model writes inside its answer: ``[1]``, ``[1, 3]``, ``[2][4]``.
_MARKS = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_NOT_FOUND_WORDS = NOT_FOUND.casefold().rstrip(".")


def parse_citations(cited: Any, answer: str) -> tuple[list[int], str]:
    """The passage numbers a model cited (its ``cited`` field, read leniently: a JSON array,
    "1, 3", "passages 1 and 3"; plus marks such as ``[2]`` inside its answer), in order,
    once each; and the answer without those marks."""
    numbers: list[int] = []
    if isinstance(cited, list | tuple):
        numbers += [int(n) for n in cited if isinstance(n, int) and not isinstance(n, bool)]
        numbers += [int(m) for n in cited if isinstance(n, str) for m in _NUMBER.findall(n)]
    elif isinstance(cited, str):
        numbers += [int(m) for m in _NUMBER.findall(cited)]
    elif isinstance(cited, int) and not isinstance(cited, bool):
        numbers.append(cited)
    for marks in _MARKS.findall(answer):
        numbers += [int(m) for m in _NUMBER.findall(marks)]
    text = " ".join(_MARKS.sub("", answer).split())
    return list(dict.fromkeys(numbers)), text


def _failed(exc: Exception) -> AnswerError:
    return AnswerError(_short(f"LM error: {type(exc).__name__}: {exc}"))


def _numbered(passages: Sequence[tuple[int, FusedPassage]]) -> str:
    return "\n\n".join(
        f"[{number}] ({passage.document_id or passage.chunk_id})\n{passage.content.strip()}"
        for number, passage in passages
    )


class DSPyAnswerer(Answerer):
    """Answer with citations through a DSPy LM (:class:`CitedAnswerGenerator`).

    The LM is ``lm`` (a DSPy LM object), or built from ``model`` (a DSPy model string such as
    ``"openai/gpt-4o-mini"`` or ``"ollama_chat/llama3.2"``) and ``lm_options`` (keyword
    arguments of ``dspy.LM``: ``api_base``, ``temperature``...), or, when neither is given, the
    LM of the DSPy context it runs in; ``adapter`` (``"chat"`` or ``"json"``) selects DSPy's
    output format. Each ask is shown at most ``passages_per_ask`` of the passages it found;
    an ask that found none is answered "not found" without calling the model.

    An answer the model's format makes unreadable becomes "not found" with a warning; an LM
    failure (the server down, a bad key) raises :class:`~ragloom.answering.AnswerError`.

    Raises:
        ConfigurationError: an invalid LM configuration or ``passages_per_ask`` below 1.
    """

    step_id: ClassVar[str] = "ragloom-dspy/answerer"

    def __init__(
        self,
        *,
        lm: Any = None,
        model: str | None = None,
        lm_options: Mapping[str, Any] | None = None,
        adapter: str | None = None,
        passages_per_ask: int = 5,
    ) -> None:
        if (
            isinstance(passages_per_ask, bool) or not isinstance(passages_per_ask, int)
            or passages_per_ask < 1
        ):
            raise ConfigurationError(
                f"DSPyAnswerer: passages_per_ask must be an integer >= 1, got {passages_per_ask!r}"
            )
        try:
            self.binding = LMBinding(lm=lm, model=model, lm_options=lm_options, adapter=adapter)
        except ValueError as exc:
            raise ConfigurationError(f"DSPyAnswerer: {exc}") from None
        self.passages_per_ask = passages_per_ask
        self.generator = CitedAnswerGenerator()

    @property
    def lm(self) -> Any:
        """The DSPy LM in use, or ``None`` for the LM of the current DSPy context."""
        return self.binding.lm

    def config(self) -> Mapping[str, Any]:
        return {**self.binding.config(), "passages_per_ask": self.passages_per_ask}

    def _require_lm(self) -> None:
        lm = self.binding.lm or self.generator.respond.lm or dspy.settings.lm
        if lm is None:
            raise NoLMConfiguredError(
                "DSPyAnswerer has no LM: give it lm= or model= (ragloom ask --answerer dspy "
                "--answerer-option model=...), or use dspy.context(lm=...)"
            )

    def _inputs(self, question: str, retrieval: RetrievalResult) -> list[
        tuple[str, list[tuple[int, FusedPassage]]]
    ]:
        return [
            (ask, passages_for(retrieval, ask, self.passages_per_ask))
            for ask in asks_of(retrieval)
        ]

    def answer_sync(self, question: str, retrieval: RetrievalResult) -> Answer:
        work = self._inputs(question, retrieval)
        asks = "\n".join(ask for ask, _ in work)
        if any(given for _, given in work):
            self._require_lm()
        outcomes: list[Any] = []
        for ask, given in work:
            if not given:
                outcomes.append(None)
                continue
            with self.binding.context():
                outcomes.append(self._call(
                    question=question, asks=asks, ask=ask, passages=_numbered(given)
                ))
        return self._finish(question, retrieval, work, outcomes)

    async def answer(self, question: str, retrieval: RetrievalResult) -> Answer:
        if not on_asyncio():
            import anyio

            return await anyio.to_thread.run_sync(self.answer_sync, question, retrieval)
        import anyio

        work = self._inputs(question, retrieval)
        asks = "\n".join(ask for ask, _ in work)
        if any(given for _, given in work):
            self._require_lm()
        outcomes: list[Any] = [None] * len(work)

        async def one(index: int, ask: str, given: list[tuple[int, FusedPassage]]) -> None:
            with self.binding.context():
                try:
                    outcomes[index] = await self.generator.acall(
                        question=question, asks=asks, ask=ask, passages=_numbered(given)
                    )
                except Exception as exc:  # noqa: BLE001 - sorted out below
                    outcomes[index] = exc

        async with anyio.create_task_group() as group:
            for index, (ask, given) in enumerate(work):
                if given:
                    group.start_soon(one, index, ask, given)
        for outcome in outcomes:
            if isinstance(outcome, Exception) and not isinstance(outcome, AdapterParseError):
                raise _failed(outcome) from outcome
        return self._finish(question, retrieval, work, outcomes)

    def _call(self, **inputs: str) -> Any:
        try:
            return self.generator(**inputs)
        except AdapterParseError as exc:
            return exc
        except Exception as exc:
            raise _failed(exc) from exc

    def _finish(
        self,
        question: str,
        retrieval: RetrievalResult,
        work: list[tuple[str, list[tuple[int, FusedPassage]]]],
        outcomes: list[Any],
    ) -> Answer:
        claims: list[Claim] = []
        not_found: list[str] = []
        warnings: list[str] = []
        for (ask, given), outcome in zip(work, outcomes, strict=True):
            claim = self._claim(retrieval, ask, given, outcome, warnings)
            if not claim.citations:
                not_found.append(ask)
            claims.append(claim)
        return Answer(
            question=question,
            text=compose(question, [ask for ask, _ in work], claims),
            claims=claims,
            not_found=not_found,
            answerer="dspy",
            warnings=warnings,
            retrieval=retrieval,
        )

    @staticmethod
    def _claim(
        retrieval: RetrievalResult,
        ask: str,
        given: list[tuple[int, FusedPassage]],
        outcome: Any,
        warnings: list[str],
    ) -> Claim:
        nothing = Claim(text=NOT_FOUND, ask=ask)
        if outcome is None:
            return nothing
        if isinstance(outcome, AdapterParseError):
            warnings.append(f"{ask!r}: the model's answer could not be read; not found")
            return nothing
        raw = outcome.get("answer")
        text = raw if isinstance(raw, str) else ""
        numbers, text = parse_citations(outcome.get("cited"), text)
        offered = {number for number, _ in given}
        refused = [n for n in numbers if n not in offered]
        valid = [n for n in numbers if n in offered]
        if refused:
            warnings.append(
                f"{ask!r}: the model cited passage(s) {refused} it was not given (it was "
                f"given {sorted(offered)}); refused"
            )
        if not text or _NOT_FOUND_WORDS in text.casefold():
            return nothing
        if not valid:
            warnings.append(
                f"{ask!r}: the model's answer cites no passage it was given; not found rather "
                "than an uncited claim"
            )
            return nothing
        return Claim(text=text, ask=ask, citations=[cite(retrieval, n) for n in valid])
