"""How ``HeuristicDecomposer`` splits labelled evaluation questions: right, whole, or wrong.

    pip install -e core -e plugins/rules
    python benchmarks/bench_decompose.py FILE.jsonl [FILE.jsonl ...] [--failures] [--all]

Each line of a question file is a JSON object with ``question``, ``kind`` (``compound``,
``simple`` or ``one-ask``) and ``expected`` entries with a ``facet`` number (the format of
``ragloom eval``). A compound question's number of distinct facets is the number of asks it
should be split into; a simple or one-ask question should stay whole. Per file and kind the
script prints:

- compound: split into exactly the right number of sub-queries, left whole, split into too
  few (but more than one) or too many;
- simple / one-ask: wrongly split (more than one sub-query);
- invariant violations (``decomposition_violations``: an invented or lost word, a dangling
  reference), all kinds;
- the decomposer's time per question (best of ``--repeat`` passes over the file).

With ``--failures`` every question counted wrong is listed with its sub-queries; ``--all``
lists every question. The sub-query count is the decomposer's default output, so a "vs"
comparison counts its comparison query as one more sub-query.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from ragloom_rules import HeuristicDecomposer, decomposition_violations


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def facets(entry: dict) -> int:
    return len({e.get("facet", 1) for e in entry.get("expected", [])}) or 1


def verdict(entry: dict, subs: list[str]) -> str:
    if entry["kind"] != "compound":
        return "whole" if len(subs) <= 1 else "split"
    want = facets(entry)
    if len(subs) == want:
        return "right"
    if len(subs) <= 1:
        return "whole"
    return "fewer" if len(subs) < want else "more"


def timing(decomposer: HeuristicDecomposer, questions: list[str], repeat: int) -> float:
    """Best mean microseconds per question over ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for q in questions:
            decomposer.decompose(q)
        best = min(best, (time.perf_counter() - start) / max(len(questions), 1))
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--failures", action="store_true", help="list the wrong ones")
    parser.add_argument("--all", action="store_true", help="list every question")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    decomposer = HeuristicDecomposer()
    rows = []
    listing = []
    for path in args.files:
        entries = load(path)
        counts: Counter[tuple[str, str]] = Counter()
        totals: Counter[str] = Counter()
        violations = 0
        for entry in entries:
            subs = decomposer.decompose(entry["question"])
            v = verdict(entry, subs)
            counts[entry["kind"], v] += 1
            totals[entry["kind"]] += 1
            problems = decomposition_violations(entry["question"], subs)
            violations += bool(problems)
            bad = v not in ("right", "whole") or (entry["kind"] == "compound" and v == "whole")
            if args.all or (args.failures and (bad or problems)):
                listing.append((path.name, entry, v, subs, problems))
        micro = timing(decomposer, [e["question"] for e in entries], args.repeat)
        c = totals["compound"]
        rows.append(
            (
                path.name,
                f"{counts['compound', 'right']}/{c}",
                str(counts["compound", "whole"]),
                f"{counts['compound', 'fewer']}/{counts['compound', 'more']}",
                f"{counts['one-ask', 'split']}/{totals['one-ask']}",
                f"{counts['simple', 'split']}/{totals['simple']}",
                str(violations),
                f"{micro:.0f}",
            )
        )
    head = (
        "file", "compound right", "compound whole", "fewer/more", "one-ask split",
        "simple split", "violations", "us/query",
    )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    for name, entry, v, subs, problems in listing:
        print(f"\n[{name} {entry.get('id', '')}] {entry['kind']} facets={facets(entry)} -> {v}")
        print(f"  Q: {entry['question']}")
        for sub in subs:
            print(f"   - {sub}")
        for problem in problems:
            print(f"   ! {problem}")


if __name__ == "__main__":
    main()
