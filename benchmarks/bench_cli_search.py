"""``ragloom search`` as a whole process on a small index, next to ``python -c pass``.

    pip install -e './core[cli]' -e plugins/text -e plugins/rules -e plugins/loaders \
        -e plugins/semantic -e plugins/lancedb
    python benchmarks/bench_cli_search.py [--index PATH] [--runs 10]

Without ``--index``, ingests ``examples/sample-docs`` and ``docs/`` (about 600 chunks) into a
temporary index first. Then runs ``python -c pass``, ``ragloom search "<a compound question>"
--index PATH`` and ``ragloom --help`` ``--runs`` times each,
interleaved (a change of load hits all alike), and prints the median and best wall time and
the median CPU time (user + system, the child's own accounting) of each. The target: the
search <= 1.0 s wall on the project's 2-core machine. Also prints whether the search imported
``lancedb`` (it should not: searches read the index through Lance).
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
QUESTION = "How do I clear the cache and how do I write a plugin?"


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tempfile.gettempdir())
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, argv
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=None)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    script = shutil.which("ragloom") or sys.exit("the ragloom command is not on PATH")
    work = Path(tempfile.mkdtemp(prefix="ragloom-bench-"))
    try:
        index = args.index
        if index is None:
            index = str(work / "index")
            # exit 1 when a file was skipped (the Docling sample without ragloom-docling)
            done = subprocess.run(
                [script, "ingest", str(REPO / "examples" / "sample-docs"), str(REPO / "docs"),
                 "--index", index],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )
            if done.returncode not in (0, 1) or not Path(index).exists():
                sys.exit(f"ingest failed: {done.stderr}")
        info = subprocess.run([script, "index", "info", "--index", index],
                              capture_output=True, text=True, check=True).stdout
        chunks = next(line.split()[-1] for line in info.splitlines() if "chunks" in line)
        imported = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "ragloom.cli", "search", QUESTION,
             "--index", index], capture_output=True, text=True, cwd=tempfile.gettempdir(),
        ).stderr
        lancedb = any(line.rstrip().endswith("| lancedb") for line in imported.splitlines())
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "ragloom --help": [script, "--help"],
            "ragloom search": [script, "search", QUESTION, "--index", index],
        }
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv)  # warm the page cache
        for _ in range(args.runs):
            for name, argv in commands.items():
                wall, cpu = timed(argv)
                walls[name].append(wall * 1000)
                cpus[name].append(cpu * 1000)
        print(f"index: {index} ({chunks} chunks); {args.runs} runs each, interleaved; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        print(f"question: {QUESTION!r}; the search imported lancedb: {lancedb}")
        print(f"{'command':18s} {'wall p50':>10s} {'wall best':>10s} {'cpu p50':>10s}")
        for name in commands:
            print(f"{name:18s} {statistics.median(walls[name]):8.0f}ms "
                  f"{min(walls[name]):8.0f}ms {statistics.median(cpus[name]):8.0f}ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
