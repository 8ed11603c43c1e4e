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

Patterns are written by users, so none may hold a run: a pattern that backtracks
catastrophically (``(a|aa)+$`` on a long run of ``a``) would search for hours. A pattern whose
search is provably at most quadratic in the query (repetition only of single characters, at
most one unbounded repetition, no back-references) is searched with ``re`` in queries of up to
:data:`FAST_QUERY_CHARS` characters; every other search runs on the ``regex`` module (the same
matching as ``re``) under a time limit of :data:`PATTERN_SECONDS`, and a search that runs out
raises :class:`PatternTimeout`, naming the route and the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

__all__ = [
    "FAST_QUERY_CHARS",
    "PATTERN_SECONDS",
    "KeywordIndex",
    "PatternTimeout",
    "Ranking",
    "RouteSpec",
    "fold",
    "is_quadratic_at_most",
    "normalize",
    "saturate",
]

#: Seconds one pattern may search one query (plus one per million characters of the query).
PATTERN_SECONDS = 0.5
#: Queries up to this long are searched with ``re`` by patterns that are at most quadratic.
FAST_QUERY_CHARS = 1000
#: A bounded repetition longer than this counts as unbounded when judging a pattern.
_LONG_REPEAT = 16


class PatternTimeout(TimeoutError):
    """A route's pattern took longer than its time limit on a query."""

    def __init__(self, route: str, pattern: str, seconds: float, length: int) -> None:
        self.route = route
        self.pattern = pattern
        super().__init__(
            f"route {route!r}: pattern {pattern!r} took longer than {seconds:.1f} s on a query "
            f"of {length} characters: it backtracks catastrophically (nested or overlapping "
            "repetition such as '(a+)+' or '(a|aa)+'); rewrite it"
        )


def is_quadratic_at_most(pattern: str, flags: int = 0) -> bool:
    """Whether searching ``pattern`` with ``re`` costs at most quadratic time in the text:
    only single characters are repeated, at most one repetition is unbounded, and there are no
    back-references. ``False`` when unsure (the pattern then runs under a time limit)."""
    try:
        from re import _constants as c
        from re import _parser

        tree: Any = _parser.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - a parser this Python does not have: not proven
        return False
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    atoms = {c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY}
    unbounded = 0

    def simple(items: Any) -> bool:
        nonlocal unbounded
        for op, av in items:
            if op in repeats:
                _lo, hi, body = av
                if hi == c.MAXREPEAT or hi > _LONG_REPEAT:
                    unbounded += 1
                if hi > 1 and not all(sub_op in atoms for sub_op, _ in body):
                    return False  # a repeated group: nested or alternating repetition
                if not simple(body):
                    return False
            elif op is c.SUBPATTERN:
                if not simple(av[-1]):
                    return False
            elif op is c.BRANCH:
                if not all(simple(branch) for branch in av[1]):
                    return False
            elif op in (c.ASSERT, c.ASSERT_NOT):
                if not simple(av[1]):
                    return False
            elif op is getattr(c, "ATOMIC_GROUP", None):
                if not simple(av):
                    return False
            elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
                return False
        return True

    return simple(tree) and unbounded <= 1

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

    # _patterns: (route index, pattern text, `re` pattern or None when not provably fast,
    # `regex` pattern run under a time limit)

    def __init__(self, routes: Sequence[RouteSpec], pattern_weight: float = 1.0) -> None:
        if not (pattern_weight > 0 and pattern_weight != float("inf")):
            raise ValueError(
                f"pattern_weight must be a positive finite number, got {pattern_weight!r}"
            )
        names: list[str] = []
        seen: set[str] = set()
        index: dict[str, list[tuple[tuple[str, ...], int, int]]] = {}
        phrase_lengths: list[int] = []
        patterns: list[tuple[int, str, re.Pattern[str] | None, Any]] = []
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
                    bounded = regex.compile(pattern, regex.IGNORECASE)
                    fast = (
                        re.compile(pattern, re.IGNORECASE)
                        if is_quadratic_at_most(pattern, re.IGNORECASE)
                        else None
                    )
                except (re.error, regex.error) as exc:
                    raise ValueError(
                        f"route {spec.name!r}: invalid pattern {pattern!r}: {exc}"
                    ) from None
                patterns.append((r, pattern, fast, bounded))
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
        short = len(query) <= FAST_QUERY_CHARS
        for r, text, fast, bounded in self._patterns:
            if fast is not None and short:
                hit = fast.search(query) is not None
            else:
                limit = PATTERN_SECONDS + len(query) / 1_000_000
                try:
                    hit = bounded.search(query, timeout=limit) is not None
                except TimeoutError:
                    raise PatternTimeout(self._names[r], text, limit, len(query)) from None
            if hit:
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
