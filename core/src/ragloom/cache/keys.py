"""Cache ids: a step's ``config_hash`` with an item's identity and content hash.

A document's id is computed in one pass over a short JSON header (config hash, id, content
hash, format, lineage) and its metadata's canonical JSON: no content is serialized, only hashed
once (``Document.content_hash``, cached on the document).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .._hashing import canonical_json, identity_and_digest, stable_hash
from ..models import Document

__all__ = ["cache_key"]

_sha256 = hashlib.sha256
_encode_sorted = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True
).encode


def _metadata_json(metadata: dict[str, Any]) -> str:
    if not metadata:
        return "{}"
    try:
        # Plain JSON data (the usual case) dumps directly; canonical() only for the rest.
        return _encode_sorted(metadata)
    except (TypeError, ValueError):
        return canonical_json(metadata)


def cache_key(config_hash: str, item: Any, scope: str = "item") -> str:
    """The cache id of ``item`` at a step whose ``config_hash`` is given (32 hex digits).

    ``scope="content"`` (a step whose outputs depend only on a document's content and format)
    leaves the document's id, lineage and metadata out: the same text under another path or
    name is a hit, and the replay takes those from the current document.
    """
    if scope == "content" and isinstance(item, Document):
        fmt = str(item.content_format)
        text = f"{config_hash}\ncontent\n{item.content_hash}\n{len(fmt)}:{fmt}"
        if item.embedding is not None:
            text += "\n" + _encode_sorted(item.embedding)
        return _sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    if isinstance(item, Document):
        ident, fmt, parent = item.id, str(item.content_format), item.parent_id
        # Length-prefixed strings: unambiguous whatever the characters, and no JSON encoder
        # to set up per call (this runs once per item on every cached run).
        header = (
            f"{config_hash}\n{len(ident)}:{ident}\n{item.content_hash}\n{len(fmt)}:{fmt}\n"
            f"{'-' if parent is None else f'{len(parent)}:{parent}'}\n{item.index}\n{item.start}"
        )
        text = header + "\n" + _metadata_json(item.metadata)
        if item.embedding is not None:
            text += "\n" + _encode_sorted(item.embedding)
        return _sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return stable_hash(config_hash, *identity_and_digest(item))
