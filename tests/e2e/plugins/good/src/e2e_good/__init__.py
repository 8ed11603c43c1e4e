"""A small, well-behaved third-party plugin used by the end-to-end tests."""

from ragloom import Chunker, ChunkSpan


class Halves(Chunker):
    """Cuts each document into two halves."""

    step_id = "e2e-good/halves"

    def split(self, document):
        mid = len(document.content) // 2
        if document.content:
            yield ChunkSpan(0, mid)
            yield ChunkSpan(mid, len(document.content))
