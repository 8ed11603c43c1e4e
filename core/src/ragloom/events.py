"""Typed, immutable events emitted while a pipeline runs.

Observers subscribe on :class:`~ragloom.pipeline.Pipeline` (or through the ``ragloom_event``
plugin hook). Per-item events are emitted only for what is worth knowing about an item: a retry,
a failure, a cache hit or miss; the steady path emits nothing per item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "CacheHit",
    "CacheMiss",
    "CacheSkipped",
    "Event",
    "ItemFailed",
    "ItemRetried",
    "RunFinished",
    "RunStarted",
    "StepFinished",
    "StepStarted",
]


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of all events. ``kind`` is a short stable name for logs and JSON."""

    kind: ClassVar[str] = "event"
    run_id: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view of the event (exceptions become their type and message)."""
        out: dict[str, Any] = {"kind": self.kind}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, BaseException):
                value = f"{type(value).__name__}: {value}"
            elif hasattr(value, "model_dump"):
                value = value.model_dump(mode="json")
            out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    steps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    kind: ClassVar[str] = "run_finished"
    outputs: int = 0
    failed: int = 0
    seconds: float = 0.0
    aborted: bool = False


@dataclass(frozen=True, slots=True)
class StepStarted(Event):
    kind: ClassVar[str] = "step_started"
    step: str = ""
    event_name: str = ""


@dataclass(frozen=True, slots=True)
class StepFinished(Event):
    kind: ClassVar[str] = "step_finished"
    step: str = ""
    event_name: str = ""
    items_in: int = 0
    items_out: int = 0
    failed: int = 0
    retried: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ItemRetried(Event):
    kind: ClassVar[str] = "item_retried"
    step: str = ""
    item_id: str = ""
    attempt: int = 0
    delay: float = 0.0
    error: str = ""


@dataclass(frozen=True, slots=True)
class ItemFailed(Event):
    """An item that produced no output at a step, with the reason. Never a silent drop."""

    kind: ClassVar[str] = "item_failed"
    step: str = ""
    item_id: str = ""
    error_type: str = ""
    message: str = ""
    attempts: int = 0
    item: Any = field(default=None, compare=False, repr=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def reason(self) -> str:
        """``"ErrorType: message"``."""
        return f"{self.error_type}: {self.message}" if self.message else self.error_type

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "run_id": self.run_id,
            "step": self.step,
            "item_id": self.item_id,
            "error_type": self.error_type,
            "message": self.message,
            "attempts": self.attempts,
        }


@dataclass(frozen=True, slots=True)
class CacheHit(Event):
    kind: ClassVar[str] = "cache_hit"
    step: str = ""
    item_id: str = ""
    cache_id: str = ""
    outputs: int = 0


@dataclass(frozen=True, slots=True)
class CacheMiss(Event):
    kind: ClassVar[str] = "cache_miss"
    step: str = ""
    item_id: str = ""
    cache_id: str = ""


@dataclass(frozen=True, slots=True)
class CacheSkipped(Event):
    """A step runs without its cache in this run, and why (emitted once per step and run).

    For example: an argument of the step has no stable identity (give the step a
    ``cache_version``), or replaying it costs more than computing it again.
    """

    kind: ClassVar[str] = "cache_skipped"
    step: str = ""
    reason: str = ""
