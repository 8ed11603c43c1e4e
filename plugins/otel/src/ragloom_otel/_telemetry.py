"""Spans and metrics built from ragloom's events.

One span per run (started when ``RunStarted`` is observed, a child of whatever span is current
there), one per step (a child of its run's span, from ``StepStarted`` to ``StepFinished``), one
per failed item (a child of its step's span); retries and skipped caches are span events of
their step. Metrics come from ``StepFinished`` and ``RunFinished`` counts, so the steady path
(and every cache hit or miss) costs nothing per item.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ragloom.events import (
    CacheSkipped,
    ItemFailed,
    ItemRetried,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)

from ._setup import OtelConfigurationError, process_provider

__all__ = ["DURATION_BUCKETS", "SCOPE", "Telemetry", "default_telemetry"]

logger = logging.getLogger("ragloom.otel")

#: The instrumentation scope of every span and metric.
SCOPE = "ragloom_otel"

#: Bucket boundaries (seconds) advised for the duration histograms: steps and runs last from
#: milliseconds (a query) to an hour (a large ingestion).
DURATION_BUCKETS = (
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
    300.0, 600.0, 1800.0, 3600.0,
)

DEFAULT_MAX_OPEN_RUNS = 4096

#: The per-step counters: name, unit, description (in the order of the running totals).
COUNTERS = (
    ("ragloom.step.items.in", "{item}", "Items a step took in"),
    ("ragloom.step.items.out", "{item}", "Items a step released"),
    ("ragloom.step.items.failed", "{item}",
     "Items that failed at a step (each reported as an ItemFailed event)"),
    ("ragloom.step.retries", "{retry}", "Retried attempts at a step"),
    ("ragloom.step.cache.hits", "{item}", "Items a step replayed from its cache"),
    ("ragloom.step.cache.misses", "{item}", "Items a step looked up in its cache and computed"),
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragloom-otel")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "0"


class _Run:
    """What is known of one traced run: its span (and context) and its open step spans."""

    __slots__ = ("context", "span", "steps")

    def __init__(self, span: Any, context: Any) -> None:
        self.span = span
        self.context = context
        self.steps: dict[str, Any] = {}


class Telemetry:
    """An observer of ragloom events that turns them into OpenTelemetry spans and metrics.

    The ``ragloom_event`` hook of this plugin feeds :func:`default_telemetry` with the events
    of every run. An instance can also be subscribed to one pipeline by hand
    (``Pipeline(..., observers=[Telemetry(tracer_provider=...)])``).

    Args:
        tracer_provider: where spans go. By default (``None``), resolved at the first event:
            the global ``TracerProvider`` when the application set one; otherwise one built
            from the ``OTEL_*`` variables when ``OTEL_TRACES_EXPORTER`` names an exporter;
            otherwise the global proxy (nothing recorded until the application sets one).
        meter_provider: where metrics go, resolved the same way (``OTEL_METRICS_EXPORTER``).
        max_open_runs: how many traced runs may be open at once. Beyond it, the oldest open
            run's spans are ended (status error, ``ragloom.run.dropped``) and its state is
            dropped: a run that never finishes cannot make memory grow.

    Nothing is imported from OpenTelemetry or set up before the first event. A span or metric
    call that raises (a broken exporter or processor) is reported once on the
    ``ragloom.otel`` logger and never reaches the run; only sampled runs keep state, and a run
    that is not sampled costs one sampler decision and its metrics.
    """

    def __init__(
        self,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        *,
        max_open_runs: int = DEFAULT_MAX_OPEN_RUNS,
    ) -> None:
        if not isinstance(max_open_runs, int) or max_open_runs < 1:
            raise ValueError(f"max_open_runs must be an int >= 1, got {max_open_runs!r}")
        self.max_open_runs = max_open_runs
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._lock = threading.Lock()
        self._ready = False
        self._runs: dict[str, _Run] = {}
        self._reported: set[str] = set()
        #: ``(step, event_name) -> (metric attributes, running totals of COUNTERS)``.
        self._totals: dict[tuple[str, str], tuple[dict[str, str], list[int]]] = {}
        self._handlers: dict[type, Callable[[Any], None]] = {
            RunStarted: self._run_started,
            StepStarted: self._step_started,
            StepFinished: self._step_finished,
            ItemFailed: self._item_failed,
            ItemRetried: self._item_retried,
            CacheSkipped: self._cache_skipped,
            RunFinished: self._run_finished,
        }

    # -- public ----------------------------------------------------------------------------

    def __call__(self, event: Any) -> None:
        """Observe one event (any other object is ignored)."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        if not self._ready:
            self._start()
        handler(event)

    @property
    def open_runs(self) -> int:
        """How many traced runs have started and not finished."""
        return len(self._runs)

    # -- setup -----------------------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._ready:
                return
            from opentelemetry import metrics, trace

            version = _version()
            tracer_provider = self._tracer_provider
            if tracer_provider is None:
                tracer_provider = self._resolve("traces", trace.get_tracer_provider())
            meter_provider = self._meter_provider
            if meter_provider is None:
                meter_provider = self._resolve("metrics", metrics.get_meter_provider())
            self._tracer = tracer_provider.get_tracer(SCOPE, version)
            self._set_span_in_context = trace.set_span_in_context
            from opentelemetry.trace import Status, StatusCode

            self._status = Status
            self._error = StatusCode.ERROR
            meter = meter_provider.get_meter(SCOPE, version)
            # Counters are observed: each step's counts are added up here when it finishes
            # (a few integer additions) and handed to the SDK when a reader collects.
            for index, (name, unit, description) in enumerate(COUNTERS):
                meter.create_observable_counter(
                    name, callbacks=[self._observer(index)], unit=unit, description=description
                )
            self._step_seconds = meter.create_histogram(
                "ragloom.step.duration", unit="s",
                description="Time from a step's start to its end in one run",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._run_seconds = meter.create_histogram(
                "ragloom.run.duration", unit="s", description="Duration of a run",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._ready = True

    def _observer(self, index: int) -> Callable[[Any], list[Any]]:
        """The callback of the ``index``-th counter: one observation per step seen so far."""
        from opentelemetry.metrics import Observation

        def observe(_options: Any) -> list[Any]:
            with self._lock:
                return [
                    Observation(counts[index], attributes)
                    for attributes, counts in self._totals.values()
                ]

        return observe

    def _resolve(self, signal: str, global_provider: Any) -> Any:
        """The application's global provider when it set one, else the one the ``OTEL_*``
        variables describe, else the global proxy (which follows a provider set later)."""
        if not _is_proxy(global_provider):
            return global_provider
        try:
            own = process_provider(signal)
        except OtelConfigurationError as exc:
            self._report(f"configuring {signal}", exc, outcome=f"no {signal} are exported")
            return global_provider
        return global_provider if own is None else own

    def _report(self, what: str, exc: BaseException, outcome: str = "telemetry goes on") -> None:
        """Warn once per kind of failure; telemetry never fails a run."""
        key = f"{what}:{type(exc).__name__}"
        if key in self._reported:
            return
        self._reported.add(key)
        logger.warning("ragloom-otel: %s raised %s: %s; %s", what, type(exc).__name__, exc,
                       outcome)

    # -- events ----------------------------------------------------------------------------

    def _run_started(self, event: RunStarted) -> None:
        try:
            span = self._tracer.start_span(
                "ragloom run",
                attributes={"ragloom.run.id": event.run_id, "ragloom.run.steps": event.steps},
            )
            if not span.is_recording():
                return
            run = _Run(span, self._set_span_in_context(span))
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("starting a run span", exc)
            return
        dropped: list[_Run] = []
        with self._lock:
            earlier = self._runs.pop(event.run_id, None)
            if earlier is not None:
                dropped.append(earlier)
            self._runs[event.run_id] = run
            while len(self._runs) > self.max_open_runs:
                dropped.append(self._runs.pop(next(iter(self._runs))))
        for old in dropped:
            self._drop(old)

    def _step_started(self, event: StepStarted) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return
        try:
            run.steps[event.step] = self._tracer.start_span(
                f"ragloom step {event.step}",
                context=run.context,
                attributes={
                    "ragloom.run.id": event.run_id,
                    "ragloom.step.name": event.step,
                    "ragloom.step.event_name": event.event_name,
                },
            )
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("starting a step span", exc)

    def _step_finished(self, event: StepFinished) -> None:
        key = (event.step, event.event_name)
        with self._lock:
            totals = self._totals.get(key)
            if totals is None:
                attributes = {"ragloom.step.name": key[0], "ragloom.step.event_name": key[1]}
                totals = self._totals[key] = (attributes, [0] * len(COUNTERS))
            counts = totals[1]
            counts[0] += event.items_in
            counts[1] += event.items_out
            counts[2] += event.failed
            counts[3] += event.retried
            counts[4] += event.cache_hits
            counts[5] += event.cache_misses
        try:
            self._step_seconds.record(event.seconds, totals[0])
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("recording step metrics", exc)
        run = self._runs.get(event.run_id)
        if run is None:
            return
        span = run.steps.pop(event.step, None)
        if span is None:
            return
        try:
            span.set_attributes(
                {
                    "ragloom.step.items_in": event.items_in,
                    "ragloom.step.items_out": event.items_out,
                    "ragloom.step.failed": event.failed,
                    "ragloom.step.retried": event.retried,
                    "ragloom.step.cache_hits": event.cache_hits,
                    "ragloom.step.cache_misses": event.cache_misses,
                }
            )
            span.end()
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("ending a step span", exc)

    def _parent(self, run: _Run, step: str) -> Any:
        """The span context for what happened to an item at ``step``: the step's span when it
        is open, else the run's."""
        span = run.steps.get(step)
        return run.context if span is None else self._set_span_in_context(span)

    def _item_failed(self, event: ItemFailed) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return
        try:
            span = self._tracer.start_span(
                "ragloom failed item",
                context=self._parent(run, event.step),
                attributes={
                    "ragloom.run.id": event.run_id,
                    "ragloom.step.name": event.step,
                    "ragloom.item.id": event.item_id,
                    "error.type": event.error_type,
                    "ragloom.error.message": event.message,
                    "ragloom.item.attempts": event.attempts,
                },
            )
            span.set_status(self._status(self._error, event.reason))
            span.end()
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("recording a failed item", exc)

    def _span_event(self, run_id: str, step: str, name: str, attributes: dict[str, Any]) -> None:
        run = self._runs.get(run_id)
        if run is None:
            return
        span = run.steps.get(step, run.span)
        try:
            span.add_event(name, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report(f"adding a {name!r} span event", exc)

    def _item_retried(self, event: ItemRetried) -> None:
        self._span_event(
            event.run_id,
            event.step,
            "ragloom.retry",
            {
                "ragloom.item.id": event.item_id,
                "ragloom.retry.attempt": event.attempt,
                "ragloom.retry.delay": event.delay,
                "ragloom.retry.error": event.error,
            },
        )

    def _cache_skipped(self, event: CacheSkipped) -> None:
        self._span_event(
            event.run_id,
            event.step,
            "ragloom.cache_skipped",
            {"ragloom.cache.reason": event.reason},
        )

    def _run_finished(self, event: RunFinished) -> None:
        try:
            self._run_seconds.record(event.seconds, {"ragloom.run.aborted": event.aborted})
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("recording run metrics", exc)
        with self._lock:
            run = self._runs.pop(event.run_id, None)
        if run is None:
            return
        self._end_steps(run, "the run ended before this step finished")
        try:
            span = run.span
            span.set_attributes(
                {
                    "ragloom.run.outputs": event.outputs,
                    "ragloom.run.failed": event.failed,
                    "ragloom.run.aborted": event.aborted,
                }
            )
            if event.aborted:
                span.set_status(self._status(self._error, "the run was aborted"))
            span.end()
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("ending a run span", exc)

    def _end_steps(self, run: _Run, why: str) -> None:
        """End the step spans still open in ``run`` (status error, ``why``)."""
        while True:
            try:
                _name, span = run.steps.popitem()
            except KeyError:
                return
            try:
                span.set_status(self._status(self._error, why))
                span.end()
            except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
                self._report("ending a step span", exc)

    def _drop(self, run: _Run) -> None:
        """Stop tracking ``run`` (too many open runs): end its spans as they are."""
        why = f"ragloom-otel stopped tracking this run: more than {self.max_open_runs} were open"
        self._end_steps(run, why)
        try:
            run.span.set_attribute("ragloom.run.dropped", True)
            run.span.set_status(self._status(self._error, why))
            run.span.end()
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a run
            self._report("ending a run span", exc)


def _is_proxy(provider: Any) -> bool:
    """Whether ``provider`` is the API's stand-in for a global provider not set yet."""
    from opentelemetry import trace

    if isinstance(provider, trace.ProxyTracerProvider):
        return True
    try:
        from opentelemetry.metrics._internal import _ProxyMeterProvider
    except ImportError:  # pragma: no cover - a future API moved it
        return type(provider).__name__ == "_ProxyMeterProvider"
    return isinstance(provider, _ProxyMeterProvider)


_default_lock = threading.Lock()
_default: Telemetry | None = None


def default_telemetry() -> Telemetry:
    """The process-wide :class:`Telemetry` the plugin's ``ragloom_event`` hook feeds."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Telemetry()
    return _default
