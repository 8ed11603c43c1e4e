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

import base64
import binascii
import json
import sys
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._construct import construct_document
from ..errors import CacheCorruptError
from ..models import ContentFormat, Document

__all__ = ["decode_many", "decode_outputs", "encode_outputs"]

_ADAPTERS: dict[type[BaseModel], TypeAdapter[list[Any]]] = {}
_OVERRIDABLE = frozenset({"id", "id+", "index", "content_format", "metadata", "meta+"})
#: The C scanner behind ``json.loads``, without its two Python-level wrappers (a replay parses
#: one small payload per item). It raises ``StopIteration`` or ``ValueError`` on bad input.
_scan_json: Callable[[str, int], tuple[Any, int]]
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
    return adapter


# -- writing ---------------------------------------------------------------------------------


def _compact(parent: Document, prefix: str, position: int, out: Any) -> tuple[str, bool] | None:
    """``out`` as an element of ``parent``'s derived payload (``[start,end]``, or
    ``[start,end,{overrides}]``) and whether it is written relative to the parent (its id and
    metadata follow the parent's on replay); ``None`` if it is not a chunk cut from ``parent``.
    """
    if type(out) is not Document:
        return None
    state = out.__dict__  # holds every field: one dict read each, once per output
    start, end, text, index = state["start"], state["end"], state["content"], state["index"]
    if (
        state["parent_id"] != parent.id
        or state["embedding"] is not None  # vectors are stored in full, with the chunk
        or type(start) is not int
        or type(end) is not int
        or index is None
        or start < 0  # an unvalidated chunk: startswith would count from the end
        or end - start != len(text)
        or not parent.content.startswith(text, start)
    ):
        return None
    ident, fmt, meta = state["id"], state["content_format"], state["metadata"]
    base = parent.metadata
    if (
        index == position
        and ident == f"{prefix}{index}"
        and fmt == parent.content_format
        and (meta is base or not (meta or base))
    ):
        return f"[{start},{end}]", True  # the usual chunk: nothing to override
    overrides: dict[str, Any] = {}
    relative = True
    if index != position:
        overrides["index"] = index
    if ident != f"{prefix}{index}":
        if ident.startswith(parent.id):
            overrides["id+"] = ident[len(parent.id) :]
        else:
            overrides["id"] = ident
            relative = False
    if fmt != parent.content_format:
        overrides["content_format"] = str(fmt)
    if meta is not base and (
        len(meta) != len(base) or any(meta.get(k, _MISSING) is not v for k, v in base.items())
    ):
        if all(k in meta and (meta[k] is v or meta[k] == v) for k, v in base.items()):
            # The parent's metadata with some keys added or changed: stored as that change.
            delta = {k: v for k, v in meta.items() if k not in base or base[k] != v}
            dumped = out.model_dump(mode="json", include={"metadata"})["metadata"]
            overrides["meta+"] = {k: dumped[k] for k in delta}
        else:
            overrides["metadata"] = out.model_dump(mode="json", include={"metadata"})["metadata"]
            relative = False
    if not overrides:
        return f"[{start},{end}]", True
    text_out = json.dumps([start, end, overrides], ensure_ascii=False, separators=(",", ":"))
    return text_out, relative


_MISSING = object()


_FIELDS = tuple(Document.model_fields)


def _embedded(item: Document, out: Any) -> str | None:
    """``{"embedded": ...}`` when ``out`` is ``item`` with an embedding added, else ``None``.

    The vector is stored as base64 of little-endian float32 when every value is a float32
    (what embedders produce: exact, and a quarter of the JSON size), else as JSON numbers.
    """
    if type(out) is not Document or out.embedding is None:
        return None
    mine, theirs = item.__dict__, out.__dict__
    if any(mine[f] != theirs[f] for f in _FIELDS if f != "embedding"):
        return None
    values = out.embedding
    packed = array("f", values)
    if packed.tolist() == values:
        if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
            packed.byteswap()
        return '{"embedded":"' + base64.b64encode(packed.tobytes()).decode("ascii") + '"}'
    return '{"embedded":' + json.dumps(values) + "}"


def encode_outputs(
    item: Any, outputs: Sequence[BaseModel], *, relative_only: bool = False
) -> str | None:
    """The JSON payload of ``outputs``, compact for chunks derived from a ``Document`` item.

    With ``relative_only`` (a step whose outputs depend on its input's content only), every
    output must be written relative to the input, so that a replay takes ids and metadata from
    the current input; ``None`` when that is not possible (the item is then not cached).
    """
    if not outputs:
        return "[]"
    if type(item) is Document and len(outputs) == 1:
        embedded = _embedded(item, outputs[0])
        if embedded is not None:
            return embedded
    if type(item) is Document:
        prefix = item.id + "#"
        parts: list[str] = []
        derived = False
        for position, out in enumerate(outputs):
            compact = _compact(item, prefix, position, out)
            if compact is None:
                if relative_only:
                    return None
                part = out.model_dump_json()
            else:
                part, relative = compact
                if relative_only and not relative:
                    return None
                derived = True
            parts.append(part)
        body = ",".join(parts)
        return '{"derived":[' + body + "]}" if derived else "[" + body + "]"
    if relative_only:
        return None
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
    suffix = overrides.get("id+")
    if suffix is not None and type(suffix) is not str:
        raise _bad(where, f"output {position} has id suffix {suffix!r}")
    if suffix is not None:
        ident = parent.id + suffix
    else:
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
    delta = overrides.get("meta+", _MISSING)
    if meta is _MISSING:
        meta = dict(parent.metadata)
        if delta is not _MISSING:
            if type(delta) is not dict:
                raise _bad(where, f"output {position} has a metadata change {delta!r:.80}")
            meta.update(delta)
    elif type(meta) is not dict:
        raise _bad(where, f"output {position} has metadata of type {type(meta).__name__}")
    return construct_document(
        {
            "id": ident,
            "content": content[start:end],
            "content_format": fmt,
            "metadata": meta,
            "parent_id": parent.id,
            "index": index,
            "start": start,
            "end": end,
            "embedding": None,
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
        if payload.startswith('{"embedded":'):
            outputs = [_decode_embedded(payload, item, model, where)]
        elif not payload.startswith("{"):
            # Only full objects (or nothing): one pass through pydantic's JSON validator.
            outputs = _adapter(model).validate_json(payload)
        else:
            outputs = _decode_derived(_derived_list(payload, where), item, model, where)
    except CacheCorruptError:
        raise
    except (ValueError, ValidationError, TypeError, StopIteration, binascii.Error) as exc:
        raise _bad(where, f"its payload does not read back as {model.__name__} ({exc})") from exc
    if expected is not None and len(outputs) != expected:
        raise _bad(where, f"it holds {len(outputs)} outputs, its header says {expected}")
    return outputs


def decode_many(
    payloads: Sequence[str],
    items: Sequence[Any],
    models: Sequence[type[BaseModel]],
    expected: Sequence[int],
    where: Callable[[int], str],
) -> list[list[Any]]:
    """``decode_outputs`` for a window of entries: ``payloads[i]`` holds the outputs of
    ``items[i]``, as ``models[i]``, ``expected[i]`` of them; ``where(i)`` names entry ``i`` in
    an error (built only then). Derived payloads, the common case, take a shorter path.
    """
    out: list[list[Any]] = []
    append = out.append
    for i, payload in enumerate(payloads):
        item = items[i]
        if (
            payload.startswith('{"derived":')
            and type(item) is Document
            and issubclass(Document, models[i])
        ):
            try:
                data = _derived_list(payload, None)
            except CacheCorruptError:
                data = None
            if data is not None:
                try:
                    outputs = _decode_derived(data, item, Document, None)
                except (CacheCorruptError, ValueError, ValidationError, TypeError):
                    outputs = None  # decode_outputs below says what is wrong, and where
                if outputs is not None and len(outputs) == expected[i]:
                    append(outputs)
                    continue
        append(decode_outputs(payload, item, models[i], expected=expected[i], where=where(i)))
    return out


def _decode_embedded(payload: str, item: Any, model: type[BaseModel], where: str) -> Document:
    """``item`` with the embedding stored in an ``{"embedded": ...}`` payload."""
    if type(item) is not Document or not issubclass(Document, model):
        raise _bad(where, f"it holds an embedding of a Document, but the input is "
                   f"{type(item).__name__}")
    wrapper, end = _scan_json(payload, 0)
    raw = wrapper.get("embedded") if type(wrapper) is dict and len(wrapper) == 1 else None
    if end != len(payload) or raw is None:
        raise _bad(where, "its embedding payload is not {\"embedded\": ...}")
    if type(raw) is str:
        packed = array("f")
        packed.frombytes(base64.b64decode(raw, validate=True))
        if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
            packed.byteswap()
        vector = packed.tolist()
    elif type(raw) is list and all(type(v) in (int, float) for v in raw):
        vector = [float(v) for v in raw]
    else:
        raise _bad(where, "its embedding is neither base64 float32 nor a list of numbers")
    if any(v != v or v in (float("inf"), float("-inf")) for v in vector):
        raise _bad(where, "its embedding holds NaN or infinity")
    state = item.__dict__
    values = {f: state[f] for f in _FIELDS}
    values["embedding"] = vector
    return construct_document(values)


def _derived_list(payload: str, where: str | None) -> list[Any]:
    """The list in a ``{"derived": [...]}`` payload (``where`` is ``None``: a quick try)."""
    try:
        wrapper, end = _scan_json(payload, 0)
    except (StopIteration, ValueError) as exc:
        raise _bad(where or "", f"its payload is not valid JSON ({exc!r:.80})") from None
    data = wrapper.get("derived") if type(wrapper) is dict and len(wrapper) == 1 else None
    if type(data) is not list or end != len(payload):
        raise _bad(where or "", "its payload is neither a JSON array nor {\"derived\": [...]}")
    return data


def _decode_derived(
    data: list[Any], item: Any, model: type[BaseModel], where: str | None
) -> list[Any]:
    """The outputs listed in a derived payload (see the module docstring) for ``item``."""
    if type(item) is not Document or not issubclass(Document, model):
        raise _bad(
            where or "",
            f"it holds chunks derived from a Document, but the input is {type(item).__name__} "
            f"and the step's output model is {model.__name__}",
        )
    outputs: list[Any] = []
    append = outputs.append
    validate = model.model_validate
    parent = item
    content = parent.content
    size = len(content)
    fmt = parent.content_format
    meta = parent.metadata
    parent_id = parent.id
    prefix = parent_id + "#"
    construct = construct_document
    for position, element in enumerate(data):
        if type(element) is list and len(element) == 2:
            start, end = element
            if type(start) is int and type(end) is int and 0 <= start <= end <= size:
                # The common case: a plain chunk of the parent, its other fields implied.
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
                            "embedding": None,
                        }
                    )
                )
                continue
        if type(element) is list:
            append(_rebuild(parent, position, element, where or ""))
        elif type(element) is dict:
            append(validate(element))
        else:
            raise _bad(where or "", f"output {position} is a {type(element).__name__}")
    return outputs
