"""OpenTelemetry traces and metrics for every ragloom run.

Installed, this plugin observes every run (its ``ragloom_event`` hook): a span per run, per step
and per failed item, and counters and histograms per step, sent where the application's
global OpenTelemetry providers or the standard ``OTEL_*`` variables say. Importing this package
imports nothing from OpenTelemetry and sets nothing up: that happens at the first event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "OtelConfigurationError",
    "Telemetry",
    "default_telemetry",
    "meter_provider_from_env",
    "providers_from_env",
    "tracer_provider_from_env",
]

_LAZY = {
    "OtelConfigurationError": "._setup",
    "Telemetry": "._telemetry",
    "default_telemetry": "._telemetry",
    "meter_provider_from_env": "._setup",
    "providers_from_env": "._setup",
    "tracer_provider_from_env": "._setup",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom_otel' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from ._setup import (
        OtelConfigurationError,
        meter_provider_from_env,
        providers_from_env,
        tracer_provider_from_env,
    )
    from ._telemetry import Telemetry, default_telemetry
