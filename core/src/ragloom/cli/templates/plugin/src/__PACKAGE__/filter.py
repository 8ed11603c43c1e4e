"""A tag filter: routes items by the tags in their metadata."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragloom import Filter


class TagFilter(Filter[Any]):
    """Matches items whose ``metadata[key]`` (one tag or a list of tags) holds one of
    ``tags``, compared case-insensitively. It reads metadata only, never content."""

    requires_content = False

    def __init__(self, tags: str | Sequence[str], key: str = "tags") -> None:
        wanted = [tags] if isinstance(tags, str) else list(tags)
        if not wanted or not all(isinstance(t, str) and t.strip() for t in wanted):
            raise ValueError(f"tags must be one or more non-empty strings, got {tags!r}")
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        self.tags = frozenset(t.strip().lower() for t in wanted)
        self.key = key

    def matches(self, item: Any) -> bool:
        value = (getattr(item, "metadata", None) or {}).get(self.key)
        if isinstance(value, str):
            found = [value]
        elif isinstance(value, list | tuple | set | frozenset):
            found = [v for v in value if isinstance(v, str)]
        else:
            return False
        return any(v.strip().lower() in self.tags for v in found)

    def config(self) -> Mapping[str, Any]:
        return {"tags": sorted(self.tags), "key": self.key}
