"""Running a step through its cache: hits replayed, misses computed and written, per window.

Items are read from the store in windows of at most ``cache_window`` (independent of the
concurrency). An item's key combines the config hash of the step that handles it (a routed
item: the leaf it routes to) with its identity and content hash. A hit is replayed only after
that step's ``validate_input`` accepts the item. Only items that succeeded are written, each with
all of its outputs. An item's entry waits from the moment the item is finished (not the end of
its window): entries are written in batches, one transaction each, as soon as an item finishes
a second or more after the last write (or :data:`FLUSH_ENTRIES` are waiting), when the step
ends or is stopped (an exception, a cancellation), and on SIGTERM (:mod:`.sigterm`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, cast

from ..events import CacheHit, CacheMiss, CacheSkipped
from . import costs, sigterm
from .calls import Failure, Result, WindowCall, item_id
from .costs import Costs, Decision
from .protocols import C, Item, RunContext, RunStats, RunStore, StepInfo
from .routing import Routing

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..cache.base import CacheEntry

__all__ = ["cached_results"]

#: Cache entries are written at least this often while a cached step runs (and at its end).
FLUSH_SECONDS = 1.0
#: The clock of those writes (a monotonic one; tests replace it with a controllable one).
flush_clock: Callable[[], float] = time.monotonic
#: ...or as soon as this many entries are waiting.
FLUSH_ENTRIES = 1024


#: Warnings already logged by this process: a run in several segments (an ingest), or several
#: runs of one pipeline, log each once (each run still emits its ``CacheSkipped`` event).
_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """Log ``message`` as a warning of the ``ragloom`` logger, once per process."""
    if message not in _WARNED:
        _WARNED.add(message)
        logging.getLogger("ragloom").warning("%s", message)


class _PendingWrites:
    """Finished items' cache entries not yet written, per store."""

    __slots__ = ("count", "lock", "notes", "read_only", "since", "stores")

    def __init__(self) -> None:
        self.stores: dict[int, tuple[RunStore, list[CacheEntry]]] = {}
        self.count = 0
        self.since = flush_clock()
        #: Held while entries are added or written: a SIGTERM writes from another thread.
        self.lock = threading.Lock()
        #: Stores found read-only: they are still read, no longer written.
        self.read_only: set[int] = set()
        #: What to tell the run about them (taken by ``cached_results``).
        self.notes: list[str] = []

    def mark_read_only(self, store: RunStore, why: str) -> str:
        """Stop writing ``store`` (it is still read); return what to tell the run, logged
        once per process."""
        self.read_only.add(id(store))
        note = f"{why}: the run replays what it holds and stores nothing new"
        warn_once(note)
        return note

    def add(self, store: RunStore, entry: CacheEntry) -> None:
        if id(store) in self.read_only:
            return
        with self.lock:
            group = self.stores.get(id(store))
            if group is None:
                group = self.stores[id(store)] = (store, [])
            group[1].append(entry)
            self.count += 1

    def flush_if_due(self) -> None:
        """Write the waiting entries if a second has passed since the last write (or many
        are waiting). Called as each item finishes, so entries never wait for more than the
        second of work after the last write."""
        if self.count >= FLUSH_ENTRIES or (
            self.count and flush_clock() - self.since >= FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> int:
        """Write every waiting entry; return how many."""
        from ..errors import CacheReadOnlyError

        with self.lock:
            stores, count = self.stores, self.count
            self.stores, self.count = {}, 0
            for store, entries in stores.values():
                try:
                    store.put_many(entries)
                except CacheReadOnlyError as exc:
                    self.notes.append(self.mark_read_only(store, str(exc)))
            self.since = flush_clock()
        return count


class _Owner:
    """The step whose cache entry an item reads and writes, and how."""

    __slots__ = ("checks_input", "config_hash", "costs", "measured", "mode", "prior", "scope",
                 "step", "store")  # fmt: skip

    def __init__(
        self, step: StepInfo, store: RunStore | None, mode: str | None, checks_input: bool
    ) -> None:
        self.step = step
        self.store = store
        self.mode = mode
        self.checks_input = checks_input
        self.config_hash: str | None = None
        self.scope: str = getattr(step, "cache_scope", "item")
        self.costs = Costs()
        #: Whether this run measures costs (cache_mode "auto"), and the decision on record.
        self.measured = costs.mode_of(step) == "auto"
        self.prior: Decision | None = None


async def cached_results(
    windows: AsyncIterator[list[Item]],
    *,
    step: StepInfo,
    store: RunStore | None,
    routing: Routing[C] | None,
    checks_input: bool,
    compute: WindowCall,
    context: C,
    stats: RunStats,
) -> AsyncGenerator[list[tuple[Item, Result]], None]:
    """``(item, outputs | Failure)`` pairs in input order, reading and writing the cache.

    ``compute(items, done)`` gives the results (``list | Failure`` each, in order) of the items
    the cache does not hold, and calls ``done(index, result)`` as each one is finished (so its
    entry waits for the next write from then on, not from the end of the window).
    """
    size = max(1, int(getattr(step, "cache_window", 256)))
    owners: dict[int, _Owner] = {}
    if routing is None:
        owners[id(step)] = _Owner(step, store, None, checks_input)
    else:
        for leaf in routing.leaves.values():
            owners[id(leaf.step)] = _Owner(leaf.step, leaf.store, leaf.mode, leaf.checks_input)
    for owner in owners.values():
        await _settle_identity(owner, context, stats)
    _known_decisions(owners)
    pending = _PendingWrites()
    for owner in owners.values():
        # A store known to be read-only is read, never written: said once, up front.
        store = owner.store
        if (store is not None and getattr(store, "read_only", False) is True
                and id(store) not in pending.read_only):
            note = pending.mark_read_only(
                store, f"cache file {getattr(store, 'path', store)} is read-only"
            )
            await context.emit(CacheSkipped(context.run_id, step=stats.name, reason=note))
    finished = False
    watching = contextlib.ExitStack()
    watching.enter_context(sigterm.guard())
    watching.enter_context(sigterm.watch(pending))
    try:
        async for window in windows:
            stats.items_in += len(window)
            parts = (
                [window]
                if len(window) <= size
                else [window[i : i + size] for i in range(0, len(window), size)]
            )
            for part in parts:
                yield await _window(part, step, routing, owners, compute, context, stats, pending)
                pending.flush_if_due()
                await _tell(pending, context, stats)
        finished = True
        _last_flush(pending, owners)
        await _tell(pending, context, stats)
    finally:
        aclose = getattr(windows, "aclose", None)
        if aclose is not None:
            await aclose()
        try:
            if not finished:
                _last_flush(pending, owners)
            _record_decisions(owners)
        finally:
            watching.close()


async def _tell(pending: _PendingWrites, context: RunContext, stats: RunStats) -> None:
    """Emit what the writes found out (a store that turned out read-only) as CacheSkipped."""
    while pending.notes:
        note = pending.notes.pop(0)
        await context.emit(CacheSkipped(context.run_id, step=stats.name, reason=note))


def _last_flush(pending: _PendingWrites, owners: dict[int, _Owner]) -> None:
    """Write what is left; its cost is cache work of the items computed in this run."""
    started = costs.clock()
    written = pending.flush()
    if written:
        share = (costs.clock() - started) / written
        for owner in owners.values():
            owner.costs.overhead += share * owner.costs.computed


def _known_decisions(owners: dict[int, _Owner]) -> None:
    """Read the cost decisions on record for the owners that measure costs."""
    by_store: dict[int, tuple[RunStore, list[_Owner]]] = {}
    for owner in owners.values():
        if owner.store is not None and owner.config_hash is not None and owner.measured:
            by_store.setdefault(id(owner.store), (owner.store, []))[1].append(owner)
    for store, group in by_store.values():
        found = costs.decisions_for(store, [o.config_hash for o in group if o.config_hash])
        for owner in group:
            owner.prior = found.get(owner.config_hash or "")


def _record_decisions(owners: dict[int, _Owner]) -> None:
    for owner in owners.values():
        if not owner.measured or owner.store is None or owner.config_hash is None:
            continue
        decision = owner.costs.decision(owner.prior)
        if decision is not None:
            # Which step it is, for `ragloom cache info` (the key is its cache identity).
            decision["step"] = owner.step.identity()
            decision["name"] = owner.step.name
            costs.record(owner.store, owner.config_hash, decision, owner.step.name)


async def _settle_identity(owner: _Owner, context: RunContext, stats: RunStats) -> None:
    """Work out ``owner``'s config hash now; without a stable identity it runs uncached."""
    if owner.store is None or getattr(owner.step, "output_model", None) is None:
        return
    from ..identity import Uncacheable

    try:
        owner.config_hash = owner.step.config_hash
    except Uncacheable as exc:
        owner.store = None
        reason = (
            f"{exc}; it runs without a cache. To cache it anyway, give it a cache_version "
            "(step.configure(cache_version=1), or cache_version = 1 in its step of a pipeline "
            "file) and change that version whenever this argument changes the output"
        )
        warn_once(f"{owner.step.name}: {reason}")
        await context.emit(CacheSkipped(context.run_id, step=owner.step.name, reason=reason))


async def _window(
    items: list[Item],
    step: StepInfo,
    routing: Routing[C] | None,
    owners: dict[int, _Owner],
    compute: WindowCall,
    context: C,
    stats: RunStats,
    pending: _PendingWrites,
) -> list[tuple[Item, Result]]:
    from ..cache.base import CacheEntry
    from ..cache.codec import decode_many
    from ..cache.keys import cache_key

    started = costs.clock()
    n = len(items)
    results: list[Result | None] = [None] * n
    keys: list[str | None] = [None] * n
    item_owners: list[_Owner | None] = [None] * n
    single = owners[id(step)] if routing is None else None
    for i, item in enumerate(items):
        owner = single
        if owner is None:
            assert routing is not None
            try:
                owner = owners[id(routing.leaf_for(item).step)]
            except Exception as exc:  # noqa: BLE001 - unroutable: fails like uncached
                results[i] = Failure(exc, 0, routing.mode)
                continue
        config_hash = owner.config_hash
        if owner.store is None or config_hash is None:
            continue  # caching is off for this item: processed, neither hit nor miss
        item_owners[i] = owner
        keys[i] = cache_key(config_hash, item, owner.scope)

    wanted: dict[int, tuple[RunStore, list[str]]] = {}
    for key, owner in zip(keys, item_owners, strict=True):
        if key is not None and owner is not None and owner.store is not None:  # all keyed
            group = wanted.get(id(owner.store))
            if group is None:
                group = wanted[id(owner.store)] = (owner.store, [])
            group[1].append(key)
    found = {sid: store.get_many(group) for sid, (store, group) in wanted.items()}

    todo: list[int] = []
    missed: list[int] = []
    hits: list[int] = []
    hit_owners: list[_Owner] = []
    entries: list[CacheEntry] = []
    for i in range(n):
        if results[i] is not None:
            continue
        key, owner = keys[i], item_owners[i]
        if key is None or owner is None:
            todo.append(i)
            continue
        entry = found[id(owner.store)].get(key)
        if entry is None:
            todo.append(i)
            missed.append(i)
            continue
        if owner.checks_input:
            try:
                owner.step.validate_input(items[i])
            except Exception as exc:  # noqa: BLE001 - an input invalid now is never replayed
                results[i] = Failure(exc, 1, owner.mode)
                continue
        hits.append(i)
        hit_owners.append(owner)
        entries.append(entry)
    if hits:
        # One call decodes the window's hits (the payload of a chunker's entry lists offsets
        # into the input: replay slices the input, it does not re-validate).
        decoded = decode_many(
            [e.payload for e in entries],
            [items[i] for i in hits],
            # an owner with a key has an output model (see _settle_identity)
            cast("list[type[BaseModel]]", [o.step.output_model for o in hit_owners]),
            [e.outputs for e in entries],
            lambda j: f"cache entry {entries[j].key} ({entries[j].step}, "
            f"item {entries[j].item_id!r})",
        )
        for i, outputs in zip(hits, decoded, strict=True):
            results[i] = outputs
    stats.cache_hits += len(hits)
    stats.cache_misses += len(missed)
    if context.observed:
        for i in hits:
            await context.emit(
                CacheHit(
                    context.run_id, step=stats.name, item_id=item_id(items[i]),
                    cache_id=str(keys[i]), outputs=len(cast("list[Item]", results[i])),
                )
            )
        for i in missed:
            await context.emit(
                CacheMiss(
                    context.run_id, step=stats.name, item_id=item_id(items[i]),
                    cache_id=str(keys[i]),
                )
            )
    if not todo:
        _charge(item_owners, [], costs.clock() - started, 0.0)
        return _paired(items, results)

    wrong: dict[int, Failure] = {}
    reported: set[int] = set()
    spent = [0.0]  # time spent writing entries while computing: cache work, not compute

    def done(j: int, result: Result) -> None:
        """Item ``todo[j]`` is finished: its entry waits for the next write from now."""
        if j in reported:
            return
        reported.add(j)
        began = costs.clock()
        i = todo[j]
        key, owner = keys[i], item_owners[i]
        if key is not None and owner is not None and type(result) is list:
            failure = _wrong_type(owner, result)
            if failure is not None:
                wrong[i] = failure
            else:
                entry = CacheEntry.relative(
                    key, owner.step.identity(), item_id(items[i]), result, items[i],
                    relative_only=owner.scope == "content",
                )
                if entry is not None and owner.store is not None:  # a keyed item's is set
                    pending.add(owner.store, entry)
                    pending.flush_if_due()
        spent[0] += costs.clock() - began

    before = costs.clock()
    computed = await compute([items[i] for i in todo], done)
    after = costs.clock()
    writing = spent[0]  # cache work done while the items were computed
    for j, result in enumerate(computed):
        done(j, result)  # any the compute call did not report
    for i, result in zip(todo, computed, strict=True):
        results[i] = wrong.get(i, result)
    overhead = (before - started) + writing + (costs.clock() - after)
    _charge(item_owners, [item_owners[i] for i in todo], overhead, after - before - writing)
    return _paired(items, results)


def _paired(items: list[Item], results: list[Result | None]) -> list[tuple[Item, Result]]:
    """``(item, result)`` pairs of a window whose results are all set by now."""
    return cast("list[tuple[Item, Result]]", list(zip(items, results, strict=True)))


def _wrong_type(owner: _Owner, result: list[Item]) -> Failure | None:
    """A failure when an output is not an instance of the step's ``output_model``."""
    # an owner with a key has an output model (see _settle_identity)
    model = cast("type[BaseModel]", owner.step.output_model)
    wrong = next((o for o in result if not isinstance(o, model)), None)
    if wrong is None:
        return None
    from ..errors import ComponentTypeError

    return Failure(
        ComponentTypeError(
            f"{owner.step.name} declares output_model {model.__name__} but produced "
            f"{type(wrong).__name__}; fix the step or set output_model = None "
            "to turn caching off for it"
        ),
        1,
        owner.mode,
    )


def _charge(
    item_owners: list[_Owner | None], computed: list[_Owner | None], overhead: float,
    compute: float,
) -> None:
    """Share a window's measured costs among the owners of its items, by item counts."""
    touched: dict[int, tuple[_Owner, int]] = {}
    for owner in item_owners:
        if owner is not None and owner.measured:
            prior = touched.get(id(owner))
            touched[id(owner)] = (owner, 1 if prior is None else prior[1] + 1)
    if not touched:
        return
    done: dict[int, int] = {}
    for owner in computed:
        if owner is not None:
            done[id(owner)] = done.get(id(owner), 0) + 1
    total_touched = sum(count for _o, count in touched.values())
    total_done = sum(done.values()) or 1
    for key, (owner, count) in touched.items():
        mine = done.get(key, 0)
        owner.costs.record(
            compute=compute * mine / total_done,
            computed=mine,
            overhead=overhead * count / total_touched,
            touched=count,
        )
