"""ragloom-lancedb's LanceDBStore against LanceDB used directly, in the same run.

    pip install -e core -e plugins/text -e plugins/lancedb
    python benchmarks/bench_store.py [--chunks 20000 100000] [--dim 256] [--repeat 3]

Chunks carry real text (``tests/support/corpus.py`` cut at 512 characters by ragloom-text,
reused round-robin when the corpus has fewer), random unit vectors of ``--dim`` float32,
and metadata ``{"source": <one of 100>, "lang": <one of 3>}``; ten chunks per document.

Insert: ``LanceDBStore.write`` in calls of ``--batch-docs`` documents (the documents are built
before the clock starts: building ``Document`` objects is the engine's cost), then ``close``
(which folds the writes into the indexes). The peer adds the same rows as prebuilt Arrow
tables to a LanceDB table in the same batches and builds the same full-text index. A rewrite
of 1% of the documents (one ``write`` call) and ``close`` follow, as at the end of an
ingest; the queries run on the store reopened after that (its full-text index then misses the
rewritten rows, which ``close`` folds in only past 2,000 rows), and text once more after an
explicit ``optimize()``.

Queries (``--queries`` of each, top 10, p50 and p90 milliseconds): vector (exact cosine),
text (full-text, BM25), hybrid (reciprocal rank fusion), each also with a ``where`` on one
source. The peer runs the same searches on its table (LanceDB's own hybrid query with its
default RRF reranker). Each store is a fresh temporary directory; times are wall-clock on a
machine that may be shared: the best of ``--repeat`` runs (insert) and the median of the
query latencies are reported.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def texts_of(count: int) -> list[str]:
    from ragloom_text import RecursiveCharacterTextSplitter
    from support.corpus import build_corpus

    splitter = RecursiveCharacterTextSplitter(chunk_size=512)
    pieces: list[str] = []
    for _, _, text in build_corpus(min(60_000_000, count * 450)):
        pieces.extend(p for p in splitter.split_text(text) if p.strip())
        if len(pieces) >= count:
            break
    return [pieces[i % len(pieces)] for i in range(count)]


def build(count: int, dim: int, seed: int = 0) -> tuple[list[Any], Any, np.ndarray, list[str]]:
    """(IndexedDocuments, one Arrow table of the same rows for the peer, vectors, texts)."""
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = texts_of(count)
    documents: list[Any] = []
    for lo in range(0, count, 10):
        doc_id = f"doc-{lo // 10}"
        chunks = [
            Document.model_construct(
                id=f"{doc_id}#{i - lo}", content=texts[i], content_format="text",
                metadata={"source": f"s{(lo // 10) % 100}", "lang": ("en", "fr", "de")[i % 3]},
                parent_id=doc_id, index=i - lo, start=None, end=None,
                embedding=vectors[i].tolist(),
            )
            for i in range(lo, min(count, lo + 10))
        ]
        documents.append(IndexedDocument(doc_id, f"fp-{lo}", chunks))
    import pyarrow as pa

    peer_rows = pa.table(
        {
            "id": [c.id for d in documents for c in d.chunks],
            "document_id": [d.document_id for d in documents for c in d.chunks],
            "content": texts,
            "source": [c.metadata["source"] for d in documents for c in d.chunks],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim),
        }
    )
    return documents, peer_rows, vectors, texts


def best_of(fn: Callable[[], float], repeat: int) -> tuple[float, float]:
    times = [fn() for _ in range(repeat)]
    return min(times), statistics.median(times)


def latencies(fn: Callable[[int], Any], count: int) -> tuple[float, float]:
    fn(0)  # warm
    times = []
    for i in range(count):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import lancedb; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def run(count: int, dim: int, batch_docs: int, repeat: int, queries: int) -> None:
    import lancedb
    from lancedb.index import FTS
    from lancedb.query import MatchQuery
    from ragloom_lancedb import LanceDBStore

    documents, peer_rows, _, texts = build(count, dim)
    rng = np.random.default_rng(1)
    query_vectors = rng.standard_normal((queries + 1, dim)).astype(np.float32)
    words = [w for t in texts[:2000] for w in t.split() if w.isalpha() and len(w) > 4]
    query_texts = [" ".join(rng.choice(words, 2)) for _ in range(queries + 1)]
    doc_batches = [documents[i : i + batch_docs] for i in range(0, len(documents), batch_docs)]
    rows_per_batch = sum(len(d.chunks) for d in doc_batches[0])
    root = Path(tempfile.mkdtemp(prefix="bench-store-"))
    ours_paths: list[Path] = []
    peer_paths: list[Path] = []

    def ours_insert() -> float:
        path = root / f"ours-{len(ours_paths)}"
        ours_paths.append(path)
        start = time.perf_counter()
        store = LanceDBStore(path)
        for docs in doc_batches:
            store.write(docs)
        store.close()
        return time.perf_counter() - start

    def peer_insert() -> float:
        path = root / f"peer-{len(peer_paths)}"
        peer_paths.append(path)
        start = time.perf_counter()
        db = lancedb.connect(str(path))
        table = db.create_table("chunks", data=peer_rows.slice(0, rows_per_batch))
        for lo in range(rows_per_batch, count, rows_per_batch):
            table.add(peer_rows.slice(lo, rows_per_batch))
        table.create_index("content", config=FTS(with_position=False))
        table.optimize()
        return time.perf_counter() - start

    ours_best, ours_median = best_of(ours_insert, repeat)
    peer_best, peer_median = best_of(peer_insert, repeat)
    print(f"\n## {count:,} chunks of {dim}-d vectors, {len(documents):,} documents, "
          f"writes of {batch_docs} documents ({rows_per_batch} chunks)\n")
    print("| insert (then close/optimize) | best s | median s | chunks/s | vs LanceDB direct |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| LanceDBStore.write | {ours_best:.2f} | {ours_median:.2f} | "
          f"{count / ours_best:,.0f} | {ours_best / peer_best:.2f}x time |")
    print(f"| LanceDB table.add + FTS index (peer) | {peer_best:.2f} | {peer_median:.2f} | "
          f"{count / peer_best:,.0f} | 1.00x |")

    store = LanceDBStore(ours_paths[0])
    changed = documents[: max(1, len(documents) // 100)]
    start = time.perf_counter()
    store.write(changed)
    rewrite = time.perf_counter() - start
    start = time.perf_counter()
    store.close()
    closing = time.perf_counter() - start
    store = LanceDBStore(ours_paths[0])
    tail = store.info().details.get("rows_not_in_text_index")
    print(f"\nRewrite of {len(changed)} documents ({sum(len(d.chunks) for d in changed)} chunks) "
          f"in one write: {rewrite * 1000:.0f} ms; close: {closing * 1000:.0f} ms, leaving "
          f"{tail} rows outside the text index. The queries below run on the reopened store "
          "as the rewrite and close left it; the last table row runs them again after "
          "`optimize()`.")

    peer = lancedb.connect(str(peer_paths[0])).open_table("chunks")
    where = {"source": "s7"}
    ours_q: dict[str, Callable[[int], Any]] = {
        "vector": lambda i: store.search(vector=query_vectors[i], top_k=10),
        "text": lambda i: store.search(text=query_texts[i], top_k=10),
        "hybrid": lambda i: store.search(vector=query_vectors[i], text=query_texts[i], top_k=10),
        "vector + where": lambda i: store.search(vector=query_vectors[i], top_k=10, where=where),
        "text + where": lambda i: store.search(text=query_texts[i], top_k=10, where=where),
        "hybrid + where": lambda i: store.search(
            vector=query_vectors[i], text=query_texts[i], top_k=10, where=where
        ),
    }
    sql = "source = 's7'"

    def peer_vector(i: int, filtered: bool = False) -> Any:
        q = peer.search(query_vectors[i]).distance_type("cosine").limit(10)
        return (q.where(sql, prefilter=True) if filtered else q).to_arrow()

    def peer_text(i: int, filtered: bool = False) -> Any:
        q = peer.search(MatchQuery(query_texts[i], "content"), query_type="fts").limit(10)
        return (q.where(sql, prefilter=True) if filtered else q).to_arrow()

    def peer_hybrid(i: int, filtered: bool = False) -> Any:
        q = (
            peer.search(query_type="hybrid")
            .vector(query_vectors[i])
            .text(query_texts[i])
            .distance_type("cosine")
            .limit(10)
        )
        return (q.where(sql, prefilter=True) if filtered else q).to_arrow()

    peer_q: dict[str, Callable[[int], Any]] = {
        "vector": peer_vector,
        "text": peer_text,
        "hybrid": peer_hybrid,
        "vector + where": lambda i: peer_vector(i, True),
        "text + where": lambda i: peer_text(i, True),
        "hybrid + where": lambda i: peer_hybrid(i, True),
    }
    print(f"\n| query (top 10, {queries} queries) | p50 ms | p90 ms | "
          "LanceDB direct p50 ms | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in ours_q:
        p50, p90 = latencies(ours_q[name], queries)
        peer50, _ = latencies(peer_q[name], queries)
        print(f"| {name} | {p50:.1f} | {p90:.1f} | {peer50:.1f} | {p50 / peer50:.2f}x |")
    start = time.perf_counter()
    store.optimize()
    folding = time.perf_counter() - start
    p50, p90 = latencies(ours_q["text"], queries)
    peer50, _ = latencies(peer_q["text"], queries)
    print(f"| text, after optimize() ({folding:.2f} s) | {p50:.1f} | {p90:.1f} | {peer50:.1f} | "
          f"{p50 / peer50:.2f}x |")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--batch-docs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    print(
        f"# ragloom-lancedb {version('ragloom-lancedb')}, lancedb {version('lancedb')}, "
        f"pyarrow {version('pyarrow')}, numpy {np.__version__}; "
        f"`import lancedb` {import_time():.2f} s in a fresh process"
    )
    for count in args.chunks:
        run(count, args.dim, args.batch_docs, args.repeat, args.queries)


if __name__ == "__main__":
    main()
