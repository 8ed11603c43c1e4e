"""__DIST__: a ragloom plugin."""

from __future__ import annotations

__all__ = [
    # __NAMES__
]

#: Component -> module: imported only when used, so that `import __PACKAGE__` stays light
#: (ragloom imports a component's module when a pipeline that names it is built).
_MODULES: dict[str, str] = {
    # __MODULES__
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
