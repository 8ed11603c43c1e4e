"""ragloom-ray into an index: the chunk-and-embed ingest of ``ragloom ingest --index``, on the
local engine and on 1 and 2 Ray workers, each into a fresh index.

    pip install -e "core[cli]" -e plugins/text -e plugins/semantic -e plugins/lancedb -e plugins/ray
    python benchmarks/bench_ray_index.py [--min-bytes 32000000] [--repeat 2] [--batch-size 32]

The corpus is ``tests/support/corpus.py`` (real text nobody here wrote), written out as files.
The pipeline is the one ``ragloom ingest --index`` runs by default: ragloom-text's ``auto``
chunkers, then ragloom-semantic's model2vec embedder (256 dimensions), no cache, no JSONL file:
chunks and vectors go to a LanceDB index (ragloom-lancedb), folds included.

Rows, all on the same files, each into a new index:

- ``local``: the local engine (one process);
- ``ray 1 worker`` and ``ray 2 workers``: ``RayEngine`` on a local Ray started once with
  ``num_cpus=2`` (its start-up not counted); each run includes starting its workers.

Columns: wall-clock seconds (best of ``--repeat``, median beside it), the driver's CPU seconds
(this process, every thread: Lance's included; not the Ray workers'), and whether the index
holds the local run's rows (both tables, sorted: ids, text, offsets, vectors, metadata,
fingerprints). The machine may be shared with other work: the load average is printed
beside each row.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import argparse  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_ray import write_corpus  # noqa: E402


def index_rows(path: Path) -> tuple[list[Any], list[Any]]:
    """Both tables of the index at ``path``, rows sorted (chunks by id, documents by id)."""
    import lance

    chunks = lance.dataset(str(path / "chunks.lance")).to_table().to_pylist()
    documents = lance.dataset(str(path / "chunks_documents.lance")).to_table().to_pylist()
    return (
        sorted(chunks, key=lambda r: r["id"]),
        sorted(documents, key=lambda r: r["document_id"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-bytes", type=int, default=32_000_000)
    parser.add_argument("--batch-size", type=int, default=32, help="files per Ray batch")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rows", default="local,ray1,ray2", help="which rows to run")
    args = parser.parse_args()

    import ray
    from ragloom.engines import IngestJob
    from ragloom.ingest import run_job
    from ragloom_ray import RayEngine

    print(
        f"python {platform.python_version()}, ray {version('ray')}, lancedb "
        f"{version('lancedb')}, pylance {version('pylance')}, ragloom {version('ragloom')}, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f} at start)"
    )
    wanted = args.rows.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-ray-index-") as tmp:
        root = Path(tmp) / "corpus"
        files, size = write_corpus(root, args.min_bytes)
        print(f"corpus: {files} files, {size / 1e6:.1f} MB; default pipeline + model2vec into "
              f"an index; Ray batches of {args.batch_size} files; best of {args.repeat} (median)")
        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="WARNING")
        print(f"ray.init(num_cpus=2): {time.perf_counter() - started:.1f} s (not counted)")

        reference: tuple[list[Any], list[Any]] | None = None
        for label in wanted:
            engine = None
            if label.startswith("ray"):
                engine = RayEngine(workers=int(label[3:]), batch_size=args.batch_size)
            times: list[float] = []
            cpus: list[float] = []
            loads: list[float] = []
            report: Any = None
            index = Path(tmp) / f"index-{label}"
            for _ in range(args.repeat):
                shutil.rmtree(index, ignore_errors=True)
                job = IngestJob(paths=(str(root),), index=str(index), cache=None)
                cpu, wall = time.process_time(), time.perf_counter()
                report = run_job(job, engine=engine) if engine is not None else run_job(job)
                times.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                loads.append(os.getloadavg()[0])
                assert report.ok, report.failures[:3]
            rows = index_rows(index)
            if reference is None:
                reference = rows
            same = rows == reference
            best = min(times)
            print(
                f"  {label:6} {best:7.2f} s ({statistics.median(times):.2f})  driver CPU "
                f"{min(cpus):6.2f} s  {report.chunks} chunks  {size / 1e6 / best:5.2f} MB/s  "
                f"same rows: {same}  load {min(loads):.1f}-{max(loads):.1f}",
                flush=True,
            )
        ray.shutdown()


if __name__ == "__main__":
    main()
