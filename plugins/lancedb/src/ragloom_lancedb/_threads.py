"""Lance's compute threads on a small machine.

Lance runs the CPU-heavy part of its work (scanning a vector index's partitions, ranking
candidates again, building indexes) on a pool of ``LANCE_CPU_THREADS`` threads, by default the
machine's CPUs less ``LANCE_IO_CORE_RESERVATION`` (2), and at least one. On a machine of two
CPUs that is one thread: the searches of a question, run at once, then queue for it while a
CPU stays idle. On such a machine, and unless either variable is set, ragloom gives that pool
every CPU (measured on 2 CPUs with bench_scale's million chunks: a question's p50 58-61 ->
50-52 ms, at the same CPU). Lance reads the variable once, at its first use of the pool, so
this runs before the store first touches Lance.

Lance panics at that first use when either variable is not a number it accepts (a Rust panic,
which a Python caller sees as a crash with Lance's backtrace): a store checks them first and
raises a :class:`~ragloom.stores.StoreError` naming the variable. An empty variable counts as
unset (Lance would panic on it too) and is removed.
"""

from __future__ import annotations

import os
import re

from ragloom.stores import StoreError

#: CPUs Lance keeps for I/O unless ``LANCE_IO_CORE_RESERVATION`` says otherwise.
LANCE_IO_RESERVATION = 2
#: The variables Lance reads for its pools: the least value each accepts, and what it sets.
_VARIABLES = {
    "LANCE_CPU_THREADS": (1, "the threads Lance computes on"),
    "LANCE_IO_CORE_RESERVATION": (0, "the CPUs Lance keeps for I/O"),
}


def use_every_cpu() -> None:
    """Set ``LANCE_CPU_THREADS`` to the CPUs this process may use, when that is more than one
    and no more than Lance keeps for I/O, and neither ``LANCE_CPU_THREADS`` nor
    ``LANCE_IO_CORE_RESERVATION`` is set.

    Raises:
        StoreError: either variable is set to what Lance does not accept (it would panic).
    """
    if _chosen():
        return
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    if 1 < cpus <= LANCE_IO_RESERVATION:
        os.environ["LANCE_CPU_THREADS"] = str(cpus)


def _chosen() -> bool:
    """Whether the user set either variable (to a value Lance accepts; an empty one is removed,
    as unset)."""
    chosen = False
    for name, (least, what) in _VARIABLES.items():
        value = os.environ.get(name)
        if value is None:
            continue
        text = value.strip()
        if not text:
            del os.environ[name]
            continue
        if re.fullmatch(r"\+?[0-9]+", text) is None or int(text) < least:
            raise StoreError(f"{name} ({what}) must be an integer >= {least}, got {value!r}")
        chosen = True
    return chosen
