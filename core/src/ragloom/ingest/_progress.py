"""Progress of an ingest: the callback type, and the display ``show_progress`` puts on stderr."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ._report import IngestProgress

__all__ = ["ProgressCallback", "ShownProgress"]

ProgressCallback = Callable[[IngestProgress], None]


class ShownProgress:
    """An ``on_progress`` callback that shows files done (and bytes read) on stderr, then
    calls ``then`` (another callback) if given. ``quiet=True`` shows nothing."""

    def __init__(self, then: ProgressCallback | None = None, *, quiet: bool = False) -> None:
        self.then = then
        self.quiet = quiet
        self.progress: Any = None
        self.started = time.perf_counter()

    def __call__(self, update: IngestProgress) -> None:
        if not self.quiet:
            if self.progress is None:
                from .._display import Progress

                self.progress = Progress(
                    update.total, label="files", show_bytes=True, started=self.started
                )
            self.progress.update(update.done, nbytes=update.bytes_read)
        if self.then is not None:
            self.then(update)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()
