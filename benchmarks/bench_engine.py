"""Engine overhead: items/s through three trivial steps, ragloom vs peers and hand loops.

Peers (benchmark only):  pip install llama-index-core haystack-ai

Run:  python benchmarks/bench_engine.py [--items 200000] [--haystack-items 10000] [--repeat 5]
      python benchmarks/bench_engine.py --only plugin-chunker,text-chunker --repeat 9
      python benchmarks/bench_engine.py --profile ragloom-async-c16   # cProfile one case

Every case does the same work: each of three steps bumps a counter in the item's metadata dict
and passes the item on; every output is checked (count, order, counter == 3). ragloom runs with
an observer subscribed (events on), no cache, at concurrency 1 and 16, in three flavours:

- sync: ``FunctionStep`` over a plain function (never awaits: runs inline at any concurrency);
- async: ``PipelineStep`` subclasses whose ``transform`` is an async generator that awaits
  nothing (at concurrency 16 they go through the worker pool);
- asyncfn: ``FunctionStep`` over an ``async def`` function that awaits nothing.

Floors: hand-written async loops doing the same work the same way: calling three functions,
draining three async generators, or awaiting three coroutine functions per item.

Peers: LlamaIndex ``IngestionPipeline`` with three ``TransformComponent``s (one call over the whole
node list; with its default transformation cache and without it), Haystack ``Pipeline`` with
three components (one ``run`` per item, its per-request mode; and one ``run`` over a list).
Cases are measured in interleaved rounds and the best round of each is kept, so that load on a
shared machine skews every case alike.

The documented path against first-party steps doing the same work (no peers involved):

- ``plugin-step-c1``: three ``PipelineStep`` subclasses written as ``ragloom.step`` tells an
  author (a plain ``transform(self, item, context)`` returning the item), against
  ``ragloom-sync-c1`` (three first-party ``FunctionStep``s);
- ``plugin-chunker``: a ``Chunker`` subclass written as ``docs/plugins/writing-a-plugin.md``
  shows (``step_id``, ``config()``, a ``split`` generator yielding a ``ChunkSpan`` per
  ``--chunk-size`` characters), against ``text-chunker``: ragloom-text's
  ``RecursiveCharacterTextSplitter`` with ``separators=[""]``, which cuts the same spans, over
  ``--docs`` documents of about 2,000 characters. Both are lossless (every result's coverage
  checked) and their chunks are checked equal. The target is >= 0.9 x the first-party rate.

With ragloom-otel installed (``pip install -e plugins/otel``), the SDK's providers are installed
as the global ones (parent-based always-on sampler, a batch span processor and a periodic metric
reader, both exporting to a sink that only counts), so every ragloom row runs traced except the
``-nohooks`` rows (``plugin_hooks=False``) and the ``-hooks`` rows (every installed plugin's
hooks but ragloom-otel's). ``-otel`` against ``-hooks`` is what tracing costs; ``-hooks``
against ``-nohooks`` what the plugin system costs per pipeline:

- ``ragloom-sync-c1-*``: the three trivial sync steps, one run of ``--items``;
- ``ragloom-runs100-*``: the same steps, runs of 100 items (per-run costs);
- ``ragloom-1ms-*``: one step that sleeps 1 ms per item (``--slow-items``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pstats
import random
import statistics
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("LLAMA_INDEX_CACHE_DIR", "/tmp/llama_index_cache")

from ragloom import (  # noqa: E402
    Chunker,
    ChunkSpan,
    Document,
    Event,
    ExecutionContext,
    FunctionStep,
    IterableSource,
    Pipeline,
    PipelineStep,
    Policy,
)


class Item:
    """A minimal item: a metadata dict, like a node's or a document's."""

    __slots__ = ("metadata",)

    def __init__(self, i: int) -> None:
        self.metadata = {"i": i, "n": 0}


def bump(item: Any) -> Any:
    item.metadata["n"] += 1
    return item


async def abump(item: Any) -> Any:
    item.metadata["n"] += 1
    return item


async def agen_bump(item: Any) -> AsyncIterator[Any]:
    item.metadata["n"] += 1
    yield item


def check(outputs: Any, n: int) -> None:
    outputs = list(outputs)
    if len(outputs) != n:
        raise AssertionError(f"expected {n} outputs, got {len(outputs)}")
    step = max(1, n // 97)
    for k in range(0, n, step):
        meta = outputs[k].metadata
        if meta["i"] != k or meta["n"] != 3:
            raise AssertionError(f"output {k} is wrong: {meta}")


# -- ragloom -------------------------------------------------------------------------------


class AsyncBump(PipelineStep[Any]):
    """An async transform step that awaits nothing."""

    output_model = None

    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        item.metadata["n"] += 1
        yield item


class PluginBump(PipelineStep[Any]):
    """A step as the step contract tells an author to write one: a plain ``transform``."""

    output_model = None

    def transform(self, item: Any, context: ExecutionContext) -> Any:
        item.metadata["n"] += 1
        return item


def plugin_steps(items: list[Any]) -> Any:
    """Three :class:`PluginBump` steps at concurrency 1 (the twin of ``ragloom-sync-c1``)."""
    node: PipelineStep[Any] = IterableSource(items)
    for k in range(3):
        node = PluginBump(name=f"s{k}")(node)
    events: list[Event] = []
    pipeline = Pipeline(node, policy=Policy(concurrency=1), observers=[events.append])
    result = asyncio.run(pipeline.run())
    if not events or result.failed:
        raise AssertionError("events were not observed, or items failed")
    return result


# -- the documented chunker against ragloom-text's ------------------------------------------


class FixedChunker(Chunker):
    """A chunker written as docs/plugins/writing-a-plugin.md shows: ``split`` yields exact spans
    of ``chunk_size`` characters."""

    step_id = "bench/fixed"
    lossless = True  # like ragloom-text's chunkers: every result's coverage is checked

    def __init__(self, chunk_size: int = 100, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.chunk_size = chunk_size

    def config(self) -> dict[str, int]:
        return {"chunk_size": self.chunk_size}

    def split(self, document: Document) -> Iterator[ChunkSpan]:
        size = self.chunk_size
        n = len(document.content)
        for start in range(0, n, size):
            yield ChunkSpan(start, min(start + size, n))


WORDS = ("retrieval", "augmented", "generation", "chunk", "of", "the", "a", "pipeline", "step")


def documents(items: list[Any]) -> list[Document]:
    """One document of about 2,000 characters (300 words) per item."""
    rng = random.Random(len(items))
    return [
        Document(
            id=f"doc{i}",
            content=" ".join(rng.choices(WORDS, k=300)),
            metadata={"source": f"file{i}.txt"},
        )
        for i in range(len(items))
    ]


def chunker_case(make: Callable[[], Chunker]) -> Callable[[list[Any]], Any]:
    def run(docs: list[Any]) -> Any:
        events: list[Event] = []
        step = make()(IterableSource(docs))
        pipeline = Pipeline(step, policy=Policy(concurrency=1), observers=[events.append])
        result = asyncio.run(pipeline.run())
        if not events or result.failed:
            raise AssertionError("events were not observed, or items failed")
        return result

    return run


def text_chunker(chunk_size: int) -> Callable[[], Chunker] | None:
    try:
        from ragloom_text import RecursiveCharacterTextSplitter
    except ImportError:
        return None
    return lambda: RecursiveCharacterTextSplitter(chunk_size, 0, separators=[""])


def check_chunks(chunk_size: int) -> Callable[[Any, int], None]:
    """Chunks of ``documents(n)`` cut every ``chunk_size`` characters: count, ids, spans."""

    def check_them(outputs: Any, n: int) -> None:
        outputs = list(outputs)
        docs = documents([None] * n)
        expected = [
            (f"{d.id}#{k}", start, min(start + chunk_size, len(d.content)), d.metadata)
            for d in docs
            for k, start in enumerate(range(0, len(d.content), chunk_size))
        ]
        if len(outputs) != len(expected):
            raise AssertionError(f"expected {len(expected)} chunks, got {len(outputs)}")
        for k in range(0, len(expected), max(1, len(expected) // 97)):
            chunk = outputs[k]
            if (chunk.id, chunk.start, chunk.end, chunk.metadata) != expected[k]:
                raise AssertionError(f"chunk {k} is wrong: {chunk!r}")

    return check_them


def hooks_options(hooks: str) -> dict[str, Any]:
    """Pipeline options: ``"on"`` the installed plugins' hooks (the default), ``"off"``
    ``plugin_hooks=False``, ``"no-otel"`` every installed plugin's hooks but ragloom-otel's
    (a registry built per pipeline, as the default one is)."""
    if hooks == "off":
        return {"plugin_hooks": False}
    if hooks == "no-otel":
        from ragloom.plugins import Registry

        return {"registry": Registry(disabled=["ragloom-otel"])}
    return {}


def ragloom_case(flavour: str, concurrency: int, hooks: str = "on") -> Callable[[list[Any]], Any]:
    def run(items: list[Any]) -> Any:
        if flavour == "sync":
            steps: list[PipelineStep[Any]] = [FunctionStep(bump, name=f"s{k}") for k in range(3)]
        elif flavour == "asyncfn":
            steps = [FunctionStep(abump, name=f"s{k}") for k in range(3)]
        else:
            steps = [AsyncBump(name=f"s{k}") for k in range(3)]
        node: PipelineStep[Any] = IterableSource(items)
        for step in steps:
            node = step(node)
        events: list[Event] = []
        pipeline = Pipeline(
            node,
            policy=Policy(concurrency=concurrency),
            observers=[events.append],
            **hooks_options(hooks),
        )
        result = asyncio.run(pipeline.run())
        if not events or result.failed:
            raise AssertionError("events were not observed, or items failed")
        return result

    return run


def ragloom_runs(size: int, hooks: str) -> Callable[[list[Any]], Any]:
    """The three sync steps over ``items`` in runs of ``size`` items (one pipeline per run)."""
    one = ragloom_case("sync", 1, hooks)

    def run(items: list[Any]) -> Any:
        out: list[Any] = []
        for start in range(0, len(items), size):
            out.extend(one(items[start : start + size]))
        return out

    return run


def slow_bump(item: Any) -> Any:
    time.sleep(0.001)
    item.metadata["n"] += 3  # the three bumps check() expects, in one step costing 1 ms
    return item


def ragloom_slow(hooks: str) -> Callable[[list[Any]], Any]:
    """One step costing 1 ms per item."""

    def run(items: list[Any]) -> Any:
        events: list[Event] = []
        step = FunctionStep(slow_bump, name="slow")(IterableSource(items))
        pipeline = Pipeline(
            step, policy=Policy(concurrency=1), observers=[events.append], **hooks_options(hooks)
        )
        result = asyncio.run(pipeline.run())
        if not events or result.failed:
            raise AssertionError("events were not observed, or items failed")
        return result

    return run


# -- ragloom-otel --------------------------------------------------------------------------


class Sink:
    """Where the benchmark's spans and metrics go: counted, then dropped."""

    spans = 0
    exports = 0


def otel_setup() -> str | None:
    """Install the SDK's providers as the global ones when ragloom-otel is installed; returns a
    line naming the versions (``None`` when ragloom-otel is not installed)."""
    try:
        import ragloom_otel  # noqa: F401
    except ImportError:
        return None
    from importlib.metadata import version

    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        MetricExporter,
        MetricExportResult,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Spans(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            Sink.spans += len(spans)
            return SpanExportResult.SUCCESS

    class Metrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 0, **kw: Any) -> Any:
            Sink.exports += 1
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 0) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 0, **kw: Any) -> None:
            return None

    tracer_provider = TracerProvider()  # the SDK's default sampler: parent-based, always on
    tracer_provider.add_span_processor(BatchSpanProcessor(Spans()))
    trace.set_tracer_provider(tracer_provider)
    reader = PeriodicExportingMetricReader(Metrics(), export_interval_millis=1000)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return (
        f"ragloom-otel {version('ragloom-otel')}, opentelemetry-sdk "
        f"{version('opentelemetry-sdk')}: tracing on (parent-based always-on sampler, batch span "
        "processor), metrics read every second; every ragloom row but -nohooks and -hooks is traced"
    )


def otel_flush() -> None:
    from opentelemetry import metrics, trace

    trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]
    metrics.get_meter_provider().force_flush()  # type: ignore[attr-defined]


# -- hand-written loops --------------------------------------------------------------------


def hand_sync(items: list[Any]) -> Any:
    async def main() -> list[Any]:
        f1 = f2 = f3 = bump
        return [f3(f2(f1(item))) for item in items]

    return asyncio.run(main())


def hand_agen(items: list[Any]) -> Any:
    """The floor for async-generator steps: the same three generators, driven by hand."""

    async def main() -> list[Any]:
        out: list[Any] = []
        for item in items:
            for a in [x async for x in agen_bump(item)]:
                for b in [x async for x in agen_bump(a)]:
                    out.extend([x async for x in agen_bump(b)])
        return out

    return asyncio.run(main())


def hand_async(items: list[Any]) -> Any:
    async def main() -> list[Any]:
        f1 = f2 = f3 = abump
        out = []
        for item in items:
            out.append(await f3(await f2(await f1(item))))
        return out

    return asyncio.run(main())


# -- LlamaIndex ----------------------------------------------------------------------------


def llama_nodes(items: list[Any]) -> list[Any]:
    from llama_index.core.schema import TextNode

    return [TextNode(text="x", id_=str(it.metadata["i"]), metadata=it.metadata) for it in items]


def llama_runner(cache: bool) -> Callable[[list[Any]], Any] | None:
    try:
        from llama_index.core.ingestion import IngestionPipeline
        from llama_index.core.schema import TransformComponent
    except ImportError:
        return None

    class Bump(TransformComponent):  # type: ignore[misc]
        def __call__(self, nodes: Any, **kwargs: Any) -> Any:
            for node in nodes:
                node.metadata["n"] += 1
            return nodes

    def run(nodes: list[Any]) -> Any:
        pipeline = IngestionPipeline(
            transformations=[Bump(), Bump(), Bump()], disable_cache=not cache
        )
        return pipeline.run(nodes=nodes, show_progress=False)

    return run


# -- Haystack ------------------------------------------------------------------------------


def haystack_pipeline(batch: bool) -> Any:
    from haystack import Pipeline as HPipeline
    from haystack import component

    if batch:

        @component
        class BumpAll:
            @component.output_types(items=list)
            def run(self, items: list) -> dict[str, Any]:  # type: ignore[type-arg]
                for item in items:
                    item.metadata["n"] += 1
                return {"items": items}

        make: Any = BumpAll
        socket = "items"
    else:

        @component
        class BumpOne:
            @component.output_types(item=Any)
            def run(self, item: Any) -> dict[str, Any]:
                item.metadata["n"] += 1
                return {"item": item}

        make = BumpOne
        socket = "item"
    pipe = HPipeline()
    for name in ("a", "b", "c"):
        pipe.add_component(name, make())
    pipe.connect(f"a.{socket}", f"b.{socket}")
    pipe.connect(f"b.{socket}", f"c.{socket}")
    return pipe, socket


def haystack_case(batch: bool) -> Callable[[list[Any]], Any] | None:
    try:
        import haystack  # noqa: F401
    except ImportError:
        return None

    def run(items: list[Any]) -> Any:
        pipe, socket = haystack_pipeline(batch)
        if batch:
            return pipe.run({"a": {socket: items}})["c"][socket]
        return [pipe.run({"a": {socket: item}})["c"][socket] for item in items]

    return run


# -- driver --------------------------------------------------------------------------------


def measure_once(
    run: Callable[[list[Any]], Any],
    n: int,
    prepare: Callable[[list[Any]], Any],
    checker: Callable[[Any, int], None] = check,
) -> float:
    """items/s of one run (fresh items, built outside the timing; outputs checked)."""
    items = prepare([Item(i) for i in range(n)])
    gc.collect()
    started = time.perf_counter()
    outputs = run(items)
    elapsed = time.perf_counter() - started
    checker(outputs, n)
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--haystack-items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slow-items", type=int, default=500, help="items of the 1 ms step")
    parser.add_argument("--docs", type=int, default=5_000, help="documents of the chunker rows")
    parser.add_argument("--chunk-size", type=int, default=100, help="characters per chunk")
    parser.add_argument("--profile", metavar="CASE", help="cProfile one case and print the top")
    parser.add_argument(
        "--only", metavar="CASES", help="comma-separated cases to run (default: all)"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    same: Callable[[list[Any]], Any] = lambda items: items  # noqa: E731
    cases: list[tuple[str, Callable[[list[Any]], Any] | None, int, Any]] = [
        ("hand-loop-sync", hand_sync, args.items, same),
        ("hand-loop-async", hand_async, args.items, same),
        ("hand-loop-agen", hand_agen, args.items, same),
        ("ragloom-sync-c1", ragloom_case("sync", 1), args.items, same),
        ("ragloom-sync-c16", ragloom_case("sync", 16), args.items, same),
        ("ragloom-async-c1", ragloom_case("async", 1), args.items, same),
        ("ragloom-async-c16", ragloom_case("async", 16), args.items, same),
        ("ragloom-asyncfn-c1", ragloom_case("asyncfn", 1), args.items, same),
        ("ragloom-asyncfn-c16", ragloom_case("asyncfn", 16), args.items, same),
        ("llamaindex-nocache", llama_runner(False), args.items, llama_nodes),
        ("llamaindex-cache", llama_runner(True), args.items // 10, llama_nodes),
        ("haystack-per-item", haystack_case(False), args.haystack_items, same),
        ("haystack-one-run", haystack_case(True), args.items // 10, same),
        ("plugin-step-c1", plugin_steps, args.items, same),
    ]
    size = args.chunk_size
    make_text = text_chunker(size)
    chunk_cases: list[tuple[str, Callable[[list[Any]], Any] | None, int, Any]] = [
        ("plugin-chunker", chunker_case(lambda: FixedChunker(size)), args.docs, documents),
        ("text-chunker", chunker_case(make_text) if make_text else None, args.docs, documents),
    ]
    checkers: dict[str, Callable[[Any, int], None]] = {
        name: check_chunks(size) for name, *_rest in chunk_cases
    }
    cases += chunk_cases
    otel = otel_setup()
    if otel is not None:
        for hooks in ("off", "no-otel", "on"):
            suffix = {"off": "nohooks", "no-otel": "hooks", "on": "otel"}[hooks]
            cases += [
                (f"ragloom-sync-c1-{suffix}", ragloom_case("sync", 1, hooks), args.items, same),
                (f"ragloom-runs100-{suffix}", ragloom_runs(100, hooks), args.items // 10, same),
                (f"ragloom-1ms-{suffix}", ragloom_slow(hooks), args.slow_items, same),
            ]

    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {c[0] for c in cases}
        if unknown:
            parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c[0] in wanted]

    if args.profile:
        name, run, n, prepare = next(c for c in cases if c[0] == args.profile)
        assert run is not None
        items = prepare([Item(i) for i in range(n)])
        profiler = cProfile.Profile()
        profiler.enable()
        checkers.get(name, check)(run(items), n)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return

    # Rounds over all cases (best of each), so a burst of load on a shared machine hits every
    # case alike rather than skewing the ratios.
    results: dict[str, tuple[float, int]] = {}
    rates: dict[str, list[float]] = {}
    for name, run, _n, _prepare in cases:
        if run is None:
            print(f"{name}: skipped (not installed)", file=sys.stderr)
    for _ in range(args.repeat):
        for name, run, n, prepare in cases:
            if run is not None:
                rate = measure_once(run, n, prepare, checkers.get(name, check))
                rates.setdefault(name, []).append(rate)
                results[name] = (max(rate, results.get(name, (0.0, n))[0]), n)

    report(results, args.repeat)
    report_documented(results, rates)
    if otel is not None:
        otel_flush()
        report_otel(otel, rates)


CHUNKER_ROWS = ("plugin-chunker", "text-chunker")
#: Each step written the documented way, and the first-party step doing the same work.
DOCUMENTED_TWINS = {"plugin-step-c1": "ragloom-sync-c1", "plugin-chunker": "text-chunker"}


def report_documented(results: dict[str, tuple[float, int]], rates: dict[str, list[float]]) -> None:
    """The documented way to write a step against the first-party step doing the same work."""
    print()
    for name, twin in DOCUMENTED_TWINS.items():
        if name not in results or twin not in results:
            continue
        best = results[name][0] / results[twin][0]
        median = statistics.median(rates[name]) / statistics.median(rates[twin])
        verdict = "ok" if best >= 0.9 else "MISSED"
        print(
            f"target {name} >= 0.9 x {twin}: best {best:.2f}, median {median:.2f} "
            f"({results[name][0]:,.0f} vs {results[twin][0]:,.0f} items/s) ({verdict})"
        )


OTEL_TARGETS = {"ragloom-sync-c1": 0.25, "ragloom-runs100": None, "ragloom-1ms": 0.03}


def report_otel(setup: str, rates: dict[str, list[float]]) -> None:
    """What tracing costs: each -otel row against its -hooks row (the same pipelines with every
    other plugin hook), and what the plugin system costs: -hooks against -nohooks."""
    print()
    print(setup)
    print(f"spans exported: {Sink.spans:,}; metric exports: {Sink.exports}")
    for base, target in OTEL_TARGETS.items():
        for what, off_row, on_row in (
            ("otel overhead", "hooks", "otel"),
            ("hooks overhead", "nohooks", "hooks"),
        ):
            off, on = rates.get(f"{base}-{off_row}"), rates.get(f"{base}-{on_row}")
            if not off or not on:
                continue
            best = max(off) / max(on) - 1
            median = statistics.median(off) / statistics.median(on) - 1
            line = (
                f"{what:<14} {base:<16} best {best:+7.1%}  median {median:+7.1%}  "
                f"({max(off):,.0f} -> {max(on):,.0f} items/s)"
            )
            if target is not None and what == "otel overhead":
                line += f"  target <= {target:.0%}: {'ok' if best <= target else 'MISSED'}"
            print(line)


FLOORS = {
    "ragloom-sync": "hand-loop-sync",
    "plugin-step": "hand-loop-sync",
    "ragloom-async": "hand-loop-agen",
    "ragloom-asyncfn": "hand-loop-async",
}


def floor_of(name: str) -> str:
    """The hand loop doing the same work the same way (sync calls, generators, coroutines)."""
    if name.startswith("hand-loop"):
        return name
    return FLOORS.get(name.rsplit("-", 1)[0], "hand-loop-sync")


def versions() -> dict[str, str]:
    """The versions of ragloom and of the peers this run measured (those installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str] = {}
    for dist in ("ragloom", "ragloom-text", "llama-index-core", "haystack-ai"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return found


def report(results: dict[str, tuple[float, int]], repeat: int) -> None:
    peers = {k: v for k, v in results.items() if k.startswith(("llamaindex", "haystack"))}
    best_peer = max(peers.items(), key=lambda kv: kv[1][0], default=None)
    print(
        f"python {sys.version.split()[0]}, best of {repeat} runs, events on for ragloom; "
        + ", ".join(f"{d} {v}" for d, v in versions().items())
    )
    header = (
        f"{'case':<20} {'items':>8} {'items/s':>12} {'vs its floor':>13} "
        f"{'vs LlamaIndex':>14} {'vs Haystack/item':>17}"
    )
    print(header)
    print("-" * len(header))
    llama = results.get("llamaindex-nocache", (0.0, 0))[0]
    hay = results.get("haystack-per-item", (0.0, 0))[0]
    for name, (rate, n) in results.items():
        if name in CHUNKER_ROWS:  # documents in, chunks out: compared with each other only
            print(f"{name:<20} {n:>8} {rate:>12,.0f} " + f"{'docs/s':>13}")
            continue
        floor = results.get(floor_of(name), (0.0, 0))[0]
        cols = [f"{rate / floor:12.2f}x" if floor else f"{'-':>13}"]
        cols.append(f"{rate / llama:13.2f}x" if llama else f"{'-':>14}")
        cols.append(f"{rate / hay:16.2f}x" if hay else f"{'-':>17}")
        print(f"{name:<20} {n:>8} {rate:>12,.0f} " + " ".join(cols))
    print("(floor: hand-loop-sync for sync steps, -agen for async-generator steps, -async for")
    print(" async def functions; peers are compared with hand-loop-sync)")
    print()
    for name in ("ragloom-sync-c1", "ragloom-async-c1", "ragloom-asyncfn-c1"):
        floor_name = floor_of(name)
        if name in results and floor_name in results:
            ratio = results[name][0] / results[floor_name][0]
            verdict = "ok" if ratio >= 0.5 else "MISSED"
            print(f"target {name} >= 0.5 x {floor_name}: {ratio:.2f} ({verdict})")
    if best_peer is not None:
        peer_name, (peer_rate, _n) = best_peer
        for name in sorted(k for k in results if k.startswith("ragloom")):
            ratio = results[name][0] / peer_rate
            verdict = "ok" if ratio > 1 else "MISSED"
            print(f"target {name} ahead of every peer: {ratio:.2f} x {peer_name} ({verdict})")


if __name__ == "__main__":
    main()
