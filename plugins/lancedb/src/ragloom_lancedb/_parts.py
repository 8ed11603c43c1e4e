"""Parts of the chunks table written where a pipeline runs: Lance fragments, committed by the
store that gave the writer (:meth:`LanceDBStore.commit_parts
<ragloom_lancedb.LanceDBStore.commit_parts>`).

A worker of a distributed engine builds its chunks' rows and writes them as data files of the
chunks table (``lance.fragment.write_fragments``), which no version of the table lists yet: no
reader sees them. It hands back the fragments' metadata (a few hundred bytes each), and the
driver commits them in batches as they come (an ``Append`` each), or, when the run fails,
returns the store to where it stood and removes their files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragloom.stores import StoreError, StorePart

from ._rows import chunk_rows
from ._threads import use_every_cpu

__all__ = ["FragmentWriter", "Fragments"]


@dataclass(frozen=True)
class Fragments:
    """What a part of the chunks table holds: fragments written and not committed."""

    #: The chunks table the fragments were written to.
    table_uri: str
    #: The vector dimension of their rows (``None``: no rows).
    dimension: int | None
    #: ``lance.fragment.FragmentMetadata`` of each fragment (plain data: it pickles).
    fragments: tuple[Any, ...]
    #: Rows in all of them.
    rows: int


@dataclass(frozen=True)
class FragmentWriter:
    """Writes documents' chunks as uncommitted fragments of a store's chunks table (a
    :class:`~ragloom.stores.PartWriter`): plain data, sent to where the pipeline runs."""

    #: The chunks table (``<store>/chunks.lance``).
    table_uri: str
    #: The store's location, for error messages.
    location: str
    #: The table's vector dimension (``None``: no table yet).
    dimension: int | None
    #: Whether the table exists (its fragments are then written against its schema).
    exists: bool
    #: Whether the table is a folder of this machine (``False``: object storage).
    machine_local: bool = True
    storage_options: dict[str, str] | None = None

    def write(self, documents: Sequence[tuple[str, Sequence[Any]]]) -> StorePart:
        """Check and write the chunks of each ``(document id, chunks)``; nothing is visible
        until the store commits the part.

        Raises:
            InvalidInputError: a chunk the store cannot hold (see :func:`._rows.chunk_rows`).
            StoreError: another vector dimension than the table's, or a failed write.
        """
        ids, counts, rows, dimension = chunk_rows(documents, self.dimension, self.location)
        fragments: tuple[Any, ...] = ()
        if rows is not None:
            use_every_cpu()  # a worker's own process: before its first use of Lance
            from lance.fragment import write_fragments

            # Before the table's first commit its fragments are written as for a new table
            # (field ids assigned in schema order, as LanceDB's create_table assigns them);
            # once a commit created it (the run commits as it goes), against its schema.
            modes = ["append"] if self.exists else ["create", "append"]
            while True:
                mode = modes.pop(0)
                try:
                    fragments = tuple(write_fragments(
                        rows, self.table_uri, schema=rows.schema, mode=mode,
                        storage_options=self.storage_options,
                    ))
                    break
                except Exception as exc:  # noqa: BLE001 - every backend failure: a StoreError
                    text = str(exc).strip().splitlines()
                    if modes and "already exists" in str(exc):
                        object.__setattr__(self, "exists", True)  # the next writes append
                        continue
                    raise StoreError(
                        f"LanceDB store at {self.location}: cannot write chunks: "
                        f"{text[0] if text else type(exc).__name__}"
                    ) from None
        return StorePart(
            tuple(zip(ids, counts, strict=True)),
            Fragments(self.table_uri, dimension, fragments, 0 if rows is None else rows.num_rows),
        )
