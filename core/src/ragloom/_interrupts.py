"""Telling a real interrupt (Ctrl-C, SIGTERM) from a ``KeyboardInterrupt`` raised by a step.

A ``KeyboardInterrupt`` that a step raises from its own code is a failure of that item, like
``SystemExit``; one that a signal raised stops the run. The two look the same once raised, so
a run notes each signal as it arrives: while a run goes on in the main thread, the Python-level
SIGINT handler in place (asyncio's, trio's or Python's default one) is wrapped so that every
SIGINT is counted before that handler acts on it. A ``KeyboardInterrupt`` is then an interrupt
only if a signal was noted since the outermost run started. Code that raises
``KeyboardInterrupt`` for a signal of its own (the CLI's SIGTERM handler) calls :func:`note`.

Outside the main thread no signal raises anything, and with SIGINT ignored (``SIG_IGN``) or
left to the system (``SIG_DFL``) no SIGINT ever becomes a ``KeyboardInterrupt``: nothing is
wrapped, and only :func:`note` counts.

Listeners (:func:`on_interrupt`) hear of each noted signal at once, in the signal handler: the
CLI uses one to say, on the first Ctrl-C, that the run is waiting for a step to return. Pure
standard library, light to import.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["note", "on_interrupt", "signalled", "watching"]

_noted = 0
_depth = 0
_installed: Any = None
_previous: Any = None
_listeners: list[Callable[[int], None]] = []


def note() -> None:
    """Record that a signal asked the run to stop (call before raising for it)."""
    global _noted
    _noted += 1
    for listener in list(_listeners):
        with contextlib.suppress(Exception):
            listener(_noted)


def signalled() -> bool:
    """Whether a signal was noted since the outermost run started (or, outside runs, ever)."""
    return _noted > 0


def on_interrupt(listener: Callable[[int], None]) -> Callable[[], None]:
    """Call ``listener(count)`` in the signal handler on each noted signal; returns a function
    that removes it. A listener must be quick and must not raise (errors are ignored)."""
    _listeners.append(listener)

    def remove() -> None:
        with contextlib.suppress(ValueError):
            _listeners.remove(listener)

    return remove


def _handler(signum: int, frame: Any) -> Any:
    note()
    previous = _previous
    if callable(previous):
        return previous(signum, frame)
    raise KeyboardInterrupt  # pragma: no cover - only installed over a callable handler


@contextlib.contextmanager
def watching() -> Iterator[None]:
    """For the length of a run: count the SIGINTs that the current handler turns into an
    interrupt. Must be entered inside the event loop (asyncio and trio install their own
    handler when the loop starts). Concurrent and nested runs share one wrapper; the handler
    is restored when the last of them ends, unless someone replaced it meanwhile."""
    global _depth, _installed, _previous, _noted
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth == 0:
        _noted = 0
        current = signal.getsignal(signal.SIGINT)
        if callable(current) and current is not _handler:
            try:
                signal.signal(signal.SIGINT, _handler)
            except (ValueError, OSError):  # pragma: no cover - an embedded interpreter
                current = None
            else:
                _previous, _installed = current, _handler
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _installed is not None:
            if signal.getsignal(signal.SIGINT) is _installed:
                signal.signal(signal.SIGINT, _previous)
            _installed = _previous = None
