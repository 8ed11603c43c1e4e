"""Hook implementations of ragloom-e2e-good, kept apart from the chunker module so that
building a pipeline that does not name ``halves`` never imports ``e2e_good``."""

from ragloom.plugins.hookspecs import hookimpl

EVENTS: list[str] = []


@hookimpl
def ragloom_register(register):
    from ragloom import Chunker, ChunkSpan

    class WholeChunker(Chunker):
        step_id = "e2e-good/whole"

        def split(self, document):
            if document.content:
                yield ChunkSpan(0, len(document.content))

    register("chunker", "whole", WholeChunker)


@hookimpl
def ragloom_event(event):
    EVENTS.append(event.kind)
