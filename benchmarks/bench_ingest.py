"""Files to a vector index end to end: ragloom against LlamaIndex's IngestionPipeline.

    pip install -e 'core[cli]' -e plugins/text -e plugins/loaders -e plugins/semantic \\
        -e plugins/lancedb llama-index-core llama-index-vector-stores-lancedb pandas
    python benchmarks/bench_ingest.py [--sizes 20,200] [--peer-sizes 20] [--repeat 1]
        [--llama-encoders ragloom,model2vec] [--skip-cli] [--keep]

**Corpus.** Real files already on this machine, written under a temporary folder: Markdown,
reStructuredText, plain text and Python sources, and HTML pages, taken from the installed
packages, the standard library and ``/usr/share/doc`` (nothing from ragloom; every file is
distinct, so no cache can hit across copies). Each size is filled by share: HTML 10%, Markdown
20%, reST 10%, text 10%, the rest Python (a format the machine has too little of leaves its
share to Python); the mix is printed. Every file is UTF-8 and every HTML page is one that
ragloom-loaders' ``HtmlLoader`` reads.

**The job**, for every contender: read the files, cut them into chunks of at most 512
characters without overlap, embed every chunk with the model bundled in ragloom-semantic
(model2vec ``m2v-minilm-256``, 256 dimensions), and write chunks and vectors to a LanceDB
table in a fresh folder. Then the same job is run again on the same index with nothing
changed (*warm*), and again after appending a paragraph to one Markdown file (*warm, 1 edited*).

- ``ragloom (library)``: ``Ingestor(store=LanceDBStore(dir), cache=file, chunk_size=512)``
  (the default pipeline: ragloom-text's Markdown, code and recursive chunkers, ragloom-loaders
  for HTML, then ``EmbeddingStep`` with the model2vec embedder), in a child process. A re-run
  skips the documents whose fingerprint (content + pipeline) the store already holds; the
  step cache (SQLite) keeps chunking and embedding per chunk.
- ``ragloom (CLI)``: ``ragloom ingest DIR --index DIR --cache FILE --chunk-size 512`` in a
  child process: the same, plus the command's start-up.
- ``llamaindex``: ``SimpleDirectoryReader(dir, recursive=True, filename_as_id=True)`` (HTML
  pages read by the same ragloom ``HtmlLoader``, wrapped as a LlamaIndex reader, so both
  sides chunk and embed the same text), then ``IngestionPipeline(transformations=
  [SentenceSplitter(chunk_size=512, chunk_overlap=0, tokenizer=list), <the model as a
  BaseEmbedding, embed_batch_size=512>], vector_store=LanceDBVectorStore(dir),
  docstore=SimpleDocumentStore(), docstore_strategy=UPSERTS, disable_cache=True)``, run with
  ``store_doc_text=False`` and persisted (docstore) for the re-runs, which load it: that is
  LlamaIndex's way of skipping unchanged documents, set up as lean as it allows (no
  transformation cache: its key is the whole batch of nodes, which one edit misses anyway).
  LanceDBVectorStore 0.6.0 cannot delete a document (its ``delete`` writes the id in double
  quotes, which LanceDB reads as a column name), so re-indexing an edited one fails; the
  benchmark overrides that one method to quote the id as a string.
  ``tokenizer=list`` makes ``chunk_size`` count characters (the default counts GPT tokens);
  every metadata key is excluded from the embedded text and from the splitter's budget, so
  the embedded texts are the chunks' texts, as in ragloom. Differences that remain: the
  splitter (sentences and paragraphs, one splitter for every format, vs. ragloom's
  Markdown-, code- and text-aware splitters), and LanceDBVectorStore writes each node's JSON
  (text included) into its metadata column, which ragloom does not.
  ``--llama-encoders`` picks how the model is wrapped: ``ragloom`` (ragloom-semantic's
  encoder, the very code ragloom runs: the ratio is then the pipelines' alone) and/or
  ``model2vec`` (model2vec's own ``StaticModel.encode``: what a LlamaIndex user gets from the
  model2vec package).

**Measures.** Each run is a child process (with Python's bytecode cache on, as an installed
package has it; ragloom-docling and ragloom-otel disabled): *wall* is the whole process (interpreter start,
imports, model load, the job), *work* the job alone (timed inside the child after the imports),
*peak RSS* the child's own ``ru_maxrss`` (``os.wait4``; for the ragloom library run also the
peak before ``store.close()``, whose fold builds LanceDB's indexes over the whole table). After
a cold run the index is read back in another child (not timed): its rows and the characters of text they hold, the work each side did. Times
are wall-clock on a machine that may be shared: with ``--repeat N`` every run is repeated on a
fresh index and the best and median are printed.

Targets: ragloom >= 3x LlamaIndex end to end; a warm re-run after editing one file >= 10x
faster than cold; peak memory flat from 20 MB to 200 MB of input.

**Last run** (``--sizes 20,200 --peer-sizes 20 --repeat 2 --skip-cli``; ragloom 0.1.0, lancedb
0.40.0, pylance 14.0.2, llama-index-core 0.14.25; Python 3.11, 2 CPUs shared with other work;
best of 2, seconds and MB):

| MB | contender | run | wall | work | peak RSS | before close |
| ---: | --- | --- | ---: | ---: | ---: | ---: |
| 20 | ragloom (library) | cold | 8.28 | 6.87 | 615 | 518 |
| 20 | ragloom (library) | warm, 1 edited | 1.99 | 0.55 | 372 | |
| 20 | llamaindex (ragloom encoder) | cold | 18.73 | 15.68 | 1526 | |
| 20 | llamaindex (model2vec encoder) | cold | 25.76 | 22.53 | 1491 | |
| 200 | ragloom (library) | cold | 85.10 | 83.58 | 1510 | 892 |
| 200 | ragloom (library) | warm, 1 edited | 3.28 | 1.87 | 388 | |

- 20 MB cold: 2.26x LlamaIndex with the same encoder (wall; 2.28x work), 3.11x LlamaIndex
  with model2vec's encoder (3.28x work).
- Warm after one edit, 20 MB: 4.2x faster than cold (wall), 12.6x (work); the wall is mostly
  the child's start-up (interpreter, numpy, pyarrow and lancedb imports: ~1.4 s). 200 MB:
  25.9x (wall), 44.6x (work). A warm run with nothing changed imports neither lancedb nor
  loads the model: ``ragloom (CLI)`` on 20 MB, in an earlier run of the same session, took
  0.95 s wall warm and 2.13 s warm after one edit (best of 2).
- Peak RSS, cold: 615 MB at 20 MB, 1510 MB at 200 MB (2.45x); before the store's closing
  fold 518 -> 892 MB (1.72x). What still grows with the table is LanceDB's own work on it:
  the folds (compaction and the full-text index) and, at close, the IVF vector index build,
  which in lancedb 0.40 holds every vector (about 1.7 KB per 256-dimension chunk; its
  shuffle options do not bound it). ragloom's side is bounded: two store batches of ~4k
  chunks, one pipeline segment, the encoder's word cache (at most 500k words, ~110 MB).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

SHARES = (("html", 0.10), ("markdown", 0.20), ("rst", 0.10), ("text", 0.10))
SUFFIXES = {
    ".md": "markdown", ".rst": "rst", ".txt": "text", ".py": "python", ".html": "html",
    ".htm": "html",
}
WRITE_SUFFIX = {"markdown": ".md", "rst": ".rst", "text": ".txt", "python": ".py",
                "html": ".html"}
MAX_FILE = 2_000_000
EDIT = "\n\nThis paragraph was appended by the benchmark: one edited file among many.\n"
CHUNK = 512


# -- the corpus ---------------------------------------------------------------------------------


def _candidates() -> dict[str, list[Path]]:
    from support.corpus import _installed_roots

    found: dict[str, dict[str, Path]] = {fmt: {} for fmt in WRITE_SUFFIX}
    seen: set[Path] = set()
    for root in _installed_roots():
        for folder, dirs, files in os.walk(root):
            dirs[:] = [
                d for d in dirs
                if not d.lower().startswith("ragloom") and not d.endswith((".dist-info",
                                                                           ".egg-info"))
                and d != "__pycache__"
            ]
            for name in files:
                fmt = SUFFIXES.get(os.path.splitext(name)[1].lower())
                if fmt is None or name.lower().startswith("ragloom"):
                    continue
                path = Path(folder, name)
                try:
                    real = path.resolve()
                    size = real.stat().st_size
                except OSError:
                    continue
                if real in seen or not 200 <= size <= MAX_FILE:
                    continue
                seen.add(real)
                found[fmt][f"{root}/{path.relative_to(root)}"] = real
    return {
        fmt: [named[k] for k in sorted(named, key=lambda n: hashlib.sha256(n.encode()).digest())]
        for fmt, named in found.items()
    }


def _html_ok(data: bytes, name: str) -> bool:
    from ragloom.loading import LoadError, SourceFile
    from ragloom_loaders import HtmlLoader

    try:
        return bool(HtmlLoader().load(SourceFile(name, data, name)))
    except LoadError:
        return False


def write_corpus(root: Path, megabytes: int) -> dict[str, tuple[int, int]]:
    """Write ``megabytes`` MB of distinct real files under ``root``; {format: (files, bytes)}."""
    target = megabytes * 1_000_000
    candidates = _candidates()
    quotas = {fmt: int(target * share) for fmt, share in SHARES}
    seen: set[bytes] = set()
    mix: dict[str, tuple[int, int]] = {}
    total = 0
    for fmt in [f for f, _ in SHARES] + ["python"]:
        quota = quotas.get(fmt, target - total)
        files = size = 0
        for path in candidates[fmt]:
            if size >= quota:
                break
            try:
                data = path.read_bytes()
                data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            digest = hashlib.sha1(data).digest()
            if digest in seen or not data.strip():
                continue
            if fmt == "html" and not _html_ok(data, path.name):
                continue
            seen.add(digest)
            out = root / fmt / f"{files // 500:03d}" / f"{files:05d}-{path.stem}{WRITE_SUFFIX[fmt]}"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files += 1
            size += len(data)
        mix[fmt] = (files, size)
        total += size
    return mix


def edit_target(root: Path) -> Path:
    """A Markdown file in the middle of the corpus, of ordinary size."""
    files = sorted(p for p in (root / "markdown").rglob("*.md") if 2_000 < p.stat().st_size)
    return files[len(files) // 2]


# -- the children -------------------------------------------------------------------------------


def child_ragloom(corpus: str, index: str, cache: str) -> dict[str, Any]:
    import lancedb  # noqa: F401 - imported before the clock, as on the LlamaIndex side
    from ragloom.ingest import Ingestor
    from ragloom_lancedb import LanceDBStore

    started = time.perf_counter()
    store = LanceDBStore(index)
    with Ingestor(store=store, cache=cache, chunk_size=CHUNK) as ingestor:
        report = ingestor.run([corpus])
    before_close = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store.close()  # folds the last writes into the files and indexes
    return {
        "work": time.perf_counter() - started, "rss_before_close": before_close,
        "documents": report.documents,
        "chunks": report.chunks, "unchanged": report.unchanged, "indexed": report.indexed,
        "failures": len(report.failures),
    }


def _llama_embedding(encoder: str) -> Any:
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.embeddings import BaseEmbedding

    if encoder == "ragloom":
        from ragloom_semantic import Model2VecEmbedder

        embedder = Model2VecEmbedder()

        def encode(texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = embedder.embed(texts).tolist()
            return rows
    else:
        from ragloom_semantic import load_static_model

        model = load_static_model()

        def encode(texts: list[str]) -> list[list[float]]:
            rows = model.encode(texts, use_multiprocessing=False, show_progress_bar=False)
            out: list[list[float]] = rows.tolist()
            return out

    class Model2VecEmbedding(BaseEmbedding):
        _encode: Any = PrivateAttr()

        def __init__(self) -> None:
            super().__init__(model_name=f"m2v-minilm-256 ({encoder})", embed_batch_size=512)
            self._encode = encode

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = self._encode(list(texts))
            return rows

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    return Model2VecEmbedding()


def child_llama(corpus: str, index: str, state: str, encoder: str) -> dict[str, Any]:
    import lancedb  # noqa: F401
    from llama_index.core import Document as LlamaDocument
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.readers.base import BaseReader
    from llama_index.core.storage.docstore import SimpleDocumentStore
    from llama_index.vector_stores.lancedb import LanceDBVectorStore
    from ragloom.loading import SourceFile
    from ragloom_loaders import HtmlLoader

    class HtmlReader(BaseReader):
        """HTML pages as ragloom-loaders reads them (its main text as Markdown)."""

        def load_data(self, file: Path, extra_info: dict[str, Any] | None = None,
                      **_: Any) -> list[Any]:
            path = Path(file)
            docs = HtmlLoader().load(SourceFile(path.name, path.read_bytes(), path.name))
            return [LlamaDocument(text=d.content, metadata=dict(extra_info or {}))
                    for d in docs]

    class LanceDBStore(LanceDBVectorStore):  # type: ignore[misc]
        """Its ``delete`` quotes the id with double quotes, which LanceDB's SQL reads as a
        column name (so re-indexing an edited document fails): the same with a string."""

        def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
            quoted = ref_doc_id.replace("'", "''")
            self.table.delete(f"{self.doc_id_key} = '{quoted}'")

    started = time.perf_counter()
    # "overwrite" creates the table on the first run; later runs add to it
    mode = "append" if Path(index, "vectors.lance").exists() else "overwrite"
    embedding = _llama_embedding(encoder)
    reader = SimpleDirectoryReader(
        corpus, recursive=True, filename_as_id=True, file_extractor={".html": HtmlReader()},
    )
    documents = reader.load_data()
    for document in documents:
        keys = list(document.metadata)
        document.excluded_embed_metadata_keys = keys
        document.excluded_llm_metadata_keys = keys
    pipeline = IngestionPipeline(
        transformations=[
            SentenceSplitter(chunk_size=CHUNK, chunk_overlap=0, tokenizer=list,
                             include_metadata=False),
            embedding,
        ],
        vector_store=LanceDBStore(uri=index, table_name="vectors", mode=mode),
        docstore=SimpleDocumentStore(),
        docstore_strategy=DocstoreStrategy.UPSERTS,
        disable_cache=True,
    )
    if Path(state).exists():
        pipeline.load(state)
    nodes = pipeline.run(documents=documents, store_doc_text=False)
    pipeline.persist(state)
    return {"work": time.perf_counter() - started, "documents": len(documents),
            "chunks": len(nodes), "unchanged": None, "indexed": None, "failures": 0}


def child_contents(path: str, table: str, text_column: str) -> dict[str, Any]:
    """(rows, characters of text) of a LanceDB table; every row must have its vector."""
    import lancedb

    data = lancedb.connect(path).open_table(table).to_arrow()
    texts = data.column(text_column).to_pylist()
    missing = data.column("vector").null_count
    assert missing == 0, f"{missing} rows without a vector in {path}"
    return {"rows": len(texts), "chars": sum(map(len, texts))}


def child_main(argv: list[str]) -> None:
    kind, *rest = argv
    if kind == "ragloom":
        result = child_ragloom(*rest)
    elif kind == "contents":
        result = child_contents(*rest)
    else:
        result = child_llama(*rest)
    print("RESULT " + json.dumps(result), flush=True)


# -- the parent ---------------------------------------------------------------------------------


def timed_child(argv: list[str], cwd: Path) -> tuple[float, float, int, str, str]:
    """Run ``argv``: (wall seconds, its own peak RSS in MB from ``os.wait4``, exit status,
    stdout, stderr)."""
    env = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling,ragloom-otel",
               TOKENIZERS_PARALLELISM="false")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # every contender starts from compiled modules
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return wall, usage.ru_maxrss / 1024, proc.returncode, out.read(), err.read()


def index_contents(path: Path, table: str, text_column: str) -> tuple[int, int]:
    """(rows, characters of text) of a LanceDB table, read in a child process (reading it here
    would grow this process, and every child forked later would start with its peak RSS)."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "contents", str(path),
            table, text_column]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"reading {path}: {proc.stderr[-2000:]}")
    found = json.loads(proc.stdout.split("RESULT ", 1)[1])
    return found["rows"], found["chars"]


class Contender:
    def __init__(self, name: str, argv: Any, table: str, text_column: str) -> None:
        self.name = name
        self.argv = argv  # (workdir) -> argv
        self.table = table
        self.text_column = text_column


def contenders(corpus: Path, encoders: list[str], cli: bool) -> list[Contender]:
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    found = [
        Contender("ragloom (library)",
                  lambda w: [*me, "ragloom", str(corpus), str(w / "index"), str(w / "cache.db")],
                  "chunks", "content"),
    ]
    if cli:
        found.append(Contender(
            "ragloom (CLI)",
            lambda w: [sys.executable, "-m", "ragloom.cli", "ingest", str(corpus), "--index",
                       str(w / "index"), "--cache", str(w / "cache.db"), "--chunk-size",
                       str(CHUNK), "--json", "-q"],
            "chunks", "content"))
    for encoder in encoders:
        found.append(Contender(
            f"llamaindex ({encoder} encoder)",
            lambda w, e=encoder: [*me, "llama", str(corpus), str(w / "index"),
                                  str(w / "state"), e],
            "vectors", "text"))
    return found


def parse(out: str, contender: Contender) -> dict[str, Any]:
    for line in out.splitlines():
        if line.startswith("RESULT "):
            parsed: dict[str, Any] = json.loads(line[7:])
            return parsed
    if contender.name == "ragloom (CLI)":
        report = json.loads(out)
        return {"work": report["seconds"], "documents": report["documents"],
                "chunks": report["chunks"], "unchanged": report["unchanged"],
                "indexed": report["indexed"], "failures": len(report["failures"])}
    raise RuntimeError(f"{contender.name}: no result in its output")


RUNS = ("cold", "warm", "warm, 1 edited")


def measure(contender: Contender, corpus: Path, work: Path, repeat: int) -> dict[str, Any]:
    """Every run ``repeat`` times on a fresh index; {run: [measurement...]}, index contents."""
    results: dict[str, list[dict[str, Any]]] = {run: [] for run in RUNS}
    contents = (0, 0)
    target = edit_target(corpus)
    original = target.read_bytes()
    for attempt in range(repeat):
        folder = work / f"{contender.name.split()[0]}-{attempt}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            for run in RUNS:
                if run == "warm, 1 edited":
                    target.write_bytes(original + EDIT.encode())
                wall, rss, status, out, err = timed_child(contender.argv(folder), folder)
                if status != 0:
                    raise RuntimeError(f"{contender.name} {run}: exit {status}\n{err[-3000:]}")
                result = parse(out, contender)
                result.update(wall=wall, rss=rss)
                results[run].append(result)
                print(f"    {contender.name:32} {run:15} wall {wall:7.2f} s  work "
                      f"{result['work']:7.2f} s  peak {rss:6.0f} MB  chunks {result['chunks']}"
                      f"  failures {result['failures']}", flush=True)
                if run == "cold":
                    contents = index_contents(folder / "index", contender.table,
                                              contender.text_column)
        finally:
            target.write_bytes(original)
            shutil.rmtree(folder, ignore_errors=True)
    return {"runs": results, "contents": contents}


def versions() -> str:
    names = ["ragloom", "ragloom-text", "ragloom-loaders", "ragloom-semantic", "ragloom-lancedb",
             "lancedb", "pylance", "pyarrow", "model2vec", "numpy", "llama-index-core",
             "llama-index-vector-stores-lancedb"]
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} (not installed)")
    return ", ".join(parts)


def stat(values: list[float]) -> str:
    return f"{min(values):8.2f} {statistics.median(values):8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20,200", help="corpus sizes in MB")
    parser.add_argument("--peer-sizes", default="20",
                        help="sizes at which LlamaIndex runs too (it holds everything in memory)")
    parser.add_argument("--llama-encoders", default="ragloom,model2vec",
                        help="how LlamaIndex's embedding wraps the model (ragloom, model2vec)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the corpora")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    peer_sizes = {int(s) for s in args.peer_sizes.split(",") if s}
    encoders = [e for e in args.llama_encoders.split(",") if e]

    print(f"# {versions()}")
    print(f"# Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; chunks of {CHUNK} "
          "characters, model m2v-minilm-256 (bundled in ragloom-semantic)")
    work = Path(tempfile.mkdtemp(prefix="ragloom-bench-ingest-"))
    table: list[tuple[int, str, dict[str, Any]]] = []
    try:
        for size in sizes:
            corpus = work / f"corpus-{size}mb"
            started = time.perf_counter()
            mix = write_corpus(corpus, size)
            files = sum(f for f, _ in mix.values())
            nbytes = sum(b for _, b in mix.values())
            print(f"\n## {size} MB: {files} files, {nbytes / 1e6:.1f} MB ("
                  + ", ".join(f"{fmt} {n} files {b / 1e6:.1f} MB" for fmt, (n, b) in mix.items())
                  + f"), written in {time.perf_counter() - started:.0f} s; edited: "
                  f"{edit_target(corpus).relative_to(corpus)}", flush=True)
            chosen = contenders(corpus, encoders if size in peer_sizes else [], not args.skip_cli)
            for contender in chosen:
                table.append((size, contender.name,
                              measure(contender, corpus, work / "runs", args.repeat)))
            if not args.keep:
                shutil.rmtree(corpus, ignore_errors=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    report(table, args.repeat)


def report(table: list[tuple[int, str, dict[str, Any]]], repeat: int) -> None:
    print(f"\n## Results (best and median of {repeat}; seconds, MB)\n")
    print("| MB | contender | run | wall best | wall med | work best | work med | peak RSS MB"
          " | before close | chunks | index rows | index chars |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    best: dict[tuple[int, str, str], tuple[float, float, float]] = {}
    before: dict[tuple[int, str], float] = {}
    for size, name, data in table:
        rows, chars = data["contents"]
        for run in RUNS:
            values = data["runs"][run]
            walls = [v["wall"] for v in values]
            works = [v["work"] for v in values]
            rss = max(v["rss"] for v in values)
            best[(size, name, run)] = (min(walls), min(works), rss)
            pipeline = [v["rss_before_close"] for v in values if "rss_before_close" in v]
            shown = f"{max(pipeline):.0f}" if pipeline else ""
            if pipeline and run == "cold":
                before[(size, name)] = max(pipeline)
            print(f"| {size} | {name} | {run} | {min(walls):.2f} | {statistics.median(walls):.2f}"
                  f" | {min(works):.2f} | {statistics.median(works):.2f} | {rss:.0f} | {shown} | "
                  f"{values[0]['chunks']} | {rows if run == 'cold' else ''} | "
                  f"{chars if run == 'cold' else ''} |")
    print("\n## Ratios (best times)\n")
    sizes = sorted({s for s, _, _ in table})
    names = list(dict.fromkeys(n for _, n, _ in table))
    ours = [n for n in names if n.startswith("ragloom")]
    peers = [n for n in names if n.startswith("llamaindex")]
    for size in sizes:
        for mine in ours:
            if (size, mine, "cold") not in best:
                continue
            wall, work, _ = best[(size, mine, "cold")]
            for peer in peers:
                if (size, peer, "cold") in best:
                    pw, pk, _ = best[(size, peer, "cold")]
                    print(f"- {size} MB cold, {mine} vs {peer}: {pw / wall:.2f}x faster (wall), "
                          f"{pk / work:.2f}x (work) [target >= 3x]")
                    ew, ek, _ = best[(size, peer, "warm, 1 edited")]
                    mw, mk, _ = best[(size, mine, "warm, 1 edited")]
                    print(f"  {size} MB warm, 1 edited: {ew / mw:.2f}x (wall), {ek / mk:.2f}x "
                          "(work)")
            ew, ek, _ = best[(size, mine, "warm, 1 edited")]
            print(f"- {size} MB {mine}: warm after one edit is {wall / ew:.1f}x faster than cold"
                  f" (wall), {work / ek:.1f}x (work) [target >= 10x]")
    for mine in ours:
        peaks = [(s, best[(s, mine, "cold")][2]) for s in sizes if (s, mine, "cold") in best]
        if len(peaks) > 1:
            (s0, p0), (s1, p1) = peaks[0], peaks[-1]
            print(f"- {mine} peak RSS, cold: {p0:.0f} MB at {s0} MB, {p1:.0f} MB at {s1} MB "
                  f"({p1 / p0:.2f}x) [target: flat]")
            if (s0, mine) in before and (s1, mine) in before:
                b0, b1 = before[(s0, mine)], before[(s1, mine)]
                print(f"  before the store's closing fold: {b0:.0f} MB at {s0} MB, {b1:.0f} MB "
                      f"at {s1} MB ({b1 / b0:.2f}x)")
    for peer in peers:
        peaks = [(s, best[(s, peer, "cold")][2]) for s in sizes if (s, peer, "cold") in best]
        for s, p in peaks:
            print(f"- {peer} peak RSS, cold, {s} MB: {p:.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        main()
