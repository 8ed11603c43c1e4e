"""ragloom's hybrid search against LanceDB's own (``query_type="hybrid"`` with a reranker).

    pip install -e './core[cli]' -e plugins/rules -e plugins/semantic -e plugins/lancedb
    python benchmarks/bench_native_hybrid.py --index PATH QUESTIONS.jsonl [QUESTIONS.jsonl ...]

Every question of the labelled files (the format of ``ragloom eval``) is searched whole, once
per set-up, on the same index with the same query vector and text, top 10:

- ``ragloom``: ``LanceDBStore.search(vector=..., text=...)``, the store's own fusion (each
  list's scores normalised, full text weighted 1, vectors ``vector_weight``), read through
  Lance's package without a LanceDB connection, as ``ragloom search`` does;
- ``lancedb-rrf``: LanceDB's native hybrid query reranked by ``RRFReranker`` (its default);
- ``lancedb-linear``: the same reranked by ``LinearCombinationReranker`` (weight 0.7 on vectors,
  LanceDB's default);
- ``text`` and ``vector``: each half alone, through ragloom's store.

Printed per set-up: facet recall@5 and @10 (a facet is found when a passage of one of its
expected documents is in the top k; the decomposer is not involved) and the median and p95
time of one search after a warm-up. The native queries need the ``lancedb`` client (about a
second of imports), which ragloom's read path never loads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load(paths: list[Path]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def facets(entry: dict[str, Any]) -> list[set[str]]:
    grouped: dict[int, set[str]] = {}
    for expected in entry["expected"]:
        grouped.setdefault(int(expected.get("facet", 1)), set()).add(expected["document"])
    return list(grouped.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--index", required=True, type=Path)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()

    from ragloom.plugins import Registry
    from ragloom.searcher import index_embedder
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(args.index)  # a handle that only reads, as a search process has
    embedder = index_embedder(store, Registry(), None, store.dimension)
    questions = load(args.files)
    vectors = [embedder.embed_query(q["question"]) for q in questions]

    import lancedb
    from lancedb.rerankers import LinearCombinationReranker, RRFReranker

    table = lancedb.connect(str(args.index)).open_table(store.table)
    k = args.top_k

    def native(reranker: Any) -> Callable[[str, Any], list[str]]:
        def run(text: str, vector: Any) -> list[str]:
            rows = (
                table.search(query_type="hybrid", fts_columns="search_text")
                .vector(list(map(float, vector)))
                .text(text)
                .limit(k)
                .rerank(reranker)
                .to_list()
            )
            return [row["document_id"] for row in rows]

        return run

    def ours(**kinds: bool) -> Callable[[str, Any], list[str]]:
        def run(text: str, vector: Any) -> list[str]:
            hits = store.search(
                vector=vector if kinds.get("vector") else None,
                text=text if kinds.get("text") else None,
                top_k=k,
            )
            return [hit.chunk.parent_id or hit.chunk.id for hit in hits]

        return run

    setups: dict[str, Callable[[str, Any], list[str]]] = {
        "ragloom": ours(vector=True, text=True),
        "lancedb-rrf": native(RRFReranker()),
        "lancedb-linear": native(LinearCombinationReranker()),
        "text": ours(text=True),
        "vector": ours(vector=True),
    }
    print(f"{len(questions)} questions, {sum(len(facets(q)) for q in questions)} facets, "
          f"index {args.index}, lancedb {lancedb.__version__}")
    print(f"{'set-up':16} {'R@5':>6} {'R@10':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for name, run in setups.items():
        run(questions[0]["question"], vectors[0])  # warm-up
        found = {5: 0, 10: 0}
        total = 0
        times = []
        for entry, vector in zip(questions, vectors, strict=True):
            start = time.perf_counter()
            docs = run(entry["question"], vector)
            times.append((time.perf_counter() - start) * 1000)
            for wanted in facets(entry):
                total += 1
                for cut in found:
                    found[cut] += any(d in wanted for d in docs[:cut])
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"{name:16} {found[5] / total:6.3f} {found[10] / total:6.3f} "
              f"{statistics.median(times):8.1f} {p95:8.1f}")
    store.close()


if __name__ == "__main__":
    main()
