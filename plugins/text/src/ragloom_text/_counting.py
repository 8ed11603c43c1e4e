"""Exact token counts of any slice of a text, from the memoized counts of its units.

Counting the tokens of every candidate chunk by running the tokenizer on it costs a full
tokenization per candidate. Many tokenizers, though, never let a token cross certain points of
a text: a BERT-style tokenizer splits at whitespace before anything else, a GPT-style regex
starts a new piece at a space that follows a non-space. Cut a text at those points into
*units* and the tokens of the whole text are the tokens of each unit, counted alone; the same
holds for any slice ``[a, b)``: the units inside it, plus the fragments of the units cut at
``a`` and ``b``, each tokenized alone. Units repeat (words, identifiers, indentation), so
their counts are memoized across texts and a corpus is tokenized roughly once per *distinct*
unit.

A ``UnitCounter`` is given the pattern that cuts: ``re.split`` with it must give contiguous
parts (a pattern with one capturing group keeps its separators as parts, a zero-width one
cuts between characters), and the caller vouches that the tokens of any text are the sum of
the tokens of its parts, each tokenized alone. Whitespace parts then count 0 (the tokenizer
says so, and the memo remembers it).

Which tokenizers qualify is decided by the caller (:mod:`ragloom_text.tokens`), which checks
their configuration. Nothing here imports ragloom or a tokenizer library.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

__all__ = ["UnitCounter", "UnitCounts"]

CountMany = Callable[[list[str]], Sequence[int]]


class UnitCounter:
    """Cuts texts into units with ``pattern`` and counts them with ``count_many`` (memoized).

    ``count_many`` maps a list of strings to their token counts, each string tokenized alone.
    The memo keeps at most ``memo_limit`` strings of ``memo_chars`` characters in all (it is
    emptied when full): it only ever holds exact counts, so its size changes speed, never
    results.
    """

    __slots__ = ("_chars", "_count_many", "_memo", "_split", "memo_chars", "memo_limit", "pattern")

    def __init__(
        self,
        count_many: CountMany,
        pattern: re.Pattern[str],
        *,
        memo_limit: int = 1 << 20,
        memo_chars: int = 1 << 25,
    ) -> None:
        self._count_many = count_many
        self.pattern = pattern
        self.memo_limit = memo_limit
        self.memo_chars = memo_chars
        self._memo: dict[str, int] = {"": 0}
        self._chars = 0
        self._split = pattern.split

    def _room(self, entries: int, chars: int) -> bool:
        """Make room for ``entries`` strings of ``chars`` characters; ``False``: forgot all."""
        self._chars += chars
        if len(self._memo) + entries <= self.memo_limit and self._chars <= self.memo_chars:
            return True
        self._memo.clear()
        self._memo[""] = 0
        self._chars = chars
        return False

    def count_one(self, text: str) -> int:
        """The tokens of ``text`` tokenized alone (memoized)."""
        found = self._memo.get(text)
        if found is None:
            found = self._count_many([text])[0]
            self._room(1, len(text))
            self._memo[text] = found
        return found

    def counts(self, text: str) -> UnitCounts:
        """The units of ``text`` with their counts, ready to count any slice."""
        units = self._split(text)
        bounds = list(accumulate(map(len, units), initial=0))
        memo = self._memo
        per_unit = list(map(memo.get, units))
        if None in per_unit:
            missing = set(units).difference(memo)
            if not self._room(len(missing), sum(map(len, missing))):
                missing = set(units)  # the memo was emptied: count every unit of this text
                self._chars = sum(map(len, missing))
            ordered = list(missing)
            memo.update(zip(ordered, self._count_many(ordered), strict=True))
            per_unit = list(map(memo.__getitem__, units))
        cum = list(accumulate(per_unit, initial=0))
        return UnitCounts(self, text, bounds[:-1], bounds[1:], cum)


class UnitCounts:
    """Token counts of the slices of one text (see the module doc).

    ``count(a, b)`` is exact. ``limit_after`` and ``limit_before`` bound where a budget can
    end or start by whole units; inside the one unit that straddles the budget, counts are not
    monotone (a word's prefix may take more tokens than the word), so callers measure the
    candidates there with ``count``.
    """

    __slots__ = ("counter", "cum", "ends", "n", "starts", "text")

    def __init__(
        self,
        counter: UnitCounter,
        text: str,
        starts: list[int],
        ends: list[int],
        cum: list[int],
    ) -> None:
        self.counter = counter
        self.text = text
        self.n = len(text)
        self.starts = starts
        self.ends = ends
        self.cum = cum  # cum[k]: tokens of the units before unit k

    def _fragment(self, a: int, b: int) -> int:
        return self.counter.count_one(self.text[a:b])

    def count(self, a: int, b: int) -> int:
        """The tokens of ``text[a:b]`` tokenized alone."""
        if a >= b:
            return 0
        starts, ends, cum = self.starts, self.ends, self.cum
        i = bisect_right(starts, a) - 1  # the unit starting at or before a
        j = bisect_left(starts, b) - 1  # the last unit starting before b
        if j < 0:
            return 0
        if i == j:  # inside one unit and the gap after it
            end = ends[i]
            return self._fragment(a, end if end < b else b) if a < end else 0
        if i < 0 or a <= starts[i]:
            first, total = max(i, 0), 0
        elif a < ends[i]:
            first, total = i + 1, self._fragment(a, ends[i])
        else:
            first, total = i + 1, 0
        if b >= ends[j]:
            last = j + 1
        else:
            last = j
            total += self._fragment(starts[j], b)
        if last > first:
            total += cum[last] - cum[first]
        return total

    def limit_after(self, s: int, budget: int) -> int:
        """``n + 1`` when ``text[s:]`` fits ``budget``; else the end of the unit where the
        budget runs out: every slice ``[s, x)`` with ``x >=`` it exceeds the budget."""
        starts, ends, cum = self.starts, self.ends, self.cum
        i = bisect_right(starts, s) - 1
        used = 0
        if i < 0 or s <= starts[i]:
            first = max(i, 0)
        elif s < ends[i]:
            used = self._fragment(s, ends[i])
            if used > budget:
                return ends[i]
            first = i + 1
        else:
            first = i + 1
        k = bisect_right(cum, budget - used + cum[first]) - 1
        if k >= len(cum) - 1:
            return self.n + 1
        return ends[k]

    def limit_before(self, e: int, budget: int) -> int:
        """``-1`` when ``text[:e]`` fits ``budget``; else the start of the unit where the
        budget runs out, counting back from ``e``: every slice ``[x, e)`` with ``x <=`` it
        exceeds the budget."""
        starts, ends, cum = self.starts, self.ends, self.cum
        j = bisect_left(starts, e) - 1
        if j < 0:
            return -1
        if e < ends[j]:  # e cuts unit j
            used = self._fragment(starts[j], e)
            if used > budget:
                return starts[j]
            last = j
        else:
            used, last = 0, j + 1
        k = bisect_left(cum, cum[last] + used - budget)
        return -1 if k == 0 else starts[k - 1]
