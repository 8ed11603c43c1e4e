"""How one item's outputs are written to and read back from a cache entry (JSON, never pickle).

A payload is a JSON array of the outputs' full ``model_dump`` (any pydantic model), or, when at
least one output is a chunk derived from the input document, an object ``{"derived": [...]}``
with one element per output:

- an object: the output's full ``model_dump``;
- an array ``[start, end]`` or ``[start, end, {overrides}]``: a chunk *derived* from the input
  document, i.e. a :class:`~ragloom.models.Document` whose content is exactly
  ``parent.content[start:end]``, whose ``parent_id`` is the parent's id, and whose other fields
  (``id = "{parent.id}#{index}"``, ``index`` = its position, the parent's ``content_format``
  and ``metadata``) are implied unless listed in ``overrides``.

Derived chunks make an entry small (offsets instead of a second copy of the text) and replay
cheap (slices of the input instead of parsing and validating every chunk). The input document is
part of the entry's key (identity, content hash, format, metadata), so what is implied is exactly
what was there when the entry was written. Every value read back is checked; anything that does
not fit raises :class:`~ragloom.errors.CacheCorruptError` rather than producing a wrong output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import CacheCorruptError
from ..models import ContentFormat, Document

__all__ = ["decode_outputs", "encode_outputs"]

_ADAPTERS: dict[type[BaseModel], TypeAdapter[list[Any]]] = {}
_FIELDS = frozenset(Document.model_fields)
_OVERRIDABLE = frozenset({"id", "index", "content_format", "metadata"})
_set = object.__setattr__
_new = Document.__new__


def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
    return adapter


#: Replayed chunks of a frozen ``Document`` share one "fields set" (pydantic copies it before
#: changing it, and a frozen model never changes its own): one allocation less per chunk.
_SHARED_FIELDS_SET: set[str] | None = (
    set(_FIELDS) if Document.model_config.get("frozen") else None
)


def _construct_fast(values: dict[str, Any]) -> Document:
    """A ``Document`` from already-checked values (what ``model_construct`` does, 3x cheaper)."""
    doc = _new(Document)
    _set(doc, "__dict__", values)
    _set(doc, "__pydantic_fields_set__", _SHARED_FIELDS_SET or set(_FIELDS))
    _set(doc, "__pydantic_extra__", None)
    _set(doc, "__pydantic_private__", None)
    return doc


def _construct_slow(values: dict[str, Any]) -> Document:
    return Document.model_construct(**values)


def _pick_constructor() -> Callable[[dict[str, Any]], Document]:
    sample: dict[str, Any] = {
        "id": "p#0", "content": "x", "content_format": ContentFormat.TEXT, "metadata": {},
        "parent_id": "p", "index": 0, "start": 0, "end": 1,
    }
    try:
        fast = _construct_fast(dict(sample))
        slow = Document.model_construct(**sample)
        if fast == slow and fast.model_dump() == slow.model_dump() and repr(fast) == repr(slow):
            return _construct_fast
    except Exception:  # noqa: BLE001 - a pydantic whose internals differ: use the public path
        pass
    return _construct_slow  # pragma: no cover - depends on the pydantic version


_construct: Callable[[dict[str, Any]], Document] = _pick_constructor()


# -- writing ---------------------------------------------------------------------------------


def _derived(parent: Document, position: int, out: Any) -> list[Any] | None:
    """The compact form of ``out`` relative to ``parent``, or ``None`` if it is not derived."""
    if type(out) is not Document or out.parent_id != parent.id:
        return None
    start, end, content, index = out.start, out.end, out.content, out.index
    if start is None or end is None or index is None or end - start != len(content):
        return None
    if not parent.content.startswith(content, start):
        return None
    overrides: dict[str, Any] = {}
    if index != position:
        overrides["index"] = index
    if out.id != f"{parent.id}#{index}":
        overrides["id"] = out.id
    if out.content_format != parent.content_format:
        overrides["content_format"] = str(out.content_format)
    meta, base = out.metadata, parent.metadata
    if meta is not base and (
        len(meta) != len(base) or any(meta.get(k, _MISSING) is not v for k, v in base.items())
    ):
        overrides["metadata"] = out.model_dump(mode="json", include={"metadata"})["metadata"]
    return [start, end, overrides] if overrides else [start, end]


_MISSING = object()


def encode_outputs(item: Any, outputs: Sequence[BaseModel]) -> str:
    """The JSON payload of ``outputs``, compact for chunks derived from a ``Document`` item."""
    if not outputs:
        return "[]"
    if type(item) is Document:
        parts: list[str] = []
        dumps = json.dumps
        derived = False
        for position, out in enumerate(outputs):
            compact = _derived(item, position, out)
            if compact is None:
                parts.append(out.model_dump_json())
                continue
            derived = True
            if len(compact) == 2:
                parts.append(f"[{compact[0]},{compact[1]}]")
            else:
                parts.append(dumps(compact, ensure_ascii=False, separators=(",", ":")))
        body = "[" + ",".join(parts) + "]"
        return '{"derived":' + body + "}" if derived else body
    return "[" + ",".join(o.model_dump_json() for o in outputs) + "]"


# -- reading ---------------------------------------------------------------------------------


def _bad(where: str, why: str) -> CacheCorruptError:
    return CacheCorruptError(
        f"{where}: {why}; the cache is damaged or was written by an incompatible version: "
        "delete the file or run `ragloom cache clear`"
    )


def _rebuild(parent: Document, position: int, element: list[Any], where: str) -> Document:
    """A derived chunk with overrides (``[start, end, {...}]``); anything else is an error.

    Plain ``[start, end]`` chunks never get here: :func:`_decode_mixed` builds them inline.
    """
    if not 2 <= len(element) <= 3:
        raise _bad(where, f"output {position} has {len(element)} fields, expected 2 or 3")
    start, end = element[0], element[1]
    content = parent.content
    if type(start) is not int or type(end) is not int or not 0 <= start <= end <= len(content):
        raise _bad(where, f"output {position} has span {start!r}..{end!r} outside the input")
    overrides = element[2] if len(element) == 3 else None
    if type(overrides) is not dict or not overrides.keys() <= _OVERRIDABLE:
        raise _bad(where, f"output {position} has unreadable overrides {overrides!r:.80}")
    index = overrides.get("index", position)
    if type(index) is not int or index < 0:
        raise _bad(where, f"output {position} has index {index!r}")
    ident = overrides.get("id", f"{parent.id}#{index}")
    if type(ident) is not str or not ident:
        raise _bad(where, f"output {position} has id {ident!r}")
    fmt: Any = parent.content_format
    if "content_format" in overrides:
        raw = overrides["content_format"]
        if type(raw) is not str or not raw.strip():
            raise _bad(where, f"output {position} has content_format {raw!r}")
        fmt = ContentFormat.coerce(raw)
    meta = overrides.get("metadata", _MISSING)
    if meta is _MISSING:
        meta = dict(parent.metadata)
    elif type(meta) is not dict:
        raise _bad(where, f"output {position} has metadata of type {type(meta).__name__}")
    return _construct(
        {
            "id": ident,
            "content": content[start:end],
            "content_format": fmt,
            "metadata": meta,
            "parent_id": parent.id,
            "index": index,
            "start": start,
            "end": end,
        }
    )


def decode_outputs(
    payload: str, item: Any, model: type[BaseModel], *, expected: int | None = None,
    where: str = "cache entry",
) -> list[Any]:
    """The outputs stored in ``payload`` for input ``item``, each a valid ``model`` instance.

    Raises:
        CacheCorruptError: the payload is not valid JSON, does not validate as ``model``, refers
            to offsets outside ``item``, or holds another number of outputs than ``expected``.
    """
    try:
        if not payload.startswith("{"):
            # Only full objects (or nothing): one pass through pydantic's JSON validator.
            outputs = _adapter(model).validate_json(payload)
        else:
            outputs = _decode_mixed(payload, item, model, where)
    except CacheCorruptError:
        raise
    except (ValueError, ValidationError, TypeError) as exc:
        raise _bad(where, f"its payload does not read back as {model.__name__} ({exc})") from exc
    if expected is not None and len(outputs) != expected:
        raise _bad(where, f"it holds {len(outputs)} outputs, its header says {expected}")
    return outputs


def _decode_mixed(payload: str, item: Any, model: type[BaseModel], where: str) -> list[Any]:
    wrapper = json.loads(payload)
    data = wrapper.get("derived") if type(wrapper) is dict and len(wrapper) == 1 else None
    if type(data) is not list:
        raise _bad(where, "its payload is neither a JSON array nor {\"derived\": [...]}")
    if type(item) is not Document or not issubclass(Document, model):
        raise _bad(
            where,
            f"it holds chunks derived from a Document, but the input is {type(item).__name__} "
            f"and the step's output model is {model.__name__}",
        )
    outputs: list[Any] = []
    append = outputs.append
    construct = _construct
    validate = model.model_validate
    parent = item
    content = parent.content
    size = len(content)
    fmt = parent.content_format
    meta = parent.metadata
    parent_id = parent.id
    prefix = parent_id + "#"
    for position, element in enumerate(data):
        if type(element) is list and len(element) == 2:
            start, end = element
            if type(start) is int and type(end) is int and 0 <= start <= end <= size:
                # The common case, inlined: a plain chunk of the parent.
                append(
                    construct(
                        {
                            "id": f"{prefix}{position}",
                            "content": content[start:end],
                            "content_format": fmt,
                            "metadata": dict(meta) if meta else {},
                            "parent_id": parent_id,
                            "index": position,
                            "start": start,
                            "end": end,
                        }
                    )
                )
                continue
        if type(element) is list:
            append(_rebuild(parent, position, element, where))
        elif type(element) is dict:
            append(validate(element))
        else:
            raise _bad(where, f"output {position} is a {type(element).__name__}")
    return outputs
