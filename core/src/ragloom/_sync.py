"""Running ragloom's async code from synchronous code, notebooks included.

``anyio.run`` refuses to start inside a thread whose event loop is already running (every
Jupyter notebook cell runs inside one). :func:`run_sync` then runs the coroutine function on a
fresh event loop in a helper thread and waits for it, so the synchronous API works the same in
a script, a notebook and a web handler.

Why not anyio's blocking portal (``benchmarks/bench_sync_bridge.py``, anyio 4.16, from inside a
running asyncio loop): a portal per call (``with start_blocking_portal() as p: p.call(fn)``)
does what this does at 1.7-2.7x its cost per call (750-820 us against 310-430 us: besides the
thread and the loop, a task group, a start-up handshake and a second call to stop it); one
portal kept for the process is cheaper per call (85-170 us) but is not the same bridge: a
bridged call made by async code that itself runs on the portal's loop fails ("cannot be called
from the event loop thread"), and callers in several threads share its one loop thread, so four
calls that each block 0.2 s take 0.8 s instead of 0.2 s. So the bridge stays a helper thread of
its own per call.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["in_running_loop", "run_sync"]

R = TypeVar("R")


def in_running_loop() -> bool:
    """Whether this thread is inside a running asyncio event loop (or a trio run)."""
    import asyncio

    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        pass
    # Trio has no global loop object; a running trio task is the sign. trio is only looked up
    # if something already imported it (sniffio is no longer an anyio dependency).
    trio = sys.modules.get("trio")
    if trio is None:
        return False
    try:
        trio.lowlevel.current_task()
        return True
    except RuntimeError:
        return False


def run_sync(fn: Callable[..., Awaitable[R]], *args: Any) -> R:
    """``await fn(*args)`` from synchronous code, and return its result.

    Outside an event loop this is ``anyio.run``. Inside a running loop it runs on a new event
    loop in a helper thread (the calling thread waits; exceptions are re-raised here).
    """
    import anyio

    box: list[Any] = []

    async def main() -> None:
        # The result goes through a box: asyncio reprs a finished main task (and so its
        # result) when the loop closes, which can be costly for large results.
        box.append(await fn(*args))

    if not in_running_loop():
        anyio.run(main)
        return box[0]  # type: ignore[no-any-return]
    error: list[BaseException] = []

    def target() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            error.append(exc)

    from ._engine.sigterm import guard

    thread = threading.Thread(target=target, name="ragloom-run-sync", daemon=True)
    # SIGTERM is handled by the main thread, which waits here: a SIGTERM then writes what the
    # run in the helper thread has finished before the process ends (see _engine.sigterm).
    with guard():
        thread.start()
        thread.join()
    if error:
        raise error[0]
    return box[0]  # type: ignore[no-any-return]
