"""ragloom-ray: throughput of 1 and 2 Ray workers, and Ray's overhead against the local engine.

    pip install -e core -e plugins/text -e plugins/semantic -e plugins/ray
    python benchmarks/bench_ray.py [--min-bytes 40000000] [--copies 3] [--batch-size 64] [--repeat 3]

The corpus is ``tests/support/corpus.py`` (real text nobody here wrote: package descriptions
and documentation, then standard-library sources; about 33 MB on a typical machine), written
out as files, ``--copies`` times in separate folders so the run is long enough to measure. The pipeline is the
embed-heavy one: ragloom-text's recursive splitter at ``--size`` characters, then
ragloom-semantic's model2vec embedder (256 dimensions), no cache, chunks to a JSONL file.

Rows, all in the same run on the same files:

- ``local``: the local engine (``Ingestor``), one process;
- ``ray 1 worker`` and ``ray 2 workers``: ``RayEngine`` on a local Ray started once with
  ``num_cpus=2`` (start-up not counted); each run includes starting its workers (a process
  each, which builds the pipeline and loads the model once), as every ``ragloom ingest
  --engine ray`` does;
- ``start 1`` and ``start 2``: the same runs over one small file per worker: the fixed cost
  of a run (workers started, pipeline built, model loaded, results collected). Subtracted
  from the rows above, it gives the steady-state throughput a long run approaches.

Every process does its math on one thread (BLAS, OpenMP, Rayon), so 2 workers can use 2
cores. Times are wall-clock, the best of ``--repeat`` runs with the median beside it; the
machine may be shared with other work, so compare the ratios of one run.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

SUFFIX = {"markdown": ".md", "rst": ".rst", "text": ".txt", "code": ".py"}
TARGET = 1.7  # speed-up of 2 workers over 1 on 2 cores


def write_corpus(root: Path, min_bytes: int, copies: int = 1) -> tuple[int, int]:
    """The corpus as files under ``root``, ``copies`` times; (files, bytes)."""
    from support.corpus import build_corpus

    files = size = 0
    for copy in range(copies):
        for i, (name, fmt, text) in enumerate(build_corpus(min_bytes)):
            stem = "".join(c if c.isalnum() else "_" for c in name)[-60:]
            folder = root / f"copy{copy}" / f"d{i // 500:03d}"
            path = folder / f"{i:06d}_{stem}{SUFFIX.get(fmt, '.txt')}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            files += 1
            size += len(text.encode())
    return files, size


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(best, median, last result) of ``repeat`` calls."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-bytes", type=int, default=40_000_000)
    parser.add_argument("--copies", type=int, default=3, help="copies of the corpus")
    parser.add_argument("--size", type=int, default=512, help="chunk size (characters)")
    parser.add_argument("--batch-size", type=int, default=64, help="files per Ray batch")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import ray
    from ragloom.config import build_pipeline
    from ragloom.engines import IngestJob
    from ragloom.ingest import Ingestor
    from ragloom_ray import RayEngine

    spec = {
        "steps": [
            {"chunker": "ragloom-text:recursive", "params": {"chunk_size": args.size}},
            {"embedder": "model2vec"},
        ],
    }
    print(
        f"python {platform.python_version()}, ray {version('ray')}, ragloom {version('ragloom')},"
        f" ragloom-ray {version('ragloom-ray')}, model2vec {version('model2vec')}, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f} at start)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        root = Path(tmp) / "corpus"
        files, size = write_corpus(root, args.min_bytes, args.copies)
        small = Path(tmp) / "small"
        small.mkdir()
        for n in range(2):
            (small / f"s{n}.md").write_text(f"# Small {n}\n\nOne short paragraph.\n")
        print(f"corpus: {files} files, {size / 1e6:.1f} MB; chunk {args.size} + model2vec; "
              f"batches of {args.batch_size} files; best of {args.repeat} (median)")

        def local() -> Any:
            with build_pipeline(spec) as pipeline, Ingestor(pipeline, cache=False) as ingestor:
                return ingestor.run([root], out=Path(tmp) / "local.jsonl")

        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="WARNING")
        print(f"ray.init(num_cpus=2): {time.perf_counter() - started:.1f} s (not counted)")

        def on_ray(workers: int, where: Path = root) -> Callable[[], Any]:
            engine = RayEngine(workers=workers, batch_size=args.batch_size if where == root else 1)
            out = Path(tmp) / f"ray{workers}{'' if where == root else '-small'}.jsonl"
            job = IngestJob(paths=(str(where),), spec=spec, out=str(out))
            return lambda: engine.ingest(job)

        rows: list[tuple[str, float, float, Any]] = []
        for label, fn in (("local", local), ("ray 1 worker", on_ray(1)),
                          ("ray 2 workers", on_ray(2)), ("start 1", on_ray(1, small)),
                          ("start 2", on_ray(2, small))):
            best, median, report = timed(fn, args.repeat)
            rows.append((label, best, median, report))
            print(f"  {label:14} {best:7.2f} s ({median:.2f})  {size / 1e6 / best:6.2f} MB/s  "
                  f"{report.chunks / best:8.0f} chunks/s  {report.chunks} chunks", flush=True)
        ray.shutdown()
        same = all(
            (Path(tmp) / f"ray{n}.jsonl").read_bytes() == (Path(tmp) / "local.jsonl").read_bytes()
            for n in (1, 2)
        )
    local_s, one, two, start1, start2 = (row[1] for row in rows)
    print(f"outputs identical to the local engine's: {same}")
    print(f"2 workers vs 1: {one / two:.2f}x (goal >= {TARGET}x)")
    print(f"ray 1 worker vs local: {one / local_s:.2f}x the time (overhead {one - local_s:+.2f} s)")
    print(f"ray 2 workers vs local: {local_s / two:.2f}x faster")
    steady1, steady2 = one - start1, two - start2
    print(f"fixed cost of a run: {start1:.2f} s (1 worker), {start2:.2f} s (2 workers)")
    print(f"steady state, 2 workers vs 1: {steady1 / steady2:.2f}x")
    print(f"per worker, steady state: {size / 1e6 / steady1:.2f} MB/s, "
          f"{rows[1][3].chunks / steady1:.0f} chunks/s, {files / steady1:.0f} files/s")


if __name__ == "__main__":
    main()
