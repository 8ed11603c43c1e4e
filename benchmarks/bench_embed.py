"""ragloom-semantic's Model2VecEmbedder against model2vec's own encode, on one core.

    pip install -e core -e plugins/text -e plugins/semantic
    python benchmarks/bench_embed.py [--min-bytes 12000000] [--size 512] [--repeat 3]

Chunks are cut from ``tests/support/corpus.py`` (real text nobody here wrote: package
descriptions and documentation, then standard-library sources) by ragloom-text's recursive
splitter at ``--size`` characters. The process is pinned to one CPU and BLAS, OpenMP, Rayon
and tokenizer threads are limited to one, so every number is single-core.

Rows:

- ``cold``: a fresh encoder (empty word cache) over all chunks once, in batches of the
  embedder's ``batch_size``: the first ingest of a corpus.
- ``warm``: the same chunks again with the cache filled: re-ingesting, or a corpus whose
  vocabulary was seen (the word cache keeps up to 500k distinct words).
- ``batch N``: warm, in batches of N.
- the peer, model2vec's ``StaticModel.encode`` (the same model and texts; its default batch
  size, no multiprocessing), on a sample of ``--peer-chunks`` chunks.

Times are wall-clock; the machine may be shared: the best of ``--repeat`` runs is reported
with the median beside it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

TARGET = 20_000  # chunks per second on one core


def pin_one_core() -> str:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):
        return "not pinned (no sched_setaffinity)"


def chunks_of(min_bytes: int, size: int) -> tuple[list[str], list[str]]:
    """Chunks of the corpus' prose (Markdown, reST, text) and of its code."""
    from ragloom_text import RecursiveCharacterTextSplitter
    from support.corpus import build_corpus

    splitter = RecursiveCharacterTextSplitter(chunk_size=size)
    prose: list[str] = []
    code: list[str] = []
    for _, fmt, text in build_corpus(min_bytes):
        (code if fmt == "code" else prose).extend(splitter.split_text(text))
    return prose, code


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(best, median) wall-clock seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def in_batches(encode: Callable[[Sequence[str]], Any], texts: list[str], size: int) -> None:
    for lo in range(0, len(texts), size):
        encode(texts[lo : lo + size])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-bytes", type=int, default=12_000_000)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-chunks", type=int, default=10_000)
    args = parser.parse_args()

    pinned = pin_one_core()
    from ragloom_semantic import Model2VecEmbedder, StaticEncoder, load_static_model

    prose, code = chunks_of(args.min_bytes, args.size)
    texts = prose + code
    mean = sum(map(len, texts)) / len(texts)
    print(
        f"# Embedding {len(texts):,} chunks (mean {mean:.0f} characters): {len(prose):,} of "
        f"prose (Markdown, reST, text), {len(code):,} of Python code"
    )
    print(
        f"# {pinned}; ragloom-semantic {version('ragloom-semantic')}, "
        f"model2vec {version('model2vec')}, tokenizers {version('tokenizers')}, "
        f"numpy {np.__version__}; bundled model m2v-minilm-256"
    )
    embedder = Model2VecEmbedder()
    batch = embedder.batch_size
    embedder.embed(["load the model"])  # loading is not embedding time

    def cold(chunks: list[str]) -> Callable[[], None]:
        def run() -> None:
            fresh = StaticEncoder()
            fresh.encode(["load"])  # model load, word cache nearly empty
            start = time.perf_counter()
            in_batches(fresh.encode, chunks, batch)
            elapsed.append(time.perf_counter() - start)

        return run

    rows: list[tuple[str, float, float, int]] = []
    for name, chunks in (("all", texts), ("prose only", prose), ("code only", code)):
        elapsed: list[float] = []
        timed(cold(chunks), args.repeat)
        best, median = min(elapsed), statistics.median(elapsed)
        rows.append((f"cold word cache, {name}, batch {batch}", best, median, len(chunks)))
    in_batches(embedder.embed, texts, batch)  # fill the shared encoder's cache
    for size in sorted({64, 256, batch, 2048}):
        best, median = timed(lambda s=size: in_batches(embedder.embed, texts, s), args.repeat)
        rows.append((f"warm, batch {size}", best, median, len(texts)))

    model = load_static_model()
    sample = texts[: args.peer_chunks]
    best, median = timed(
        lambda: model.encode(sample, use_multiprocessing=False, show_progress_bar=False),
        args.repeat,
    )
    rows.append(("model2vec StaticModel.encode (peer)", best, median, len(sample)))
    peer_rate = len(sample) / best

    ours = np.asarray(embedder.embed(sample[:2000]))
    theirs = np.asarray(model.encode(sample[:2000], use_multiprocessing=False), np.float32)
    agree = float(np.abs(ours - theirs).max())

    print()
    print("| run | chunks | best s | median s | chunks/s (best) | vs model2vec encode |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, best, median, count in rows:
        rate = count / best
        print(
            f"| {name} | {count:,} | {best:.3f} | {median:.3f} | {rate:,.0f} | "
            f"{rate / peer_rate:.2f}x |"
        )
    print()
    print(f"Largest difference from model2vec's vectors over 2,000 chunks: {agree:.2e}")
    warm = min(r[1] for r in rows if r[0].startswith(f"warm, batch {batch}"))
    print(f"Target {TARGET:,} chunks/s on one core: warm {len(texts) / warm:,.0f} chunks/s")


if __name__ == "__main__":
    main()
