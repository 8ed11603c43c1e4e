"""The JSONL writer of a local run, taking lines the workers already encoded."""

from __future__ import annotations

from ragloom.ingest import AtomicJsonlWriter

__all__ = ["LineWriter"]


#: The driver writes the lines workers encoded (same encoder: strict JSON,
#: ``ensure_ascii=False``, ``default=str``) as they are, with ``write_line``: the file is byte
#: for byte what a local run writes.
LineWriter = AtomicJsonlWriter
