"""What ragloom's search finds on the project's evaluation corpora, and what a search costs.

    apt-get install -y git-doc sqlite3-doc debian-handbook apache2-doc
    pip install -e "core[cli]" -e plugins/text -e plugins/rules -e plugins/semantic \\
        -e plugins/loaders -e plugins/lancedb bm25s PyStemmer llama-index-core
    python benchmarks/bench_search.py [--part eval latency] [--half dev test] [--workdir DIR]
        [--json FILE] [--repeat 3] [--chunks 100000] [--queries 50]

**(a) Evaluation.** The project's evaluation corpora, built by ``benchmarks/eval/corpora.py``
from Debian documentation packages: ``git`` (git-doc: git's manual pages, guides and
technical notes), ``sqlite`` (sqlite3-doc: SQLite's documentation without its release notes),
``debian-handbook`` (the Debian Administrator's Handbook) and ``apache`` (apache2-doc: the
Apache HTTP Server manual). Each corpus is copied into
``--workdir`` and ingested there into a LanceDB index with ragloom's default ingest pipeline
(``ragloom.ingest``: the HTML loader, the default chunker, the bundled model2vec model). Both
are reused by the next run: a corpus is copied again only when its package's version changed,
and an unchanged document is not ingested again. The labelled questions of
``benchmarks/eval/questions/<corpus>.<half>.jsonl`` (``--half dev``, the default, or ``test``,
the held-out half: to report on, never to tune on; the format is in docs/evaluation.md) are
searched by ``ragloom.evaluate``, as ``ragloom eval`` does, one question at a time (so a
question's time is one search alone), with five set-ups:

- ``default``: the command line's defaults (heuristic decomposer, hybrid search);
- ``whole``: each question searched whole (``decomposer=none``);
- ``text`` and ``whole-text``: full-text search only, decomposed and whole;
- ``vector``: vector search only, decomposed.

Beside them, two searches the library does not have, judged by the same judge
(``ragloom.evaluation.facet_ranks``; a facet whose documents are all absent from the index is
not judged, as in ``ragloom eval``) and scored the same way (``Scores.of``):

- ``bm25 (bm25s)``: plain BM25 (bm25s: Lucene variant, k1 = 1.5, b = 0.75, English stop
  words, Snowball English stemming when PyStemmer is installed) over the content of the
  index's own chunks, read back from it (ragloom's full-text search also indexes each chunk's
  title and heading path), searching the whole question, top 10;
- ``llamaindex fusion``: LlamaIndex's ``QueryFusionRetriever(mode="reciprocal_rerank")`` over
  a ``VectorStoreIndex`` of the same chunks with their stored vectors, the queries embedded by
  the same model, fed the sub-queries of the ``vector`` set-up (and the whole question when it
  was split, which ragloom searches too, at the same weight), top 10 each, fused to 10: only
  the fusion differs from the ``vector`` row. Measured when llama-index-core is installed;
  its time runs from the sub-queries on (embed, search, fuse).

Per corpus and half, a table: set-up x recall@5, recall@10, MRR, nDCG@10, recall@10 of the
compound, simple and one-ask questions, and the median time of a question's search (measures
as in docs/evaluation.md). Python's own documentation is held out for outside checks: nothing
here is built from it.

**(b) Latency.** A 3-facet question against an index of ``--chunks`` chunks of real text
(``tests/support/corpus.py``: the descriptions and documentation of the installed Python
distributions and the stdlib sources, cut at 512 characters, each chunk embedded by the bundled
model), built once into ``--workdir`` and reused. p50/p95 of ``search()`` end to end
(decompose + route + embed the sub-queries + search each + fuse), by mode, and the time of the
parts (one sub-query's embedding, one search of each kind). The approximate vector index's
recall is measured against the exact search with the questions of the evaluation's dev halves
as probes. Times are wall-clock on a shared 2-core machine: each measurement is repeated
``--repeat`` times and the median of the medians is reported, with the best.

``--json FILE`` writes every number printed (and each question's outcome in part (a)).
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO / "benchmarks" / "eval"
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(EVAL))

# -- (a) evaluation on the project's corpora --------------------------------------------------

#: The set-ups of ``ragloom.evaluate`` (settings over the command line's defaults).
SETUPS: dict[str, dict[str, Any]] = {
    "default": {},
    "whole": {"decomposer": "none"},
    "text": {"mode": "text"},
    "whole-text": {"mode": "text", "decomposer": "none"},
    "vector": {"mode": "vector"},
}
#: Cut-offs scored; every search returns ``max(KS)`` passages.
KS = (1, 3, 5, 10)
TOP_K = max(KS)
KINDS = ("compound", "simple", "one-ask")


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


@dataclass(frozen=True)
class Passage:
    """A returned chunk, as the judge reads it."""

    document_id: str
    chunk_id: str
    content: str
    start: int | None
    end: int | None


def corpus_folder(name: str, workdir: Path) -> Path:
    """The corpus copied into ``workdir/corpora/<name>`` (reused when built from the same
    package version)."""
    import corpora

    out = workdir / "corpora"
    folder = out / name
    marker = out / f"{name}.built"  # beside the folder: nothing in it is ingested
    installed = corpora.installed_version(corpora.RECIPES[name].package)
    if installed and folder.is_dir() and marker.is_file() and marker.read_text() == installed:
        print(f"{name}: corpus reused from {folder}")
        return folder
    out.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    corpora.build(name, out)
    marker.write_text(installed or "")
    return folder


def ingest(folder: Path, path: Path) -> dict[str, Any]:
    """``folder`` ingested into the LanceDB index at ``path`` (unchanged documents kept)."""
    import ragloom
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(path)
    try:
        report = ragloom.ingest([folder], store=store, cache=False, sync=True)
    finally:
        store.close()
    if not report.ok:
        sys.exit(f"ingesting {folder} failed: {report.failures[:3]}")
    info = LanceDBStore(path)
    try:
        held = info.info()
    finally:
        info.close()
    print(f"  index {path}: {held.documents} documents, {held.chunks:,} chunks "
          f"({report.indexed} written, {report.unchanged} unchanged, {report.seconds:.1f} s)")
    return {"path": str(path), "documents": held.documents, "chunks": held.chunks,
            "written": report.indexed, "unchanged": report.unchanged,
            "ingest_seconds": report.seconds}


def stored_passages(path: Path) -> tuple[list[Passage], list[list[float]], list[str]]:
    """Every chunk of the index (with its vector) and the ids of its documents."""
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(path)
    try:
        by_document = store.chunks()
        documents = sorted(store.fingerprints())
    finally:
        store.close()
    passages, vectors = [], []
    for document_id, chunks in by_document.items():
        for chunk in chunks:
            passages.append(Passage(document_id, chunk.id, chunk.content, chunk.start, chunk.end))
            vectors.append(chunk.embedding)
    return passages, vectors, documents


class BM25:
    """Plain BM25 (bm25s) over the chunks' content."""

    def __init__(self, passages: list[Passage]) -> None:
        import bm25s
        from bm25s.tokenization import Tokenizer

        try:
            import Stemmer

            stemmer: Any = Stemmer.Stemmer("english")
            self.stemming = f"PyStemmer {package_version('PyStemmer')} (english)"
        except ImportError:
            stemmer, self.stemming = None, "none (PyStemmer not installed)"
        self.passages = passages
        self.tokenizer = Tokenizer(stopwords="english", stemmer=stemmer)
        self.model = bm25s.BM25()
        self.model.index(
            self.tokenizer.tokenize([p.content for p in passages], show_progress=False),
            show_progress=False,
        )

    def search(self, question: str, top_k: int = TOP_K) -> list[Passage]:
        tokens = self.tokenizer.tokenize([question], update_vocab=False, show_progress=False)
        ids, scores = self.model.retrieve(
            tokens, k=min(top_k, len(self.passages)), show_progress=False
        )
        # bm25s fills k with zero scores when fewer chunks hold a query word: those are not found
        return [self.passages[i] for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


class LlamaFusion:
    """LlamaIndex's ``QueryFusionRetriever`` (reciprocal rerank) fed ragloom's sub-queries."""

    def __init__(self, passages: list[Passage], vectors: list[list[float]], embedder: Any) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import QueryBundle, TextNode

        class Model2Vec(BaseEmbedding):
            """The bundled model2vec model as a LlamaIndex embedding."""

            def _get_query_embedding(self, query: str) -> list[float]:
                return embedder.embed_query(query)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return embedder.embed_query(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return embedder.embed([text])[0].tolist()

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return embedder.embed(texts).tolist()

        self.passages = {p.chunk_id: p for p in passages}
        nodes = [
            TextNode(id_=p.chunk_id, text=p.content, embedding=list(v))
            for p, v in zip(passages, vectors, strict=True)
        ]
        index = VectorStoreIndex(nodes, embed_model=Model2Vec(model_name="m2v-minilm-256"))

        class Fed(QueryFusionRetriever):
            pending: list[str] = []

            def _get_queries(self, original_query: str) -> list[QueryBundle]:
                return [QueryBundle(q) for q in self.pending]

        self.fusion = Fed(
            [index.as_retriever(similarity_top_k=TOP_K)], llm=MockLLM(),
            mode="reciprocal_rerank", similarity_top_k=TOP_K, num_queries=2, use_async=False,
        )

    def search(self, queries: list[str]) -> list[Passage]:
        first, rest = queries[0], queries[1:]
        self.fusion.pending = rest
        self.fusion.num_queries = 1 + len(rest)
        return [self.passages[n.node.node_id] for n in self.fusion.retrieve(first)]


def plan_queries(question: str, sub_queries: list[str]) -> list[str]:
    """What ragloom searched: the sub-queries, and the whole question when it was split."""
    import re

    def words(text: str) -> list[str]:
        return re.findall(r"\w+", text.casefold())

    if not sub_queries:
        return [question]
    if len(sub_queries) == 1 and words(sub_queries[0]) == words(question):
        return sub_queries
    return [*sub_queries, question]


def judged(
    name: str,
    settings: dict[str, Any],
    questions: Any,
    documents: Any,
    search: Callable[[Any], tuple[list[Passage], list[str]]],
) -> Any:
    """A search outside the library over every question, judged and scored as ``ragloom
    eval`` judges and scores its own (``ragloom.evaluation``)."""
    from ragloom.evaluation import (
        FacetOutcome,
        Latency,
        QuestionOutcome,
        Scores,
        SetupResult,
        facet_ranks,
    )

    started = time.perf_counter()
    outcomes = []
    for question in questions:
        facets, _ = documents.judgeable(question)  # the warnings are ragloom.evaluate's too
        began = time.perf_counter()
        passages, queries = search(question)
        seconds = time.perf_counter() - began
        ranks = facet_ranks(facets, passages)
        judged_labels = {facet.label for facet in facets}
        outcomes.append(QuestionOutcome(
            id=question.id, question=question.question, kind=question.question_kind,
            sub_queries=queries,
            facets=[
                FacetOutcome(
                    label=facet.label,
                    expected=[e.describe() for e in facet.alternatives],
                    rank=rank,
                    document_id=passages[rank - 1].document_id if rank else None,
                    chunk_id=passages[rank - 1].chunk_id if rank else None,
                )
                for facet, rank in zip(facets, ranks, strict=True)
            ],
            unjudged=[f.label for f in question.facets if f.label not in judged_labels],
            returned=[p.document_id for p in passages],
            seconds=seconds,
        ))
    kinds: dict[str, list[Any]] = {}
    for outcome in outcomes:
        kinds.setdefault(outcome.kind, []).append(outcome)
    return SetupResult(
        name=name, index="", settings=settings, overall=Scores.of(outcomes, KS),
        by_kind={kind: Scores.of(found, KS) for kind, found in sorted(kinds.items())},
        latency=Latency.of([o.seconds for o in outcomes]),
        seconds=time.perf_counter() - started, concurrency=1, failed=0, questions=outcomes,
    )


def table(setups: Sequence[Any]) -> None:
    print(f"  {'set-up':20} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'nDCG@10':>8} "
          + " ".join(f"{kind + ' R@10':>16}" for kind in KINDS) + f" {'p50 ms':>8}")
    for setup in setups:
        kinds = [
            f"{setup.by_kind[kind].recall(10):16.3f}" if kind in setup.by_kind else f"{'-':>16}"
            for kind in KINDS
        ]
        print(f"  {setup.name:20} {setup.overall.recall(5):6.3f} {setup.overall.recall(10):6.3f} "
              f"{setup.overall.mrr:6.3f} {setup.overall.ndcg:8.3f} " + " ".join(kinds)
              + f" {setup.latency.p50_ms:8.1f}")


def evaluation(workdir: Path, halves: Sequence[str], results: dict[str, Any]) -> None:
    import corpora
    import ragloom
    from ragloom.evaluation import DocumentIndex, load_questions
    from ragloom_semantic import Model2VecEmbedder

    embedder = Model2VecEmbedder()
    for name in corpora.RECIPES:
        if not (EVAL / "questions" / f"{name}.{halves[0]}.jsonl").is_file():
            continue  # a corpus for a set across collections only (openssl: apache-openssl)
        print(f"\n-- {name} --")
        folder = corpus_folder(name, workdir)
        path = workdir / "index" / name
        held = ingest(folder, path)
        passages, vectors, document_ids = stored_passages(path)
        documents = DocumentIndex(document_ids)
        start = time.perf_counter()
        bm25 = BM25(passages)
        print(f"  bm25s: {len(passages):,} chunks indexed in {time.perf_counter() - start:.1f} s, "
              f"stemming: {bm25.stemming}")
        llama: LlamaFusion | None = None
        try:
            start = time.perf_counter()
            llama = LlamaFusion(passages, vectors, embedder)
            print(f"  LlamaIndex: VectorStoreIndex of {len(passages):,} chunks in "
                  f"{time.perf_counter() - start:.1f} s")
        except ImportError as exc:
            print(f"  LlamaIndex not measured ({exc}): pip install llama-index-core")
        del vectors
        results[name] = {"corpus": str(folder), "index": held, "halves": {}}
        for half in halves:
            questions_file = EVAL / "questions" / f"{name}.{half}.jsonl"
            questions = load_questions(questions_file)
            start = time.perf_counter()
            report = ragloom.evaluate(questions, str(path), setups=SETUPS, ks=KS, concurrency=1)
            seconds = time.perf_counter() - start
            setups = list(report.setups)
            setups.append(judged(
                "bm25 (bm25s)", {"k1": 1.5, "b": 0.75, "method": "lucene",
                                 "stopwords": "english", "stemming": bm25.stemming,
                                 "top_k": TOP_K},
                questions, documents,
                lambda q, bm25=bm25: (bm25.search(q.question), [q.question]),
            ))
            if llama is not None:
                plans = {o.id: o.sub_queries for o in report.setup("vector").questions}

                def fused(q: Any, llama: LlamaFusion = llama, plans: Any = plans) -> Any:
                    queries = plan_queries(q.question, plans[q.id])
                    return llama.search(queries), queries

                setups.append(judged(
                    "llamaindex fusion", {"mode": "vector", "fusion": "reciprocal_rerank",
                                          "queries": "the vector set-up's", "top_k": TOP_K},
                    questions, documents, fused,
                ))
            facets = report.setups[0].overall.facets
            per_kind = ", ".join(
                f"{s.questions} {kind}" for kind, s in report.setups[0].by_kind.items()
            )
            print(f"\n{name}, {half} half ({questions_file.relative_to(REPO)}): "
                  f"{len(questions)} questions ({per_kind}), {facets} facets judged; "
                  f"ragloom.evaluate took {seconds:.0f} s")
            for warning in report.warnings[:5]:
                print(f"  warning: {warning}")
            if len(report.warnings) > 5:
                print(f"  ... {len(report.warnings) - 5} more warnings")
            table(setups)
            results[name]["halves"][half] = {
                "questions_file": str(questions_file.relative_to(REPO)),
                "questions": len(questions),
                "warnings": report.warnings,
                "setups": [s.model_dump(mode="json") for s in setups],
            }


# -- (b) latency at scale ---------------------------------------------------------------------

THREE_FACETS = "How do I install the package? How do I configure logging? How do I run the tests?"


def median_ms(fn: Callable[[], Any], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def probe_questions(per_file: int = 15) -> list[str]:
    """The first questions of each dev half (only their text: probes of the vector index)."""
    probes = []
    for path in sorted((EVAL / "questions").glob("*.dev.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()[:per_file]
        probes += [json.loads(line)["question"] for line in lines if line.strip()]
    return probes


def real_chunks(count: int) -> list[str]:
    from ragloom_text import RecursiveCharacterTextSplitter
    from support.corpus import build_corpus

    splitter = RecursiveCharacterTextSplitter(chunk_size=512)
    pieces: list[str] = []
    for _, _, text in build_corpus(min(80_000_000, count * 520)):
        pieces.extend(p for p in splitter.split_text(text) if p.strip())
        if len(pieces) >= count:
            break
    if len(pieces) < count:
        print(f"  (the corpus gave {len(pieces)} chunks: reused round-robin)")
    return [pieces[i % len(pieces)] for i in range(count)]


def big_index(path: Path, count: int, embedder: Any) -> Any:
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument
    from ragloom_lancedb import LanceDBStore

    store = LanceDBStore(path)
    if store.info().chunks == count:
        start = time.perf_counter()
        store.optimize()  # builds the vector index if this index predates it
        print(f"index: {count:,} chunks reused from {path} (optimize: "
              f"{time.perf_counter() - start:.1f} s)")
        store.close()
        return LanceDBStore(path)  # a handle that only reads, as a search process has
    store.clear()
    start = time.perf_counter()
    texts = real_chunks(count)
    cut = time.perf_counter()
    batch = 5000
    for lo in range(0, count, batch):
        vectors = embedder.embed(texts[lo : lo + batch])
        documents = []
        for d in range(lo, min(count, lo + batch), 10):
            doc_id = f"doc-{d // 10}"
            documents.append(IndexedDocument(doc_id, f"fp-{d}", [
                Document.model_construct(
                    id=f"{doc_id}#{i - d}", content=texts[i], content_format="text",
                    metadata={"source": f"s{(d // 10) % 100}"}, parent_id=doc_id,
                    index=i - d, start=None, end=None, embedding=vectors[i - lo].tolist(),
                )
                for i in range(d, min(count, d + 10))
            ]))
        store.write(documents)
    store.optimize()
    print(f"index: {count:,} chunks of real text: cut in {cut - start:.1f} s, embedded, "
          f"written and indexed in {time.perf_counter() - cut:.1f} s -> {path}")
    store.close()
    return LanceDBStore(path)  # a handle that only reads, as a search process has


def index_recall(path: Path, embedder: Any, queries: list[str], top_k: int = 10) -> float:
    """Share of the exact top ``top_k`` that the approximate vector index finds."""
    from ragloom_lancedb import LanceDBStore

    approximate = LanceDBStore(path)
    exact = LanceDBStore(path, vector_index_rows=None)
    shares = []
    for query in queries:
        vector = embedder.embed_query(query)
        want = {h.chunk.id for h in exact.search(vector=vector, top_k=top_k)}
        got = {h.chunk.id for h in approximate.search(vector=vector, top_k=top_k)}
        shares.append(len(want & got) / max(1, len(want)))
    approximate.close()
    exact.close()
    return statistics.mean(shares)


def latency(
    count: int, repeat: int, workdir: Path, queries: int, results: dict[str, Any]
) -> None:
    from ragloom.multi_retrieval import MultiQueryRetrievalPipeline
    from ragloom.retrieval import StoreRetriever
    from ragloom_rules import HeuristicDecomposer, KeywordRouter
    from ragloom_semantic import Model2VecEmbedder

    embedder = Model2VecEmbedder()
    store = big_index(workdir / f"index-{count}", count, embedder)
    router = KeywordRouter(
        [
            {"name": "install", "keywords": ["install", "package", "pip"]},
            {"name": "logging", "keywords": ["logging", "log", "configure"]},
            {"name": "testing", "keywords": ["test", "tests", "pytest"]},
            {"name": "general"},
        ],
        default_route="general",
    )
    decomposer = HeuristicDecomposer()
    print(f"question: {THREE_FACETS!r} -> {decomposer.transform_sync(THREE_FACETS)}")
    probes = probe_questions() + decomposer.transform_sync(THREE_FACETS)
    share = index_recall(workdir / f"index-{count}", embedder, probes)
    with type(store)(workdir / f"index-{count}") as other:  # info() reads through LanceDB
        indexes = other.info().details["indexes"]
    print(f"vector index: {indexes}; recall@10 of the exact vector "
          f"search over {len(probes)} queries: {share:.3f}")
    results.update(chunks=count, repeat=repeat, queries=queries, index_recall_at_10=share,
                   probes=len(probes), ms={})
    print(f"ragloom {version('ragloom')}, lancedb {version('lancedb')}, "
          f"{platform.processor() or platform.machine()}")
    print(f"\n{count:,} chunks: ms over {queries} searches, median / best of {repeat} runs")
    print(f"  {'':34} {'p50':>8} {'p95':>8} {'best p50':>9}")

    def report(label: str, fn: Callable[[], Any]) -> None:
        fn()  # warm
        p50s, p95s = [], []
        for _ in range(repeat):
            times = sorted(median_ms(fn, queries))
            p50s.append(statistics.median(times))
            p95s.append(times[int(0.95 * (len(times) - 1))])
        print(f"  {label:34} {statistics.median(p50s):8.2f} {statistics.median(p95s):8.2f} "
              f"{min(p50s):9.2f}")
        results["ms"][label] = {"p50": statistics.median(p50s), "p95": statistics.median(p95s),
                                "best_p50": min(p50s)}

    sub = "How do I configure logging?"
    vector = embedder.embed_query(sub)
    report("embed one sub-query", lambda: embedder.embed_query(sub))
    exact = type(store)(workdir / f"index-{count}", vector_index_rows=None)
    report("one vector search, exact (top 5)", lambda: exact.search(vector=vector, top_k=5))
    report("one vector search (top 5)", lambda: store.search(vector=vector, top_k=5))
    report("one text search (top 5)", lambda: store.search(text=sub, top_k=5))
    report("one hybrid search (top 5)", lambda: store.search(vector=vector, text=sub, top_k=5))
    for mode in ("vector", "text", "hybrid"):
        retriever = StoreRetriever(store, embedder if mode != "text" else None, mode=mode,
                                   top_k=5)
        block = MultiQueryRetrievalPipeline(decomposer, router, retriever, top_k=5)
        report(f"search() end to end, {mode}", lambda block=block: block.search_sync(THREE_FACETS))
    block = MultiQueryRetrievalPipeline(
        decomposer, router, StoreRetriever(exact, embedder, mode="hybrid", top_k=5), top_k=5
    )
    report("search() end to end, hybrid, exact", lambda: block.search_sync(THREE_FACETS))
    exact.close()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", nargs="+", choices=["eval", "latency"],
                        default=["eval", "latency"])
    parser.add_argument("--half", nargs="+", choices=["dev", "test"], default=["dev"],
                        help="the question files' halves evaluated (test: held out, to report "
                        "only)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) /
                        "ragloom-bench-search", help="where the corpora and indexes are kept "
                        "and reused")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every number here")
    args = parser.parse_args()
    halves = list(dict.fromkeys(args.half))
    command = shlex.join(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    versions = {
        "python": sys.version.split()[0],
        **{name: package_version(name) for name in (
            "ragloom", "lancedb", "pylance", "model2vec", "bm25s", "PyStemmer",
            "llama-index-core",
        )},
    }
    print(f"command: {command}")
    print(f"Python {versions['python']} on {platform.platform()}, "
          f"{platform.processor() or platform.machine()}")
    print(", ".join(f"{name} {v}" for name, v in versions.items() if name != "python"))
    results: dict[str, Any] = {"command": command, "platform": platform.platform(),
                               "versions": versions}
    if "eval" in args.part:
        import corpora

        packages = {}
        for name, recipe in corpora.RECIPES.items():
            installed = corpora.installed_version(recipe.package)
            packages[recipe.package] = {"installed": installed, "questions_written_for":
                                        recipe.version}
            print(f"{name}: {recipe.package} {installed or 'not installed'}"
                  + ("" if installed == recipe.version
                     else f" (the questions were written against {recipe.version})"))
        results["debian_packages"] = packages
    args.workdir.mkdir(parents=True, exist_ok=True)
    if "eval" in args.part:
        print(f"\n== (a) evaluation: {', '.join(halves)} half, workdir {args.workdir} ==")
        results["eval"] = {}
        evaluation(args.workdir, halves, results["eval"])
    if "latency" in args.part:
        print(f"\n== (b) latency: a 3-facet question, {args.chunks:,} chunks ==")
        results["latency"] = {}
        latency(args.chunks, args.repeat, args.workdir, args.queries, results["latency"])
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        print(f"\nnumbers written to {args.json}")


if __name__ == "__main__":
    main()
