"""How far routing and fusion can take a set's recall: each ask's own search, routed perfectly.

A compound question's answer is its searches fused: each ask's, and the whole question's. So a
facet can reach the answer's first ``k`` only if some search ranks its page high. This measures,
for a question file and an index, the share of facets whose page is among the first ``k``
documents of

- ``fused``: the answer itself (the default search's first ``k`` passages, as ``ragloom eval``
  judges them by page);
- ``asks, whole index``: any of the question's asks searched alone in the whole index (its
  first ``k`` documents, one passage each);
- ``asks, its collection``: any ask searched alone in the facet's own collection (routing that
  never errs), or the whole question searched there.

The last is a ceiling for any change of routing or fusion alone: the answer shows ``k``
passages, while the asks' lists together show ``k`` documents each. A facet missing from it needs a
better search of the ask itself (or other asks). A facet's collection is the first part of its
page's id when that is a collection of the index (ingest names collections by top-level folder),
else the whole index is searched.

    python benchmarks/eval/ceiling.py benchmarks/eval/questions/multi.dev.jsonl \\
        --index /tmp/ragloom-eval/ix-multi --k 10 --k 30
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ragloom import Searcher
from ragloom.collection import list_collections


def _documents(result: Any, k: int) -> list[str]:
    """The first ``k`` distinct documents of a search's passages."""
    seen: list[str] = []
    for passage in result.passages:
        if passage.document_id is not None and passage.document_id not in seen:
            seen.append(passage.document_id)
    return seen[:k]


def _facets(question: dict[str, Any]) -> list[list[str]]:
    by: dict[str, list[str]] = defaultdict(list)
    for n, expectation in enumerate(question["expected"]):
        label = expectation.get("facet")
        by[str(n if label is None else label)].append(expectation["document"])
    return list(by.values())


def measure(questions: list[dict[str, Any]], index: str, k: int) -> dict[str, float]:
    depth = {"top_k": k, "per_document": 1}
    with Searcher(index=index, top_k=k) as answer:
        names = {c.name for c in list_collections(answer.store) if c.name}
        alone: dict[str | None, Searcher] = {
            None: Searcher(index=index, decomposer="none", router="none", **depth)
        }
        for name in sorted(names):
            alone[name] = Searcher(
                index=index, decomposer="none", router="none", collections=[name], **depth
            )
        lists: dict[tuple[str, str | None], list[str]] = {}

        def docs(text: str, where: str | None) -> list[str]:
            if (text, where) not in lists:
                lists[(text, where)] = _documents(alone[where].search(text), k)
            return lists[(text, where)]

        try:
            counts = dict.fromkeys(("fused", "asks, whole index", "asks, its collection"), 0)
            total = 0
            for question in questions:
                result = answer.search(question["question"])
                fused = [p.document_id for p in result.passages[:k]]
                asks = list(result.sub_queries) or [question["question"]]
                for pages in _facets(question):
                    total += 1
                    head = pages[0].split("/", 1)[0]
                    where = head if head in names else None
                    counts["fused"] += any(p in fused for p in pages)
                    counts["asks, whole index"] += any(
                        p in docs(a, None) for a in asks for p in pages
                    )
                    counts["asks, its collection"] += any(
                        p in docs(a, where) for a in [*asks, question["question"]] for p in pages
                    )
        finally:
            for searcher in alone.values():
                searcher.close()
    return {name: n / total for name, n in counts.items()} | {"facets": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--index", required=True)
    parser.add_argument("--k", type=int, action="append", help="first k documents (repeat)")
    args = parser.parse_args()
    questions = [
        json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()
    ]
    for k in args.k or [10]:
        found = measure(questions, args.index, k)
        shares = "  ".join(f"{name} {v:.3f}" for name, v in found.items() if name != "facets")
        print(f"{args.questions.name}  k={k}  facets {found['facets']:.0f}  {shares}")


if __name__ == "__main__":
    main()
