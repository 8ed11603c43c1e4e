"""ragloom-lancedb: the embedded default store, LanceDB in a local directory.

``LanceDBStore`` (entry point ``ragloom.stores: lancedb``). Imports are lazy: importing the
package loads neither LanceDB, pyarrow nor the ragloom core; LanceDB is imported when a store
is first opened.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {"LanceDBStore": "store"}

__all__ = ["LanceDBStore", "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom_lancedb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from .store import LanceDBStore
