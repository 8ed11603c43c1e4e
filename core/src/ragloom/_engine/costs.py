"""A cache that never costs: caching is skipped for steps that are cheaper to recompute.

On a run that computes items for a cached step, the engine measures what each computed item
cost and what the cache work around it cost (keys, reads, encoding, writes). Once it has seen
:data:`COST_SAMPLE` items it records a decision in the store, keyed by the step's cache
identity: ``"skip"`` when recomputing is cheaper than that cache work, else ``"keep"``. A later
run that replays the step measures what a replay really costs per item and turns a ``"keep"``
into ``"skip"`` when replaying is dearer than the recorded recompute. Runs of a step decided
``"skip"`` run it without the cache (a ``CacheSkipped`` event says why). A step configured with
``cache_mode="always"`` is always cached; ``ragloom cache clear`` forgets the decisions. The
environment variable ``RAGLOOM_CACHE_MODE`` (``auto`` or ``always``) sets the default mode.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import TypedDict

__all__ = [
    "COST_SAMPLE", "Costs", "Decision", "clock", "decisions_for", "mode_of", "skip_reason",
]

#: Computed items a run must have measured before it records a decision for a step.
COST_SAMPLE = 32
#: The clock costs are measured with (tests replace it with a controllable one).
clock: Callable[[], float] = time.perf_counter


class Decision(TypedDict, total=False):
    """A cost decision as a store records it (read back as JSON: any field may be missing)."""

    #: ``"skip"``: recomputing is cheaper than replaying; ``"keep"``: it is not.
    replay: str
    compute_us: float
    replay_us: float
    #: Computed items the decision was measured on.
    items: int
    #: When it was measured (seconds since the epoch).
    measured: float
    #: The step's class identity and name, for ``ragloom cache info``.
    step: str
    name: str


class Costs:
    """What computing and caching one step's items cost in this run."""

    __slots__ = ("compute", "computed", "overhead", "touched")

    def __init__(self) -> None:
        self.compute = 0.0
        self.computed = 0
        self.overhead = 0.0
        self.touched = 0

    def record(self, *, compute: float, computed: int, overhead: float, touched: int) -> None:
        self.compute += compute
        self.computed += computed
        self.overhead += overhead
        self.touched += touched

    def decision(self, prior: Decision | None) -> Decision | None:
        """The decision to record after this run (``None``: nothing new to record).

        Without a ``prior`` decision: from computed items (recompute cost against the cache
        work around them). With a ``"keep"`` one and a run that only replayed: the measured
        replay cost against the recorded recompute cost.
        """
        if prior is None:
            if self.computed < COST_SAMPLE or not self.touched:
                return None
            compute_us = 1e6 * self.compute / self.computed
            overhead_us = 1e6 * self.overhead / self.touched
            return _decision(compute_us, overhead_us, self.computed)
        if prior.get("replay") != "keep" or self.computed or self.touched < COST_SAMPLE:
            return None
        compute_us = float(prior.get("compute_us", 0.0))
        replay_us = 1e6 * self.overhead / self.touched
        if replay_us <= compute_us:
            return None
        return _decision(compute_us, replay_us, int(prior.get("items", 0)))


def _decision(compute_us: float, replay_us: float, items: int) -> Decision:
    return {
        "replay": "skip" if compute_us < replay_us else "keep",
        "compute_us": round(compute_us, 3),
        "replay_us": round(replay_us, 3),
        "items": items,
        "measured": round(time.time(), 3),
    }


def mode_of(step: object) -> str:
    """A step's cache mode: its own, else ``$RAGLOOM_CACHE_MODE``, else ``"auto"``."""
    mode = getattr(step, "cache_mode", None)
    if mode is None:
        mode = os.environ.get("RAGLOOM_CACHE_MODE", "auto").strip().lower() or "auto"
    return "always" if mode == "always" else "auto"


def decisions_for(store: object, identities: list[str]) -> dict[str, Decision]:
    """The recorded decisions of ``identities`` in ``store`` (none when it records none)."""
    get = getattr(store, "get_decisions", None)
    if get is None or not identities:
        return {}
    try:
        found: dict[str, Decision] = get(identities)
    except Exception:  # noqa: BLE001 - a store that cannot say: keep caching
        return {}
    return found


def record(store: object, identity: str, decision: Decision, step_name: str) -> None:
    put = getattr(store, "put_decision", None)
    if put is None:
        return
    try:
        put(identity, decision)
    except Exception as exc:  # noqa: BLE001 - a read-only store: nothing learned, no harm
        logging.getLogger("ragloom").info("%s: cost decision not recorded: %s", step_name, exc)
        return
    logging.getLogger("ragloom").info(
        "%s: recomputing costs %.1f us per item, replaying about %.1f us: cache %s",
        step_name, decision["compute_us"], decision["replay_us"],
        "skipped from now on" if decision["replay"] == "skip" else "kept",
    )


def skip_reason(decision: Decision | None) -> str | None:
    """Why caching is skipped under ``decision`` (``None``: it is not)."""
    if not decision or decision.get("replay") != "skip":
        return None
    return (
        f"recomputing it costs {decision.get('compute_us', 0):.1f} us per item and replaying "
        f"about {decision.get('replay_us', 0):.1f} us, so it runs without the cache "
        "(cache_mode='always' keeps it cached; `ragloom cache clear` forgets this)"
    )
