"""Configuration by the standard OTEL_* variables, and nothing of OpenTelemetry before a run."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased
from ragloom import Document, Pipeline
from ragloom_otel import OtelConfigurationError, Telemetry, providers_from_env
from ragloom_text import RecursiveCharacterTextSplitter


def test_no_exporter_named_builds_nothing() -> None:
    assert providers_from_env({}) == (None, None)
    assert providers_from_env({"OTEL_TRACES_EXPORTER": "none"}) == (None, None)
    named = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}
    assert providers_from_env({**named, "OTEL_SDK_DISABLED": "true"}) == (None, None)


def test_exporters_sampler_and_service_name_come_from_the_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0.25")
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    tracer_provider, meter_provider = providers_from_env(
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}
    )
    try:
        assert isinstance(tracer_provider, TracerProvider)
        assert isinstance(meter_provider, MeterProvider)
        sampler = tracer_provider.sampler
        assert isinstance(sampler, ParentBased)
        assert sampler.get_description().startswith("ParentBased{root:TraceIdRatioBased{0.25}")
        assert tracer_provider.resource.attributes["service.name"] == "ragloom"
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()

    monkeypatch.setenv("OTEL_SERVICE_NAME", "ingest-worker")
    tracer_provider, _ = providers_from_env({"OTEL_TRACES_EXPORTER": "console"})
    try:
        assert tracer_provider.resource.attributes["service.name"] == "ingest-worker"
    finally:
        tracer_provider.shutdown()


@pytest.mark.parametrize("variable", ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"])
def test_an_exporter_that_is_not_installed_is_named(variable: str) -> None:
    with pytest.raises(OtelConfigurationError) as caught:
        providers_from_env({variable: "console, zipkin-json"})
    message = str(caught.value)
    assert f"{variable} names the exporter 'zipkin-json'" in message
    assert "installed: console" in message


@pytest.mark.parametrize("sampler, spans", [("always_off", 0), ("parentbased_always_on", 2)])
def test_sampling_from_the_variables(
    monkeypatch: pytest.MonkeyPatch, sampler: str, spans: int
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", sampler)
    tracer_provider, _ = providers_from_env({"OTEL_TRACES_EXPORTER": "console"})
    memory = InMemorySpanExporter()  # beside the console exporter, to read what was sampled
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    telemetry = Telemetry(tracer_provider)
    pipeline = Pipeline(
        RecursiveCharacterTextSplitter(chunk_size=20), observers=[telemetry], plugin_hooks=False
    )
    try:
        result = pipeline.run_sync([Document(id="a", content="one two three four five six")])
    finally:
        tracer_provider.shutdown()
    assert len(result) > 1
    assert len(memory.get_finished_spans()) == spans  # the run and its step, or nothing
    assert telemetry.open_runs == 0


def test_nothing_of_opentelemetry_is_imported_before_a_run_that_uses_the_hooks() -> None:
    code = (
        "import sys\n"
        "from ragloom import Document, Pipeline\n"
        "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
        "import ragloom_otel, ragloom_otel.hooks\n"
        "def otel(): return sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "docs = [Document(id='a', content='one two three four five six')]\n"
        "assert otel() == [], otel()\n"
        "Pipeline(R(chunk_size=10), plugin_hooks=False).run_sync(docs)\n"
        "assert otel() == [], otel()\n"
        "Pipeline(R(chunk_size=10)).run_sync(docs)\n"
        "assert 'opentelemetry.trace' in otel(), otel()\n"
        "assert 'opentelemetry.sdk.trace' not in otel(), otel()  # nothing configured\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_providers_set_after_the_first_run_are_followed() -> None:
    code = (
        "from opentelemetry import metrics, trace\n"
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.metrics.export import InMemoryMetricReader\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "from ragloom import Document, Pipeline\n"
        "from ragloom_text import RecursiveCharacterTextSplitter as R\n"
        "docs = [Document(id='a', content='one two three four five six')]\n"
        "Pipeline(R(chunk_size=10)).run_sync(docs)  # nothing configured yet\n"
        "exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()\n"
        "tracer_provider = TracerProvider()\n"
        "tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(tracer_provider)\n"
        "metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))\n"
        "Pipeline(R(chunk_size=10)).run_sync(docs)\n"
        "names = sorted(s.name for s in exporter.get_finished_spans())\n"
        "assert names == ['ragloom run', 'ragloom step RecursiveCharacterTextSplitter'], names\n"
        "data = reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics\n"
        "items_in = {m.name: m for m in data}['ragloom.step.items.in'].data.data_points\n"
        "assert [p.value for p in items_in] == [2], items_in  # both runs are counted\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "args",
    [["plan", "how do I clear the cache", "--json"], ["ingest", "docs", "-o", "o.jsonl",
                                                       "--no-cache", "--json"]],
    ids=["plan", "ingest"],
)
def test_the_console_exporter_leaves_json_output_alone_on_stdout(tmp_path, args) -> None:
    """``OTEL_TRACES_EXPORTER=console`` (and metrics) write to stderr: ``--json`` stays
    parseable on stdout, and the spans are still exported."""
    import json
    import os

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Some words about caches.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="console",
        RAGLOOM_DISABLE_PLUGINS="ragloom-docling",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", *args], cwd=tmp_path, capture_output=True,
        text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and isinstance(json.loads(lines[0]), dict), proc.stdout
    assert '"name": "ragloom run"' in proc.stderr  # the spans went to stderr
