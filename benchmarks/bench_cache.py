"""Cold vs warm (fully cached) ingestion: ragloom's SQLite cache against LlamaIndex's cache.

    pip install -e core -e plugins/text llama-index-core
    python benchmarks/bench_cache.py [--mb 20] [--repeat 3] [--skip-llama] [--skip-edit]
        [--semantic-mb 2] [--skip-semantic]

Corpus: ``tests/support/corpus.py`` (real text already on the machine: package descriptions,
documentation files, stdlib sources), at least ``--mb`` MB of UTF-8.

Three set-ups, each timed cold (empty cache: transform and write everything), warm (every
document replayed from the cache) and warm with one document edited:

- ``ragloom/recursive``: ragloom-text's ``RecursiveCharacterTextSplitter(chunk_size=1000)``
  (a paragraph packer if ragloom-text is not installed) behind an ``SQLiteCacheStore`` file;
  also run without a cache, for the cost of the cache itself.
- ``ragloom/auto``: what ``ragloom ingest`` runs by default, ragloom-text's ``auto`` chunker
  router (Markdown, code and recursive chunkers at 500 characters), likewise.
- ``ragloom/sentence``: LlamaIndex's own ``SentenceSplitter(chunk_size=256)`` wrapped as a
  ragloom ``Chunker`` behind an ``SQLiteCacheStore``: the same transformation as the peer, so
  the two caches are compared on equal work.
- ``llamaindex``: ``IngestionPipeline([SentenceSplitter(chunk_size=256)],
  cache=IngestionCache())``. *warm* reuses the pipeline object (its in-memory cache, its best
  case); *warm, from disk* is ``persist()`` then ``load()`` into a new pipeline, then run (what
  a new process does, as ragloom reopens its file on every run here).

Those rows cache every step (``RAGLOOM_CACHE_MODE=always``). Two more measurements check the
cost-aware default (``auto``, what a user gets):

- ``auto`` per fast set-up: a cold run records whether replaying the chunker is cheaper than
  cutting again; the warm runs after it (the cache skipped when it is not) are compared with
  runs without any cache, interleaved. Target: warm <= 1.05x uncached.
- ``semantic, fresh process``: ragloom-semantic's ``SemanticChunker`` (the bundled model2vec
  model; well over 1 ms per document) over the first ``--semantic-mb`` MB of the corpus, cold
  and then warm, each in a new Python process reading the cache file from disk (the time of
  the run itself: opening the cache, building the chunker, running; modules are imported
  before, by a run over no documents). Target: warm >= 10x faster than cold. The whole
  process's time (interpreter start, imports, reading the documents) is printed as well.

A *floor* row per ragloom set-up times the work no warm run can skip, on the same outputs:
hashing every input's content (SHA-256 of its UTF-8, what identifies unchanged content) and
building each output chunk (a slice of its input and a ``Document``, with the core's own
constructor). ``cold/floor`` is the best cold/warm ratio any replay could reach there.

Every run gets freshly built input documents (outside the timed region), so no hash cached on
a document by an earlier run is reused; outputs are dropped before the next run. Each time is
the best of ``--repeat`` runs (a single run for the slow cold LlamaIndex-splitter runs). Wall
time and process CPU time are both shown: on a shared machine CPU time is the steadier one.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

import anyio  # noqa: E402
from corpus import build_corpus, corpus_bytes  # noqa: E402
from ragloom import (  # noqa: E402
    Chunker,
    ChunkSpan,
    ChunkText,
    Document,
    Pipeline,
    SQLiteCacheStore,
)

Row = tuple[float, float, int]  # wall seconds, cpu seconds, chunks


class ParagraphPacker(Chunker):
    """Fallback when ragloom-text is not installed: packs paragraphs up to ``chunk_size``."""

    step_id = "bench/paragraph-packer"

    def __init__(self, chunk_size: int = 1000) -> None:
        super().__init__()
        self.chunk_size = chunk_size

    def config(self) -> dict[str, Any]:
        return {"chunk_size": self.chunk_size}

    def split(self, document: Document) -> list[ChunkSpan]:
        text, size = document.content, self.chunk_size
        spans, start = [], 0
        while start < len(text):
            end = min(len(text), start + size)
            if end < len(text):
                cut = text.rfind("\n\n", start, end)
                if cut > start:
                    end = cut + 2
            spans.append(ChunkSpan(start, end))
            start = end
        return spans


class LlamaSentenceChunker(Chunker):
    """LlamaIndex's ``SentenceSplitter`` as a ragloom chunker (exact spans where it can)."""

    step_id = "bench/llama-sentence-splitter"

    def __init__(self, chunk_size: int = 256) -> None:
        from llama_index.core.node_parser import SentenceSplitter

        super().__init__()
        self.chunk_size = chunk_size
        self._splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0)

    def config(self) -> dict[str, Any]:
        return {"chunk_size": self.chunk_size}

    def split(self, document: Document) -> list[ChunkSpan | ChunkText]:
        content, pos, pieces = document.content, 0, []
        for text in self._splitter.split_text(content):
            at = content.find(text, pos)
            if at < 0:  # the splitter rewrote whitespace: keep its text as is
                pieces.append(ChunkText(text, {"rewritten": True}))
                continue
            pieces.append(ChunkSpan(at, at + len(text)))
            pos = at + len(text)
        return pieces


def fast_chunker() -> tuple[str, Callable[[], Chunker]]:
    """ragloom-text's recursive splitter when it imports, else the paragraph packer."""
    try:
        from ragloom_text import RecursiveCharacterTextSplitter
    except ImportError as exc:
        print(f"ragloom-text unavailable ({exc}); using ParagraphPacker")
        return "ParagraphPacker(1000)", ParagraphPacker
    return "RecursiveCharacterTextSplitter(1000)", lambda: RecursiveCharacterTextSplitter(
        chunk_size=1000
    )


def auto_chunker() -> Callable[[], Chunker] | None:
    """ragloom-text's ``auto`` router (``ragloom ingest``'s default), if installed."""
    try:
        from ragloom_text import default_chunker_router
    except ImportError:
        return None
    return lambda: default_chunker_router(chunk_size=500)  # type: ignore[return-value]


def floor_time(
    corpus: list[tuple[str, str, str]], chunker: Callable[[], Chunker], repeat: int
) -> Row:
    """The unavoidable part of a warm run: hash each input, build each output chunk."""
    from ragloom._construct import construct_document

    docs = _ragloom_docs(corpus)
    chunks = _run(Pipeline(chunker(), cache=False), docs)
    by_parent: dict[str, list[Document]] = {}
    for chunk in chunks:
        by_parent.setdefault(str(chunk.parent_id), []).append(chunk)
    plan = [(d, [(c.start, c.end, c.index) for c in by_parent.get(d.id, [])]) for d in docs]

    def work() -> int:
        built = 0
        for doc, spans in plan:
            hashlib.sha256(doc.content.encode("utf-8", "surrogatepass")).hexdigest()
            content, fmt, meta, pid = doc.content, doc.content_format, doc.metadata, doc.id
            for start, end, index in spans:
                construct_document(
                    {
                        "id": f"{pid}#{index}",
                        "content": content[start:end] if start is not None else "",
                        "content_format": fmt,
                        "metadata": dict(meta),
                        "parent_id": pid,
                        "index": index,
                        "start": start,
                        "end": end,
                    }
                )
                built += 1
        return built

    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        wall, cpu, built = _timed(work)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu, built


def _run(pipeline: Pipeline[Any], inputs: list[Any]) -> Any:
    box: list[Any] = []

    async def main() -> None:  # returns nothing: see the note in the report on run_sync
        box.append(await pipeline.run(inputs))

    anyio.run(main)
    return box[0]


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _digest(outputs: Any) -> str:
    h = hashlib.sha256()
    for out in outputs:
        h.update(out.model_dump_json().encode())
    return h.hexdigest()


def _ragloom_docs(corpus: list[tuple[str, str, str]], edit: bool = False) -> list[Document]:
    docs = [Document(id=name, content=text, content_format=fmt) for name, fmt, text in corpus]
    if edit:
        middle = len(docs) // 2
        docs[middle] = Document(id=docs[middle].id, content="an edited document")
    return docs


def bench_ragloom(
    corpus: list[tuple[str, str, str]],
    chunker: Callable[[], Chunker],
    path: Path,
    *,
    repeat: int,
    cold_runs: int,
    edit: bool,
    uncached: bool,
) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    digests: set[str] = set()

    def measure(run: str, runs: int, cache: str, edited: bool = False) -> None:
        best_wall, best_cpu, chunks = float("inf"), float("inf"), 0
        for _ in range(runs):
            if cache == "cold" and path.exists():
                path.unlink()
            docs = _ragloom_docs(corpus, edited)

            def once(docs: list[Document] = docs) -> Any:
                if cache == "none":
                    return _run(Pipeline(chunker(), cache=False), docs)
                with SQLiteCacheStore(path) as store:  # opening the file is part of a run
                    return _run(Pipeline(chunker(), cache=store), docs)

            wall, cpu, out = _timed(once)
            best_wall, best_cpu, chunks = min(best_wall, wall), min(best_cpu, cpu), len(out)
            n = len(docs)
            expected = {"none": (0, 0), "cold": (0, n), "warm": (n - edited, int(edited))}
            assert (out.cache_hits, out.cache_misses) == expected[cache], (run, cache)
            assert not out.failed, out.failed[:3]
            if not edited:
                digests.add(_digest(out))
            del out, docs  # the next run's garbage collector walks the same heap
        rows[run] = (best_wall, best_cpu, chunks)

    if uncached:
        measure("no cache", repeat, "none")
    measure("cold", cold_runs, "cold")
    measure("warm", repeat, "warm")
    if edit:
        measure("warm, 1 edited", 1, "warm", edited=True)
    assert len(digests) == 1, "cached output differs from uncached output"
    return rows


def bench_llama(
    corpus: list[tuple[str, str, str]], repeat: int, workdir: Path, edit: bool
) -> dict[str, Row]:
    from llama_index.core import Document as LlamaDocument
    from llama_index.core.ingestion import IngestionCache, IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter

    def docs(edited: bool = False) -> list[Any]:
        out = [LlamaDocument(text=text, id_=name) for name, _fmt, text in corpus]
        if edited:
            middle = len(out) // 2
            out[middle] = LlamaDocument(text="an edited document", id_=corpus[middle][0])
        return out

    def pipeline() -> Any:
        return IngestionPipeline(
            transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=0)],
            cache=IngestionCache(),
        )

    rows: dict[str, Row] = {}
    pipe = pipeline()
    inputs = docs()
    wall, cpu, nodes = _timed(lambda: pipe.run(documents=inputs))
    rows["cold"] = (wall, cpu, len(nodes))
    del nodes, inputs

    def best_of(run: str, fn: Callable[[list[Any]], Any]) -> None:
        best_wall, best_cpu, count = float("inf"), float("inf"), 0
        for _ in range(repeat):
            inputs = docs()
            wall, cpu, nodes = _timed(lambda inputs=inputs: fn(inputs))
            best_wall, best_cpu, count = min(best_wall, wall), min(best_cpu, cpu), len(nodes)
            del nodes, inputs
        rows[run] = (best_wall, best_cpu, count)

    best_of("warm", lambda inputs: pipe.run(documents=inputs))
    persist_dir = workdir / "llama"
    pipe.persist(str(persist_dir))

    def from_disk(inputs: list[Any]) -> Any:
        fresh = pipeline()
        fresh.load(str(persist_dir))
        return fresh.run(documents=inputs)

    best_of("warm, from disk", from_disk)
    if edit:
        inputs = docs(edited=True)
        wall, cpu, nodes = _timed(lambda: pipe.run(documents=inputs))
        rows["warm, 1 edited"] = (wall, cpu, len(nodes))
    return rows


def bench_auto(
    corpus: list[tuple[str, str, str]], chunker: Callable[[], Chunker], path: Path, repeat: int
) -> dict[str, Any]:
    """The cost-aware default: one cold run records the decision, then warm runs (cache
    skipped if so decided) interleaved with runs without a cache; best times of each."""
    previous = os.environ.get("RAGLOOM_CACHE_MODE")
    os.environ["RAGLOOM_CACHE_MODE"] = "auto"
    try:
        if path.exists():
            path.unlink()
        with SQLiteCacheStore(path) as store:
            _run(Pipeline(chunker(), cache=store), _ragloom_docs(corpus))
            decisions = store.decisions()
        warm = none = (float("inf"), float("inf"))
        hits = -1
        digests: set[str] = set()
        for _ in range(repeat):
            for kind in ("none", "warm"):
                docs = _ragloom_docs(corpus)

                def once(docs: list[Document] = docs, kind: str = kind) -> Any:
                    if kind == "none":
                        return _run(Pipeline(chunker(), cache=False), docs)
                    with SQLiteCacheStore(path) as store:
                        return _run(Pipeline(chunker(), cache=store), docs)

                wall, cpu, out = _timed(once)
                digests.add(_digest(out))
                if kind == "none":
                    none = (min(none[0], wall), min(none[1], cpu))
                else:
                    warm = (min(warm[0], wall), min(warm[1], cpu))
                    hits = out.cache_hits
                del out, docs
        assert len(digests) == 1, "auto-mode output differs from uncached output"
    finally:
        if previous is None:
            os.environ.pop("RAGLOOM_CACHE_MODE", None)
        else:
            os.environ["RAGLOOM_CACHE_MODE"] = previous
    return {"decisions": list(decisions.values()), "warm": warm, "none": none, "hits": hits}


def semantic_worker(db: str, docs_file: str) -> None:
    """In a fresh process: chunk the documents of ``docs_file`` with the SemanticChunker
    through the SQLite cache ``db``; print the run's times and counts as JSON."""
    with open(docs_file, encoding="utf-8") as handle:
        docs = [Document(**json.loads(line)) for line in handle]
    from ragloom_semantic import SemanticChunker

    # Import what a run imports (the engine, the cache, the chunker's module) before timing:
    # cold and warm import the same modules, which says nothing about the cache. The model is
    # loaded on first use, so this loads nothing.
    _run(Pipeline(SemanticChunker(chunk_size=1000), cache=False), [])

    def once() -> Any:
        with SQLiteCacheStore(db) as store:
            return _run(Pipeline(SemanticChunker(chunk_size=1000), cache=store), docs)

    wall, cpu, out = _timed(once)
    assert not out.failed, out.failed[:3]
    print(json.dumps({"wall": wall, "cpu": cpu, "chunks": len(out), "hits": out.cache_hits,
                      "misses": out.cache_misses, "digest": _digest(out)}))


def bench_semantic(
    corpus: list[tuple[str, str, str]], mb: float, workdir: Path, repeat: int
) -> dict[str, Any] | None:
    """SemanticChunker cold, then warm, each in a new process reading the cache from disk."""
    try:
        import ragloom_semantic  # noqa: F401
    except ImportError as exc:
        print(f"ragloom-semantic unavailable ({exc}); no semantic rows")
        return None
    docs_file, db = workdir / "semantic-docs.jsonl", workdir / "semantic.db"
    size, count = 0, 0
    with open(docs_file, "w", encoding="utf-8") as handle:
        for name, fmt, text in corpus:
            if size >= mb * 1e6:
                break
            handle.write(json.dumps({"id": name, "content": text, "content_format": fmt}) + "\n")
            size += len(text.encode("utf-8", "surrogatepass"))
            count += 1
    env = {**os.environ, "RAGLOOM_CACHE_MODE": "auto"}

    def fresh() -> dict[str, Any]:
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--semantic-worker", str(db), str(docs_file)],
            capture_output=True, text=True, env=env, check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"semantic worker failed:\n{proc.stderr}")
        found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        found["process"] = time.perf_counter() - started  # the whole process, start to exit
        return found

    cold = fresh()
    assert (cold["hits"], cold["misses"]) == (0, count), cold
    warms = [fresh() for _ in range(repeat)]
    for warm in warms:
        assert (warm["hits"], warm["misses"]) == (count, 0), warm
        assert warm["digest"] == cold["digest"], "replayed chunks differ from computed ones"
    best = min(warms, key=lambda w: w["wall"])
    with SQLiteCacheStore(db) as store:
        decisions = list(store.decisions().values())
    return {"docs": count, "mb": size / 1e6, "cold": cold, "warm": best,
            "decisions": decisions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MB (min)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-llama", action="store_true", help="ragloom/recursive only")
    parser.add_argument("--skip-edit", action="store_true", help="no 1-edited runs")
    parser.add_argument("--semantic-mb", type=float, default=2.0,
                        help="MB of the corpus the SemanticChunker runs over")
    parser.add_argument("--skip-semantic", action="store_true", help="no semantic rows")
    parser.add_argument("--semantic-worker", nargs=2, metavar=("DB", "DOCS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.semantic_worker:
        semantic_worker(*args.semantic_worker)
        return
    # The rows below cache every step; the auto rows set the cost-aware mode themselves.
    os.environ["RAGLOOM_CACHE_MODE"] = "always"

    corpus = build_corpus(int(args.mb * 1_000_000))
    mb = corpus_bytes(corpus) / 1e6
    label, fast = fast_chunker()
    print(f"corpus: {len(corpus)} documents, {mb:.1f} MB; ragloom/recursive = {label}")
    workdir = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    results: dict[str, dict[str, Row]] = {}
    sizes: dict[str, float] = {}
    autos: dict[str, dict[str, Any]] = {}
    semantic: dict[str, Any] | None = None
    try:
        fast_setups = {"ragloom/recursive": fast}
        auto = auto_chunker()
        if auto is not None:
            fast_setups["ragloom/auto"] = auto
        for system, make in fast_setups.items():
            path = workdir / f"{system.split('/')[1]}.db"
            results[system] = bench_ragloom(
                corpus, make, path, repeat=args.repeat, cold_runs=max(1, args.repeat - 1),
                edit=not args.skip_edit, uncached=True,
            )
            sizes[system] = path.stat().st_size / 1e6
            results[system]["floor"] = floor_time(corpus, make, args.repeat)
            autos[system] = bench_auto(corpus, make, workdir / "auto.db", args.repeat)
        if not args.skip_semantic:
            semantic = bench_semantic(corpus, args.semantic_mb, workdir, args.repeat)
        if not args.skip_llama:
            path = workdir / "sentence.db"
            results["ragloom/sentence"] = bench_ragloom(
                corpus, LlamaSentenceChunker, path, repeat=args.repeat, cold_runs=1,
                edit=not args.skip_edit, uncached=False,
            )
            sizes["ragloom/sentence"] = path.stat().st_size / 1e6
            results["llamaindex"] = bench_llama(
                corpus, args.repeat, workdir, edit=not args.skip_edit
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"\n{'set-up':<18} {'run':<16} {'wall s':>8} {'cpu s':>8} {'MB/s':>8} "
        f"{'chunks':>7} {'cold/this':>10}"
    )
    for system, rows in results.items():
        cold_cpu = rows["cold"][1]
        for run, (wall, cpu, chunks) in rows.items():
            ratio = f"{cold_cpu / cpu:.1f}x" if run != "cold" else ""
            print(
                f"{system:<18} {run:<16} {wall:>8.3f} {cpu:>8.3f} {mb / wall:>8.1f} "
                f"{chunks:>7} {ratio:>10}"
            )
    print("(cold/this: cold CPU time over this run's CPU time)")
    for system, size in sizes.items():
        print(f"{system} cache file: {size:.1f} MB for {mb:.1f} MB of input")
    print()
    for system, rows in results.items():
        wall = rows["cold"][0] / rows["warm"][0]
        cpu = rows["cold"][1] / rows["warm"][1]
        print(f"{system}: warm is {wall:.1f}x faster than cold (wall), {cpu:.1f}x (cpu)")
        if "floor" in rows:
            floor = rows["floor"][1]
            print(
                f"{system}: floor (hash inputs + build chunks) {floor:.3f} s cpu = "
                f"{rows['warm'][1] / floor:.2f}x of warm; best possible cold/warm "
                f"{rows['cold'][1] / floor:.1f}x"
            )
    print()
    for system, auto in autos.items():
        for d in auto["decisions"]:
            print(
                f"{system} auto: decision {d['replay']} for {d.get('step')} (recompute "
                f"{d['compute_us']:.1f} us/item, replay {d['replay_us']:.1f} us/item, "
                f"{d['items']} items)"
            )
        (wall, cpu), (none_wall, none_cpu) = auto["warm"], auto["none"]
        print(
            f"{system} auto: warm {cpu:.3f} s cpu ({wall:.3f} s wall, {auto['hits']} hits) vs "
            f"no cache {none_cpu:.3f} s cpu ({none_wall:.3f} s wall): warm/uncached "
            f"{cpu / none_cpu:.3f}x cpu, {wall / none_wall:.3f}x wall (target <= 1.05x)"
        )
    if semantic is not None:
        cold, warm, n = semantic["cold"], semantic["warm"], semantic["docs"]
        print(
            f"semantic, fresh process: {n} documents, {semantic['mb']:.1f} MB, "
            f"{cold['chunks']} chunks; cold {cold['wall']:.3f} s wall "
            f"({1e3 * cold['wall'] / n:.2f} ms/document), {cold['cpu']:.3f} s cpu"
        )
        print(
            f"semantic, fresh process: warm {warm['wall']:.3f} s wall, {warm['cpu']:.3f} s cpu "
            f"({warm['hits']} hits): cold/warm {cold['wall'] / warm['wall']:.1f}x wall, "
            f"{cold['cpu'] / warm['cpu']:.1f}x cpu (target >= 10x)"
        )
        print(
            f"semantic, fresh process: whole process (start, imports, read documents, run): "
            f"cold {cold['process']:.3f} s, warm {warm['process']:.3f} s wall"
        )
        for d in semantic["decisions"]:
            print(
                f"semantic, fresh process: decision {d['replay']} (recompute "
                f"{d['compute_us']:.1f} us/item, replay {d['replay_us']:.1f} us/item)"
            )
    if "llamaindex" in results:
        ours = results["ragloom/sentence"]["warm"]
        for run in ("warm", "warm, from disk"):
            theirs = results["llamaindex"][run]
            print(
                f"ragloom/sentence warm vs llamaindex {run}: {theirs[0] / ours[0]:.1f}x "
                f"faster (wall), {theirs[1] / ours[1]:.1f}x (cpu)"
            )


if __name__ == "__main__":
    main()
