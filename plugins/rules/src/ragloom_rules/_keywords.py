"""Keyword and pattern scoring of named routes (pure: no ragloom core, no pydantic).

Text is compared case- and punctuation-insensitively: it is lower-cased and cut into runs of
letters and digits ("E-mail!" -> ``e mail``), and each word is folded to a light singular
(:func:`fold`). A keyword (one word or several) matches where its folded words appear
consecutively in the query's folded words, so "refund" matches "Refunds?" and "credit card"
matches "credit-card" but not "card credit"; "and" never matches inside "standard".

Scoring, per route: the evidence is the number of words of the distinct keywords that matched
(a two-word phrase counts 2, a keyword counts once however often it occurs) plus
``pattern_weight`` per distinct pattern that matched (patterns are regular expressions
searched in the raw query, case-insensitively; a pattern such as a year or an amount of money
is weaker evidence than a word chosen for the route, so by default it counts half a word).
The raw score is ``weight * evidence``, and the reported score is ``raw / (raw + 1)``: 0
without evidence, 0.5 for one single-word keyword at weight 1, 0.75 for three, approaching 1
as evidence grows. The best route is the one with the highest raw score; among equal raw
scores the route declared first wins.

Keywords are looked up through an inverted index (first folded word -> keywords), so matching
costs one dictionary probe per query word; patterns are searched one by one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["KeywordIndex", "Ranking", "RouteSpec", "fold", "normalize", "saturate"]

_WORDS = re.compile(r"[^\W_]+")


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: Words ending in "s" that are not plurals (or whose singular would collide with a word).
_NOT_PLURAL = _set(
    "news series species means physics mathematics economics politics ethics always perhaps "
    "yes its his hers ours yours theirs was has does this thus plus bonus campus virus "
    "status canvas atlas alias chaos gas lens analysis basis crisis thesis diagnosis "
    "emphasis axis macos windows"
)


@lru_cache(maxsize=1 << 16)
def fold(word: str) -> str:
    """A light singular of a lower-case word: -s, -es after a sibilant, -ies.

    The same folding is applied to keywords and queries, so only consistency matters:
    "cache"/"caches" -> "cach", "policy"/"policies" -> "policy", "tax"/"taxes" -> "tax",
    "class"/"classes" -> "class". Short words (3 letters or fewer) and the words in
    ``_NOT_PLURAL`` ("news", "status", "analysis", ...) are kept.
    """
    if len(word) <= 3 or word in _NOT_PLURAL:
        return word
    if word[-1] == "s" and word[-2] not in "su" and not word.endswith("is"):
        word = word[:-1]
    if word.endswith(("che", "she", "sse", "xe", "ze")):
        return word[:-1]
    if len(word) > 3 and word.endswith("ie"):
        return word[:-2] + "y"
    return word


def normalize(text: str) -> list[str]:
    """The folded words of ``text`` (lower-cased, punctuation ignored)."""
    return [fold(w) for w in _WORDS.findall(text.lower())]


def saturate(raw: float) -> float:
    """The reported score for a raw score: ``raw / (raw + 1)`` (0 for no evidence)."""
    return raw / (raw + 1.0) if raw > 0 else 0.0


@dataclass(frozen=True, slots=True)
class RouteSpec:
    """What the index needs to know about one route."""

    name: str
    keywords: Sequence[str] = ()
    patterns: Sequence[str] = ()
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Ranking:
    """The outcome of scoring one query. ``best`` is ``None`` when nothing matched.

    ``best_evidence`` is the best route's evidence before its weight. ``tie`` is true when the
    runner-up has the same raw score as the best route (which then won only by being declared
    first).
    """

    best: str | None
    best_raw: float
    runner_up: str | None
    runner_up_raw: float
    tie: bool
    best_evidence: float = 0.0


class KeywordIndex:
    """Routes' keywords and patterns, compiled once, scored per query.

    Raises:
        ValueError: duplicate or empty route names, a keyword without letters or digits, an
            invalid regular expression (naming the route and the pattern), a weight that is
            not a positive finite number.
    """

    __slots__ = ("_index", "_names", "_pattern_weight", "_patterns", "_phrase_lengths", "_weights")

    def __init__(self, routes: Sequence[RouteSpec], pattern_weight: float = 1.0) -> None:
        if not (pattern_weight > 0 and pattern_weight != float("inf")):
            raise ValueError(
                f"pattern_weight must be a positive finite number, got {pattern_weight!r}"
            )
        names: list[str] = []
        seen: set[str] = set()
        index: dict[str, list[tuple[tuple[str, ...], int, int]]] = {}
        phrase_lengths: list[int] = []
        patterns: list[tuple[int, re.Pattern[str]]] = []
        weights: list[float] = []
        for r, spec in enumerate(routes):
            if not spec.name or not spec.name.strip():
                raise ValueError(f"route {r} has an empty name")
            if spec.name in seen:
                raise ValueError(f"duplicate route name {spec.name!r}")
            seen.add(spec.name)
            names.append(spec.name)
            weight = float(spec.weight)
            if not weight > 0 or weight == float("inf"):
                raise ValueError(
                    f"route {spec.name!r}: weight must be a positive finite number, "
                    f"got {spec.weight!r}"
                )
            weights.append(weight)
            phrases: set[tuple[str, ...]] = set()
            for keyword in spec.keywords:
                phrase = tuple(normalize(keyword))
                if not phrase:
                    raise ValueError(
                        f"route {spec.name!r}: keyword {keyword!r} has no letters or digits"
                    )
                if phrase in phrases:
                    continue
                phrases.add(phrase)
                index.setdefault(phrase[0], []).append((phrase, r, len(phrase_lengths)))
                phrase_lengths.append(len(phrase))
            for pattern in spec.patterns:
                try:
                    patterns.append((r, re.compile(pattern, re.IGNORECASE)))
                except re.error as exc:
                    raise ValueError(
                        f"route {spec.name!r}: invalid pattern {pattern!r}: {exc}"
                    ) from None
        self._names = tuple(names)
        self._weights = tuple(weights)
        self._index = {key: tuple(entries) for key, entries in index.items()}
        self._phrase_lengths = tuple(phrase_lengths)
        self._patterns = tuple(patterns)
        self._pattern_weight = float(pattern_weight)

    @property
    def names(self) -> tuple[str, ...]:
        """Route names, in declaration order."""
        return self._names

    def evidence(self, query: str) -> dict[int, float]:
        """Unweighted evidence per route index, for routes with any (see the module doc)."""
        words = normalize(query)
        found: dict[int, float] = {}
        matched: set[int] = set()
        index = self._index
        n = len(words)
        for i, word in enumerate(words):
            entries = index.get(word)
            if entries is None:
                continue
            for phrase, r, kid in entries:
                if kid in matched:
                    continue
                size = len(phrase)
                if size == 1 or (i + size <= n and tuple(words[i : i + size]) == phrase):
                    matched.add(kid)
                    found[r] = found.get(r, 0.0) + size
        # Patterns are searched one by one: measured, one alternation of all of them costs as
        # much as the separate searches.
        weight = self._pattern_weight
        for r, pattern in self._patterns:
            if pattern.search(query) is not None:
                found[r] = found.get(r, 0.0) + weight
        return found

    def raw_scores(self, query: str) -> dict[str, float]:
        """``weight * evidence`` for every route (0.0 where nothing matched)."""
        found = self.evidence(query)
        return {name: found.get(r, 0.0) * self._weights[r] for r, name in enumerate(self._names)}

    def rank(self, query: str) -> Ranking:
        """The best route and the runner-up for ``query``."""
        found = self.evidence(query)
        if not found:
            return Ranking(None, 0.0, None, 0.0, False)
        weights = self._weights
        ordered = sorted(((-e * weights[r], r) for r, e in found.items()))
        best_raw, best = -ordered[0][0], ordered[0][1]
        evidence = found[best]
        if len(ordered) == 1:
            return Ranking(self._names[best], best_raw, None, 0.0, False, evidence)
        second_raw, second = -ordered[1][0], ordered[1][1]
        return Ranking(
            self._names[best],
            best_raw,
            self._names[second],
            second_raw,
            second_raw == best_raw,
            evidence,
        )
