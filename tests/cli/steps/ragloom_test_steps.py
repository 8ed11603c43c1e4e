"""Steps for CLI tests that need a run to be in a known state when a signal arrives.

Imported by a ``ragloom`` subprocess through a pipeline file (``import = ...`` with
``--allow-imports``); the test puts this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from ragloom import PipelineStep


class BlockAfter(PipelineStep[Any]):
    """Passes items through; from item ``after + 1`` on, announces it once and waits forever.

    A run through this step can only end by a signal, so a test that signals it never races
    the run's own end, however fast or slow the machine is.
    """

    output_model = None

    def __init__(self, after: int = 30) -> None:
        super().__init__(cache=False, name="BlockAfter")
        self.after = after
        self.seen = 0
        self.announced = False

    async def transform(self, item: Any, context: Any) -> AsyncIterator[Any]:
        self.seen += 1
        if self.seen > self.after:
            if not self.announced:
                self.announced = True
                print(f"ragloom-test: blocked after {self.after} items", file=sys.stderr,
                      flush=True)
            await anyio.sleep_forever()
        yield item
