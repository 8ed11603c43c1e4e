"""The SDK's in-memory span exporter and metric reader, installed as the global providers once
per test session (that is also how an application that already uses OpenTelemetry integrates)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("ragloom_otel", reason="ragloom-otel is not installed")

from opentelemetry import metrics, trace  # noqa: E402
from otel_kit import Otel, memory_providers  # noqa: E402


@pytest.fixture(scope="session")
def global_otel() -> Otel:
    """The in-memory exporter and reader, installed as the global providers once per session."""
    tracer_provider, exporter, meter_provider, reader = memory_providers()
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    assert trace.get_tracer_provider() is tracer_provider, "a global provider was set before"
    return Otel(exporter, reader)


@pytest.fixture
def otel(global_otel: Otel) -> Iterator[Otel]:
    """The global providers, reset for this test."""
    global_otel.reset()
    yield global_otel
    global_otel.reset()


@pytest.fixture(params=["asyncio", "trio"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each anyio backend (trio's cases are skipped where trio is not installed)."""
    if request.param == "trio":
        pytest.importorskip("trio")
    return str(request.param)
