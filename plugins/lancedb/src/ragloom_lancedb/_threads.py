"""Lance's compute threads on a small machine.

Lance runs the CPU-heavy part of its work (scanning a vector index's partitions, ranking
candidates again, building indexes) on a pool of ``LANCE_CPU_THREADS`` threads, by default the
machine's CPUs less ``LANCE_IO_CORE_RESERVATION`` (2), and at least one. On a machine of two
CPUs that is one thread: the searches of a question, run at once, then queue for it while a
CPU stays idle. On such a machine, and unless either variable is set, ragloom gives that pool
every CPU (measured on 2 CPUs with bench_scale's million chunks: a question's p50 58-61 ->
50-52 ms, at the same CPU). Lance reads the variable once, at its first use of the pool, so
this runs before the store first touches Lance.
"""

from __future__ import annotations

import os

#: CPUs Lance keeps for I/O unless ``LANCE_IO_CORE_RESERVATION`` says otherwise.
LANCE_IO_RESERVATION = 2


def use_every_cpu() -> None:
    """Set ``LANCE_CPU_THREADS`` to the CPUs this process may use, when that is more than one
    and no more than Lance keeps for I/O, and neither ``LANCE_CPU_THREADS`` nor
    ``LANCE_IO_CORE_RESERVATION`` is set."""
    if "LANCE_CPU_THREADS" in os.environ or "LANCE_IO_CORE_RESERVATION" in os.environ:
        return
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    if 1 < cpus <= LANCE_IO_RESERVATION:
        os.environ["LANCE_CPU_THREADS"] = str(cpus)
