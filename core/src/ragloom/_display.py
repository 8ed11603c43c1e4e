"""What ragloom shows to people: progress and tables, drawn by rich.

rich comes with the CLI extra (``pip install "./core[cli]"`` from a ragloom checkout) and is
imported only when something is shown: ``import ragloom`` and every run without
``show_progress=True`` never load it.

``Progress`` counts units done (``files``, ``documents``...) out of a total, when one is known,
with optional bytes read and a note (``"120 outputs, 0 failed"``):

- ``mode="bar"``: a rich progress bar, redrawn in place (terminals, Jupyter);
- ``mode="lines"``: one plain line per tenth of the work, and at least every
  ``RAGLOOM_PROGRESS_INTERVAL`` seconds (default 5; 0: every update) while something changes,
  e.g. ``ragloom: 30/300 files (10%), 1.2 MB, 3.4 MB/s``: readable in a log file;
- ``mode="off"``: nothing.

``mode=None`` picks ``bar`` where rich sees a terminal or a notebook, else ``lines``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any, Literal, TextIO

__all__ = ["Progress", "format_bytes", "render_table", "require_rich", "rich_missing"]

Mode = Literal["bar", "lines", "off"]

def rich_missing() -> str:
    """The message of a progress display asked for without rich installed."""
    from ._install import install_hint

    return (
        "show_progress=True needs the rich library, which is not installed: "
        f"{install_hint('ragloom', 'cli')}, or install rich on its own (pip install rich)"
    )


def require_rich() -> None:
    """Raise ``ModuleNotFoundError`` naming how to install rich when it is missing."""
    try:
        import rich  # noqa: F401
    except ImportError:
        raise ModuleNotFoundError(rich_missing(), name="rich") from None


def format_bytes(n: float) -> str:
    """A byte count for people, in decimal units (``1.2 MB``), by ``rich.filesize``; without
    rich, the count in bytes."""
    try:
        from rich.filesize import decimal
    except ImportError:
        return f"{int(n)} bytes"
    return decimal(int(n))


def _interval() -> float:
    text = os.environ.get("RAGLOOM_PROGRESS_INTERVAL", "").strip()
    try:
        return max(0.0, float(text)) if text else 5.0
    except ValueError:
        return 5.0


class Progress:
    """Counts units done out of ``total`` (``None``: unknown) and shows it on ``stream``.

    Args:
        total: how many units there are (``None`` when not known in advance).
        label: what a unit is, plural (``"files"``).
        stream: where to draw (default: ``sys.stderr``).
        mode: ``"bar"``, ``"lines"`` or ``"off"``; ``None`` picks (see the module).
        interval: seconds between plain lines at most (default: ``RAGLOOM_PROGRESS_INTERVAL``).
        show_bytes: show the bytes read and the rate.
        started: when the work began (``time.perf_counter()``; default: now), for the rate.
    """

    def __init__(
        self,
        total: int | None,
        *,
        label: str = "items",
        stream: TextIO | None = None,
        mode: Mode | None = None,
        interval: float | None = None,
        show_bytes: bool = False,
        started: float | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = None if total is None else max(0, total)
        self.label = label
        self.show_bytes = show_bytes
        self.done = 0
        self.bytes = 0
        self.note = ""
        self.interval = _interval() if interval is None else interval
        self.started = time.perf_counter() if started is None else started
        self._last_line = 0.0
        self._last_tenth = 0
        self._printed: tuple[int, int, str] | None = None
        self._bar: Any = None
        self._task: Any = None
        self._closed = False
        self.mode: Mode = mode if mode is not None else self._pick_mode()
        if self.mode == "bar":
            self._start_bar()

    # -- choosing and starting --------------------------------------------------------------

    def _console(self) -> Any:
        from rich.console import Console

        return Console(file=self.stream)

    def _pick_mode(self) -> Mode:
        try:
            console = self._console()
        except ImportError:
            return "lines"
        return "bar" if console.is_terminal or console.is_jupyter else "lines"

    def _start_bar(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        self._bar = Bar(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self._console(),
            transient=False,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=self.total, detail="")

    # -- counting ---------------------------------------------------------------------------

    def update(self, done: int, *, nbytes: int | None = None, note: str | None = None) -> None:
        """Set the units done (and the bytes read, the note) and show it."""
        self.done = min(done, self.total) if self.total is not None else done
        if nbytes is not None:
            self.bytes = nbytes
        if note is not None:
            self.note = note
        if self.mode == "bar":
            self._bar.update(self._task, completed=self.done, detail=self._detail())
        elif self.mode == "lines":
            now = time.perf_counter()
            tenth = 10 * self.done // self.total if self.total else 0
            if tenth > self._last_tenth or now - self._last_line >= self.interval:
                self._last_tenth = max(self._last_tenth, tenth)
                self._line(now)

    def advance(self, units: int = 1, nbytes: int = 0) -> None:
        """Count ``units`` more done (and ``nbytes`` more read)."""
        if units or nbytes:
            self.update(self.done + units, nbytes=self.bytes + nbytes)

    def close(self) -> None:
        """Finish the display: the bar's final state, or a last line if the final counts were
        not printed yet (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.mode == "bar":
            self._bar.update(self._task, completed=self.done, detail=self._detail())
            self._bar.stop()
        elif self.mode == "lines" and self._printed != self._state():
            self._line(time.perf_counter())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- drawing ----------------------------------------------------------------------------

    def _state(self) -> tuple[int, int, str]:
        return self.done, self.bytes, self.note

    def _rate(self, now: float) -> str:
        elapsed = now - self.started
        return f"{format_bytes(self.bytes / elapsed)}/s" if elapsed > 0 else ""

    def _detail(self) -> str:
        parts = []
        if self.show_bytes:
            parts.append(format_bytes(self.bytes))
            rate = self._rate(time.perf_counter())
            if rate:
                parts.append(rate)
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)

    def _line(self, now: float) -> None:
        if self.total is not None:
            percent = f" ({100 * self.done // self.total}%)" if self.total else ""
            parts = [f"{self.done}/{self.total} {self.label}{percent}"]
        else:
            parts = [f"{self.done} {self.label}"]
        if self.show_bytes:
            parts.append(format_bytes(self.bytes))
            rate = self._rate(now)
            if rate:
                parts.append(rate)
        if self.note:
            parts.append(self.note)
        self.stream.write("ragloom: " + ", ".join(parts) + "\n")
        self.stream.flush()
        self._last_line = now
        self._printed = self._state()


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    indent: int = 0,
    stream: TextIO | None = None,
) -> str:
    """``rows`` under ``headers`` as text columns (rich's ``Table`` without borders), each
    line indented by ``indent`` spaces and without trailing blanks.

    On a terminal (``stream``, default ``sys.stdout``) long cells wrap within its width, with
    bold headers; elsewhere (a pipe, a file) nothing wraps and no escape codes are written, so
    every row stays one line that scripts can split into columns.
    """
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table

    target = stream if stream is not None else sys.stdout
    terminal = bool(getattr(target, "isatty", None) and target.isatty())
    width = shutil.get_terminal_size((100, 24)).columns - indent if terminal else 1 << 20
    table = Table(
        box=None,
        pad_edge=False,
        padding=(0, 1),
        show_edge=False,
        header_style="bold" if terminal else "",
        highlight=False,
    )
    for header in headers:
        table.add_column(header, overflow="fold", no_wrap=not terminal)
    for row in rows:
        table.add_row(*row)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=max(20, width),
        force_terminal=terminal,
        color_system="standard" if terminal else None,
        highlight=False,
        soft_wrap=False,
    )
    console.print(table)
    pad = " " * indent
    return "\n".join((pad + line).rstrip() for line in buffer.getvalue().splitlines())
