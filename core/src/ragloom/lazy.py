"""Lazy package exports: a name's module is imported the first time the name is used.

``import ragloom`` (or a plugin) then costs almost nothing, and heavy dependencies load only
when something that needs them is touched.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names live in modules.

    ``exports`` maps each public name to its module, relative (``".models"``) or absolute.
    A name is imported on first access and then kept in ``namespace`` (the package's
    ``globals()``). ``__dir__`` lists ``public`` plus what the package already holds.
    """
    names = sorted(set(public))

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
