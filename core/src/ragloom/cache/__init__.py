"""Cache stores: the ``CacheStore`` protocol, an embedded SQLite store and an in-memory one."""

from .base import CacheEntry, CacheInfo, CacheStore
from .memory import MemoryCacheStore
from .sqlite import SQLiteCacheStore, cache_info, open_cache

__all__ = [
    "CacheEntry",
    "CacheInfo",
    "CacheStore",
    "MemoryCacheStore",
    "SQLiteCacheStore",
    "cache_info",
    "open_cache",
]
