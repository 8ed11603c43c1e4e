"""Invariant checks on chunks, usable from any test."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..models import Document

__all__ = ["ChunkInvariantError", "check_chunks"]


class ChunkInvariantError(AssertionError):
    """A chunker broke one of the chunk invariants; the message names which and where."""


def check_chunks(
    parent: Document,
    chunks: Sequence[Document],
    *,
    chunk_size: int | None = None,
    length: Callable[[str], int] = len,
    overlap: int = 0,
    lossless: bool = True,
    slices: bool = True,
) -> None:
    """Check every chunk invariant of ragloom's chunker family for one parent.

    - lineage: ``parent_id``, consecutive ``index`` from 0, ids ``"{parent.id}#{index}"``;
    - exact spans: ``parent.content[start:end] == chunk.content``;
    - metadata inherited: every parent metadata key is present (a chunk may add keys);
    - size: ``length(content) <= chunk_size`` unless ``metadata["oversized"]`` is true;
    - with ``overlap == 0`` and ``lossless``: spans tile ``[0, len(parent.content))`` in order;
    - with overlap: spans start in increasing order, cover the document with no gap, and a
      chunk starts no earlier than ``overlap`` length units before the previous chunk's end.

    With ``slices=False`` (chunks rendered from structure, e.g. Docling items), chunks carry no
    span; each must say how it maps back in ``metadata["span_kind"]``, and the span, tiling and
    overlap checks are skipped.
    """
    content = parent.content
    if not content:
        if chunks:
            raise ChunkInvariantError(f"empty document {parent.id!r} produced {len(chunks)} chunks")
        return
    prev_end = 0
    prev_start = -1
    for i, chunk in enumerate(chunks):
        where = f"chunk {i} of {parent.id!r}"
        if chunk.parent_id != parent.id:
            raise ChunkInvariantError(f"{where}: parent_id {chunk.parent_id!r} != {parent.id!r}")
        if chunk.index != i:
            raise ChunkInvariantError(f"{where}: index {chunk.index} (expected {i})")
        if chunk.id != f"{parent.id}#{i}":
            raise ChunkInvariantError(f"{where}: id {chunk.id!r} is not '{parent.id}#{i}'")
        for key, value in parent.metadata.items():
            if key not in chunk.metadata:
                raise ChunkInvariantError(f"{where}: parent metadata {key!r} not inherited")
            if chunk.metadata[key] != value and key not in ("headings",):
                raise ChunkInvariantError(f"{where}: parent metadata {key!r} changed")
        if not chunk.content:
            raise ChunkInvariantError(f"{where}: empty chunk")
        if chunk_size is not None and not chunk.metadata.get("oversized"):
            size = length(chunk.content)
            if size > chunk_size:
                raise ChunkInvariantError(f"{where}: length {size} > chunk_size {chunk_size}")
        if not slices:
            if chunk.start is not None or not chunk.metadata.get("span_kind"):
                raise ChunkInvariantError(
                    f"{where}: a non-slice chunk has no span and says how it maps back in "
                    "metadata['span_kind']"
                )
            continue
        if chunk.start is None or chunk.end is None:
            raise ChunkInvariantError(f"{where}: no span")
        if content[chunk.start : chunk.end] != chunk.content:
            raise ChunkInvariantError(
                f"{where}: content is not parent.content[{chunk.start}:{chunk.end}]"
            )
        if chunk.start <= prev_start:
            raise ChunkInvariantError(f"{where}: starts at {chunk.start}, not after {prev_start}")
        if overlap == 0 and lossless and chunk.start != prev_end:
            kind = "gap" if chunk.start > prev_end else "overlap"
            raise ChunkInvariantError(
                f"{where}: {kind} between offsets {prev_end} and {chunk.start} "
                f"({content[min(prev_end, chunk.start) : max(prev_end, chunk.start)]!r})"
            )
        if overlap and lossless:
            if chunk.start > prev_end:
                raise ChunkInvariantError(f"{where}: gap between {prev_end} and {chunk.start}")
            if i and length(content[chunk.start : prev_end]) > overlap:
                raise ChunkInvariantError(
                    f"{where}: overlaps the previous chunk by more than {overlap}"
                )
        prev_start = chunk.start
        prev_end = max(prev_end, chunk.end)
    if slices and lossless and prev_end != len(content):
        raise ChunkInvariantError(
            f"{parent.id!r}: chunks end at {prev_end}, document has {len(content)} characters"
        )
