"""Canonical JSON and stable hashes.

``config_hash`` values must be equal for equal configs in any process on any machine, so they
are computed over a canonical JSON text (sorted keys, no whitespace, no floats' repr surprises).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Set
from enum import Enum
from typing import Any

__all__ = ["canonical", "canonical_json", "identity_and_digest", "stable_hash"]


def canonical(value: Any) -> Any:
    """Turn a config value into plain JSON data, deterministically."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return repr(value)
        return value
    if isinstance(value, Enum):
        return canonical(value.value)
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, Set):
        items = [canonical(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    config_hash = getattr(value, "config_hash", None)
    if isinstance(config_hash, str):  # a nested component
        return {"component": config_hash}
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return canonical(model_dump(mode="json"))
    if isinstance(value, type) or callable(value):
        module = getattr(value, "__module__", "?")
        qualname = getattr(value, "__qualname__", type(value).__qualname__)
        return f"{module}:{qualname}"
    raise TypeError(
        f"config value of type {type(value).__name__} is not JSON-able; "
        "return plain data from config()"
    )


def canonical_json(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, compact separators)."""
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_hash(*parts: Any) -> str:
    """A 32-hex-digit SHA-256 prefix over the canonical JSON of ``parts``."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()[:32]


def identity_and_digest(item: Any) -> tuple[str, str]:
    """``(identity, content hash)`` of an item that is not a ``Document``: its ``id`` (or a
    prefix of its digest) and a stable hash of its JSON dump, value or ``repr``."""
    from pydantic import BaseModel

    if isinstance(item, BaseModel):
        digest = stable_hash(item.model_dump(mode="json"))
        ident = getattr(item, "id", None)
        return (str(ident) if ident else digest[:16]), digest
    digest = stable_hash(item if isinstance(item, str | int | float | bool) else repr(item))
    return digest[:16], digest
