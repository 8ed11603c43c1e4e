"""ragloom's sync-over-async bridge (``ragloom._sync.run_sync``) against anyio's blocking portal.

    pip install -e core
    python benchmarks/bench_sync_bridge.py [--calls 300] [--repeat 5]

Inside a running event loop (a notebook cell, a web handler) the synchronous API must run the
coroutine somewhere else. Contenders, each called from a coroutine on a running asyncio loop:

- ``ragloom run_sync``: a helper thread running ``anyio.run`` (ours);
- ``anyio portal per call``: ``with anyio.from_thread.start_blocking_portal() as portal:
  portal.call(fn)``, a portal (thread and loop) per call, as the bridge would have to be to
  keep a call's async resources on a loop of its own;
- ``anyio portal kept``: one portal started once and reused by every call (a long-lived
  thread and loop; shown for what its start-up costs, not a drop-in: resources a call opens
  would outlive it on that loop).

What is timed is the bridge's cost: ``--calls`` calls of a coroutine that does ``await
anyio.sleep(0)`` and returns, in wall-clock microseconds per call (threads wait, CPU time would
not count them), best of ``--repeat`` rounds, contenders interleaved. Each also runs a call
that raises, to check the exception reaches the caller unchanged, and one returning a large
list. Two behaviours are shown too: a call made from inside a bridged call (a synchronous API
used by async code that itself runs through the bridge), and four threads each bridging a call
that blocks for 0.2 s (a step waiting on I/O or in a C library that releases the GIL), in
wall-clock seconds. Outside a running loop both are ``anyio.run``: not timed.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import threading
import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

import anyio
import anyio.from_thread
from ragloom._sync import run_sync


async def tick() -> int:
    await anyio.sleep(0)
    return 1


class Marked(Exception):
    pass


async def fail() -> None:
    await anyio.sleep(0)
    raise Marked("from the coroutine")


async def big() -> list[int]:
    return list(range(1_000_000))


def blocking() -> Awaitable[int]:
    async def call() -> int:
        time.sleep(0.2)  # blocks its loop's thread, as a synchronous step does
        return 1

    return call()


def portal_per_call(fn: Callable[[], Awaitable[Any]]) -> Any:
    with anyio.from_thread.start_blocking_portal() as portal:
        return portal.call(fn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()}; anyio {version('anyio')}, ragloom {version('ragloom')}")

    kept_cm = anyio.from_thread.start_blocking_portal()
    kept = kept_cm.__enter__()
    contenders: dict[str, Callable[[Callable[[], Awaitable[Any]]], Any]] = {
        "ragloom run_sync": run_sync,
        "anyio portal per call": portal_per_call,
        "anyio portal kept": kept.call,
    }

    async def inside_a_loop() -> dict[str, list[float]]:
        rounds: dict[str, list[float]] = {name: [] for name in contenders}
        for name, bridge in contenders.items():  # checks first
            assert bridge(tick) == 1
            try:
                bridge(fail)
            except Marked as exc:
                assert str(exc) == "from the coroutine", name
            else:
                raise AssertionError(f"{name}: the exception was lost")
            start = time.perf_counter()
            assert len(bridge(big)) == 1_000_000
            print(f"  {name}: a 1,000,000-item result in {1e3 * (time.perf_counter() - start):.1f} ms")
        for _ in range(args.repeat):
            for name, bridge in contenders.items():
                start = time.perf_counter()
                for _ in range(args.calls):
                    bridge(tick)
                rounds[name].append(time.perf_counter() - start)
        return rounds

    rounds = asyncio.run(inside_a_loop())

    print("\na bridged call made from inside a bridged call:")
    for name, bridge in contenders.items():

        async def outer(bridge: Callable[[Callable[[], Awaitable[Any]]], Any] = bridge) -> Any:
            return bridge(tick)

        async def from_a_loop(bridge: Callable[[Callable[[], Awaitable[Any]]], Any] = bridge) -> str:
            try:
                return f"returns {bridge(outer)}"
            except Exception as exc:  # noqa: BLE001 - reported
                return f"{type(exc).__name__}: {exc}"

        print(f"  {name}: {asyncio.run(from_a_loop())}")

    print("\nfour threads, each bridging a call that blocks 0.2 s (wall-clock seconds):")
    for name, bridge in contenders.items():

        def caller(bridge: Callable[[Callable[[], Awaitable[Any]]], Any] = bridge) -> None:
            async def from_a_loop() -> None:
                bridge(blocking)

            asyncio.run(from_a_loop())

        threads = [threading.Thread(target=caller) for _ in range(4)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(f"  {name}: {time.perf_counter() - start:.2f} s")
    kept_cm.__exit__(None, None, None)
    print(f"\n{args.calls} calls from inside a running asyncio loop, best of {args.repeat}:")
    print("| bridge | us per call (best) | us per call (median) |")
    print("| --- | --- | --- |")
    for name, times in rounds.items():
        ordered = sorted(times)
        print(f"| {name} | {1e6 * ordered[0] / args.calls:.0f} | "
              f"{1e6 * ordered[len(ordered) // 2] / args.calls:.0f} |")


if __name__ == "__main__":
    main()
