"""Helpers of the ragloom-otel tests: the SDK's in-memory exporter and reader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

#: Every collection reports what changed since the previous one.
DELTA = {
    Counter: AggregationTemporality.DELTA,
    ObservableCounter: AggregationTemporality.DELTA,
    Histogram: AggregationTemporality.DELTA,
}


class Gate(SpanProcessor):
    """Passes finished spans on only while open: the global provider sees every pipeline of the
    test process, and only the spans of the test that asked for them are kept."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.open = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.open:
            self.inner.on_end(span)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@dataclass
class Otel:
    """What the global providers recorded; :meth:`reset` forgets it (each test starts clean)."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    gate: Gate

    def reset(self) -> None:
        self.exporter.clear()
        self.reader.get_metrics_data()  # delta temporality: collecting drains

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def metrics(self) -> dict[str, dict[tuple[tuple[str, Any], ...], Any]]:
        """``{metric name: {sorted attributes: value}}`` recorded since the last call (a
        counter's sum; a histogram's ``(count, sum)``)."""
        return collect(self.reader)


def collect(reader: InMemoryMetricReader) -> dict[str, dict[tuple[tuple[str, Any], ...], Any]]:
    out: dict[str, dict[tuple[tuple[str, Any], ...], Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = out.setdefault(metric.name, {})
                for point in metric.data.data_points:
                    key = tuple(sorted(point.attributes.items()))
                    if hasattr(point, "bucket_counts"):
                        points[key] = (point.count, point.sum)
                    else:
                        points[key] = point.value
    return out


def memory_providers(**tracer_options: Any) -> tuple[TracerProvider, InMemorySpanExporter,
                                                     MeterProvider, InMemoryMetricReader]:
    """A fresh SDK tracer provider exporting synchronously to memory, and a meter provider with
    an in-memory reader (delta temporality)."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(**tracer_options)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader(preferred_temporality=DELTA)
    return tracer_provider, exporter, MeterProvider(metric_readers=[reader]), reader
