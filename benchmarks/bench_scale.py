"""A large index: ingest memory and time at growing sizes, search latency, the vector index's
recall against exact search, adding 1 % more documents, and (``--s3``) the same ingest into an
S3-compatible bucket on loopback.

    pip install -e 'core[cli]' -e plugins/text -e plugins/loaders -e plugins/semantic \\
        -e plugins/lancedb 'moto[server]'
    python benchmarks/bench_scale.py [--sizes 20,200] [--s3 20] [--queries 40] [--keep]
    python benchmarks/bench_scale.py --sizes 20,200 --only ingest [--work DIR] [--env K=V]

**Corpus.** Real files already on this machine (the installed packages' documentation and
sources, the standard library, ``/usr/share/doc``), every file distinct, written under a
temporary folder by ``bench_ingest.write_corpus`` (the same mix as ``bench_ingest.py``).
Past what the machine holds (about 264 MB of distinct text here, 650,000 chunks), the size
asked is filled with *edited copies* of those files (:func:`write_scaled_corpus`), round
after round: in round ``r`` every file written so far is copied once (beside it, in a folder
``r<r>-...``, so each format stays one collection), its blank-line-separated blocks shuffled
(HTML: kept in order) and about one word in eight of four letters or more replaced by a word
drawn from the corpus's own vocabulary, both seeded by the round and the file. Each copy is
distinct from its original and from the other rounds' (no byte duplicates, and its chunks
differ: other words, other boundaries), while keeping real text's words, lengths and
structure; ``--sizes 420`` gives about a million chunks (400 MB gave 961,779 here;
``--sizes 20,200,420`` the whole table). The corpus written is the same for the same size on the same machine (and the first
part of a larger one), which the *add 1 %* step relies on.

**Per size** (each step a child process; its peak RSS from ``os.wait4``):

- *ingest*: ``ragloom ingest CORPUS --index DIR --no-cache -q --json`` (the default pipeline,
  model2vec's bundled model, 256 dimensions); wall time, peak RSS, chunks.
- *optimize*: ``ragloom index optimize --index DIR`` (merges the index segments, joins the
  table into large files, builds the approximate vector index past 50,000 chunks); wall time,
  peak RSS.
- *search*: one child opens a ``Searcher`` on the index (hybrid, the default plan) and asks
  ``--queries`` compound questions of three asks each, made of words of the corpus; after two
  warm-up questions, each is timed alone: p50 and p95.
- *recall@10*: the same child compares the store's vector search (the approximate index,
  default probes) with an exact one (``vector_index_rows=None``): the share of the exact top
  10 that the index finds, with two kinds of queries: 100 stored chunk vectors (a fixed
  sample; each finds itself) and the vectors of the timed questions' asks ("asks"; harder:
  an ask's nearest chunks are often close together).
- *add 1 %*: 1 % more files (distinct, not in the corpus yet) are written into the corpus and
  ``ragloom ingest`` runs again (files whose size and times the index recorded are skipped
  unread): wall time, as a share of the full ingest's, and where it goes: the command's
  start-up (wall time less the run's own), the routes fitted again (the new files are a new
  collection, ``added``), the rest of the run (the walk and stat of every file, the index's
  check, the new files' load, embedding and write, the fold), and its peak RSS.

``--s3 MB``: ingest a corpus of that size into a local folder and into a bucket of moto's S3
server (started here on loopback, in this process; it keeps objects in memory, those over
5 MB in temporary files), ``--s3-runs`` times each, alternating (on a shared machine, the
ranges say how much the load moved); printed: both wall times and their ratio, the CPU time
of each ingest, the server's CPU time (this process's, which does nothing else meanwhile:
moto is one Python process serving every request, so on loopback it is often what an S3
ingest waits for), and the last S3 run's requests by kind (operation; table; what the object
is: a Lance manifest, data file, index file, transaction, deletion file, or ragloom's own
record) with the server's time on them (from the request's arrival to its last byte sent,
under the GIL its threads share) and the bytes in and out. ``--sizes ''`` runs the S3 comparison alone.

``--only ingest``: the ingest step alone, with the child's resident size read from
``/proc/PID/status`` every 0.2 s (Linux): the highest value in each tenth of the run and where
the peak came. ``--work DIR`` writes the corpora there once and uses them again (compare runs
on the same files); ``--env KEY=VALUE`` sets a variable for the ingest child (an allocator
setting such as ``MALLOC_MMAP_THRESHOLD_=131072``, a ``PYTHONPATH`` to compare code).

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

_WORD = re.compile(r"\b[A-Za-z]{4,}\b")
_TEXT_NODE = re.compile(r"(?<=>)[^<]+")


def _edited(data: str, fmt: str, rng: random.Random, vocabulary: list[str]) -> str:
    """An edited copy of a document: blocks shuffled (not HTML's), about one word in eight
    of four letters or more replaced by a word of the corpus."""

    def words(text: str) -> str:
        return _WORD.sub(
            lambda m: rng.choice(vocabulary) if rng.random() < 0.125 else m.group(0), text
        )

    if fmt == "html":
        return _TEXT_NODE.sub(lambda m: words(m.group(0)), data)
    blocks = data.split("\n\n")
    rng.shuffle(blocks)
    return words("\n\n".join(blocks))


def write_scaled_corpus(root: Path, megabytes: int) -> dict[str, tuple[int, int]]:
    """``megabytes`` MB under ``root``: the distinct real files of ``write_corpus``, then
    rounds of edited copies of them until the size is reached (see the module docstring);
    {format (``+edited`` for the copies): (files, bytes)}."""
    mix = write_corpus(root, megabytes)
    target = megabytes * 1_000_000
    total = sum(size for _, size in mix.values())
    if total >= target:
        return mix
    originals = sorted(p for p in root.rglob("*") if p.is_file())
    vocabulary: set[str] = set()
    for path in originals[:: max(1, len(originals) // 400)]:
        vocabulary.update(_WORD.findall(path.read_text(encoding="utf-8", errors="ignore")))
    listed = sorted(vocabulary)
    files = written = 0
    round_ = 0
    while total < target:
        round_ += 1
        for path in originals:
            if total >= target:
                break
            relative = path.relative_to(root)
            fmt = relative.parts[0]
            rng = random.Random(f"{round_}/{relative}")
            text = _edited(path.read_text(encoding="utf-8"), fmt, rng, listed)
            out = root / fmt / f"r{round_}-{relative.parts[1]}" / Path(*relative.parts[2:])
            out.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            out.write_bytes(data)
            files += 1
            written += len(data)
            total += len(data)
    mix["+edited"] = (files, written)
    return mix


def run_child(
    argv: list[str], env: dict[str, str] | None = None,
    samples: list[tuple[float, float]] | None = None,
) -> tuple[float, float, str]:
    """Run ``argv``: (wall seconds, its peak RSS in MB, stdout); raises if it fails. With
    ``samples``, its resident size is read from ``/proc/PID/status`` every 0.2 s (Linux) and
    appended as (seconds since start, MB): where in the run the memory grows."""
    wall, rss, stdout, _cpu = run_child_cpu(argv, env, samples)
    return wall, rss, stdout


def run_child_cpu(
    argv: list[str], env: dict[str, str] | None = None,
    samples: list[tuple[float, float]] | None = None,
) -> tuple[float, float, str, float]:
    """:func:`run_child`, with the child's CPU time (user and system, all its threads)."""
    full = dict(os.environ, RAGLOOM_DISABLE_PLUGINS="ragloom-docling,ragloom-otel",
                **(env or {}))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=full, stdout=out, stderr=err, text=True)
        if samples is not None:
            _sample_rss(proc, started, samples)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024, stdout, usage.ru_utime + usage.ru_stime


def _sample_rss(proc: subprocess.Popen[str], started: float,
                samples: list[tuple[float, float]]) -> None:
    """Poll the child's ``VmRSS`` until it exits (the exit status is left for ``wait4``)."""
    status = Path(f"/proc/{proc.pid}/status")
    while True:
        try:
            # waitid with WNOWAIT: has it exited, without reaping it
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return
            text = status.read_text()
        except (OSError, ChildProcessError):
            return
        for line in text.splitlines():
            if line.startswith("VmRSS:"):
                samples.append((time.perf_counter() - started, int(line.split()[1]) / 1024))
                break
        time.sleep(0.2)


def rss_profile(samples: list[tuple[float, float]], parts: int = 10) -> str:
    """The sampled resident size as ``MB@share-of-the-run`` at the highest point of each
    tenth of the run, and where the peak was."""
    if not samples:
        return "no samples"
    end = samples[-1][0] or 1.0
    tops = []
    for n in range(parts):
        inside = [mb for t, mb in samples if n / parts <= t / end < (n + 1) / parts]
        tops.append(f"{max(inside):.0f}" if inside else "-")
    at, peak = max(samples, key=lambda s: s[1])
    return f"per tenth: {' '.join(tops)} MB; peak {peak:.0f} MB at {100 * at / end:.0f} %"


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
    asks: list[str] = []
    with Searcher(index=index) as searcher:
        for n, question in enumerate(questions):
            started = time.perf_counter()
            found = searcher.search(question)
            if n >= 2:
                latencies.append(time.perf_counter() - started)
                asks += found.sub_queries
        ask_vectors = [searcher.pipeline.block.embedder.embed_query(a) for a in asks]
    latencies.sort()
    # recall@10 of the approximate index against exact search: stored vectors as queries
    # (each finds itself), and the vectors of the questions' asks (harder: the nearest chunks
    # of an ask are often close together)
    ann = LanceDBStore(index)
    exact = LanceDBStore(index, vector_index_rows=None)
    ids = sorted(ann.fingerprints())
    sample = random.Random(10).sample(ids, min(100, len(ids)))
    vectors = [c.embedding for listed in ann.chunks(sample).values() for c in listed[:1]]

    def recall(queries: list[Any]) -> float | None:
        hits = total = 0
        for vector in queries:
            if vector is None or not np.any(vector):
                continue
            want = {h.chunk.id for h in exact.search(vector=vector, top_k=10, mode="vector")}
            got = {h.chunk.id for h in ann.search(vector=vector, top_k=10, mode="vector")}
            hits += len(want & got)
            total += len(want)
        return hits / total if total else None

    stored, of_asks = recall(vectors), recall(ask_vectors)
    indexes = ann.info().details.get("indexes", [])
    ann.close()
    exact.close()
    return {
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p95_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))],
        "recall_at_10": stored,
        "recall_at_10_asks": of_asks,
        "asks": len(ask_vectors),
        "vector_index": [i for i in indexes if i.startswith("vector")],
    }


# -- the parent ---------------------------------------------------------------------------------


def corpus_of(size: int, work: Path) -> tuple[Path, float]:
    """The corpus of ``size`` MB under ``work`` (written once: a folder kept with ``--work``
    is used again) and its MB."""
    corpus = work / f"corpus{size}"
    written = corpus / "corpus.json"
    shutil.rmtree(corpus / "added", ignore_errors=True)  # a previous run's 1 % more
    if written.exists():
        mix = json.loads(written.read_text())
    else:
        shutil.rmtree(corpus, ignore_errors=True)
        mix = write_scaled_corpus(corpus, size)
        written.write_text(json.dumps(mix))
    return corpus, sum(b for _, b in mix.values()) / 1e6


def measure(size: int, work: Path, queries: int, only_ingest: bool = False,
            env: dict[str, str] | None = None) -> dict[str, Any]:
    corpus, written = corpus_of(size, work)
    index = work / f"index{size}"
    shutil.rmtree(index, ignore_errors=True)
    samples: list[tuple[float, float]] = []
    wall, rss, out = run_child(ragloom("ingest", str(corpus), "--index", str(index),
                                       "--no-cache", "-q", "--json"), env=env, samples=samples)
    report = json.loads(out)
    row: dict[str, Any] = {
        "MB": round(written, 1), "chunks": report["chunks"], "ingest_s": wall,
        "ingest_rss": rss, "optimize_due": report.get("optimize"),
        "ingest_rss_profile": rss_profile(samples),
    }
    if only_ingest:
        shutil.rmtree(index, ignore_errors=True)
        return row
    row["optimize_s"], row["optimize_rss"], _ = run_child(
        ragloom("index", "optimize", "--index", str(index))
    )
    _, _, out = run_child([sys.executable, __file__, "child-search", str(index), str(corpus),
                           str(queries)])
    row.update(json.loads(out.strip().splitlines()[-1]))
    # 1 % more distinct files, then the same ingest again
    extra = work / f"extra{size}"
    write_scaled_corpus(extra, size + max(1, size // 50))  # what repeats the corpus is skipped
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
    wall, rss, out = run_child(ragloom("ingest", str(corpus), "--index", str(index),
                                       "--no-cache", "-q", "--json"))
    grown = json.loads(out)
    routes = (grown.get("routes") or {})
    fit = routes.get("fit") or {} if routes.get("fitted") else {}
    row.update({"add_MB": round(added / 1e6, 2), "add_s": wall,
                "add_share": wall / row["ingest_s"], "add_indexed": grown["indexed"],
                "add_unchanged": grown["unchanged"], "add_rss": rss,
                "add_startup_s": wall - grown["seconds"],
                "add_routes_s": fit.get("seconds", 0.0),
                "add_rest_s": grown["seconds"] - fit.get("seconds", 0.0)})
    return row


class _S3Requests:
    """A WSGI wrapper around moto's server app that counts the requests by kind (operation
    and what the object is: a Lance manifest, data file, index file, transaction, deletion
    file, or ragloom's own record), with the bytes in and out and the server's time on each
    (from the request's arrival at the app to its response's last byte: moto's own work,
    under the GIL it shares with its other request threads)."""

    def __init__(self, app: Any, bucket: str) -> None:
        import threading

        self.app = app
        self.bucket = bucket
        self.lock = threading.Lock()
        self.kinds: dict[str, list[float]] = {}  # kind -> [count, seconds, bytes in, bytes out]

    def kind(self, environ: dict[str, Any]) -> str:
        method = environ["REQUEST_METHOD"]
        query = environ.get("QUERY_STRING", "")
        key = environ.get("PATH_INFO", "").lstrip("/").removeprefix(self.bucket).lstrip("/")
        if method == "GET" and ("list-type" in query or "prefix=" in query or not key):
            op = "LIST"
        elif method == "POST" and "uploads" in query:
            op = "MPU-START"
        elif method == "POST" and "uploadId" in query:
            op = "MPU-END"
        elif method == "PUT" and "uploadId" in query:
            op = "MPU-PART"
        elif method == "PUT" and "HTTP_X_AMZ_COPY_SOURCE" in environ:
            op = "COPY"
        elif method == "POST" and "delete" in query:
            op = "DELETE-MANY"
        else:
            op = method
        if op == "LIST":  # what is listed: the prefix asked for
            from urllib.parse import parse_qs

            key = parse_qs(query).get("prefix", [""])[0] + "?"
        elif op == "DELETE-MANY":  # the keys deleted, from the request's XML
            import io

            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            found = re.findall(rb"<Key>([^<]*)</Key>", body)
            key = found[0].decode() if found else ""
        parts = key.split("/")
        what = "other"
        for part, name in (("_versions", "manifest"), ("data", "data"), ("_indices", "index"),
                           ("_transactions", "transaction"), ("_deletions", "deletion"),
                           ("_refs", "refs")):
            if part in parts[:-1]:
                what = name
                break
        else:
            if parts[-1].startswith("ragloom-"):
                what = parts[-1]
        table = next((p.removesuffix(".lance") for p in parts if p.endswith(".lance")), "")
        return f"{op} {table + ' ' if table else ''}{what}"

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        started = time.perf_counter()
        kind = self.kind(environ)
        sent = 0
        try:
            for chunk in self.app(environ, start_response):
                sent += len(chunk)
                yield chunk
        finally:
            took = time.perf_counter() - started
            received = int(environ.get("CONTENT_LENGTH") or 0)
            with self.lock:
                row = self.kinds.setdefault(kind, [0, 0.0, 0, 0])
                row[0] += 1
                row[1] += took
                row[2] += received
                row[3] += sent


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure_s3(size: int, work: Path, runs: int = 1) -> dict[str, Any]:
    """Ingest the same corpus into a local folder and into ``s3://bench/index`` on moto's
    server (on loopback, in memory, in this process: the parent does nothing else meanwhile,
    so its CPU time over an S3 run is the server's), ``runs`` times each, alternating; the
    requests of the last S3 run counted by kind."""
    import logging
    import threading

    import boto3
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    corpus = work / f"s3corpus{size}"
    write_scaled_corpus(corpus, size)
    counter = _S3Requests(DomainDispatcherApplication(create_backend_app), "bench")
    server = make_server("127.0.0.1", 0, counter, True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    endpoint = f"http://{host}:{port}"
    env = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
           "XDG_CACHE_HOME": str(work / "cache-home")}
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")
    local_s: list[float] = []
    s3_s: list[float] = []
    local_cpu: list[float] = []
    s3_cpu: list[float] = []
    server_cpu: list[float] = []
    chunks = None
    try:
        for run in range(runs):
            shutil.rmtree(work / "s3local", ignore_errors=True)
            wall, _, out, cpu = run_child_cpu(ragloom(
                "ingest", str(corpus), "--index", str(work / "s3local"), "--no-cache", "-q",
                "--json"))
            local_s.append(wall)
            local_cpu.append(cpu)
            chunks = json.loads(out)["chunks"]
            bucket = f"bench{run}"
            client.create_bucket(Bucket=bucket)
            counter.bucket = bucket
            counter.kinds.clear()
            before = _cpu()
            wall, _, out, cpu = run_child_cpu(ragloom(
                "ingest", str(corpus), "--index", f"s3://{bucket}/index", "--no-cache", "-q",
                "--json"), env=env)
            server_cpu.append(_cpu() - before)
            s3_s.append(wall)
            s3_cpu.append(cpu)
            assert json.loads(out)["chunks"] == chunks, "the S3 run indexed other chunks"
    finally:
        server.shutdown()
        thread.join()
    requests = {k: tuple(v) for k, v in sorted(counter.kinds.items())}
    return {"MB": size, "chunks": chunks, "local_s": local_s, "s3_s": s3_s,
            "local_cpu_s": local_cpu, "s3_cpu_s": s3_cpu, "server_cpu_s": server_cpu,
            "ratio": [s / lo for s, lo in zip(s3_s, local_s, strict=True)],
            "requests": requests}


def print_s3(s3: dict[str, Any]) -> None:
    def span(values: list[float], unit: str = "s", digits: int = 1) -> str:
        low, high = min(values), max(values)
        text = f"{low:.{digits}f}" if f"{low:.{digits}f}" == f"{high:.{digits}f}" else (
            f"{low:.{digits}f}-{high:.{digits}f}"
        )
        return text + unit

    runs = len(s3["s3_s"])
    print(f"\nS3 on loopback ({s3['MB']} MB, {s3['chunks']:,} chunks, {runs} run(s) each, "
          f"alternating): {span(s3['s3_s'], ' s')} vs {span(s3['local_s'], ' s')} on local "
          f"disk ({span(s3['ratio'], 'x', 2)}); CPU of the ingest {span(s3['s3_cpu_s'], ' s')} "
          f"vs {span(s3['local_cpu_s'], ' s')}; moto's server (one Python process) "
          f"{span(s3['server_cpu_s'], ' s')} of CPU")
    for n, (local, remote) in enumerate(zip(s3["local_s"], s3["s3_s"], strict=True), 1):
        print(f"  run {n}: local {local:.1f} s, then S3 {remote:.1f} s ({remote / local:.2f}x)")
    rows = s3["requests"]
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    print(f"requests of the last S3 run: {int(total[0]):,}, {total[1]:.1f} s of the server's "
          f"time, {total[2] / 1e6:.1f} MB in, {total[3] / 1e6:.1f} MB out")
    print("| request | count | server s | MB in | MB out |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for kind, (count, seconds, received, sent) in sorted(
        rows.items(), key=lambda kv: -kv[1][1]
    ):
        print(f"| {kind} | {int(count):,} | {seconds:.2f} | {received / 1e6:.1f} "
              f"| {sent / 1e6:.1f} |")


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
    parser.add_argument("--sizes", default="20,200",
                        help="MB of input, comma separated ('': none, e.g. with --s3)")
    parser.add_argument("--s3", type=int, default=0, help="MB ingested into moto's S3 too")
    parser.add_argument("--s3-runs", type=int, default=1,
                        help="ingests into the bucket, each after one into a local folder")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--only", choices=["ingest"], default=None,
                        help="ingest only: its time, peak RSS and RSS over the run")
    parser.add_argument("--work", type=Path, default=None,
                        help="a folder for the corpora, kept and reused by later runs")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="an environment variable of the ingest child (repeatable)")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    work = args.work or Path(tempfile.mkdtemp(prefix="ragloom-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"# {versions()}; {os.cpu_count()} CPUs; work in {work}", flush=True)
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
            row = measure(size, work, args.queries, args.only == "ingest", env)
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.only == "ingest":
            for r in rows:
                print(f"{r['MB']} MB, {r['chunks']:,} chunks: ingest {r['ingest_s']:.1f} s, "
                      f"peak RSS {r['ingest_rss']:.0f} MB ({r['ingest_rss_profile']})")
            if len(rows) > 1:
                print(f"peak ingest RSS {rows[-1]['MB']} MB / {rows[0]['MB']} MB: "
                      f"{rows[-1]['ingest_rss'] / rows[0]['ingest_rss']:.2f}x")
            return
        if rows:
            print_table(rows)
        if args.s3:
            print_s3(measure_s3(args.s3, work, args.s3_runs))
    finally:
        if args.work is not None:
            pass  # the caller's folder: kept
        elif args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def print_table(rows: list[dict[str, Any]]) -> None:
    print()
    print("| input MB | chunks | ingest s | ingest peak RSS MB | optimize s | optimize peak "
          "RSS MB | search p50 ms | p95 ms | recall@10 stored / asks | add 1 % s (share of "
          "ingest) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        recall = "exact" if not r["vector_index"] else (
            f"{r['recall_at_10']:.3f} / {r['recall_at_10_asks']:.3f}"
        )
        print(f"| {r['MB']} | {r['chunks']:,} | {r['ingest_s']:.1f} | {r['ingest_rss']:.0f} "
              f"| {r['optimize_s']:.1f} | {r['optimize_rss']:.0f} | {r['p50_ms']:.0f} "
              f"| {r['p95_ms']:.0f} | {recall} | {r['add_s']:.1f} "
              f"({100 * r['add_share']:.1f} %) |")
    print()
    for r in rows:
        print(f"add 1 % at {r['MB']} MB ({r['add_MB']} MB, {r['add_indexed']} documents "
              f"indexed, {r['add_unchanged']:,} unchanged): {r['add_s']:.1f} s = start-up "
              f"{r['add_startup_s']:.1f} s + routes {r['add_routes_s']:.1f} s + the rest "
              f"{r['add_rest_s']:.1f} s; peak RSS {r['add_rss']:.0f} MB")
    if len(rows) > 1:
        print(f"\npeak ingest RSS {rows[-1]['MB']} MB / {rows[0]['MB']} MB: "
              f"{rows[-1]['ingest_rss'] / rows[0]['ingest_rss']:.2f}x")


if __name__ == "__main__":
    main()
