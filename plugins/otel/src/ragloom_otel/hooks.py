"""The plugin's hook module (entry point ``ragloom.plugins: otel``).

Imported when a pipeline is built; it imports nothing from OpenTelemetry. The first event of
the first run sets telemetry up (:func:`ragloom_otel.default_telemetry`).
"""

from __future__ import annotations

from typing import Any

from ragloom.plugins.hookspecs import hookimpl

_observe: Any = None


@hookimpl
def ragloom_event(event: Any) -> None:
    global _observe
    observe = _observe
    if observe is None:
        from ._telemetry import default_telemetry

        observe = _observe = default_telemetry()
    observe(event)
