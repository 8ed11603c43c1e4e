"""Steps for the Ray tests: one that kills its worker process once, one that raises.

Imported on the Ray workers through a pipeline spec (``import`` with ``allow_imports``); the
tests put this folder on the workers' ``PYTHONPATH``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from ragloom import PipelineStep


class ExitOnce(PipelineStep[Any]):
    """Passes items through, except that the first item holding ``marker`` kills the process
    (``os._exit``) if the file ``guard`` does not exist yet; the guard is created first, so the
    retried batch passes. Deterministic: no timing involved."""

    output_model = None

    def __init__(self, marker: str, guard: str) -> None:
        super().__init__(cache=False, name="ExitOnce")
        self.marker = marker
        self.guard = guard

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        if self.marker in item.content and not os.path.exists(self.guard):
            with open(self.guard, "x") as handle:
                handle.write(str(os.getpid()))
            os._exit(17)
        yield item


class FailOn(PipelineStep[Any]):
    """Passes items through; raises ``ValueError`` for an item holding ``marker``."""

    output_model = None

    def __init__(self, marker: str) -> None:
        super().__init__(cache=False, name="FailOn")
        self.marker = marker

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        if self.marker in item.content:
            raise ValueError(f"refusing {item.id}: it holds {self.marker!r}")
        yield item


class ExitAlways(PipelineStep[Any]):
    """Kills the process (``os._exit``) on every item holding ``marker``: a poison input."""

    output_model = None

    def __init__(self, marker: str) -> None:
        super().__init__(cache=False, name="ExitAlways")
        self.marker = marker

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        if self.marker in item.content:
            os._exit(18)
        yield item
