"""Query planning: decomposition quality and throughput, and out-of-scope calibration.

    pip install -e core -e plugins/rules     # no peer library needed
    pip install -e plugins/semantic          # for the CLINC150 calibration section
    python benchmarks/bench_query.py [--n 10000] [--repeat 3] [--skip semantic]

First the quality of ``HeuristicDecomposer`` on the labelled set
(``tests/plugins/rules/decomposition_set.yaml``: hand-written support, shopping, research and
technical questions with their expected sub-queries): exact-split accuracy (overall and per
domain), invariant violations (``decomposition_violations``: an invented or lost content word,
an unresolved reference), and questions/s on those questions. Invariant violations are also
counted on the generated questions below.

Plans ``--n`` generated questions (comparisons, coordinated questions, enumerations, time and
place constraints, single-intent questions; seeded, so every run sees the same ones) through
ragloom's ``MultiQueryRoutingPipeline`` with ``HeuristicDecomposer`` and the sample
``KeywordRouter``, and reports questions per second end to end with the cost of each stage:

- decompose: ``HeuristicDecomposer.decompose`` on every question;
- normalize: the block's Normalize rule (``normalize_sub_queries``) on every decomposition;
- route: ``KeywordRouter.route_sync`` on every sub-query (its cost per question);
- engine overhead: the end-to-end time minus the three stages (async steps, state models,
  route decisions wrapped by ``Router.decide``).

Times are CPU seconds of this process (``time.process_time``: the "one core" figure, fair on
a shared machine) and wall seconds.

No peer library decomposes or routes queries without a model, so the router is compared
with the baseline a user would write by hand, measured in the same run: one whole-word
``re.search`` per keyword per route (same keywords, same whole-word semantics, no index).
CLINC150's utterances (``tests/data/clinc150``), real user queries, are planned too, and
ragloom-semantic's out-of-scope calibration is measured on them (see
``bench_semantic.calibration_rows``). Each figure is the best of ``--repeat`` runs (the
machine is shared). Targets: >= 5,000 questions/s for the decomposer and end to end on
one core; 0 invariant violations and >= 90% exact splits on the labelled set.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import yaml
from ragloom import MultiQueryRoutingPipeline
from ragloom.multi_query import OnEmptyDecompositionPolicy, normalize_sub_queries
from ragloom_rules import (
    HeuristicDecomposer,
    KeywordRouter,
    decomposition_violations,
    sample_router,
)

REPO = Path(__file__).resolve().parents[1]
LABELLED = REPO / "tests" / "plugins" / "rules" / "decomposition_set.yaml"
TEST_DATA = REPO / "tests" / "data"  # CLINC150 (tests/data/clinc150, CC BY 3.0)
TARGET_QPS, TARGET_EXACT = 5_000, 0.90

PRODUCTS = ["the Pro plan", "the Max plan", "the Mini model", "the Lite edition", "the X200"]
TECH = ["Python", "Java", "Rust", "Go", "Postgres", "MySQL", "React", "Vue", "Kubernetes"]
PLACES = ["Germany", "France", "Spain", "Italy", "the United States", "Japan", "Brazil"]
TOPICS = [
    "renewable energy adoption",
    "unemployment",
    "inflation",
    "housing prices",
    "remote work",
    "broadband coverage",
    "electric car sales",
    "tuition fees",
]
ISSUES = [
    "reset my password",
    "update my email",
    "install the app",
    "configure two-factor login",
    "fix error code E-42",
    "sync my calendar",
    "cancel my subscription",
    "get a refund",
]
ASPECTS = ["battery life", "pricing", "warranty", "performance", "security", "support"]
EFFECTS = ["sleep", "memory", "mood", "productivity", "blood pressure", "focus"]
YEARS = ["since 2020", "in 2023", "between 2010 and 2015", "over the last 5 years", "in 2019"]

TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: (
        f"Compare {r.choice(TOPICS)} in {r.choice(PLACES)} vs {r.choice(PLACES)} {r.choice(YEARS)}"
    ),
    lambda r: f"{r.choice(TECH)} vs {r.choice(TECH)} for web development",
    lambda r: f"What is the difference between {r.choice(TECH)} and {r.choice(TECH)}?",
    lambda r: f"Compare the {r.choice(ASPECTS)} of {r.choice(PRODUCTS)} and {r.choice(PRODUCTS)}",
    lambda r: f"{r.choice(TECH)} or {r.choice(TECH)}: which is better for analytics?",
    lambda r: f"What is {r.choice(TECH)} and how does it work?",
    lambda r: f"How do I {r.choice(ISSUES)} and {r.choice(ISSUES)}?",
    lambda r: (
        f"What was {r.choice(TOPICS)} in {r.choice(PLACES)} {r.choice(YEARS)} and how "
        "did wages change?"
    ),
    lambda r: (
        "What are the effects of caffeine on "
        + ", ".join(r.sample(EFFECTS, 2))
        + f", and {r.choice(EFFECTS)}?"
    ),
    lambda r: f"What are the causes and effects of {r.choice(TOPICS)}?",
    lambda r: f"What is the refund policy for {r.choice(PRODUCTS)}?",
    lambda r: f"Is {r.choice(PRODUCTS)} available in {r.choice(PLACES)}?",
    lambda r: f"How has {r.choice(TOPICS)} changed {r.choice(YEARS)}?",
    lambda r: f"Why was I charged twice for {r.choice(PRODUCTS)}?",
    lambda r: f"What is the standard warranty on Android phones from {r.choice(PLACES)}?",
    lambda r: f"Any news about {r.choice(PRODUCTS)}? Also, how do I {r.choice(ISSUES)}?",
]


def questions(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES)(rng) for _ in range(n)]


def clinc_utterances() -> list[str]:
    path = TEST_DATA / "clinc150" / "train_val.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return [u for split in ("train", "val") for u, _ in data[split]]


def labelled_quality(repeat: int) -> None:
    """Exact splits and invariant violations on the labelled set, and its questions/s."""
    entries = yaml.safe_load(LABELLED.read_text(encoding="utf-8"))
    decomposer = HeuristicDecomposer()
    per_domain: dict[str, list[int]] = {}
    violations = broken = 0
    misses: list[tuple[str, list[str], list[str]]] = []
    for entry in entries:
        question = entry["q"]
        expected = entry.get("subs", [question])
        got = decomposer.decompose(question)
        problems = decomposition_violations(question, got)
        violations += len(problems)
        broken += bool(problems)
        hit = got == expected
        if not hit:
            misses.append((question, got, expected))
        counts = per_domain.setdefault(entry["domain"], [0, 0])
        counts[0] += hit
        counts[1] += 1
    questions = [e["q"] for e in entries]
    cpu, _ = best(repeat, lambda: [decomposer.decompose(q) for q in questions * 20])
    n = len(entries)
    exact = sum(c[0] for c in per_domain.values())
    compound = sum(1 for e in entries if len(e.get("subs", [])) > 1)
    print(f"\nlabelled set: {n} questions ({compound} compound, {n - compound} single-intent), "
          f"{LABELLED.relative_to(REPO)}")
    print(f"{'domain':<12}{'questions':>10}{'exact splits':>14}")
    for domain, (hits, total) in sorted(per_domain.items()):
        print(f"{domain:<12}{total:>10}{hits / total:>14.1%}")
    print(f"{'all':<12}{n:>10}{exact / n:>14.1%}")
    print(f"invariant violations: {violations} (in {broken} questions)")
    for question, got, expected in misses:
        print(f"  miss: {question!r}\n        got      {got}\n        expected {expected}")
    rate = 20 * n / cpu
    print(f"decompose on the labelled set: {rate:,.0f} questions/s (CPU, best of {repeat})")
    ok = exact / n >= TARGET_EXACT and violations == 0 and rate >= TARGET_QPS
    print(f"targets (0 violations, >= {TARGET_EXACT:.0%} exact, >= {TARGET_QPS:,}/s): "
          f"{'met' if ok else 'MISSED'}")


def best(repeat: int, fn: Callable[[], Any]) -> tuple[float, float]:
    """Best (CPU seconds, wall seconds) of ``repeat`` runs of ``fn``."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


class NaiveRegexRouter:
    """The hand-written baseline: one whole-word regex per keyword and per pattern, routes
    tried in order, a pattern counting ``pattern_weight`` and too little evidence falling
    back, as in the router."""

    def __init__(self, router: KeywordRouter) -> None:
        self.routes = [
            (
                r.name,
                [re.compile(rf"(?<!\w){re.escape(k)}(?!\w)", re.IGNORECASE) for k in r.keywords],
                [re.compile(p, re.IGNORECASE) for p in r.patterns],
            )
            for r in router.routes
        ]
        self.default = router.default_route
        self.pattern_weight = router.pattern_weight
        self.min_evidence = router.min_evidence

    def route(self, query: str) -> str | None:
        best_name, best_hits = self.default, 0.0
        for name, keywords, patterns in self.routes:
            hits = sum(1.0 for rx in keywords if rx.search(query))
            hits += sum(self.pattern_weight for rx in patterns if rx.search(query))
            if hits > best_hits:
                best_name, best_hits = name, hits
        return best_name if best_hits >= self.min_evidence else self.default


def measure(label: str, qs: list[str], repeat: int) -> dict[str, float]:
    decomposer = HeuristicDecomposer()
    router = sample_router()
    block = MultiQueryRoutingPipeline(decomposer, router, max_sub_queries=4)
    passthrough = OnEmptyDecompositionPolicy.PASSTHROUGH

    decomposed = [decomposer.decompose(q) for q in qs]
    normalized = [
        normalize_sub_queries(q, s, max_sub_queries=4, on_empty=passthrough)
        for q, s in zip(qs, decomposed, strict=True)
    ]
    subs = [s for group in normalized for s in group]

    t_dec = best(repeat, lambda: [decomposer.decompose(q) for q in qs])
    t_norm = best(
        repeat,
        lambda: [
            normalize_sub_queries(q, s, max_sub_queries=4, on_empty=passthrough)
            for q, s in zip(qs, decomposed, strict=True)
        ],
    )
    t_route = best(repeat, lambda: [router.route_sync(s) for s in subs])
    naive = NaiveRegexRouter(router)
    t_naive = best(repeat, lambda: [naive.route(s) for s in subs])

    results: list[Any] = []

    async def run_block() -> None:
        # The run's outputs are kept out of the main task's result on purpose: on Python 3.11,
        # asyncio.Runner.run ends with signal.getsignal(), whose error message repr()s the
        # main task, result included (the whole output list, twice).
        results[:] = await block.build().run(qs)

    def end_to_end() -> None:
        anyio.run(run_block)

    t_e2e = best(repeat, end_to_end)
    broken = sum(1 for q, s in zip(qs, decomposed, strict=True) if decomposition_violations(q, s))
    assert len(results) == len(qs)
    assert sum(len(s.routing_plan) for s in results) == len(subs)
    fallbacks = sum(1 for s in results for r in s.routing_plan if r.fallback_reason)

    n = len(qs)
    overhead = tuple(
        max(e - d - m - r, 0.0) for e, d, m, r in zip(t_e2e, t_dec, t_norm, t_route, strict=True)
    )
    print(
        f"\n{label}: {n:,} questions -> {len(subs):,} sub-queries "
        f"({len(subs) / n:.2f} per question, {fallbacks / len(subs):.0%} routed by fallback)"
    )
    print(
        f"{'stage':<34}{'CPU s':>8}{'us/question':>13}{'questions/s':>13}"
        f"{'wall s':>9}{'questions/s':>13}"
    )
    rows = [
        ("decompose (HeuristicDecomposer)", t_dec),
        ("normalize", t_norm),
        ("route (KeywordRouter, all subs)", t_route),
        ("engine overhead", overhead),
        ("end to end (MultiQueryRouting)", t_e2e),
    ]
    for name, (cpu, wall) in rows:
        rate = f"{n / cpu:,.0f}" if cpu > 0 else "-"
        wall_rate = f"{n / wall:,.0f}" if wall > 0 else "-"
        print(f"{name:<34}{cpu:>8.3f}{cpu / n * 1e6:>13.1f}{rate:>13}{wall:>9.3f}{wall_rate:>13}")
    print(f"invariant violations: {broken} of {n:,} questions")
    print(
        f"router vs hand-written per-keyword regex baseline (CPU): "
        f"{len(subs) / t_route[0]:,.0f} vs {len(subs) / t_naive[0]:,.0f} sub-queries/s "
        f"(x{t_naive[0] / t_route[0]:.1f})"
    )
    return {
        "e2e_qps": n / t_e2e[0],
        "e2e_qps_wall": n / t_e2e[1],
        "decompose_qps": n / t_dec[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=[], choices=["semantic", "throughput"])
    args = parser.parse_args()

    print("# query planning benchmark")
    labelled_quality(args.repeat)
    if "throughput" not in args.skip:
        generated = measure("generated questions", questions(args.n), args.repeat)
        for label, rate in (("decompose", generated["decompose_qps"]),
                            ("end to end", generated["e2e_qps"])):
            verdict = "meets" if rate >= TARGET_QPS else "MISSES"
            print(f"{label} on one core (CPU time): {rate:,.0f} questions/s ({verdict} the "
                  f"target of {TARGET_QPS:,}/s)")
        print(f"wall clock on this (shared) machine, end to end: "
              f"{generated['e2e_qps_wall']:,.0f}/s")
    clinc = clinc_utterances()
    if "throughput" not in args.skip:
        measure("CLINC150 train+val utterances (real user queries)", clinc[: args.n], args.repeat)
    if "semantic" in args.skip:
        return
    try:
        import ragloom_semantic  # noqa: F401
    except ImportError:
        print("\nragloom-semantic not installed: CLINC150 calibration skipped")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_semantic import Clinc, print_calibration

    print_calibration(Clinc(TEST_DATA))


if __name__ == "__main__":
    main()
