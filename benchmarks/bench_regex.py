"""User regular expressions: the engines compared, to choose how to bound them.

    pip install -e core -e plugins/text -e plugins/rules google-re2   # peer: google-re2
    python benchmarks/bench_regex.py [--repeat 5]

Separators (``is_separator_regex``): every match end of a pattern over a 2 MB text, with ``re``
(unbounded: the baseline), the ``regex`` module with a per-call timeout (what ragloom-text
uses) and without, and google-re2 (linear time; no look-around). Route patterns: one search in
a short query, ``re`` against ``regex`` with a timeout, and ragloom-rules' ``KeywordRouter``
ranking queries with the sample routes. Last, how each engine ends on ``(a|aa)+$`` against
``"a" * 40 + "!"`` (exponential backtracking). Times are best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import re
import time
from importlib.metadata import version


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import regex

    try:
        import re2
    except ImportError:
        re2 = None
    print(f"regex {version('regex')}; google-re2 {version('google-re2') if re2 else 'absent'}")
    text = ("Lorem ipsum dolor sit amet. Consectetur adipiscing elit!\n\nSed do eiusmod? "
            "tempor, incididunt ut labore.\n") * 20000
    print(f"separators over {len(text)} characters (ratio to re; best of {args.repeat})")
    for pattern in [r"\n\n", r"[.!?]\s+", r"(?<=\. )", r"\s+", r"(?m)^Sed"]:
        base = re.compile(pattern)
        t_re = best(lambda p=base: [m.end() for m in p.finditer(text)], args.repeat)
        bounded = regex.compile(pattern)
        t_to = best(lambda p=bounded: [m.end() for m in p.finditer(text, timeout=5.0)], args.repeat)
        t_rx = best(lambda p=bounded: [m.end() for m in p.finditer(text)], args.repeat)
        line = (f"  {pattern!r:14} re {t_re * 1000:7.1f} ms | regex+timeout {t_to / t_re:5.2f}x"
                f" | regex {t_rx / t_re:5.2f}x")
        if re2 is not None:
            try:
                linear = re2.compile(pattern)
                t_2 = best(lambda p=linear: [m.end() for m in p.finditer(text)], args.repeat)
                line += f" | re2 {t_2 / t_re:5.2f}x"
            except Exception:  # noqa: BLE001 - look-around is not supported
                line += " | re2 unsupported"
        print(line)

    query = "How much was the refund on invoice 2023 for $45.00 and what is the status?"
    print("route patterns, one search in a short query (microseconds)")
    n = 20000
    for pattern in [r"\b(19|20)\d{2}\b", r"\$\s?\d+(?:\.\d{2})?", r"invoice\s+#?\d+"]:
        a, b = re.compile(pattern, re.I), regex.compile(pattern, regex.I)
        t_a = best(lambda p=a: [p.search(query) for _ in range(n)], args.repeat) / n * 1e6
        t_b = best(lambda p=b: [p.search(query, timeout=0.5) for _ in range(n)], args.repeat) / n * 1e6
        print(f"  {pattern:28} re {t_a:5.2f} | regex+timeout {t_b:5.2f}")
    from ragloom_rules.router import sample_router

    router = sample_router()
    queries = ["How much was the refund on invoice 2023 for $45.00?",
               "how do I reset my password", "compare plan A and plan B pricing in 2024",
               "where is my order #12345"] * 5000
    t_rank = best(lambda: [router._index.rank(q) for q in queries], args.repeat)  # noqa: SLF001
    print(f"KeywordRouter (sample routes): {t_rank / len(queries) * 1e6:.1f} us per query")

    bad, subject = r"(a|aa)+$", "a" * 40 + "!"
    print(f"{bad!r} on 'a' * 40 + '!':")
    start = time.perf_counter()
    try:
        regex.compile(bad).search(subject, timeout=0.5)
        print("  regex: finished")
    except TimeoutError:
        print(f"  regex (timeout 0.5 s): stopped after {time.perf_counter() - start:.2f} s")
    if re2 is not None:
        start = time.perf_counter()
        re2.compile(bad).search(subject)
        print(f"  re2: {time.perf_counter() - start:.4f} s")
    print("  re: not run (exponential: hours)")


if __name__ == "__main__":
    main()
