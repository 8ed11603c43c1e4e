"""The SDK's in-memory span exporter and metric reader, installed as the global providers once
per test session (that is also how an application that already uses OpenTelemetry integrates)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("ragloom_otel", reason="ragloom-otel is not installed")

from opentelemetry import metrics, trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from otel_kit import DELTA, Gate, Otel  # noqa: E402


@pytest.fixture(scope="session")
def global_otel() -> Otel:
    """The in-memory exporter and reader, installed as the global providers once per session."""
    exporter = InMemorySpanExporter()
    gate = Gate(SimpleSpanProcessor(exporter))
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(gate)
    reader = InMemoryMetricReader(preferred_temporality=DELTA)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    assert trace.get_tracer_provider() is tracer_provider, "a global provider was set before"
    return Otel(exporter, reader, gate)


@pytest.fixture
def otel(global_otel: Otel) -> Iterator[Otel]:
    """The global providers, reset for this test."""
    global_otel.reset()
    global_otel.gate.open = True
    yield global_otel
    global_otel.gate.open = False
    global_otel.reset()


@pytest.fixture(params=["asyncio", "trio"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each anyio backend (trio's cases are skipped where trio is not installed)."""
    if request.param == "trio":
        pytest.importorskip("trio")
    return str(request.param)
