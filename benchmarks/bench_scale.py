"""A large index: ingest memory and time at growing sizes, search latency, the vector index's
recall against exact search, adding 1 % more documents, and (``--s3``) the same ingest into an
S3-compatible bucket on loopback.

    pip install -e 'core[cli]' -e plugins/text -e plugins/loaders -e plugins/semantic \\
        -e plugins/lancedb 'moto[server]'
    python benchmarks/bench_scale.py [--sizes 20,200] [--s3 20] [--queries 40] [--keep]

**Corpus.** Real files already on this machine (the installed packages' documentation and
sources, the standard library, ``/usr/share/doc``), every file distinct, written under a
temporary folder by ``bench_ingest.write_corpus`` (the same mix as ``bench_ingest.py``). A
machine without enough distinct files fills less than asked: the sizes written are printed.

**Per size** (each step a child process; its peak RSS from ``os.wait4``):

- *ingest*: ``ragloom ingest CORPUS --index DIR --no-cache -q --json`` (the default pipeline,
  model2vec's bundled model, 256 dimensions); wall time, peak RSS, chunks.
- *optimize*: ``ragloom index optimize --index DIR`` (merges the index segments, builds the
  approximate vector index past 50,000 chunks); wall time, peak RSS.
- *search*: one child opens a ``Searcher`` on the index (hybrid, the default plan) and asks
  ``--queries`` compound questions of three asks each, made of words of the corpus; after two
  warm-up questions, each is timed alone: p50 and p95.
- *recall@10*: the same child takes 100 stored chunk vectors (a fixed sample) as queries and
  compares the store's vector search (the approximate index, default probes) with an exact
  one (``vector_index_rows=None``): the share of the exact top 10 that the index finds.
- *add 1 %*: 1 % more files (distinct, not in the corpus yet) are written into the corpus and
  ``ragloom ingest`` runs again (unchanged files are skipped by fingerprint): wall time, as a
  share of the full ingest's.

``--s3 MB``: ingest a corpus of that size into ``s3://bench/index`` on moto's S3 server
(started here on loopback, in memory) and compare the wall time with the local one.

Times are wall-clock on a machine that may be shared with other work: say so with the table.

Targets (issue 34): peak RSS at 200 MB <= 1.3x at 20 MB; at 1M chunks search p50 <= 50 ms,
p95 <= 150 ms, recall@10 >= 0.95; adding 1 % <= 5 % of the full ingest; S3 on loopback within
1.5x of local disk.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_ingest import write_corpus  # noqa: E402 - the corpus of bench_ingest.py


def run_child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run ``argv``: (wall seconds, its peak RSS in MB, stdout); raises if it fails."""
    full = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling,ragloom-otel",
                **(env or {}))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=full, stdout=out, stderr=err, text=True)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024, stdout


def ragloom(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragloom.cli", *args]


# -- the search child ---------------------------------------------------------------------------


def child_search(index: str, corpus: str, queries: int) -> dict[str, Any]:
    import numpy as np
    from ragloom.searcher import Searcher
    from ragloom_lancedb import LanceDBStore

    rng = random.Random(34)
    words: list[str] = []
    for path in sorted(Path(corpus).rglob("*.md"))[:200]:
        words += re.findall(r"[a-z]{5,12}", path.read_text(encoding="utf-8", errors="ignore"))
    words = sorted(set(words))
    questions = [
        f"How do I {rng.choice(words)} the {rng.choice(words)}, what is {rng.choice(words)} "
        f"{rng.choice(words)}, and how does {rng.choice(words)} handle {rng.choice(words)}?"
        for _ in range(queries + 2)
    ]
    latencies = []
    with Searcher(index=index) as searcher:
        for n, question in enumerate(questions):
            started = time.perf_counter()
            searcher.search(question)
            if n >= 2:
                latencies.append(time.perf_counter() - started)
    latencies.sort()
    # recall@10 of the approximate index against exact search, stored vectors as queries
    ann = LanceDBStore(index)
    exact = LanceDBStore(index, vector_index_rows=None)
    ids = sorted(ann.fingerprints())
    sample = random.Random(10).sample(ids, min(100, len(ids)))
    vectors = [c.embedding for listed in ann.chunks(sample).values() for c in listed[:1]]
    hits = total = 0
    for vector in vectors:
        if vector is None or not np.any(vector):
            continue
        want = {h.chunk.id for h in exact.search(vector=vector, top_k=10, mode="vector")}
        got = {h.chunk.id for h in ann.search(vector=vector, top_k=10, mode="vector")}
        hits += len(want & got)
        total += len(want)
    indexes = ann.info().details.get("indexes", [])
    ann.close()
    exact.close()
    return {
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p95_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))],
        "recall_at_10": hits / total if total else None,
        "vector_index": [i for i in indexes if i.startswith("vector")],
    }


# -- the parent ---------------------------------------------------------------------------------


def measure(size: int, work: Path, queries: int) -> dict[str, Any]:
    corpus, index = work / f"corpus{size}", work / f"index{size}"
    mix = write_corpus(corpus, size)
    written = sum(b for _, b in mix.values()) / 1e6
    wall, rss, out = run_child(ragloom("ingest", str(corpus), "--index", str(index),
                                       "--no-cache", "-q", "--json"))
    report = json.loads(out)
    row: dict[str, Any] = {
        "MB": round(written, 1), "chunks": report["chunks"], "ingest_s": wall,
        "ingest_rss": rss, "optimize_due": report.get("optimize"),
    }
    row["optimize_s"], row["optimize_rss"], _ = run_child(
        ragloom("index", "optimize", "--index", str(index))
    )
    _, _, out = run_child([sys.executable, __file__, "child-search", str(index), str(corpus),
                           str(queries)])
    row.update(json.loads(out.strip().splitlines()[-1]))
    # 1 % more distinct files, then the same ingest again
    extra = work / f"extra{size}"
    write_corpus(extra, size + max(1, size // 50))  # what repeats the corpus is skipped
    added = 0
    target = written * 1e6 / 100
    for path in sorted(extra.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(extra)
        if (corpus / relative).exists() or added >= target:
            continue
        dest = corpus / "added" / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        added += path.stat().st_size
    shutil.rmtree(extra)
    wall, _, out = run_child(ragloom("ingest", str(corpus), "--index", str(index),
                                     "--no-cache", "-q", "--json"))
    grown = json.loads(out)
    row.update({"add_MB": round(added / 1e6, 2), "add_s": wall,
                "add_share": wall / row["ingest_s"], "add_indexed": grown["indexed"]})
    return row


def measure_s3(size: int, work: Path) -> dict[str, Any]:
    import logging

    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    corpus = work / f"s3corpus{size}"
    write_corpus(corpus, size)
    local, _, _ = run_child(ragloom("ingest", str(corpus), "--index", str(work / "s3local"),
                                    "--no-cache", "-q"))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
               "XDG_CACHE_HOME": str(work / "cache-home")}
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="bench", aws_secret_access_key="bench"
                     ).create_bucket(Bucket="bench")
        remote, _, _ = run_child(ragloom("ingest", str(corpus), "--index", "s3://bench/index",
                                         "--no-cache", "-q"), env=env)
    finally:
        server.stop()
    return {"MB": size, "local_s": local, "s3_s": remote, "ratio": remote / local}


def versions() -> str:
    from importlib.metadata import version

    names = ("ragloom", "lancedb", "pylance", "pyarrow")
    return ", ".join(f"{n} {version(n)}" for n in names) + f"; Python {sys.version.split()[0]}"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child-search":
        index, corpus, queries = sys.argv[2:5]
        print(json.dumps(child_search(index, corpus, int(queries))), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20,200", help="MB of input, comma separated")
    parser.add_argument("--s3", type=int, default=0, help="MB ingested into moto's S3 too")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragloom-scale-"))
    print(f"# {versions()}; {os.cpu_count()} CPUs; work in {work}", flush=True)
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            row = measure(size, work, args.queries)
            rows.append(row)
            print(json.dumps(row), flush=True)
        print()
        print("| input MB | chunks | ingest s | ingest peak RSS MB | optimize s | optimize peak "
              "RSS MB | search p50 ms | p95 ms | recall@10 | add 1 % s (share of ingest) |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            recall = "exact" if not r["vector_index"] else f"{r['recall_at_10']:.3f}"
            print(f"| {r['MB']} | {r['chunks']:,} | {r['ingest_s']:.1f} | {r['ingest_rss']:.0f} "
                  f"| {r['optimize_s']:.1f} | {r['optimize_rss']:.0f} | {r['p50_ms']:.0f} "
                  f"| {r['p95_ms']:.0f} | {recall} | {r['add_s']:.1f} "
                  f"({100 * r['add_share']:.1f} %) |")
        if len(rows) > 1:
            print(f"\npeak ingest RSS {rows[-1]['MB']} MB / {rows[0]['MB']} MB: "
                  f"{rows[-1]['ingest_rss'] / rows[0]['ingest_rss']:.2f}x")
        if args.s3:
            s3 = measure_s3(args.s3, work)
            print(f"\nS3 on loopback ({s3['MB']} MB): {s3['s3_s']:.1f} s vs {s3['local_s']:.1f} s "
                  f"on local disk ({s3['ratio']:.2f}x)")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
