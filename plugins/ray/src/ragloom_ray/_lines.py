"""The JSONL writer of a local run, taking lines the workers already encoded."""

from __future__ import annotations

from ragloom.ingest import AtomicJsonlWriter

__all__ = ["LineWriter"]


class LineWriter(AtomicJsonlWriter):
    """:class:`~ragloom.ingest.AtomicJsonlWriter` (a temp file renamed into place on commit)
    that also takes a line already encoded by a worker with the same encoder (strict JSON,
    ``ensure_ascii=False``, ``default=str``): the driver writes it as it is instead of decoding
    and encoding it again, so the file is byte for byte what ``write`` would have made."""

    def write_line(self, line: str) -> None:
        """Append one encoded record (without its newline)."""
        self._file.write(line)
        self._file.write("\n")
        self.count += 1
