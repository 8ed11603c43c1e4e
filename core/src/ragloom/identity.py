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
  module-level functions and classes of its module that it calls, and the data globals it reads
  (editing its body, or a helper's, changes the identity); ``functools.partial`` by its
  function, arguments and keywords; closures and lambdas by their code and captured values;
  bound methods by their function and their object;
- a class's own code (:func:`class_code`): a component's identity includes the code of its
  class and of its bases (every method, and the class attributes those methods read), except
  the classes of ragloom's core and of the standard library; what the code changes as it runs
  is state, not code (an attribute its methods assign, a global a function rebinds, and a
  dict, list or set counts by the expression its source assigns, not by what it holds);
- any other object by what it gives the pickling protocol (``__reduce_ex__``: its ``__dict__``
  and slots for a plain Python object, what ``__getstate__`` returns for one that serialises
  itself, a ``tokenizers.Tokenizer``'s JSON) plus its class's code; an object whose state is
  not visible that way (a native object that cannot be pickled) has no identity;
- an object that knows better implements ``__ragloom_identity__()`` returning canonical data
  (a model's file digest, say); for classes of other libraries, :func:`register_identity`
  declares it.

What cannot be canonicalised (a lock, a socket, an open model without an identity) raises
:class:`Uncacheable`, naming the parameter: the step then runs without a cache, with a warning,
until it is given an explicit ``cache_version``.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import hashlib
import inspect
import os
import sys
import types
import weakref
from collections.abc import Callable, Mapping, Set
from enum import Enum
from pathlib import PurePath
from typing import Any

__all__ = [
    "Uncacheable",
    "canonical_identity",
    "captured_arguments",
    "class_code",
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
    if isinstance(value, type):
        return {"type": _qualified(value)}
    if hasattr(value, "tobytes") and hasattr(value, "dtype"):  # an array (NumPy and the like)
        shape = list(getattr(value, "shape", ()))
        return {"array": str(value.dtype), "shape": shape,
                "digest": hashlib.sha256(value.tobytes()).hexdigest()}
    if getattr(type(value), "_ragloom_component", False):  # a Component, by its own marker
        return {"component": value.config_hash}
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
    return _object_identity(value, where, seen)


def _object_identity(value: Any, where: str, seen: frozenset[int]) -> Any:
    """Any other object: what it gives the pickling protocol, and its class's code.

    ``__reduce_ex__`` is how an object says what it is made of: a plain Python object gives
    its ``__dict__`` (and slots), one that serialises itself gives what its ``__getstate__``
    returns (a ``tokenizers.Tokenizer``: its JSON), and an object whose state lives where
    Python cannot see it, without a way to serialise it, refuses (``cannot pickle``): it has
    no identity, rather than one that ignores its state.
    """
    cls = type(value)
    no_identity = Uncacheable(where, f"a {cls.__qualname__} has no stable identity")
    try:
        reducer = copyreg.dispatch_table.get(cls)
        reduced = reducer(value) if reducer is not None else value.__reduce_ex__(4)
    except Exception:  # noqa: BLE001 - whatever refuses to serialise has no identity
        raise no_identity from None
    if isinstance(reduced, str):  # pickled by reference: a named singleton
        return {"global": f"{cls.__module__}:{reduced}"}
    if not isinstance(reduced, tuple) or len(reduced) < 2:
        raise no_identity
    parts = list(reduced) + [None] * (5 - len(reduced))
    rebuild, args, state, items, pairs = parts[:5]
    out: dict[str, Any] = {
        "object": _qualified(cls),
        "rebuild": f"{getattr(rebuild, '__module__', '?')}:"
        f"{getattr(rebuild, '__qualname__', type(rebuild).__qualname__)}",
        "args": canonical_identity(list(args or ()), where, seen),
    }
    if state is not None:
        out["state"] = canonical_identity(state, where, seen)
    if items is not None:
        out["items"] = canonical_identity(list(items), where, seen)
    if pairs is not None:
        out["pairs"] = canonical_identity([list(p) for p in pairs], where, seen)
    code = class_code(cls, strict=False)
    if code is not None:
        out["code"] = code
    return out


_ADAPTERS: dict[type, Callable[[Any], Any]] = {}


def register_identity(cls: type, identity: Callable[[Any], Any]) -> None:
    """Declare how instances of ``cls`` (a class of another library, say a model client) are
    identified: ``identity(obj)`` returns canonical data covering what makes it produce what
    it produces (a model name and its settings). Subclasses are covered too."""
    _ADAPTERS[cls] = identity


def _tokenizer_identity(tokenizer: Any) -> Any:
    """A ``tokenizers.Tokenizer`` by its whole serialised form (vocabulary, merges,
    normalizer, pre-tokenizer...), which ``to_str()`` gives."""
    return {"sha256": hashlib.sha256(tokenizer.to_str().encode("utf-8")).hexdigest()}


#: Adapters for well-known classes of other libraries, by ``module.QualName`` (so that the
#: library is never imported to look its class up).
_NAMED_ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "tokenizers.Tokenizer": _tokenizer_identity,
}


def _adapter_for(cls: type) -> Callable[[Any], Any] | None:
    for klass in cls.__mro__:
        found = _ADAPTERS.get(klass) if _ADAPTERS else None
        if found is None:
            found = _NAMED_ADAPTERS.get(f"{klass.__module__}.{klass.__qualname__}")
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
    what it reads from its module's globals: the code of the module-level functions it calls
    (by name, or through a module of yours: ``utils.clean``), of the classes of its own module
    it uses, and the data (see :func:`_global_identity`)."""
    sha = hashlib.sha256()
    _digest_code(fn.__code__, sha)
    seen = _seen | {id(fn)}
    module_globals = getattr(fn, "__globals__", {})
    names = _global_names(fn.__code__)
    for name in names:
        if name not in module_globals:
            continue
        target = module_globals[name]
        if id(target) in seen:
            continue
        if isinstance(target, types.ModuleType):
            # ``utils.clean(text)``: the functions and classes of one of your modules that
            # the code names through it count as if imported by name.
            if target.__name__.partition(".")[0] in _NOT_DERIVED:
                continue
            for attr in names:
                member = getattr(target, attr, None)
                if id(member) in seen or getattr(member, "__module__", None) != target.__name__:
                    continue
                if isinstance(member, types.FunctionType):
                    sha.update(f"fn {name}.{attr} ".encode())
                    sha.update(code_digest(member, seen | {id(member)}).encode())
                elif isinstance(member, type) and _derived(member):
                    sha.update(f"class {name}.{attr} ".encode())
                    sha.update(str(class_code(member, seen | {id(member)}, strict=False)).encode())
        elif isinstance(target, types.FunctionType):
            sha.update(f"fn {name} ".encode())
            sha.update(code_digest(target, seen).encode())
        elif isinstance(target, type):
            if target.__module__ == fn.__module__ and _derived(target):
                sha.update(f"class {name} ".encode())
                sha.update(str(class_code(target, seen | {id(target)}, strict=False)).encode())
        else:
            data = _global_identity(target, fn.__module__, name)
            if data is not _SKIP:
                sha.update(f"global {name}=".encode())
                sha.update(_stable_repr(data).encode())
    return sha.hexdigest()[:32]


_SKIP: Any = object()


def _global_identity(value: Any, module: str, name: str) -> Any:
    """What a global read by a function contributes to its identity: data (plain values and
    containers of them, enums, compiled patterns), components, and objects with a declared
    identity (``__ragloom_identity__``, an adapter); ``_SKIP`` for anything else (a module,
    a logger, a client: not followed).

    What the code of its module changes at run time is state, not code: a global that a
    ``global`` statement rebinds (a model loaded on first use) is left out, and a dict, list
    or set (often a cache filled as the program runs) counts by the expression the module's
    source assigns it (``{}``), not by what it holds now.
    """
    if isinstance(value, types.ModuleType | types.BuiltinFunctionType):
        return _SKIP
    if name in _rebound(module):
        return _SKIP
    if isinstance(value, _MUTABLE):
        source = _source_of(module)
        written = None if source is None else source.assigned.get(name)
        return _SKIP if written is None else {"source": written}
    if not _is_data(value) and not (
        getattr(type(value), "_ragloom_component", False)
        or getattr(type(value), "__ragloom_identity__", None) is not None
        or _adapter_for(type(value)) is not None
        or type(value).__module__ == "re"
    ):
        return _SKIP
    try:
        return canonical_identity(value, "global")
    except Exception:  # noqa: BLE001 - a global that cannot be identified is not followed
        return _SKIP


_MUTABLE = (dict, list, set, bytearray)


class _Source:
    """What a module's source assigns: its module-level names and its top-level classes'
    attributes (as the text of their expressions)."""

    __slots__ = ("assigned", "classes")

    def __init__(self) -> None:
        self.assigned: dict[str, str] = {}
        self.classes: dict[str, dict[str, str]] = {}


_REBOUND: dict[tuple[str, int], frozenset[str]] = {}


def _rebound(module_name: str) -> frozenset[str]:
    """The globals that the functions and methods of a module rebind (``global X; X = ...``),
    read once per module from their bytecode."""
    module = sys.modules.get(module_name)
    if module is None:
        return frozenset()
    key = (module_name, id(module))
    found = _REBOUND.get(key)
    if found is None:
        import opcode

        ops = (opcode.opmap["STORE_GLOBAL"], opcode.opmap["DELETE_GLOBAL"])
        names: set[str] = set()
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != module_name:
                continue
            members = vars(value).values() if isinstance(value, type) else (value,)
            for member in members:
                for fn in _functions_of(member):
                    names |= _names_by_op(fn.__code__, ops)
        found = _REBOUND[key] = frozenset(names)
    return found


_SOURCES: dict[tuple[str, int], _Source | None] = {}


def _source_of(module_name: str) -> _Source | None:
    """The assignments of a module's source, read once per module (``None``: no source)."""
    import ast

    module = sys.modules.get(module_name)
    if module is None:
        return None
    key = (module_name, id(module))
    if key in _SOURCES:
        return _SOURCES[key]
    found: _Source | None = None
    try:
        tree = ast.parse(inspect.getsource(module))
    except Exception:  # noqa: BLE001 - no source (a compiled module, code made by exec)
        pass
    else:
        found = _Source()
        _assignments(tree.body, found.assigned)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                _assignments(node.body, found.classes.setdefault(node.name, {}))
    _SOURCES[key] = found
    return found


def _assignments(body: list[Any], into: dict[str, str]) -> None:
    import ast

    for node in body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    into[target.id] = ast.dump(node.value)
        elif (isinstance(node, ast.AnnAssign) and node.value is not None
              and isinstance(node.target, ast.Name)):
            into[node.target.id] = ast.dump(node.value)


def _is_data(value: Any, depth: int = 0) -> bool:
    if isinstance(value, (*_PLAIN, float, bytes, Enum)):
        return True
    if depth > 20:
        return False
    if isinstance(value, Mapping):
        return all(_is_data(k, depth + 1) and _is_data(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple | Set):
        return all(_is_data(v, depth + 1) for v in value)
    return False


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_global_names(const))
    return sorted(set(names))


def _stable_repr(value: Any) -> str:
    """``repr`` that does not depend on the hash seed (a frozenset's order does)."""
    if isinstance(value, frozenset | set):
        return "{" + ",".join(sorted(_stable_repr(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(_stable_repr(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ",".join(_stable_repr(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(
            sorted(f"{_stable_repr(k)}:{_stable_repr(v)}" for k, v in value.items())
        ) + "}"
    return repr(value)


def _digest_code(code: types.CodeType, sha: Any) -> None:
    sha.update(code.co_code)
    sha.update(repr(code.co_names).encode())
    sha.update(repr((code.co_argcount, code.co_kwonlyargcount, code.co_flags)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest_code(const, sha)
        else:
            sha.update(_stable_repr(const).encode())


#: Top-level packages whose classes' code is not part of an identity: ragloom's core (its base
#: classes are the machinery that runs steps; a change of what its own steps output is
#: versioned by their ``step_version``) and Python itself.
_NOT_DERIVED = frozenset({"ragloom", "builtins", "__future__"}) | frozenset(
    getattr(sys, "stdlib_module_names", ())
)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (a ``class`` statement)


def _derived(cls: type) -> bool:
    """Whether ``cls``'s own code is part of the identity of what is built from it (a static
    type of an extension module, like NumPy's ``ndarray``, has no Python code)."""
    return (
        bool(cls.__flags__ & _HEAP_TYPE)
        and str(cls.__module__).partition(".")[0] not in _NOT_DERIVED
    )


def class_code(
    cls: type, _seen: frozenset[int] = frozenset(), *, strict: bool = True
) -> str | None:
    """A digest of the code of ``cls`` and of its bases, except those of ragloom's core and of
    the standard library (``None`` when no class is left): every function defined in their
    bodies (methods, static and class methods, properties), and the class attributes those
    functions read (by name: ``self.LIMIT``, ``cls.TABLE``, ``type(self).PATTERN``).

    Raises:
        Uncacheable: a class attribute a method reads has no stable identity (with
            ``strict=False``, it counts by its type instead: the class of an object passed as
            an argument, or of a helper class the code uses, is not what must be cached).
    """
    own = [k for k in cls.__mro__ if _derived(k)]
    if not own:
        return None
    if _seen:
        return _class_code(cls, own, _seen, strict)
    # Worked out once per class (its methods and attributes as they are now: a method
    # replaced at run time gives another fingerprint).
    fingerprint = tuple(
        (id(v), id(getattr(v, "__code__", None))) for k in own for v in k.__dict__.values()
    )
    memo = _CLASS_CODES.get(cls)
    if memo is not None and memo[0] == fingerprint and strict in memo[1]:
        return memo[1][strict]
    digest = _class_code(cls, own, _seen, strict)
    known = memo[1] if memo is not None and memo[0] == fingerprint else {}
    _CLASS_CODES[cls] = (fingerprint, {**known, strict: digest})
    return digest


_CLASS_CODES: weakref.WeakKeyDictionary[
    type, tuple[tuple[tuple[int, int], ...], dict[bool, str]]
] = weakref.WeakKeyDictionary()


def _class_code(cls: type, own: list[type], _seen: frozenset[int], strict: bool) -> str:
    seen = _seen | {id(cls)}
    sha = hashlib.sha256()
    read: set[str] = set()
    written: set[str] = set()
    functions: list[tuple[str, str, types.FunctionType]] = []
    for klass in own:
        for name, value in klass.__dict__.items():
            for fn in _functions_of(value):
                functions.append((klass.__qualname__, name, fn))
                read.update(_global_names(fn.__code__))
                written.update(_stored_names(fn.__code__))
    # An attribute the methods assign (a counter, ``self.calls += 1``) is state, not code.
    read -= written
    for owner, name, fn in functions:
        sha.update(f"def {owner}.{name} ".encode())
        sha.update(code_digest(fn, seen).encode())
        if (fn.__defaults__ or fn.__kwdefaults__) and name != "__init__":
            # (a constructor's defaults are among the arguments a component is built with)
            defaults = [list(fn.__defaults__ or ()), dict(fn.__kwdefaults__ or {})]
            sha.update(_stable_repr(canonical_identity(
                defaults, f"{owner}.{name} defaults", seen)).encode())
        if fn.__closure__:
            cells = []
            for cell in fn.__closure__:
                try:
                    content = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(content, type):  # the implicit __class__ cell of super()
                    continue
                cells.append(canonical_identity(content, f"{owner}.{name} (captured)", seen))
            sha.update(_stable_repr(cells).encode())
    for klass in own:
        for name in sorted(read & set(klass.__dict__)):
            value = klass.__dict__[name]
            if (name.startswith("__") and name.endswith("__")) or _functions_of(value):
                continue
            if isinstance(value, _DESCRIPTORS):  # a slot, a field or method made in C
                continue
            expression: str | None = None
            if isinstance(value, _MUTABLE):
                # A dict, list or set (maybe a cache the class fills as it runs): by the
                # expression its class body assigns, when the source is at hand.
                source = _source_of(klass.__module__)
                if source is not None and "." not in klass.__qualname__:
                    expression = source.classes.get(klass.__name__, {}).get(name)
            if expression is not None:
                data: Any = {"source": expression}
            elif isinstance(value, type) or id(value) in seen:
                data = {"type": _qualified(value)} if isinstance(value, type) else "cycle"
            else:
                try:
                    data = canonical_identity(
                        value, f"{klass.__qualname__} class attribute {name!r}", seen
                    )
                except Uncacheable:
                    if strict:
                        raise
                    data = {"opaque": type(value).__qualname__}
            sha.update(f"attr {klass.__qualname__}.{name}=".encode())
            sha.update(_stable_repr(data).encode())
    return sha.hexdigest()[:32]


def _stored_names(code: types.CodeType) -> set[str]:
    """The attribute names ``code`` (and the code nested in it) assigns or deletes."""
    import opcode

    return _names_by_op(code, (opcode.opmap["STORE_ATTR"], opcode.opmap["DELETE_ATTR"]))


def _names_by_op(code: types.CodeType, ops: tuple[int, ...]) -> set[str]:
    """The names the instructions ``ops`` of ``code`` (and the code nested in it) take, read
    from the raw bytecode (``dis`` would cost more than the rest of a class's digest)."""
    import opcode

    extended = opcode.EXTENDED_ARG
    raw = code.co_code
    names: set[str] = set()
    prefix = 0
    for i in range(0, len(raw) - 1, 2):
        op, arg = raw[i], raw[i + 1] | prefix
        if op == extended:
            prefix = arg << 8
            continue
        prefix = 0
        if op in ops and arg < len(code.co_names):
            names.add(code.co_names[arg])
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_by_op(const, ops)
    return names


_DESCRIPTORS = (
    types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType,
    types.MethodDescriptorType, types.ClassMethodDescriptorType, types.BuiltinFunctionType,
)


def _functions_of(value: Any) -> list[types.FunctionType]:
    """The functions a class body attribute holds (a method, a static or class method, a
    property's accessors, a cached property)."""
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, staticmethod | classmethod):
        inner = value.__func__
        return [inner] if isinstance(inner, types.FunctionType) else []
    if isinstance(value, property):
        accessors = (value.fget, value.fset, value.fdel)
        return [f for f in accessors if isinstance(f, types.FunctionType)]
    if isinstance(value, functools.cached_property):
        return [value.func] if isinstance(value.func, types.FunctionType) else []
    return []


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
