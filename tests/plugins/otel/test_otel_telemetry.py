"""``Telemetry`` subscribed to pipelines by hand (``plugin_hooks=False``), each with providers of
its own: sampling off, broken processors and exporters, concurrent runs, bounded state."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import aclosing
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import StatusCode
from otel_kit import collect, memory_providers
from ragloom import Document, FunctionStep, Pipeline, Policy
from ragloom_otel import Telemetry
from ragloom_text import RecursiveCharacterTextSplitter

TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi"


def docs(prefix: str, n: int, bad: Sequence[int] = ()) -> list[Document]:
    return [
        Document(id=f"{prefix}-{'bad' if k in bad else 'ok'}-{k}", content=f"{prefix} {k} {TEXT}")
        for k in range(n)
    ]


async def avalidate(doc: Document) -> Document:
    await anyio.sleep(0)  # a checkpoint: concurrent runs interleave here
    if "-bad-" in doc.id:
        raise ValueError(f"{doc.id} rejected")
    return doc


def validate(doc: Document) -> Document:
    if "-bad-" in doc.id:
        raise ValueError(f"{doc.id} rejected")
    return doc


def pipeline(telemetry: Telemetry, *, is_async: bool = False, **policy: Any) -> Pipeline:
    check = FunctionStep(avalidate if is_async else validate, name="Validate")
    chunker = RecursiveCharacterTextSplitter(chunk_size=30)(check)
    return Pipeline(
        chunker, observers=[telemetry], plugin_hooks=False, policy=Policy(**policy) or None
    )


def test_sampling_off_records_no_span_and_keeps_no_state() -> None:
    tracer_provider, exporter, meter_provider, reader = memory_providers(sampler=ALWAYS_OFF)
    telemetry = Telemetry(tracer_provider, meter_provider)
    result = pipeline(telemetry).run_sync(docs("s", 4, bad=[1]))
    assert len(result.failed) == 1
    assert exporter.get_finished_spans() == ()
    assert telemetry.open_runs == 0
    measured = collect(reader)  # metrics are not sampled
    assert sum(measured["ragloom.step.items.failed"].values()) == 1
    items_in = {
        dict(key)["ragloom.step.name"]: n for key, n in measured["ragloom.step.items.in"].items()
    }
    assert items_in == {"Validate": 4, "RecursiveCharacterTextSplitter": 3}
    assert measured["ragloom.run.duration"][(("ragloom.run.aborted", False),)][0] == 1


class Raising(SpanProcessor):
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("processor broke on start")

    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError("processor broke on end")


class RaisingOnEnd(SpanProcessor):
    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError("processor broke on end")


class BrokenExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        raise OSError("collector unreachable")


@pytest.mark.parametrize(
    "processor", [Raising(), RaisingOnEnd(), SimpleSpanProcessor(BrokenExporter())]
)
def test_a_broken_processor_or_exporter_never_breaks_the_run(
    processor: SpanProcessor, caplog: pytest.LogCaptureFixture
) -> None:
    tracer_provider, exporter, meter_provider, reader = memory_providers()
    tracer_provider.add_span_processor(processor)
    telemetry = Telemetry(tracer_provider, meter_provider)
    inputs = docs("x", 5, bad=[2, 4])
    expected = Pipeline(
        RecursiveCharacterTextSplitter(chunk_size=30)(FunctionStep(validate, name="Validate")),
        plugin_hooks=False,
    ).run_sync(inputs)
    with caplog.at_level(logging.WARNING, logger="ragloom.otel"):
        result = pipeline(telemetry).run_sync(inputs)
        again = pipeline(telemetry).run_sync(inputs)
    for got in (result, again):
        assert [c.model_dump() for c in got] == [c.model_dump() for c in expected]
        assert [f.item_id for f in got.failed] == ["x-bad-2", "x-bad-4"]
    assert telemetry.open_runs == 0
    measured = collect(reader)
    assert sum(measured["ragloom.step.items.failed"].values()) == 4
    if isinstance(processor, SimpleSpanProcessor):  # the SDK isolates exporters itself
        assert len(exporter.get_finished_spans()) == 2 * (1 + 2 + 2)
        return
    # Each kind of failure is reported once, naming what raised.
    warnings = [r.getMessage() for r in caplog.records if r.name == "ragloom.otel"]
    assert warnings, "the broken processor was not reported"
    assert len(warnings) == len(set(warnings))
    assert all("processor broke" in w and "telemetry goes on" in w for w in warnings)


def spans_by_run(spans: Sequence[ReadableSpan]) -> dict[str, dict[str, Any]]:
    """``{run id: {"run": span, "steps": {name: span}, "failed": {step: [item ids]}}}``,
    checking that every span sits under the span of its own run and step."""
    by_id = {s.context.span_id: s for s in spans}
    runs: dict[str, dict[str, Any]] = {}
    for span in spans:
        if span.name == "ragloom run":
            runs[span.attributes["ragloom.run.id"]] = {"run": span, "steps": {}, "failed": {}}
    for span in spans:
        if span.name.startswith("ragloom step "):
            parent = by_id[span.parent.span_id]
            run_id = span.attributes["ragloom.run.id"]
            assert parent is runs[run_id]["run"]
            runs[run_id]["steps"][span.attributes["ragloom.step.name"]] = span
    for span in spans:
        if span.name == "ragloom failed item":
            parent = by_id[span.parent.span_id]
            run_id = span.attributes["ragloom.run.id"]
            assert parent is runs[run_id]["steps"][span.attributes["ragloom.step.name"]]
            assert parent.context.trace_id == span.context.trace_id
            runs[run_id]["failed"].setdefault(span.attributes["ragloom.step.name"], []).append(
                span.attributes["ragloom.item.id"]
            )
    return runs


def check_runs(spans: Sequence[ReadableSpan], inputs: dict[str, list[Document]]) -> None:
    runs = spans_by_run(spans)
    assert len(runs) == len(inputs)
    assert len({r["run"].context.trace_id for r in runs.values()}) == len(inputs)
    seen: set[str] = set()
    for run in runs.values():
        steps = run["steps"]
        assert set(steps) == {"Validate", "RecursiveCharacterTextSplitter"}
        (prefix,) = {i.split("-")[0] for ids in run["failed"].values() for i in ids}
        seen.add(prefix)
        expected = [d.id for d in inputs[prefix] if "-bad-" in d.id]
        assert run["failed"] == {"Validate": expected}
        assert steps["Validate"].attributes["ragloom.step.items_in"] == len(inputs[prefix])
        assert steps["Validate"].attributes["ragloom.step.failed"] == len(expected)
    assert seen == set(inputs)


def test_concurrent_runs_in_threads_keep_their_spans_apart() -> None:
    tracer_provider, exporter, meter_provider, _reader = memory_providers()
    telemetry = Telemetry(tracer_provider, meter_provider)
    inputs = {f"t{k}": docs(f"t{k}", 6, bad=[k % 6, (k + 3) % 6]) for k in range(12)}

    def one(prefix: str) -> int:
        return len(pipeline(telemetry).run_sync(inputs[prefix]).failed)

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(one, inputs)) == [2] * len(inputs)
    check_runs(exporter.get_finished_spans(), inputs)
    assert telemetry.open_runs == 0


def test_concurrent_runs_in_tasks_keep_their_spans_apart(backend: str) -> None:
    tracer_provider, exporter, meter_provider, _reader = memory_providers()
    telemetry = Telemetry(tracer_provider, meter_provider)
    inputs = {f"a{k}": docs(f"a{k}", 6, bad=[k % 6]) for k in range(10)}

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for prefix in inputs:
                tasks.start_soon(pipeline(telemetry, is_async=True, concurrency=3).run,
                                 inputs[prefix])

    anyio.run(main, backend=backend)
    check_runs(exporter.get_finished_spans(), inputs)
    assert telemetry.open_runs == 0


def test_state_is_bounded_when_runs_never_finish(backend: str) -> None:
    tracer_provider, exporter, meter_provider, _reader = memory_providers()
    telemetry = Telemetry(tracer_provider, meter_provider, max_open_runs=2)

    async def main() -> None:
        streams = [
            aclosing(pipeline(telemetry).stream(docs(f"r{k}", 3))) for k in range(4)
        ]
        opened = [await stream.__aenter__() for stream in streams]
        for stream in opened:  # every run has started and released its first chunks
            await stream.__anext__()
        assert telemetry.open_runs == 2
        dropped = [s for s in exporter.get_finished_spans() if s.name == "ragloom run"]
        assert len(dropped) == 2  # the two oldest, ended as they were
        for span in dropped:
            assert span.attributes["ragloom.run.dropped"] is True
            assert span.status.status_code is StatusCode.ERROR
            assert "more than 2 were open" in span.status.description
        for stream in streams:  # the consumer gives up: aborted runs
            await stream.__aexit__(None, None, None)

    anyio.run(main, backend=backend)
    assert telemetry.open_runs == 0
    runs = [s for s in exporter.get_finished_spans() if s.name == "ragloom run"]
    assert len(runs) == 4  # a dropped run is not ended a second time
    outcomes = sorted(str(s.attributes.get("ragloom.run.aborted", "dropped")) for s in runs)
    assert outcomes == ["True", "True", "dropped", "dropped"]
    open_steps = [s for s in exporter.get_finished_spans() if s.name.startswith("ragloom step")]
    assert len(open_steps) == 4 * 2 and all(
        s.status.status_code is StatusCode.ERROR for s in open_steps
    )


def test_max_open_runs_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_open_runs must be an int >= 1, got 0"):
        Telemetry(max_open_runs=0)
