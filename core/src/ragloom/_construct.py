"""Building ``Document`` instances from values already known to be valid, cheaply.

Chunkers and cache replay create one ``Document`` per chunk, tens of thousands per corpus.
``Document.model_construct`` skips validation but still costs a few microseconds per call
(keyword arguments, defaults, a new "fields set"); :func:`construct_document` does what it does
for a full set of field values in a fraction of that. It is used only after checking, once at
import, that it builds exactly what ``model_construct`` builds with this pydantic; otherwise
it is ``model_construct`` itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from itertools import repeat
from typing import Any

from pydantic import BaseModel

from .models import ContentFormat, Document

__all__ = ["construct_chunks", "construct_document"]

_FIELDS = frozenset(Document.model_fields)

#: The "fields set" every constructed ``Document`` shares (all fields are given): pydantic
#: copies it before changing it, and a frozen model never changes its own. ``None`` if the
#: model is not frozen (then each instance gets its own set).
_FIELDS_SET: set[str] | None = set(_FIELDS) if Document.model_config.get("frozen") else None


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    """A setter of one slot of a pydantic model, through its descriptor (one lookup less per
    object than ``object.__setattr__``), or ``object.__setattr__`` where it has none."""
    descriptor = vars(BaseModel).get(name)
    setter = getattr(descriptor, "__set__", None)
    if setter is None:  # pragma: no cover - depends on the pydantic version
        return lambda obj, value: object.__setattr__(obj, name, value)
    return setter  # type: ignore[no-any-return]


_new = Document.__new__
_set_dict = _slot_setter("__dict__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def _construct_fast(values: dict[str, Any]) -> Document:
    """A ``Document`` whose ``__dict__`` is ``values`` (every field, already valid)."""
    doc = _new(Document)
    _set_dict(doc, values)
    _set_fields_set(doc, _FIELDS_SET if _FIELDS_SET is not None else set(_FIELDS))
    _set_extra(doc, None)
    _set_private(doc, None)
    return doc


def _construct_slow(values: dict[str, Any]) -> Document:
    return Document.model_construct(**values)


def _pick() -> Callable[[dict[str, Any]], Document]:
    """``_construct_fast`` when it builds exactly what ``model_construct`` builds."""
    sample: dict[str, Any] = {
        "id": "p#0", "content": "x", "content_format": ContentFormat.TEXT, "metadata": {},
        "parent_id": "p", "index": 0, "start": 0, "end": 1, "embedding": None,
    }
    try:
        fast = _construct_fast(dict(sample))
        slow = Document.model_construct(**sample)
        if (
            fast == slow
            and fast.model_dump() == slow.model_dump()
            and repr(fast) == repr(slow)
            and fast.model_fields_set == slow.model_fields_set
            and fast.model_copy(update={"index": 1}).index == 1
            and fast.model_copy(deep=True) == slow
        ):
            return _construct_fast
    except Exception:  # noqa: BLE001 - a pydantic whose internals differ: use the public path
        pass
    return _construct_slow  # pragma: no cover - depends on the pydantic version


#: Build a ``Document`` from a dict holding every field (the dict becomes its ``__dict__``).
construct_document: Callable[[dict[str, Any]], Document] = _pick()


Span = tuple[int, int, Mapping[str, Any] | None]
BadSpan = Callable[[int, int], Exception]


#: ``"#0"``, ``"#1"``, ...: the id suffixes of the first chunks of a document, made once.
_SUFFIXES = tuple(f"#{i}" for i in range(4096))


def _chunks_fast(
    parent: Document, content_format: str, spans: Iterable[Span], bad_span: BadSpan
) -> list[Document]:
    """The chunks of ``parent`` for exact ``(start, end, metadata)`` spans, built as
    ``construct_document`` builds one, a step at a time for all of them (each step one C-level
    loop: a chunking run builds tens of thousands)."""
    assert _FIELDS_SET is not None  # chosen only for a frozen model
    spans = spans if isinstance(spans, list) else list(spans)
    content = parent.content
    pid = parent.id
    base = parent.metadata
    n = len(content)
    count = len(spans)
    suffix = _SUFFIXES if count <= len(_SUFFIXES) else [f"#{i}" for i in range(count)]

    def bad(start: int, end: int) -> str:
        raise bad_span(start, end)

    fmt = content_format
    if base:
        values = [
            {
                "id": pid + suffix[i],
                "content": content[a:b] if 0 <= a <= b <= n else bad(a, b),
                "content_format": fmt,
                "metadata": {**base, **meta} if meta else {**base},
                "parent_id": pid,
                "index": i,
                "start": a,
                "end": b,
                "embedding": None,
            }
            for i, (a, b, meta) in enumerate(spans)
        ]
    else:
        values = [
            {
                "id": pid + suffix[i],
                "content": content[a:b] if 0 <= a <= b <= n else bad(a, b),
                "content_format": fmt,
                "metadata": {**meta} if meta else {},
                "parent_id": pid,
                "index": i,
                "start": a,
                "end": b,
                "embedding": None,
            }
            for i, (a, b, meta) in enumerate(spans)
        ]
    chunks = list(map(_new, repeat(Document, count)))
    deque(map(_set_dict, chunks, values), 0)
    deque(map(_set_fields_set, chunks, repeat(_FIELDS_SET, count)), 0)
    deque(map(_set_extra, chunks, repeat(None, count)), 0)
    deque(map(_set_private, chunks, repeat(None, count)), 0)
    return chunks


def _chunks_slow(
    parent: Document, content_format: str, spans: Iterable[Span], bad_span: BadSpan
) -> list[Document]:
    content = parent.content
    chunks: list[Document] = []
    for index, (start, end, meta) in enumerate(spans):
        if not 0 <= start <= end <= len(content):
            raise bad_span(start, end)
        chunks.append(
            construct_document(
                {
                    "id": f"{parent.id}#{index}",
                    "content": content[start:end],
                    "content_format": content_format,
                    "metadata": {**parent.metadata, **meta} if meta else dict(parent.metadata),
                    "parent_id": parent.id,
                    "index": index,
                    "start": start,
                    "end": end,
                    "embedding": None,
                }
            )
        )
    return chunks


#: Build the chunks of ``parent`` for exact ``(start, end, metadata)`` spans, numbered from 0;
#: ``bad_span(start, end)`` is raised for a span outside the parent.
construct_chunks: Callable[[Document, str, Iterable[Span], BadSpan], list[Document]] = (
    _chunks_fast
    if construct_document is _construct_fast and _FIELDS_SET is not None
    else _chunks_slow
)
