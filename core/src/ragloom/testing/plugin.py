"""pytest plugin (entry point ``pytest11``): the kit's fixtures, nothing else.

It defines fixtures only: no hooks that change collection or reporting, no imports of pydantic
or anyio until a fixture is used, so unrelated suites are unaffected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def ragloom_memory_cache() -> Iterator[Any]:
    """A fresh in-memory ``CacheStore``."""
    from ragloom.cache import MemoryCacheStore

    store = MemoryCacheStore()
    yield store
    store.close()


@pytest.fixture
def ragloom_registry() -> Any:
    """An isolated plugin ``Registry`` with nothing installed; register components in it."""
    from ragloom.testing.helpers import isolated_registry

    return isolated_registry()
