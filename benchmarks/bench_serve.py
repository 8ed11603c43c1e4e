"""``ragloom serve`` under load: concurrent clients on loopback, latency and memory.

    pip install -e './core[serve]' -e plugins/rules -e plugins/semantic -e plugins/lancedb
    python benchmarks/bench_serve.py --index PATH [--clients 32] [--requests 2000]
        [--soak 10000] [--questions FILE] [--same]

Starts ``ragloom serve --index PATH --port 0`` in a child process (it only reads the index),
waits for its address, warms it with 20 requests, then ``--clients`` concurrent clients (one
thread and one keep-alive connection each, http.client) send ``--requests`` ``GET /search`` in
all, round-robin over the questions (default: three-ask questions made of 30 asks; ``--same``
asks one question every time). Reported: errors, p50/p95/p99/max latency as each client sees
it, requests per second, and the server's RSS (``/proc``) before and after; ``--soak N``
then sends N more and reports the RSS again (flat: within 10 %). Traffic goes to 127.0.0.1
only, bounded in count and time (every request has a 60 s timeout).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ASKS = [
    "How do I install the package?", "How do I configure logging?", "How do I run the tests?",
    "How do I read a CSV file?", "How do I parse command line arguments?",
    "How do I make an HTTP request?", "How do I write a plugin?", "How do I clear the cache?",
    "How do I format dates?", "How do I handle errors?", "How do I connect to a database?",
    "How do I compress a file?", "How do I run code in parallel?", "How do I copy a folder?",
    "How do I hash a password?", "How do I send an email?", "How do I parse JSON?",
    "How do I schedule a task?", "How do I measure time?", "How do I debug a crash?",
    "How do I read environment variables?", "How do I write a unit test?",
    "How do I serialise an object?", "How do I validate input?", "How do I sort a list?",
    "How do I open a socket?", "How do I render a template?", "How do I upload a file?",
    "How do I profile memory?", "How do I cancel a task?",
]


def questions(path: str | None) -> list[str]:
    if path:
        import json

        out = []
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["question"] if line.lstrip().startswith("{")
                           else line.strip())
        return out
    return [" ".join(ASKS[(i + j) % len(ASKS)] for j in (0, 11, 22)) for i in range(len(ASKS))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start(index: str, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragloom.cli", "serve", "--index", index, "--port", "0",
         *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("ragloom serve: http://"):
            url = line.split()[2]
            assert url.startswith("http://127.0.0.1:"), url  # loopback only
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
            return proc, url
    raise SystemExit(f"the server did not start (status {proc.wait()})")


def drive(url: str, asked: list[str], clients: int, total: int) -> tuple[list[float], int, float]:
    """``total`` GET /search spread over ``clients`` threads, each with one kept-alive
    connection (``http.client``: the lightest client, so that the two cores go to the server
    rather than to the clients' own HTTP machinery)."""
    import http.client
    from urllib.parse import urlencode, urlsplit

    where = urlsplit(url)
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    counter = iter(range(total))

    def client() -> None:
        nonlocal errors
        connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
        try:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                started = time.perf_counter()
                try:
                    connection.request("GET", "/search?" + urlencode({"q": asked[n % len(asked)]}))
                    response = connection.getresponse()
                    body = response.read()
                    ok = response.status == 200 and "passages" in json.loads(body)
                except (OSError, http.client.HTTPException, ValueError):
                    ok = False
                    connection.close()  # the next request opens a new connection
                took = time.perf_counter() - started
                with lock:
                    latencies.append(took)
                    errors += not ok
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors, time.perf_counter() - started


def report(name: str, latencies: list[float], errors: int, seconds: float) -> None:
    ms = sorted(x * 1000 for x in latencies)

    def pct(p: float) -> float:
        return ms[min(len(ms) - 1, int(p / 100 * len(ms)))]

    print(f"{name}: {len(ms)} requests, {errors} errors, {len(ms) / seconds:.1f} req/s; "
          f"latency ms p50 {statistics.median(ms):.1f}  p95 {pct(95):.1f}  p99 {pct(99):.1f}  "
          f"max {ms[-1]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--soak", type=int, default=0)
    parser.add_argument("--questions", default=None)
    parser.add_argument("--same", action="store_true", help="ask one question every time")
    parser.add_argument("serve_args", nargs="*", help="more `ragloom serve` options (after --)")
    args = parser.parse_args()
    # a SIGTERM (or SIGINT in a background job) still stops the server in the `finally` below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    asked = questions(args.questions)
    if args.same:
        asked = asked[:1]
    proc, url = start(args.index, args.serve_args)
    try:
        print(f"server {url} pid {proc.pid}; index {args.index}; {len(asked)} questions, e.g. "
              f"{asked[0]!r}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
        latencies, errors, seconds = drive(url, asked, 1, 20)
        report("warm-up, 1 client", latencies, errors, seconds)
        before = rss_mb(proc.pid)
        latencies, errors, seconds = drive(url, asked, 1, min(200, args.requests))
        report("1 client", latencies, errors, seconds)
        latencies, errors, seconds = drive(url, asked, args.clients, args.requests)
        report(f"{args.clients} clients", latencies, errors, seconds)
        after = rss_mb(proc.pid)
        print(f"server RSS: {before:.0f} MB before, {after:.0f} MB after")
        if args.soak:
            latencies, errors, seconds = drive(url, asked, args.clients, args.soak)
            report(f"soak, {args.clients} clients", latencies, errors, seconds)
            soaked = rss_mb(proc.pid)
            print(f"server RSS after {args.requests + args.soak} requests: {soaked:.0f} MB "
                  f"({100 * (soaked - after) / after:+.1f} % since the {args.requests})")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
