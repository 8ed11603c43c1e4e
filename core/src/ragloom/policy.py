"""Execution policy: retries, backoff, timeout, concurrency and failure handling.

Every field of a :class:`Policy` may be left unset (``None``). Resolution is field by field: a
field set on the step wins; each unset field falls through to the enclosing router, then the
pipeline, then :data:`DEFAULT_POLICY`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields, replace
from typing import Literal

from .errors import ConfigurationError, InvalidInputError

__all__ = ["DEFAULT_POLICY", "FailureMode", "Policy"]

FailureMode = Literal["emit", "abort"]


@dataclass(frozen=True, slots=True)
class Policy:
    """How a step processes each item. ``None`` means "inherit this field".

    - ``max_attempts``: tries per item, the first included (default 1: no retry).
    - ``backoff``: delay in seconds before the first retry (default 0.1), multiplied by
      ``backoff_multiplier`` (default 2.0) per further retry, capped at ``backoff_max``
      (default 30.0), with up to ``jitter`` (default 0.1, a fraction) random spread.
    - ``retry_on``: exception types that are retried (default: any ``Exception``);
      :class:`~ragloom.errors.InvalidInputError` is never retried.
    - ``timeout``: seconds allowed for one attempt on one item; the item's work is cancelled
      when it runs out (default: none).
    - ``concurrency``: items of one step in flight at once (default 8). Output order always
      follows input order.
    - ``on_failure``: ``"emit"`` (default) emits an ``ItemFailed`` event and goes on;
      ``"abort"`` stops the run with an ``ItemProcessingError`` chained to the original error.
    """

    max_attempts: int | None = None
    backoff: float | None = None
    backoff_multiplier: float | None = None
    backoff_max: float | None = None
    jitter: float | None = None
    retry_on: tuple[type[BaseException], ...] | None = None
    timeout: float | None = None
    concurrency: int | None = None
    on_failure: FailureMode | None = None

    def __post_init__(self) -> None:
        def bad(name: str, why: str) -> ConfigurationError:
            return ConfigurationError(f"Policy.{name} {why}")

        for name, (kind, low, inclusive) in _LIMITS.items():
            value: float | None = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, kind):  # type: ignore[unreachable]
                what = "an integer" if kind is int else "a number"
                raise bad(name, f"must be {what}, got {value!r}")
            if value != value or value in (float("inf"), float("-inf")):
                raise bad(name, f"must be a finite number, got {value!r}")
            if value < low or (value == low and not inclusive):
                raise bad(name, f"must be {'>=' if inclusive else '>'} {low}, got {value}")
        if self.on_failure is not None and self.on_failure not in ("emit", "abort"):
            raise bad("on_failure", f"must be 'emit' or 'abort', got {self.on_failure!r}")
        if self.retry_on is not None:
            retry_on = tuple(self.retry_on)
            for exc_type in retry_on:
                if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
                    raise bad("retry_on", f"must hold exception types, got {exc_type!r}")
            object.__setattr__(self, "retry_on", retry_on)

    def merged_over(self, parent: Policy | None) -> Policy:
        """This policy's set fields over ``parent``'s (field by field)."""
        if parent is None:
            return self
        values = {}
        for f in fields(self):
            mine = getattr(self, f.name)
            values[f.name] = mine if mine is not None else getattr(parent, f.name)
        return Policy(**values)

    def resolved(self) -> Policy:
        """Every unset field filled from :data:`DEFAULT_POLICY`."""
        return self.merged_over(DEFAULT_POLICY)

    def explicit_fields(self) -> dict[str, object]:
        """The fields this policy sets, by name."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    def with_(self, **changes: object) -> Policy:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def is_retryable(self, error: BaseException) -> bool:
        """Whether ``error`` may be retried under this (resolved) policy."""
        if isinstance(error, InvalidInputError):
            return False
        retry_on = self.retry_on if self.retry_on is not None else (Exception,)
        return isinstance(error, retry_on)

    def delay_before(self, retry: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry); unset fields
        take :data:`DEFAULT_POLICY`'s values."""
        own = self.resolved() if None in (self.backoff, self.backoff_multiplier,
                                          self.backoff_max, self.jitter) else self
        base, mult = own.backoff or 0.0, own.backoff_multiplier or 1.0
        cap, jitter = own.backoff_max or 0.0, own.jitter or 0.0
        delay = min(cap, base * mult ** (retry - 1))
        if jitter and delay:
            delay *= 1 + jitter * (2 * (rng or random).random() - 1)
        return max(0.0, delay)


#: The rule of each numeric field: (type, lower bound, whether the bound itself is allowed).
_LIMITS: dict[str, tuple[type | tuple[type, ...], float, bool]] = {
    "max_attempts": (int, 1, True),
    "backoff": ((int, float), 0, True),
    "backoff_multiplier": ((int, float), 1, True),
    "backoff_max": ((int, float), 0, True),
    "jitter": ((int, float), 0, True),
    "timeout": ((int, float), 0, False),
    "concurrency": (int, 1, True),
}

DEFAULT_POLICY = Policy(
    max_attempts=1,
    backoff=0.1,
    backoff_multiplier=2.0,
    backoff_max=30.0,
    jitter=0.1,
    retry_on=(Exception,),
    timeout=None,
    concurrency=8,
    on_failure="emit",
)
