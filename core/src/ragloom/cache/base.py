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

from pydantic import BaseModel

from .codec import decode_outputs, encode_outputs

__all__ = ["CacheEntry", "CacheInfo", "CacheStore"]

_NO_ITEM: Any = object()


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
    def build(
        cls, key: str, step: str, item_id: str, outputs: Sequence[BaseModel],
        item: Any = _NO_ITEM,
    ) -> CacheEntry:
        """An entry for ``outputs``; given the input ``item``, chunks of it are stored compactly
        (as offsets into it, see :mod:`ragloom.cache.codec`)."""
        entry = cls.relative(key, step, item_id, outputs, None if item is _NO_ITEM else item,
                             relative_only=False)
        assert entry is not None
        return entry

    @classmethod
    def relative(
        cls, key: str, step: str, item_id: str, outputs: Sequence[BaseModel], item: Any,
        *, relative_only: bool = True,
    ) -> CacheEntry | None:
        """An entry whose outputs are written relative to ``item`` (ids and metadata follow the
        input on replay), or ``None`` when they cannot be (see ``encode_outputs``)."""
        payload = encode_outputs(item, outputs, relative_only=relative_only)
        if payload is None:
            return None
        return cls(key=key, step=step, item_id=item_id, payload=payload, outputs=len(outputs))

    def load(self, model: type[BaseModel], item: Any = None) -> list[Any]:
        """The outputs, validated as ``model`` instances (``item``: the input they came from).

        Raises:
            CacheCorruptError: the payload does not read back as ``outputs`` valid outputs.
        """
        return decode_outputs(
            self.payload, item, model, expected=self.outputs,
            where=f"cache entry {self.key} ({self.step}, item {self.item_id!r})",
        )


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
