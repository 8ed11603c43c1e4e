"""Progress reporting to stderr: a redrawn bar on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import Literal, TextIO

__all__ = ["Progress", "format_bytes", "format_duration"]

Mode = Literal["bar", "lines", "off"]


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop always returns


def format_duration(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts items done out of ``total`` and shows it.

    ``mode="bar"`` redraws one line (at most every ``redraw`` seconds); ``"lines"`` prints a
    line each time another tenth of the work is done, and at least every ``interval`` seconds
    while something changes; ``"off"`` prints nothing. ``mode=None`` picks ``bar`` when
    ``stream`` is a terminal, else ``lines``.
    """

    def __init__(
        self,
        total: int,
        *,
        label: str = "documents",
        stream: TextIO | None = None,
        mode: Mode | None = None,
        interval: float | None = None,
        redraw: float = 0.1,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if mode is None:
            isatty = getattr(self.stream, "isatty", None)
            mode = "bar" if isatty is not None and isatty() else "lines"
        self.mode: Mode = mode
        self.total = max(0, total)
        self.label = label
        self.done = 0
        self.bytes = 0
        if interval is None:
            interval = float(os.environ.get("RAGLOOM_PROGRESS_INTERVAL", "5") or 5)
        self.interval = interval
        self.redraw = redraw
        self.started = time.perf_counter()
        self._last_draw = 0.0
        self._last_tenth = 0
        self._drawn = False
        self._closed = False

    # -- counting --------------------------------------------------------------------------

    def advance(self, items: int = 1, nbytes: int = 0) -> None:
        if items <= 0 and nbytes <= 0:
            return
        self.done = min(self.total, self.done + items) if self.total else self.done + items
        self.bytes += nbytes
        if self.mode == "off":
            return
        now = time.perf_counter()
        if self.mode == "bar":
            if now - self._last_draw >= self.redraw or self.done >= self.total:
                self._draw_bar(now)
        else:
            tenth = (10 * self.done // self.total) if self.total else 0
            if tenth > self._last_tenth or now - self._last_draw >= self.interval:
                self._last_tenth = tenth
                self._line(now)

    def close(self) -> None:
        """Finish the display (the bar gets its final state and a newline)."""
        if self._closed:
            return
        self._closed = True
        if self.mode == "bar" and self._drawn:
            self._draw_bar(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    # -- drawing ---------------------------------------------------------------------------

    def _rate(self, now: float) -> str:
        elapsed = now - self.started
        if elapsed <= 0:
            return ""
        return f"{format_bytes(self.bytes / elapsed)}/s"

    def _eta(self, now: float) -> str:
        elapsed = now - self.started
        if not self.done or not self.total or self.done >= self.total:
            return ""
        return "ETA " + format_duration(elapsed * (self.total - self.done) / self.done)

    def _line(self, now: float) -> None:
        percent = f" ({100 * self.done // self.total}%)" if self.total else ""
        parts = [f"{self.done}/{self.total} {self.label}{percent}", format_bytes(self.bytes)]
        rate = self._rate(now)
        if rate:
            parts.append(rate)
        self.stream.write("ragloom: " + ", ".join(parts) + "\n")
        self.stream.flush()
        self._last_draw = now

    def _draw_bar(self, now: float) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        fraction = self.done / self.total if self.total else 1.0
        tail = f" {self.done}/{self.total} {self.label}  {format_bytes(self.bytes)}"
        rate = self._rate(now)
        if rate:
            tail += f"  {rate}"
        eta = self._eta(now)
        if eta:
            tail += f"  {eta}"
        head = f"{int(100 * fraction):3d}% "
        bar_width = max(10, min(40, width - len(head) - len(tail) - 3))
        filled = int(bar_width * fraction)
        line = f"{head}[{'#' * filled}{'.' * (bar_width - filled)}]{tail}"
        self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        self.stream.flush()
        self._drawn = True
        self._last_draw = now
