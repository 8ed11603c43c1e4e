"""The ``ragloom`` command: cold start of ``ragloom plugins``; time and peak memory of ingest.

    pip install -e 'core[cli]' -e plugins/text -e plugins/rules
    python benchmarks/bench_cli.py [--sizes 20,200] [--runs 20] [--skip-ingest] [--keep]

Cold start: ``python -c pass`` (the baseline every Python command pays), ``python -m
ragloom.cli plugins``, the ``ragloom plugins`` console script and ``ragloom --help``, run
``--runs`` times each, interleaved (so a load change on the machine hits all of them alike).
Reported: median and mean wall time, and the median's excess over the baseline (the target
for ``ragloom plugins`` is < 150 ms with every plugin installed).

Ingest: corpora of ``--sizes`` MB of real text (``tests/support/corpus.py``: package
descriptions, documentation files, stdlib sources), written as .md/.rst/.txt/.py files under a
temp dir; bigger corpora repeat the 20 MB set in copy folders (distinct ids, so no cache hit
between copies). Each corpus is ingested by ``ragloom ingest`` in a child process three ways:
no cache, a fresh SQLite cache (every entry written), and the same cache again (every document
replayed). Peak memory is the child's own ``ru_maxrss`` (``os.wait4``), so it does not mix
runs. Memory should not grow with the corpus: compare the 20 MB and 200 MB rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

from corpus import build_corpus  # noqa: E402

SUFFIX = {"markdown": ".md", "rst": ".rst", "text": ".txt", "code": ".py"}
BASE_MB = 20
LAST_CPU = 0.0


def timed_child(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
                stderr: int | None = subprocess.DEVNULL) -> tuple[float, float, int, str]:
    """Run ``argv``; return (seconds, peak RSS MB of that child, exit status, stderr).

    The child's CPU seconds (user + system) are kept in ``LAST_CPU``.
    """
    global LAST_CPU
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=stderr if stderr is not None else subprocess.PIPE, text=True)
    err = ""
    if proc.stderr is not None:
        err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    LAST_CPU = usage.ru_utime + usage.ru_stime
    proc.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss / 1024, proc.returncode, err


def cold_start(runs: int) -> None:
    script = shutil.which("ragloom")
    commands: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -m ragloom.cli plugins": [sys.executable, "-m", "ragloom.cli", "plugins"],
    }
    if script:
        commands["ragloom plugins (script)"] = [script, "plugins"]
        commands["ragloom --help (script)"] = [script, "--help"]
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            seconds, _rss, status, _err = timed_child(argv, cwd=Path(tempfile.gettempdir()))
            assert status == 0, name
            times[name].append(seconds * 1000)
            cpu[name].append(LAST_CPU * 1000)
    base = statistics.median(times["python -c pass"])
    base_cpu = statistics.median(cpu["python -c pass"])
    print(f"\nCold start, {runs} runs each (ms; wall time, and CPU time = user + system)")
    print(f"{'command':30} {'median':>7} {'min':>7} {'excess':>7} {'ratio':>6} "
          f"{'CPU med':>8} {'CPU min':>8} {'CPU excess':>10}")
    for name, values in times.items():
        med = statistics.median(values)
        cmed = statistics.median(cpu[name])
        print(f"{name:30} {med:7.1f} {min(values):7.1f} {med - base:7.1f} {med / base:6.2f} "
              f"{cmed:8.1f} {min(cpu[name]):8.1f} {cmed - base_cpu:10.1f}")


def write_corpus(root: Path, megabytes: int) -> tuple[int, int]:
    """Write at least ``megabytes`` MB of files under ``root``; return (files, bytes)."""
    entries = build_corpus(BASE_MB * 1_000_000)
    files = total = 0
    copy = 0
    while total < megabytes * 1_000_000:
        folder = root / f"copy{copy:02d}"
        for i, (_name, fmt, text) in enumerate(entries):
            path = folder / f"d{i // 500:03d}" / f"doc{i:05d}{SUFFIX[fmt]}"
            path.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            path.write_bytes(data)
            files += 1
            total += len(data)
            if total >= megabytes * 1_000_000:
                break
        copy += 1
    return files, total


def ingest(sizes: list[int], keep: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix="ragloom-bench-cli-"))
    env = dict(os.environ, RAGLOOM_PROGRESS_INTERVAL="2")
    rows = []
    try:
        for size in sizes:
            corpus = work / f"corpus-{size}mb"
            files, nbytes = write_corpus(corpus, size)
            cache = work / f"cache-{size}.sqlite"
            base = [sys.executable, "-m", "ragloom.cli", "ingest", str(corpus), "-o",
                    str(work / f"chunks-{size}.jsonl")]
            runs = [
                ("no cache", [*base, "--no-cache"]),
                ("cache, cold", [*base, "--cache", str(cache)]),
                ("cache, warm", [*base, "--cache", str(cache)]),
            ]
            for label, argv in runs:
                seconds, rss, status, err = timed_child(argv, cwd=work, env=env, stderr=None)
                progress = sum(1 for line in err.splitlines() if " documents (" in line)
                out = work / f"chunks-{size}.jsonl"
                chunks = sum(1 for _ in open(out, "rb")) if out.exists() else 0
                rows.append((size, files, nbytes, label, seconds, rss, status, progress, chunks))
                print(f"  {size} MB {label}: {seconds:.1f} s, peak {rss:.0f} MB, exit {status}, "
                      f"{progress} progress lines, {chunks} chunks", flush=True)
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("\nragloom ingest (default chunkers, chunk size 500)")
    print(f"{'corpus':>8} {'files':>7} {'run':12} {'seconds':>8} {'MB/s':>7} {'peak RSS MB':>12} "
          f"{'exit':>5} {'chunks':>8}")
    for size, files, nbytes, label, seconds, rss, status, _progress, chunks in rows:
        print(f"{size:>6}MB {files:>7} {label:12} {seconds:8.1f} {nbytes / 1e6 / seconds:7.1f} "
              f"{rss:12.0f} {status:>5} {chunks:>8}")
    by_label: dict[str, list[float]] = {}
    for row in rows:
        by_label.setdefault(row[3], []).append(row[5])
    for label, peaks in by_label.items():
        if len(peaks) > 1:
            print(f"peak memory, {label}: largest / smallest corpus = {peaks[-1] / peaks[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20,200", help="corpus sizes in MB")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-start", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the corpora and outputs")
    args = parser.parse_args()
    if not args.skip_start:
        cold_start(args.runs)
    if not args.skip_ingest:
        ingest([int(s) for s in args.sizes.split(",")], args.keep)


if __name__ == "__main__":
    main()
