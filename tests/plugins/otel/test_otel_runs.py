"""ragloom-otel through its hook: real pipelines traced and measured into the SDK's in-memory
exporter and reader, installed as the global providers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, SpanContext, StatusCode, TraceFlags
from otel_kit import Otel
from ragloom import (
    Document,
    FunctionStep,
    ItemProcessingError,
    Pipeline,
    Policy,
    SQLiteCacheStore,
)
from ragloom_otel import default_telemetry
from ragloom_text import RecursiveCharacterTextSplitter

TEXT = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"


def docs(*ids: str) -> list[Document]:
    return [Document(id=i, content=f"{i}: {TEXT}") for i in ids]


def by_name(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def step_metrics(values: dict[str, dict], step: str, event_name: str) -> dict[str, Any]:
    key = (("ragloom.step.event_name", event_name), ("ragloom.step.name", step))
    return {name: points[key] for name, points in values.items() if key in points}


def chunking() -> tuple[Pipeline, FunctionStep, RecursiveCharacterTextSplitter]:
    chunker = RecursiveCharacterTextSplitter(chunk_size=30)
    tag = FunctionStep(lambda chunk: chunk, name="Tag")(chunker)
    return Pipeline(tag), tag, chunker


def test_a_run_is_a_span_tree_with_its_counts(otel: Otel) -> None:
    pipeline, _tag, chunker = chunking()
    result = pipeline.run_sync(docs("a", "b", "c"))
    assert len(result) > 3 and not result.failed

    spans = otel.spans()
    (run,) = by_name(spans, "ragloom run")
    assert run.parent is None
    run_id = run.attributes["ragloom.run.id"]
    assert dict(run.attributes) == {
        "ragloom.run.id": run_id,
        "ragloom.run.steps": (chunker.name, "Tag"),
        "ragloom.run.outputs": len(result),
        "ragloom.run.failed": 0,
        "ragloom.run.aborted": False,
    }
    assert run.status.status_code is StatusCode.UNSET
    steps = {s.attributes["ragloom.step.name"]: s for s in children(spans, run)}
    assert set(steps) == {chunker.name, "Tag"}
    assert len(spans) == 3  # the run and its two steps: no span per item on the steady path
    for name, span in steps.items():
        stats = result.steps[name]
        assert span.name == f"ragloom step {name}"
        assert span.context.trace_id == run.context.trace_id
        assert dict(span.attributes) == {
            "ragloom.run.id": run_id,
            "ragloom.step.name": name,
            "ragloom.step.event_name": stats.event_name,
            "ragloom.step.items_in": stats.items_in,
            "ragloom.step.items_out": stats.items_out,
            "ragloom.step.failed": 0,
            "ragloom.step.retried": 0,
            "ragloom.step.cache_hits": 0,
            "ragloom.step.cache_misses": 0,
        }
        assert run.start_time <= span.start_time <= span.end_time <= run.end_time
    assert steps[chunker.name].attributes["ragloom.step.items_in"] == 3
    assert steps["Tag"].attributes["ragloom.step.items_out"] == len(result)

    values = otel.metrics()
    for name in (chunker.name, "Tag"):
        stats = result.steps[name]
        assert step_metrics(values, name, stats.event_name) == {
            "ragloom.step.items.in": stats.items_in,
            "ragloom.step.items.out": stats.items_out,
            "ragloom.step.items.failed": 0,
            "ragloom.step.retries": 0,
            "ragloom.step.cache.hits": 0,
            "ragloom.step.cache.misses": 0,
            "ragloom.step.duration": (1, stats.seconds),
        }
    ((key, (count, seconds)),) = values["ragloom.run.duration"].items()
    assert key == (("ragloom.run.aborted", False),) and count == 1 and seconds > 0
    assert default_telemetry().open_runs == 0


def validating(bad: set[str]) -> tuple[Pipeline, FunctionStep]:
    def validate(doc: Document) -> Document:
        if doc.id in bad:
            raise ValueError(f"{doc.id} is not allowed")
        return doc

    check = FunctionStep(validate, name="Validate")
    return Pipeline(RecursiveCharacterTextSplitter(chunk_size=30)(check)), check


def test_each_failed_item_is_a_span_under_its_step(otel: Otel) -> None:
    pipeline, _check = validating({"bad-1", "bad-2"})
    result = pipeline.run_sync(docs("ok-1", "bad-1", "ok-2", "bad-2"))
    assert [f.item_id for f in result.failed] == ["bad-1", "bad-2"]

    spans = otel.spans()
    (run,) = by_name(spans, "ragloom run")
    assert run.attributes["ragloom.run.failed"] == 2
    (validate,) = [s for s in children(spans, run) if s.name == "ragloom step Validate"]
    assert validate.attributes["ragloom.step.failed"] == 2
    failed = children(spans, validate)
    assert [s.name for s in failed] == ["ragloom failed item"] * 2
    assert [dict(s.attributes) for s in failed] == [
        {
            "ragloom.run.id": run.attributes["ragloom.run.id"],
            "ragloom.step.name": "Validate",
            "ragloom.item.id": item,
            "error.type": "ValueError",
            "ragloom.error.message": f"{item} is not allowed",
            "ragloom.item.attempts": 1,
        }
        for item in ("bad-1", "bad-2")
    ]
    for span in failed:
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == f"ValueError: {span.attributes['ragloom.item.id']} " \
            "is not allowed"
        assert validate.start_time <= span.start_time <= span.end_time <= validate.end_time

    values = otel.metrics()
    assert step_metrics(values, "Validate", result.steps["Validate"].event_name)[
        "ragloom.step.items.failed"
    ] == 2


def test_retries_are_span_events_and_counted(otel: Otel) -> None:
    attempts: dict[str, int] = {}

    def flaky(doc: Document) -> Document:
        attempts[doc.id] = attempts.get(doc.id, 0) + 1
        if doc.id.startswith("flaky") and attempts[doc.id] < 3:
            raise ConnectionError(f"try {attempts[doc.id]}")
        return doc

    step = FunctionStep(
        flaky, name="Flaky", policy=Policy(max_attempts=3, backoff=0, jitter=0)
    )
    result = Pipeline(step).run_sync(docs("flaky-1", "steady", "flaky-2"))
    assert len(result) == 3 and not result.failed
    assert result.steps["Flaky"].retried == 4

    (span,) = by_name(otel.spans(), "ragloom step Flaky")
    assert span.attributes["ragloom.step.retried"] == 4
    retries = [(e.name, dict(e.attributes)) for e in span.events]
    assert sorted(retries, key=lambda r: (r[1]["ragloom.item.id"], r[1]["ragloom.retry.attempt"])) \
        == [
            (
                "ragloom.retry",
                {
                    "ragloom.item.id": item,
                    "ragloom.retry.attempt": attempt,
                    "ragloom.retry.delay": 0.0,
                    "ragloom.retry.error": f"ConnectionError: try {attempt}",
                },
            )
            for item in ("flaky-1", "flaky-2")
            for attempt in (1, 2)
        ]
    values = otel.metrics()
    assert step_metrics(values, "Flaky", result.steps["Flaky"].event_name)[
        "ragloom.step.retries"
    ] == 4


def test_a_cached_run_counts_its_hits_and_misses(otel: Otel, tmp_path: Path) -> None:
    with SQLiteCacheStore(tmp_path / "cache.sqlite") as store:
        chunker = RecursiveCharacterTextSplitter(chunk_size=30, cache=store)
        first = Pipeline(chunker).run_sync(docs("a", "b", "c", "d"))
        second = Pipeline(chunker).run_sync(docs("a", "b", "c", "e"))
    assert (first.cache_hits, first.cache_misses) == (0, 4)
    assert (second.cache_hits, second.cache_misses) == (3, 1)

    spans = by_name(otel.spans(), f"ragloom step {chunker.name}")
    spans.sort(key=lambda s: s.start_time)
    assert [
        (s.attributes["ragloom.step.cache_hits"], s.attributes["ragloom.step.cache_misses"])
        for s in spans
    ] == [(0, 4), (3, 1)]
    values = otel.metrics()
    measured = step_metrics(values, chunker.name, first.steps[chunker.name].event_name)
    assert measured["ragloom.step.cache.hits"] == 3
    assert measured["ragloom.step.cache.misses"] == 5
    assert measured["ragloom.step.items.in"] == 8
    assert measured["ragloom.step.items.out"] == len(first) + len(second)
    assert measured["ragloom.step.duration"][0] == 2


def test_a_run_inside_an_application_span_is_its_child(otel: Otel) -> None:
    pipeline, _tag, _chunker = chunking()
    tracer = trace.get_tracer("app")
    with tracer.start_as_current_span("request") as request:
        pipeline.run_sync(docs("a"))
    (run,) = by_name(otel.spans(), "ragloom run")
    assert run.parent is not None and run.parent.span_id == request.get_span_context().span_id
    assert run.context.trace_id == request.get_span_context().trace_id


def test_a_run_under_an_unsampled_parent_records_no_span_but_its_metrics(otel: Otel) -> None:
    pipeline, _check = validating({"bad"})
    unsampled = NonRecordingSpan(
        SpanContext(
            trace_id=0x1234, span_id=0x5678, is_remote=True, trace_flags=TraceFlags(0)
        )
    )
    with trace.use_span(unsampled):
        result = pipeline.run_sync(docs("ok", "bad"))
    assert len(result.failed) == 1
    assert otel.spans() == []  # parent-based sampling: nothing of this run
    values = otel.metrics()
    assert step_metrics(values, "Validate", result.steps["Validate"].event_name)[
        "ragloom.step.items.failed"
    ] == 1
    assert default_telemetry().open_runs == 0


def test_an_aborted_run_ends_its_spans_as_errors_and_keeps_no_state(otel: Otel) -> None:
    def validate(doc: Document) -> Document:
        if doc.id == "bad":
            raise ValueError("not allowed")
        return doc

    check = FunctionStep(validate, name="Validate", policy=Policy(on_failure="abort"))
    pipeline = Pipeline(RecursiveCharacterTextSplitter(chunk_size=30)(check))
    with pytest.raises(ItemProcessingError, match="not allowed"):
        pipeline.run_sync(docs("ok", "bad", "late"))

    spans = otel.spans()
    (run,) = by_name(spans, "ragloom run")
    assert run.attributes["ragloom.run.aborted"] is True
    assert run.status.status_code is StatusCode.ERROR
    steps = children(spans, run)
    assert {s.attributes["ragloom.step.name"] for s in steps} == {
        "Validate", "RecursiveCharacterTextSplitter"
    }
    for span in steps:  # cut short: no counts, an error status saying why
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "the run ended before this step finished"
        assert span.end_time <= run.end_time
    assert default_telemetry().open_runs == 0
    ((key, (count, _seconds)),) = otel.metrics()["ragloom.run.duration"].items()
    assert key == (("ragloom.run.aborted", True),) and count == 1


def test_a_pipeline_that_opts_out_of_plugin_hooks_is_not_traced(otel: Otel) -> None:
    chunker = RecursiveCharacterTextSplitter(chunk_size=30)
    result = Pipeline(chunker, plugin_hooks=False).run_sync(docs("a"))
    assert len(result) > 1
    assert otel.spans() == []
    values = otel.metrics()  # steps seen before in this process count nothing more
    assert "ragloom.step.duration" not in values and "ragloom.run.duration" not in values
    for points in values.values():
        assert set(points.values()) == {0}
