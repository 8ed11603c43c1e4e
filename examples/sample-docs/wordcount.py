"""Count words in text files, the example module of the ragloom sample documents.

Run it as ``python wordcount.py FILE...``: it prints the ten most common words of the files
together, with their counts.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator

WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
STOP_WORDS = frozenset({"a", "an", "and", "the", "of", "to", "in", "is", "it", "that"})


def words(text: str) -> Iterator[str]:
    """Lower-cased words of ``text``, without stop words."""
    for match in WORD.finditer(text):
        word = match.group().lower()
        if word not in STOP_WORDS:
            yield word


class WordCounter:
    """Accumulates word counts over several texts."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.texts = 0

    def add(self, text: str) -> None:
        self.counts.update(words(text))
        self.texts += 1

    def add_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            with open(path, encoding="utf-8") as handle:
                self.add(handle.read())

    def top(self, n: int = 10) -> list[tuple[str, int]]:
        """The ``n`` most common words, most common first (ties in alphabetical order)."""
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python wordcount.py FILE...", file=sys.stderr)
        return 2
    counter = WordCounter()
    counter.add_files(argv)
    for word, count in counter.top():
        print(f"{count:6d}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
