"""Answers with citations: the ``answerer`` kind and the offline extractive answerer.

An :class:`Answerer` turns a question and its :class:`~ragloom.multi_retrieval.RetrievalResult`
(the asks it was split into, their routes, the fused passages and which ask found each) into an
:class:`Answer`: claims, each citing the passages it rests on by their number in the result,
their chunk id and an exact character span of the source document. A citation's ``quote`` is
exactly ``document_text[start:end]`` (and the same slice of the cited passage); an answer that
cites nothing says so (``found`` is false and its text is :data:`NOT_FOUND`).

:class:`ExtractiveAnswerer` needs no model: for each ask, it scores the sentences of the
passages that ask found with BM25 against the ask and quotes the best ones, de-duplicated,
with their spans. It is the default of ``ragloom ask`` and :func:`ask`.
"""

from __future__ import annotations

import math
import re
from abc import ABC
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, computed_field

from .component import Component
from .errors import ComponentTypeError, ConfigurationError, ItemProcessingError
from .multi_retrieval import FusedPassage, RetrievalResult

if TYPE_CHECKING:
    from .searcher import SearchSettings

__all__ = [
    "DEFAULT_ANSWERER",
    "NOT_FOUND",
    "Answer",
    "AnswerError",
    "Answerer",
    "Citation",
    "Claim",
    "ExtractiveAnswerer",
    "ask",
    "asks_of",
    "check_citation",
    "check_citations",
    "cite",
    "compose",
    "create_answerer",
    "passages_for",
    "sentence_spans",
]

#: The answer of an ask (or a question) the passages do not answer.
NOT_FOUND = "Not found in the documents."
#: The answerer of ``ragloom ask`` when none is named (distribution-qualified).
DEFAULT_ANSWERER = "ragloom:extractive"


class AnswerError(ItemProcessingError):
    """An answerer could not answer a question (a model failed); the message says why."""


class Citation(BaseModel):
    """One passage a claim rests on, and the exact span of its document quoted.

    ``passage`` is the passage's number in the retrieval result (1 = the first, as ``ragloom
    search`` numbers them). ``start``/``end`` are offsets in the document's text and ``quote``
    is exactly ``text[start:end]``; for a passage without offsets (rendered text) they are
    ``None`` and ``quote`` is a slice of the passage itself.
    """

    model_config = ConfigDict(frozen=True)

    passage: int = Field(ge=1)
    chunk_id: str
    document_id: str | None
    start: int | None
    end: int | None
    quote: str


class Claim(BaseModel):
    """A sentence or statement of the answer, the ask it answers, and what it rests on.

    A claim without citations states that its ask is not answered (:data:`NOT_FOUND`).
    """

    model_config = ConfigDict(frozen=True)

    text: str
    ask: str | None = None
    citations: list[Citation] = Field(default_factory=list)


class Answer(BaseModel):
    """A question answered from its retrieved passages, with citations.

    ``text`` is the whole answer, each claim followed by the numbers of the passages it cites
    (``[2]``); ``claims`` are its parts; ``not_found`` the asks nothing answered;
    ``retrieval`` the search the answer was made from.
    """

    model_config = ConfigDict(frozen=True)

    question: str
    text: str
    claims: list[Claim] = Field(default_factory=list)
    not_found: list[str] = Field(default_factory=list)
    answerer: str = ""
    #: What went wrong on the way and was repaired (a citation refused, an unreadable answer).
    warnings: list[str] = Field(default_factory=list)
    retrieval: RetrievalResult | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def citations(self) -> list[Citation]:
        """Every citation of the answer, once each, in order of first use."""
        seen: set[tuple[int, int | None, int | None, str]] = set()
        out: list[Citation] = []
        for claim in self.claims:
            for citation in claim.citations:
                key = (citation.passage, citation.start, citation.end, citation.quote)
                if key not in seen:
                    seen.add(key)
                    out.append(citation)
        return out

    @computed_field  # type: ignore[prop-decorator]
    @property
    def found(self) -> bool:
        """Whether the answer cites anything (false: the documents do not answer it)."""
        return any(claim.citations for claim in self.claims)


class Answerer(Component, ABC):
    """Turns a question and its retrieval result into an :class:`Answer` with citations.

    Implement :meth:`answer_sync` for work that never awaits (the extractive answerer), or the
    ``async`` :meth:`answer` for work that does (an LLM); each calls the other by default.
    Citations must point to passages of the result given (build them with :func:`cite`).
    """

    async def answer(self, question: str, retrieval: RetrievalResult) -> Answer:
        """The answer to ``question`` from ``retrieval``."""
        return self.answer_sync(question, retrieval)

    def answer_sync(self, question: str, retrieval: RetrievalResult) -> Answer:
        """:meth:`answer` from synchronous code."""
        if type(self).answer is Answerer.answer:
            raise ComponentTypeError(
                f"{type(self).__name__} must implement answer_sync() or answer()"
            )
        from ._sync import run_sync

        return run_sync(self.answer, question, retrieval)


# -- helpers for every answerer ------------------------------------------------------------------


def asks_of(retrieval: RetrievalResult) -> list[str]:
    """The asks of a result: its sub-queries (the question itself when there are none)."""
    return list(retrieval.sub_queries) or [retrieval.query]


def passages_for(
    retrieval: RetrievalResult, ask: str, limit: int | None = None
) -> list[tuple[int, FusedPassage]]:
    """The passages ``ask`` found, as ``(number, passage)`` best first by that ask's rank
    (numbers count from 1 in the fused list); at most ``limit``.

    A result whose passages name no searches (built by hand) gives every passage to its one
    ask.
    """
    found: list[tuple[int, int, FusedPassage]] = []
    for number, passage in enumerate(retrieval.passages, 1):
        ranks = [hit.rank for hit in passage.found_by if hit.sub_query == ask]
        if ranks:
            found.append((min(ranks), number, passage))
    if not found and len(asks_of(retrieval)) == 1:
        anyone = not any(p.found_by for p in retrieval.passages)
        if anyone or ask == retrieval.query:
            found = [(number, number, p) for number, p in enumerate(retrieval.passages, 1)]
    found.sort(key=lambda item: (item[0], item[1]))
    chosen = [(number, passage) for _, number, passage in found]
    return chosen if limit is None else chosen[:limit]


def cite(
    retrieval: RetrievalResult, number: int, start: int | None = None, end: int | None = None
) -> Citation:
    """A citation of passage ``number`` of ``retrieval`` (1-based), of the span
    ``[start:end)`` of its text (offsets within the passage; default: all of it).

    Raises:
        ValueError: no such passage, or a span outside the passage.
    """
    if isinstance(number, bool) or not isinstance(number, int) or not (
        1 <= number <= len(retrieval.passages)
    ):
        raise ValueError(
            f"no passage {number!r}: the result has {len(retrieval.passages)} passage(s)"
        )
    passage = retrieval.passages[number - 1]
    low = 0 if start is None else start
    high = len(passage.content) if end is None else end
    if not 0 <= low <= high <= len(passage.content):
        raise ValueError(
            f"span [{low}:{high}) is outside passage {number} ({len(passage.content)} characters)"
        )
    offset = passage.start
    return Citation(
        passage=number,
        chunk_id=passage.chunk_id,
        document_id=passage.document_id,
        start=None if offset is None else offset + low,
        end=None if offset is None else offset + high,
        quote=passage.content[low:high],
    )


def check_citation(citation: Citation, retrieval: RetrievalResult) -> str | None:
    """What is wrong with one citation against ``retrieval`` (``None``: nothing).

    It must name a passage of the result by number, chunk id and document; its span must lie
    inside the passage; its quote must be exactly that slice of the passage's text (hence of
    the document's, the passage being ``text[passage.start:passage.end]``).
    """
    where = f"passage {citation.passage}"
    if not 1 <= citation.passage <= len(retrieval.passages):
        return f"{where}: the result has {len(retrieval.passages)} passages"
    passage = retrieval.passages[citation.passage - 1]
    if citation.chunk_id != passage.chunk_id:
        return f"{where}: chunk {citation.chunk_id!r} is not {passage.chunk_id!r}"
    if citation.document_id != passage.document_id:
        return f"{where}: document {citation.document_id!r} is not the passage's"
    if passage.start is None:
        if citation.start is not None or citation.quote not in passage.content:
            return f"{where}: the quote is not part of the passage"
        return None
    if citation.start is None or citation.end is None:
        return f"{where}: the span is missing"
    low, high = citation.start - passage.start, citation.end - passage.start
    if not 0 <= low <= high <= len(passage.content):
        return (
            f"{where}: span [{citation.start}:{citation.end}) is outside the passage "
            f"[{passage.start}:{passage.end})"
        )
    if passage.content[low:high] != citation.quote:
        return f"{where}: the quote is not the text at [{citation.start}:{citation.end})"
    return None


def _says_not_found(text: str) -> bool:
    return NOT_FOUND.casefold().rstrip(".") in text.casefold()


def check_citations(answer: Answer, retrieval: RetrievalResult) -> list[str]:
    """What is wrong with ``answer``'s citations against ``retrieval`` (empty: nothing):
    each citation as :func:`check_citation` checks it; a claim without citations, and an
    answer without any, must say :data:`NOT_FOUND`."""
    problems: list[str] = []
    for n, claim in enumerate(answer.claims, 1):
        for citation in claim.citations:
            problem = check_citation(citation, retrieval)
            if problem is not None:
                problems.append(f"claim {n}, {problem}")
        if not claim.citations and not _says_not_found(claim.text):
            problems.append(f"claim {n} cites nothing and does not say it was not found")
    if not answer.found and not _says_not_found(answer.text):
        problems.append("the answer cites nothing and does not say so")
    return problems


def compose(question: str, asks: Sequence[str], claims: Sequence[Claim]) -> str:
    """The text of an answer: each claim followed by the passages it cites (``[1][3]``),
    grouped under its ask when there are several asks; :data:`NOT_FOUND` for a question
    nothing answers."""

    def line(claim: Claim) -> str:
        marks = "".join(f"[{n}]" for n in dict.fromkeys(c.passage for c in claim.citations))
        return f"{claim.text} {marks}".rstrip()

    if not any(claim.citations for claim in claims) and len(asks) <= 1:
        return NOT_FOUND
    if len(asks) <= 1:
        return "\n".join(line(claim) for claim in claims)
    blocks = []
    for ask_text in asks:
        mine = [claim for claim in claims if claim.ask == ask_text] or [
            Claim(text=NOT_FOUND, ask=ask_text)
        ]
        blocks.append(ask_text + "\n" + "\n".join(f"  {line(claim)}" for claim in mine))
    return "\n".join(blocks)


# -- sentences -----------------------------------------------------------------------------------

#: Where a sentence of prose ends: terminal punctuation, closing quotes or brackets, and the
#: whitespace after them, unless a lower-case letter follows ("e.g. this" stays whole).
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+(?![a-z])")
#: A line that starts a block of its own: a heading, a list item, a table row, a fence, a
#: prompt, a directive.
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||```|~~~|\$\s|>>>\s|\.\.\s)")
_FENCE = re.compile(r"[ \t]*(?:```|~~~)")
_HEADING = re.compile(r"[ \t]*#{1,6}\s")
_UNDERLINE = re.compile(r"[ \t]*([=\-~^*+#`'\".:_])\1{2,}[ \t]*$")
_WORD = re.compile(r"\w+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences and lines of ``text`` worth quoting, as exact ``(start, end)`` spans
    (whitespace trimmed): prose split at sentence ends and blank lines; each list item,
    table row, prompt or code line on its own; headings (and their underlines) and code
    fences left out."""
    spans: list[tuple[int, int]] = []
    lines: list[tuple[int, int]] = []
    position = 0
    for raw in text.splitlines(keepends=True):
        lines.append((position, position + len(raw.rstrip("\r\n"))))
        position += len(raw)
    blocks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    in_fence = False
    for low, high in lines:
        line = text[low:high]
        if not line.strip():
            if current:
                blocks.append(current)
            current = []
            continue
        if _FENCE.match(line):
            if current:
                blocks.append(current)
            current = []
            in_fence = not in_fence
            continue
        if in_fence:  # a code line is a block of its own
            blocks.append([(low, high)])
            continue
        if _UNDERLINE.match(line) or _HEADING.match(line):
            if current:
                blocks.append(current)
            current = []
            continue
        if _BLOCK_START.match(line) and current:
            blocks.append(current)
            current = []
        current.append((low, high))
    if current:
        blocks.append(current)
    # a line followed by an underline is a heading (reStructuredText, setext Markdown)
    underlined = {
        lines[i - 1] for i in range(1, len(lines))
        if _UNDERLINE.match(text[slice(*lines[i])]) and not _FENCE.match(text[slice(*lines[i])])
    }
    for block in blocks:
        block = [span for span in block if span not in underlined]
        if not block:
            continue
        low, high = block[0][0], block[-1][1]
        start = low
        for match in _SENTENCE_END.finditer(text, low, high):
            spans.append((start, match.end()))
            start = match.end()
        spans.append((start, high))
    trimmed: list[tuple[int, int]] = []
    for low, high in spans:
        segment = text[low:high]
        left = len(segment) - len(segment.lstrip())
        right = len(segment.rstrip())
        if right > left and len(_WORD.findall(segment)) >= 2:
            trimmed.append((low + left, low + right))
    return trimmed


# -- BM25 over sentences -------------------------------------------------------------------------

#: Words that say nothing about what is asked (English function words and question words).
_STOP = frozenset((
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each",
    "either", "else", "etc", "few", "for", "from", "further", "get", "gets", "got", "had",
    "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "itself", "just", "let", "me", "might", "more", "most",
    "must", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "out", "over", "own", "same", "shall", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "upon", "us", "use", "used",
    "using", "very", "via", "was", "way", "we", "were", "what", "when", "where", "whether",
    "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "yes", "you",
    "your", "yours",
))


def _stem(word: str) -> str:
    """A light English suffix folding (plural -s/-es/-ies, -ing, -ed, final -e), so that
    "caches", "caching" and "cache" meet; not a linguistic stemmer."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The words of ``text`` that carry meaning, folded (case, light suffixes)."""
    words = (w for w in _WORD.findall(text.casefold()) if w not in _STOP)
    return [_stem(w) for w in words if not (len(w) == 1 and not w.isdigit())]


class _BM25:
    """Okapi BM25 over a small collection (the sentences of a result's passages)."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.average = (sum(self.lengths) / len(self.lengths)) if documents else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(documents)
        # the non-negative idf of Lucene's BM25
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def score(self, query: Sequence[str], index: int) -> float:
        counts, length = self.counts[index], self.lengths[index]
        norm = self.k1 * (1 - self.b + self.b * length / self.average) if self.average else 0.0
        total = 0.0
        for term in dict.fromkeys(query):
            tf = counts.get(term, 0)
            if tf:
                total += self.idf.get(term, 0.0) * tf * (self.k1 + 1) / (tf + norm)
        return total


def _clean(text: str) -> str:
    return " ".join(text.split())


_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


class ExtractiveAnswerer(Answerer):
    """An answer made of the documents' own sentences, no model needed.

    For each ask (sub-query) of the result, the sentences of the first ``passages_per_ask``
    passages it found are scored with Okapi BM25 (``k1``, ``b``; document frequencies over the
    sentences of every passage of the result, English function words left out, light suffix
    folding) against the ask, each divided by the rank the ask gave its passage (the search
    already judged the passage; a sentence of the third passage must match three times as
    well as one of the first). The best ``sentences_per_ask`` that share a word with the ask
    and score at least ``relative`` times the best are quoted, in score order, each once
    across the whole answer (a sentence quoted for one ask, or overlapping one, is not quoted
    again). An ask no sentence matches is answered :data:`NOT_FOUND`.

    Raises:
        ConfigurationError: a count below 1, ``k1`` below 0, ``b`` or ``relative`` outside
            [0, 1].
    """

    step_id: ClassVar[str] = "ragloom/extractive-answerer"

    def __init__(
        self,
        *,
        sentences_per_ask: int = 2,
        passages_per_ask: int = 3,
        k1: float = 1.2,
        b: float = 0.75,
        relative: float = 0.5,
    ) -> None:
        for name, value in (
            ("sentences_per_ask", sentences_per_ask), ("passages_per_ask", passages_per_ask)
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
        bounds = (("k1", k1, math.inf), ("b", b, 1.0), ("relative", relative, 1.0))
        for name, number, high in bounds:
            if isinstance(number, bool) or not isinstance(number, int | float) or not (
                0 <= number <= high
            ):
                raise ConfigurationError(
                    f"{name} must be a number in [0, {high}], got {number!r}"
                )
        self.sentences_per_ask = sentences_per_ask
        self.passages_per_ask = passages_per_ask
        self.k1 = float(k1)
        self.b = float(b)
        self.relative = float(relative)

    def config(self) -> Mapping[str, Any]:
        return {
            "sentences_per_ask": self.sentences_per_ask,
            "passages_per_ask": self.passages_per_ask,
            "k1": self.k1,
            "b": self.b,
            "relative": self.relative,
        }

    def answer_sync(self, question: str, retrieval: RetrievalResult) -> Answer:
        # every sentence of every passage: the collection BM25's statistics come from
        sentences: list[tuple[int, int, int]] = []  # (passage number, start, end) in passage
        for number, passage in enumerate(retrieval.passages, 1):
            sentences.extend((number, low, high) for low, high in sentence_spans(passage.content))
        texts = [retrieval.passages[n - 1].content[low:high] for n, low, high in sentences]
        scorer = _BM25([terms(text) for text in texts], self.k1, self.b)
        by_passage: dict[int, list[int]] = {}
        for index, (number, _, _) in enumerate(sentences):
            by_passage.setdefault(number, []).append(index)
        asks = asks_of(retrieval)
        claims: list[Claim] = []
        not_found: list[str] = []
        quoted: set[str] = set()
        spans: list[tuple[str | None, int, int, int]] = []  # document or passage, low, high
        for ask_text in asks:
            wanted = terms(ask_text)
            ranked: list[tuple[float, int, int, int]] = []
            for rank, (number, _) in enumerate(
                passages_for(retrieval, ask_text, self.passages_per_ask), 1
            ):
                for index in by_passage.get(number, []):
                    # a passage's sentences count as much as the ask ranked it (1/rank)
                    score = scorer.score(wanted, index) / rank
                    if score > 0:
                        ranked.append((-score, rank, sentences[index][1], index))
            ranked.sort()
            mine: list[Claim] = []
            for negative, _, _, index in ranked:
                if len(mine) >= self.sentences_per_ask or -negative < self.relative * -ranked[0][0]:
                    break
                number, low, high = sentences[index]
                text = _BULLET.sub("", _clean(texts[index]))
                if text.casefold() in quoted or _overlaps(spans, retrieval, number, low, high):
                    continue
                quoted.add(text.casefold())
                spans.append(_where(retrieval, number, low, high))
                mine.append(Claim(
                    text=text, ask=ask_text, citations=[cite(retrieval, number, low, high)]
                ))
            if not mine:
                not_found.append(ask_text)
                mine.append(Claim(text=NOT_FOUND, ask=ask_text))
            claims.extend(mine)
        return Answer(
            question=question,
            text=compose(question, asks, claims),
            claims=claims,
            not_found=not_found,
            answerer="extractive",
            retrieval=retrieval,
        )


def _where(
    retrieval: RetrievalResult, number: int, low: int, high: int
) -> tuple[str | None, int, int, int]:
    """A sentence's place: its document span when the passage has offsets, else its passage's."""
    passage = retrieval.passages[number - 1]
    if passage.start is None:
        return (passage.chunk_id, 0, low, high)
    return (passage.document_id, 1, passage.start + low, passage.start + high)


def _overlaps(
    spans: list[tuple[str | None, int, int, int]],
    retrieval: RetrievalResult,
    number: int,
    low: int,
    high: int,
) -> bool:
    """Whether the sentence overlaps one already quoted (passages of one document overlap)."""
    where, kind, start, end = _where(retrieval, number, low, high)
    return any(w == where and k == kind and s < end and start < e for w, k, s, e in spans)


# -- building answerers and asking ---------------------------------------------------------------


def create_answerer(
    name: str | None = None, options: Mapping[str, Any] | None = None, *, registry: Any = None
) -> Answerer:
    """The registered answerer ``name`` (default :data:`DEFAULT_ANSWERER`) built with
    ``options``.

    Raises:
        PluginNotFoundError: no answerer of that name is installed.
        ConfigurationError: bad options.
    """
    from .plugins import Registry

    registry = registry or Registry()
    built: Answerer = registry.create("answerer", name or DEFAULT_ANSWERER, dict(options or {}))
    return built


def ask(
    question: str,
    *,
    index: str | None = None,
    answerer: str | Answerer | None = None,
    answerer_options: Mapping[str, Any] | None = None,
    settings: SearchSettings | None = None,
    **search_settings: Any,
) -> Answer:
    """Answer ``question`` from the index with citations: the search ``ragloom search`` runs
    (:class:`~ragloom.searcher.Searcher`, same defaults), then an answerer (default: the
    offline :class:`ExtractiveAnswerer`; a name of a registered one, or an instance).

    ``search_settings`` are the fields of :class:`~ragloom.searcher.SearchSettings`
    (``routes``, ``mode``, ``top_k``...), or pass ``settings``.

    Raises:
        InvalidInputError: a blank question.
        ConfigurationError: no index, bad settings, an unknown answerer.
        ItemProcessingError: the search failed (every sub-query), or the answerer did.
    """
    from ._sync import run_sync
    from .errors import InvalidInputError
    from .searcher import Searcher, SearchSettings

    if not isinstance(question, str) or not question.strip():
        raise InvalidInputError("ask something: the question is blank")
    built = (
        answerer if isinstance(answerer, Answerer)
        else create_answerer(answerer, answerer_options)
    )
    if settings is not None and (search_settings or index is not None):
        raise TypeError("pass settings= or the settings' fields, not both")
    if settings is None:
        fields = dict(search_settings)
        if index is not None:
            fields["index"] = index
        settings = SearchSettings(**fields)
    with Searcher(settings) as searcher:
        retrieval = searcher.search(question)
    return run_sync(built.answer, question, retrieval)
