"""A ragloom chunker as the wrappers hold it: resolved, serialisable, and called directly.

A wrapper is given a registered name with parameters, a step spec (the mapping a pipeline
file's step holds), or a chunker object. :class:`BoundChunker` keeps the chunker and the spec
that rebuilds it (so the framework can serialise the wrapper), and cuts text through the
chunker's own ``split`` hook: no pipeline, no event loop, no chunk objects it would throw away.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from ragloom import (
    Chunker,
    ChunkerRouter,
    ChunkSpan,
    ConfigurationError,
    Document,
    UnroutedItemError,
)

from ragloom_interop._common import full_class_name

__all__ = ["BoundChunker", "Cut"]


class Cut(NamedTuple):
    """One chunk of a text: its text, its exact ``[start, end)`` span (``None`` for rendered
    text) and the metadata the chunker gave it (to merge over the parent's)."""

    text: str
    start: int | None
    end: int | None
    metadata: Mapping[str, Any] | None


class BoundChunker:
    """A ragloom chunker, the spec that rebuilds it, and its fast cutting path."""

    __slots__ = ("_opaque", "chunker", "spec")

    def __init__(self, chunker: Chunker, spec: dict[str, Any] | None) -> None:
        self.chunker = chunker
        #: The pipeline-file step spec that rebuilds the chunker; ``None`` when it cannot be
        #: written (a chunker class registered under no entry point).
        self.spec = spec
        self._opaque: str | None = None

    @classmethod
    def resolve(cls, chunker: object, params: Mapping[str, Any], *, owner: str) -> BoundChunker:
        """Build from a registered name (with ``params``), a step spec, or a chunker object.

        Raises:
            TypeError: ``chunker`` is none of these, or parameters were given with an object.
            ragloom.ConfigurationError: an unknown name or parameter (the message lists the
                valid ones).
        """
        params = {k: v for k, v in params.items() if v is not None}
        if isinstance(chunker, str):
            from ragloom.plugins import Registry

            built = Registry().create("chunker", chunker, params)
            spec: dict[str, Any] = {"chunker": chunker}
            if params:
                spec["params"] = dict(params)
            return cls(built, spec)
        if isinstance(chunker, Mapping):
            if params:
                raise TypeError(
                    f"{owner}: parameters ({', '.join(sorted(params))}) go inside the step spec "
                    "when the chunker is given as a spec"
                )
            return cls(_build_step(dict(chunker), owner), dict(chunker))
        if isinstance(chunker, Chunker):  # ChunkerRouter is registered as a Chunker
            if params:
                raise TypeError(
                    f"{owner}: parameters ({', '.join(sorted(params))}) configure a chunker "
                    f"built by name; this {type(chunker).__name__} is already built (pass its "
                    "parameters to its constructor, or pass a registered name like 'recursive')"
                )
            return cls(chunker, _dump_step(chunker))
        raise TypeError(
            f"{owner}: chunker must be a registered chunker name (like 'recursive'), a step "
            f"spec mapping, or a ragloom.Chunker; got {full_class_name(chunker)}"
        )

    @property
    def identity(self) -> str:
        """A stable hash of everything that shapes the chunks (the chunker's ``config_hash``).

        A chunker whose arguments have no stable identity (a lambda length function) gets a
        token unique to this object instead: caches keyed on it never confuse two chunkers.
        """
        try:
            return self.chunker.config_hash
        except Exception:  # noqa: BLE001 - ragloom.identity.Uncacheable and kin
            if self._opaque is None:
                self._opaque = f"opaque-{uuid.uuid4().hex}"
            return self._opaque

    def attribute(self, name: str) -> Any:
        """``name`` of the chunker, or of a router's default chunker (``None`` if neither)."""
        value = getattr(self.chunker, name, None)
        if value is None and isinstance(self.chunker, ChunkerRouter):
            value = getattr(self.chunker.default_step, name, None)
        return value

    def cuts(self, document: Document) -> list[Cut]:
        """The chunks of ``document``, as the chunker cuts them, in order.

        Raises:
            ragloom.InvalidInputError: the chunker does not accept the document's format.
            ragloom.UnroutedItemError: a router has no route and no default for it.
        """
        chunker: Any = self.chunker
        while isinstance(chunker, ChunkerRouter):
            child = chunker.select(document)
            if child is None:
                raise UnroutedItemError(
                    f"{chunker.name}: document {document.id!r} (content format "
                    f"{str(document.content_format)!r}) matched no route and no default is set"
                )
            chunker = child
        if chunker.awaits:  # a model-backed chunker: its own synchronous entry point
            return [_cut_of(c) for c in chunker.chunk(document)]
        chunker.validate_input(document)
        pieces = list(chunker.split(document))
        content = document.content
        n = len(content)
        out: list[Cut] = []
        for piece in pieces:
            if type(piece) is not ChunkSpan or not 0 <= piece.start <= piece.end <= n:
                # Text pieces are located, bad spans reported, by the chunker's own builder.
                return [_cut_of(c) for c in chunker.build_chunks(document, pieces)]
            out.append(
                Cut(content[piece.start : piece.end], piece.start, piece.end, piece.metadata)
            )
        return out

    def split_text(self, text: str) -> list[str]:
        """The chunk texts of ``text`` (plain text format)."""
        chunker = self.chunker
        if type(chunker).__module__.startswith("ragloom_text.") and not chunker.awaits:
            # ragloom-text's chunkers slice their spans straight into strings (no document per
            # chunk, no hashed id): about a third faster than cutting a document here. Only
            # classes of that package are trusted to mean it.
            return chunker.split_text(text)
        document = Document.model_construct(
            id="text", content=text, content_format="text", metadata={}, parent_id=None
        )
        return [cut.text for cut in self.cuts(document)]


def _cut_of(chunk: Document) -> Cut:
    return Cut(chunk.content, chunk.start, chunk.end, chunk.metadata)


def _build_step(spec: dict[str, Any], owner: str) -> Chunker:
    from ragloom.config import build_pipeline

    # Imports are allowed: the spec comes from Python code or from the host framework's own
    # saved pipeline, whose loader already imports every component class named in it.
    step = build_pipeline(
        {"version": 1, "steps": [spec]}, source=f"{owner} chunker spec", allow_imports=True
    )
    built = step.steps()[-1]
    if not isinstance(built, Chunker):
        raise ConfigurationError(
            f"{owner}: the chunker spec builds a {type(built).__name__}, not a chunker"
        )
    return built


def _dump_step(chunker: Chunker) -> dict[str, Any] | None:
    from ragloom import Pipeline
    from ragloom.config import dump_pipeline

    try:
        steps = dump_pipeline(Pipeline(chunker))["steps"]
    except ConfigurationError:  # not registered under an entry point: not writable
        return None
    spec: dict[str, Any] = steps[-1]
    return spec
