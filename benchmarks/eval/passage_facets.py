"""Write a question file whose facets are judged by passage, not by page.

Each expected page of the evaluation sets carries the terms its writer checked on it
(``evidence``). This writes the same questions with each such expectation turned into one
alternative per term, ``{"document": page, "contains": term}`` under the same facet: a facet
is then found only by a passage of its page that holds one of those terms, a stand-in for
"the passage that answers" (``ragloom eval`` judges ``contains`` per passage). Expectations
without evidence are kept as they are.

    python benchmarks/eval/passage_facets.py benchmarks/eval/questions/git.dev.jsonl \\
        --out /tmp/git.dev.passages.jsonl
    ragloom eval /tmp/git.dev.passages.jsonl --index /tmp/ragloom-eval/ix-git
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def by_passage(question: dict) -> dict:
    expected = []
    for expectation in question["expected"]:
        terms = expectation.get("evidence") or []
        if not terms:
            expected.append({k: v for k, v in expectation.items() if k != "evidence"})
            continue
        for term in terms:
            expected.append(
                {"facet": expectation["facet"], "document": expectation["document"],
                 "contains": term}
            )
    return {**question, "expected": expected}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    lines = [line for line in args.questions.read_text(encoding="utf-8").splitlines() if line]
    out = [json.dumps(by_passage(json.loads(line)), ensure_ascii=False) for line in lines]
    args.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{len(out)} questions -> {args.out}")


if __name__ == "__main__":
    main()
