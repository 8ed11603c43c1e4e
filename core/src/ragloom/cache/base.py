"""The ``CacheStore`` protocol and its entry types.

An entry holds every output one item produced at one step, serialized as JSON through the
pydantic models (never pickle: a shared cache file must not be a way to run code). Entries are
written only after an item succeeded, with all of its outputs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, TypeAdapter

__all__ = ["CacheEntry", "CacheHeader", "CacheInfo", "CacheStore"]

_ADAPTERS: dict[type[BaseModel], TypeAdapter[list[Any]]] = {}


def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
    return adapter


@dataclass(frozen=True, slots=True)
class CacheHeader:
    """An entry's identity and metadata, read without its content."""

    key: str
    step: str
    item_id: str
    outputs: int
    created: float


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One item's outputs at one step."""

    key: str
    step: str
    item_id: str
    payload: str
    outputs: int
    created: float = field(default_factory=time.time)

    @classmethod
    def build(cls, key: str, step: str, item_id: str, outputs: Sequence[BaseModel]) -> CacheEntry:
        payload = "[" + ",".join(o.model_dump_json() for o in outputs) + "]"
        return cls(key=key, step=step, item_id=item_id, payload=payload, outputs=len(outputs))

    def load(self, model: type[BaseModel]) -> list[Any]:
        """The outputs, validated as ``model`` instances."""
        return _adapter(model).validate_json(self.payload)

    @property
    def header(self) -> CacheHeader:
        return CacheHeader(self.key, self.step, self.item_id, self.outputs, self.created)


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """What ``CacheStore.info()`` reports."""

    location: str
    entries: int
    bytes: int
    steps: dict[str, int]


@runtime_checkable
class CacheStore(Protocol):
    """Where per-item step outputs are kept between runs."""

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        """The entries present among ``keys`` (absent keys are left out)."""
        ...

    def get_headers(self, keys: Sequence[str]) -> dict[str, CacheHeader]:
        """Identity and metadata of the entries present among ``keys``, without content."""
        ...

    def put_many(self, entries: Iterable[CacheEntry]) -> None:
        """Write entries atomically as one batch (all or none)."""
        ...

    def info(self) -> CacheInfo:
        """Location, entry count, size and entries per step."""
        ...

    def clear(self, step: str | None = None) -> int:
        """Delete every entry (or those of one step identity); return how many."""
        ...

    def close(self) -> None:
        """Release the store's resources. Idempotent."""
        ...
