from ragloom import Chunker, ChunkSpan


class Same(Chunker):
    step_id = "e2e-clash-b/same"

    def split(self, document):
        yield ChunkSpan(0, len(document.content))
