"""The engine that runs steps: per-item calls, windows, retries, timeouts, workers, cache.

Steps describe *what* to do (:mod:`ragloom.step`); this package decides *how*, once per step and
run, from the step's public capabilities: whether its ``transform`` hook is synchronous or
awaits, whether it checks its input or output, whether it routes items to children, what its
effective policy asks for (retries, a timeout, concurrency) and whether a cache applies. Nothing
here imports the step classes: the engine reads steps through that public contract only.
"""

from __future__ import annotations

from .hooks import default_hook, hooks_of
from .runner import process_windows
from .sources import document_windows

__all__ = ["default_hook", "document_windows", "hooks_of", "process_windows"]
