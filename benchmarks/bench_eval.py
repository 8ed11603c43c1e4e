"""What an evaluation costs: ``ragloom eval`` on 200 questions over a 100,000-chunk index.

    pip install -e "core[cli]" -e plugins/text -e plugins/rules -e plugins/semantic \\
        -e plugins/lancedb
    python benchmarks/bench_eval.py [--chunks 100000] [--questions 200] [--repeat 3]
        [--workdir DIR]

The index is bench_search's latency index (``--workdir``, built once and reused: chunks of
real text, the installed distributions' documentation and the stdlib sources cut at 512
characters, 10 chunks a document, embedded by the bundled model). The questions are made
from the index itself, so that every label names a stored document: each joins a phrase of
one chunk and a phrase of another ("How do I <8 words of A> and <8 words of B>?"), the two
documents being its two facets. They measure time, not quality: the phrases are not how
people ask.

Measured: the whole command (``ragloom eval QUESTIONS --index PATH --json`` in a fresh
process: start-up, opening the index, loading the model, every search, scoring) for the
default set-up, ``--repeat`` times; and the per-question p50/p95 the report gives. Target:
under 30 s for 200 questions at 100k chunks.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))


def phrase(text: str, rng: random.Random, words: int = 8) -> str:
    tokens = [t for t in text.split() if t.isascii() and t.strip("`*#'\"")]
    if len(tokens) <= words:
        return " ".join(tokens)
    start = rng.randrange(0, len(tokens) - words)
    return " ".join(tokens[start : start + words])


def make_questions(store: object, count: int, path: Path, seed: int = 7) -> None:
    rng = random.Random(seed)
    by_document = store.chunks()  # type: ignore[attr-defined]
    ids = sorted(by_document)
    with open(path, "w", encoding="utf-8") as out:
        for n in range(count):
            first, second = rng.sample(ids, 2)
            a = rng.choice(by_document[first]).content
            b = rng.choice(by_document[second]).content
            out.write(json.dumps({
                "id": f"b{n:03d}",
                "question": f"How do I {phrase(a, rng)} and {phrase(b, rng)}?",
                "expected": [{"facet": 1, "document": first}, {"facet": 2, "document": second}],
            }) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    from bench_search import big_index
    from ragloom_semantic import Model2VecEmbedder

    print(f"ragloom {version('ragloom')}, lancedb {version('lancedb')}, Python "
          f"{sys.version.split()[0]}")
    print(f"command: python benchmarks/bench_eval.py --chunks {args.chunks} --questions "
          f"{args.questions} --repeat {args.repeat}")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ragloom-bench-eval-"))
    index = workdir / f"index-{args.chunks}"
    store = big_index(index, args.chunks, Model2VecEmbedder())
    questions = workdir / f"questions-{args.questions}.jsonl"
    make_questions(store, args.questions, questions)
    store.close()
    walls: list[float] = []
    report: dict = {}
    for _ in range(args.repeat):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ragloom.cli", "eval", str(questions), "--index",
             str(index), "--json"],
            capture_output=True, text=True, check=False,
        )
        walls.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"ragloom eval failed ({done.returncode}): {done.stderr[-2000:]}")
        report = json.loads(done.stdout)
    setup = report["setups"][0]
    print(f"\n{args.questions} questions, {args.chunks:,} chunks, default set-up "
          f"(top_k {setup['settings']['top_k']}, concurrency {setup['concurrency']}):")
    print(f"  whole command: median {statistics.median(walls):.1f} s, best {min(walls):.1f} s "
          f"over {len(walls)} runs (target < 30 s)")
    print(f"  the set-up alone (index and model opened, every search, scoring): "
          f"{setup['seconds']:.1f} s")
    latency = setup["latency"]
    print(f"  per question: p50 {latency['p50_ms']:.1f} ms, p95 {latency['p95_ms']:.1f} ms")


if __name__ == "__main__":
    main()
