"""SIGTERM commits what is finished: a run stopped by its supervisor keeps its finished items.

A process that has not set a SIGTERM handler of its own is ended on the spot by SIGTERM (what a
service manager, ``timeout`` or Kubernetes sends), before any ``finally`` runs: cache entries
of finished items still waiting for their next write would be lost. While a cached step runs
in the main thread (or :func:`ragloom._sync.run_sync` waits there for a run in a helper
thread), :func:`guard` installs a handler, only where SIGTERM still has its default
disposition. The handler writes every waiting entry, then ends the process by SIGTERM exactly
as the default disposition would have (same signal, same exit status). A process that handles
SIGTERM itself (the ``ragloom`` command, a web server) keeps its handler: the run is then
stopped by that handler, and the cached step writes what is finished as it unwinds.

The handler does no I/O itself (a signal handler interrupts the main thread anywhere, maybe
inside a write to the same store): it hands the writes to a thread, which waits for any write
in progress, makes its own, then sends SIGTERM again, with the default disposition restored
(a second SIGTERM meanwhile ends the process at once).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Protocol

__all__ = ["Flushable", "guard", "watch"]


class Flushable(Protocol):
    def flush(self) -> int: ...


_live: set[Flushable] = set()
_live_lock = threading.Lock()
_installed = 0
#: The disposition SIGTERM had before ours (what ``signal.getsignal`` returns).
_previous: Callable[[int, FrameType | None], object] | int | signal.Handlers | None = None


@contextlib.contextmanager
def watch(pending: Flushable) -> Iterator[None]:
    """Let a SIGTERM write ``pending``'s entries while the block runs."""
    with _live_lock:
        _live.add(pending)
    try:
        yield
    finally:
        with _live_lock:
            _live.discard(pending)


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Install the SIGTERM handler for the block, when this is the main thread and SIGTERM has
    its default disposition (nested blocks share one installation)."""
    global _installed, _previous
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mine = False
    if _installed:
        _installed += 1
        mine = True
    else:
        try:
            current = signal.getsignal(signal.SIGTERM)
            if current is signal.SIG_DFL:
                _previous = signal.signal(signal.SIGTERM, _on_sigterm)
                _installed = 1
                mine = True
        except (ValueError, OSError):  # no signals here (an embedded interpreter)
            pass
    try:
        yield
    finally:
        if mine:
            _installed -= 1
            if not _installed:
                with contextlib.suppress(ValueError, OSError):
                    # Only our own handler is taken back (code that set its own since keeps it).
                    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
                        signal.signal(signal.SIGTERM, _previous)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_flush_then_end, name="ragloom-sigterm", daemon=True).start()


def _flush_then_end() -> None:
    try:
        with _live_lock:
            waiting = list(_live)
        for pending in waiting:
            with contextlib.suppress(Exception):  # a full disk: what was written stays
                pending.flush()
    finally:
        os.kill(os.getpid(), signal.SIGTERM)
