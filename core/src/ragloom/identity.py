"""Cache identity, derived: what a component was built with, turned into canonical data.

A component's outputs are replayed from a cache only under the same identity, so the identity
must cover everything that can shape them, without relying on an author to list it. It is
derived from every argument the component was constructed with (captured when it is built, public
or stored privately), plus what its ``config()`` reports, canonicalised recursively:

- plain data as itself (floats by ``repr``; NaN and infinities included), mappings with sorted
  keys, sets sorted, sequences in order, enums by value, bytes and existing files by digest;
- nested components by their own derived identity, pydantic models and dataclasses by their
  fields;
- a module-level function by its qualified name *and* a digest of its code, the code of the
  module-level functions it calls and the plain-data globals it reads (editing its body, or a
  helper's, changes the identity); ``functools.partial`` by its function, arguments and
  keywords; closures and lambdas by their code and captured values; bound methods and callable
  objects by their object's state and their code;
- an object that knows better implements ``__ragloom_identity__()`` returning canonical data
  (a model's file digest, say); for classes of other libraries, :func:`register_identity`
  declares it.

What cannot be canonicalised (a lock, a socket, an open model without an identity) raises
:class:`Uncacheable`, naming the parameter: the step then runs without a cache, with a warning,
until it is given an explicit ``cache_version``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
import types
from collections.abc import Callable, Mapping, Set
from enum import Enum
from pathlib import PurePath
from typing import Any

__all__ = [
    "Uncacheable",
    "canonical_identity",
    "captured_arguments",
    "code_digest",
    "register_identity",
]


class Uncacheable(Exception):
    """A value that shapes a component's output cannot be turned into a stable identity."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


_PLAIN = (type(None), bool, int, str)


def canonical_identity(
    value: Any, where: str = "value", _seen: frozenset[int] = frozenset()
) -> Any:
    """``value`` as canonical JSON-able data (see the module docstring).

    Raises:
        Uncacheable: something in ``value`` has no stable identity; ``where`` names it.
    """
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, float):
        finite = value == value and value not in (float("inf"), float("-inf"))
        return value if finite else repr(value)
    if id(value) in _seen:
        return {"cycle": type(value).__qualname__}
    seen = _seen | {id(value)}
    custom = getattr(type(value), "__ragloom_identity__", None)
    if custom is not None and not isinstance(value, type):
        return {"class": _qualified(type(value)), "identity": canonical_identity(
            value.__ragloom_identity__(), f"{where}.__ragloom_identity__()", seen)}
    if isinstance(value, Enum):
        return canonical_identity(value.value, where, seen)
    if isinstance(value, bytes | bytearray | memoryview):
        return {"bytes": hashlib.sha256(bytes(value)).hexdigest()}
    if isinstance(value, PurePath):
        return _path_identity(value)
    if isinstance(value, Mapping):
        return {
            str(k): canonical_identity(v, f"{where}[{k!r}]", seen)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, Set):
        items = [canonical_identity(v, f"{where}{{}}", seen) for v in value]
        return {"set": sorted(items, key=repr)}
    if isinstance(value, list | tuple):
        return [canonical_identity(v, f"{where}[{i}]", seen) for i, v in enumerate(value)]
    if hasattr(value, "tobytes") and hasattr(value, "dtype"):  # an array (NumPy and the like)
        shape = list(getattr(value, "shape", ()))
        return {"array": str(value.dtype), "shape": shape,
                "digest": hashlib.sha256(value.tobytes()).hexdigest()}
    if getattr(type(value), "_ragloom_component", False):  # a Component, by its own marker
        return {"component": value.config_hash}
    if isinstance(value, type):
        return {"type": _qualified(value)}
    adapter = _adapter_for(type(value))
    if adapter is not None:
        return {"class": _qualified(type(value)),
                "identity": canonical_identity(adapter(value), f"{where} (identity)", seen)}
    # Records are their data: a pydantic model or dataclass and the mapping it validates from
    # are the same argument.
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump) and not isinstance(value, type):
        return canonical_identity(model_dump(mode="python"), where, seen)
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return canonical_identity(fields, where, seen)
    if isinstance(value, functools.partial):
        return {
            "partial": canonical_identity(value.func, f"{where}.func", seen),
            "args": canonical_identity(list(value.args), f"{where}.args", seen),
            "keywords": canonical_identity(dict(value.keywords), f"{where}.keywords", seen),
        }
    if isinstance(value, types.MethodType):
        return {
            "method": canonical_identity(value.__func__, where, seen),
            "self": canonical_identity(value.__self__, f"{where}.__self__", seen),
        }
    if isinstance(value, types.FunctionType):
        return _function_identity(value, where, seen)
    if isinstance(value, types.BuiltinFunctionType | types.BuiltinMethodType):
        owner = getattr(value, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            return {"builtin": value.__qualname__,
                    "self": canonical_identity(owner, f"{where}.__self__", seen)}
        return {"builtin": f"{value.__module__}:{value.__qualname__}"}
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    state = getattr(value, "__dict__", None)
    if state is not None or hasattr(type(value), "__slots__"):
        if state is None:
            state = {
                name: getattr(value, name)
                for klass in type(value).__mro__
                for name in getattr(klass, "__slots__", ())
                if hasattr(value, name)
            }
        out: dict[str, Any] = {"object": _qualified(type(value)),
                               "state": canonical_identity(dict(state), where, seen)}
        call = type(value).__dict__.get("__call__") or getattr(type(value), "__call__", None)  # noqa: B004
        if isinstance(call, types.FunctionType):
            out["call"] = code_digest(call)
        return out
    raise Uncacheable(where, f"a {type(value).__qualname__} has no stable identity")


_ADAPTERS: dict[type, Callable[[Any], Any]] = {}


def register_identity(cls: type, identity: Callable[[Any], Any]) -> None:
    """Declare how instances of ``cls`` (a class of another library, say a model client) are
    identified: ``identity(obj)`` returns canonical data covering what makes it produce what
    it produces (a model name and its settings). Subclasses are covered too."""
    _ADAPTERS[cls] = identity


def _adapter_for(cls: type) -> Callable[[Any], Any] | None:
    if not _ADAPTERS:
        return None
    for klass in cls.__mro__:
        found = _ADAPTERS.get(klass)
        if found is not None:
            return found
    return None


def _qualified(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _path_identity(path: PurePath) -> Any:
    """A file by its content digest (what matters to the output), anything else by its text."""
    try:
        st = os.stat(path)
    except OSError:
        return {"path": str(path)}
    if not os.path.isfile(path):
        return {"path": str(path)}
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    digest = _FILE_DIGESTS.get(key)
    if digest is None:
        sha = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        digest = _FILE_DIGESTS[key] = sha.hexdigest()
    return {"file": digest}


def code_digest(fn: types.FunctionType, _seen: frozenset[int] = frozenset()) -> str:
    """A digest of ``fn``'s code: its bytecode, constants (nested code included), names, and
    the code of the module-level functions and the plain data it reads from its globals."""
    sha = hashlib.sha256()
    _digest_code(fn.__code__, sha)
    seen = _seen | {id(fn)}
    module_globals = getattr(fn, "__globals__", {})
    for name in _global_names(fn.__code__):
        target = module_globals.get(name)
        if isinstance(target, types.FunctionType) and id(target) not in seen:
            sha.update(f"fn {name} ".encode())
            sha.update(code_digest(target, seen).encode())
        elif isinstance(target, (*_PLAIN, float, tuple, frozenset)):
            sha.update(f"global {name}={target!r}".encode())
    return sha.hexdigest()[:32]


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_global_names(const))
    return sorted(set(names))


def _digest_code(code: types.CodeType, sha: Any) -> None:
    sha.update(code.co_code)
    sha.update(repr(code.co_names).encode())
    sha.update(repr((code.co_argcount, code.co_kwonlyargcount, code.co_flags)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest_code(const, sha)
        else:
            sha.update(repr(const).encode())


def _function_identity(fn: types.FunctionType, where: str, seen: frozenset[int]) -> Any:
    out: dict[str, Any] = {
        "function": f"{fn.__module__}:{fn.__qualname__}",
        "code": code_digest(fn),
    }
    if fn.__defaults__:
        out["defaults"] = canonical_identity(list(fn.__defaults__), f"{where} defaults", seen)
    if fn.__kwdefaults__:
        out["kwdefaults"] = canonical_identity(dict(fn.__kwdefaults__), f"{where} defaults", seen)
    if fn.__closure__:
        cells: dict[str, Any] = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell (a name not assigned yet)
                continue
            cells[name] = canonical_identity(content, f"{where} (captured {name!r})", seen)
        out["closure"] = cells
    return out


def captured_arguments(component: Any) -> dict[str, Any]:
    """The arguments ``component`` was constructed with, bound by name, defaults included."""
    captured = component.__dict__.get("_ragloom_args")
    if captured is None:
        return {}
    args, kwargs = captured
    try:
        bound = inspect.signature(type(component)).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {"args": list(args), **kwargs}
    bound.apply_defaults()
    arguments: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if bound.signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)  # **kwargs passed on to a base: each by its own name
        else:
            arguments[name] = value
    return arguments
