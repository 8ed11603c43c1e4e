"""Tracer and meter providers described by the standard ``OTEL_*`` environment variables.

Only what the variables name is built: no exporter unless ``OTEL_TRACES_EXPORTER`` or
``OTEL_METRICS_EXPORTER`` names one (never a network exporter by default). Exporters are found
by name in the entry-point groups OpenTelemetry packages register them under
(``opentelemetry_traces_exporter``, ``opentelemetry_metrics_exporter``): ``console`` comes with
the SDK, ``otlp`` with ``opentelemetry-exporter-otlp``. ``console`` writes to standard error:
standard output belongs to the command's own (often machine-readable) output.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from ragloom.errors import ConfigurationError

__all__ = [
    "OtelConfigurationError",
    "meter_provider_from_env",
    "providers_from_env",
    "tracer_provider_from_env",
]

TRACES_GROUP = "opentelemetry_traces_exporter"
METRICS_GROUP = "opentelemetry_metrics_exporter"
DEFAULT_SERVICE_NAME = "ragloom"


class OtelConfigurationError(ConfigurationError):
    """An ``OTEL_*`` variable names something that is not installed or cannot be used."""


def _names(value: str | None) -> list[str]:
    """Exporter names of a comma-separated variable (``none`` and blanks left out)."""
    names = [part.strip().lower() for part in (value or "").split(",")]
    return [name for name in names if name and name != "none"]


def _load_exporter(group: str, name: str, variable: str) -> Any:
    found = entry_points(group=group, name=name)
    if not found:
        known = sorted({ep.name for ep in entry_points(group=group)})
        raise OtelConfigurationError(
            f"{variable} names the exporter {name!r}, which no installed package provides "
            f"(installed: {', '.join(known) or 'none'}; e.g. 'otlp' comes with "
            "opentelemetry-exporter-otlp)"
        )
    (entry_point,) = tuple(found)[:1]
    try:
        return entry_point.load()
    except Exception as exc:
        raise OtelConfigurationError(
            f"{variable}: the exporter {name!r} ({entry_point.value}) cannot be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _disabled(environ: Mapping[str, str]) -> bool:
    return environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def _resource() -> Any:
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    return resource


def tracer_provider_from_env(environ: Mapping[str, str] | None = None) -> Any:
    """An SDK ``TracerProvider`` exporting to what ``OTEL_TRACES_EXPORTER`` names (each through
    a ``BatchSpanProcessor``, tuned by ``OTEL_BSP_*``), sampling as ``OTEL_TRACES_SAMPLER`` and
    ``OTEL_TRACES_SAMPLER_ARG`` say (parent-based, always on, by default); ``None`` when no
    exporter is named or the SDK is disabled."""
    environ = os.environ if environ is None else environ
    names = _names(environ.get("OTEL_TRACES_EXPORTER"))
    if not names or _disabled(environ):
        return None
    exporters = [_load_exporter(TRACES_GROUP, name, "OTEL_TRACES_EXPORTER") for name in names]
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=_resource())  # the sampler comes from OTEL_TRACES_SAMPLER
    for name, exporter in zip(names, exporters, strict=True):
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, exporter)))
    return provider


def _exporter(name: str, factory: Any) -> Any:
    """An exporter instance; ``console`` writes to standard error, not standard output, so
    that a command's machine-readable output (``--json``) stays alone on standard output."""
    if name == "console":
        try:
            return factory(out=sys.stderr)
        except TypeError:  # a console exporter of another make, without ``out``
            pass
    return factory()


def meter_provider_from_env(environ: Mapping[str, str] | None = None) -> Any:
    """An SDK ``MeterProvider`` reading into what ``OTEL_METRICS_EXPORTER`` names (an exporter
    through a ``PeriodicExportingMetricReader``, tuned by ``OTEL_METRIC_EXPORT_INTERVAL``, or a
    reader such as Prometheus' as it is); ``None`` when none is named or the SDK is disabled."""
    environ = os.environ if environ is None else environ
    names = _names(environ.get("OTEL_METRICS_EXPORTER"))
    if not names or _disabled(environ):
        return None
    classes = [_load_exporter(METRICS_GROUP, name, "OTEL_METRICS_EXPORTER") for name in names]
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader

    readers = [
        cls() if isinstance(cls, type) and issubclass(cls, MetricReader)
        else PeriodicExportingMetricReader(_exporter(name, cls))
        for name, cls in zip(names, classes, strict=True)
    ]
    return MeterProvider(metric_readers=readers, resource=_resource())


def providers_from_env(environ: Mapping[str, str] | None = None) -> tuple[Any, Any]:
    """``(tracer_provider, meter_provider)`` as the ``OTEL_*`` variables describe them, each
    ``None`` when its variable names no exporter.

    Raises:
        OtelConfigurationError: an exporter is named that no installed package provides, or
            that cannot be imported.
    """
    return tracer_provider_from_env(environ), meter_provider_from_env(environ)


_process_lock = threading.Lock()
_process: dict[str, Any] = {}


def process_provider(signal: str) -> Any:
    """The ``"traces"`` or ``"metrics"`` provider of :func:`providers_from_env` for
    ``os.environ``, built once per process (every :class:`~ragloom_otel.Telemetry` without
    providers of its own shares one set of exporters); a configuration error is raised again on
    every call."""
    with _process_lock:
        if signal not in _process:
            build = tracer_provider_from_env if signal == "traces" else meter_provider_from_env
            try:
                _process[signal] = build()
            except OtelConfigurationError as exc:
                _process[signal] = exc
        found = _process[signal]
    if isinstance(found, OtelConfigurationError):
        raise found
    return found
