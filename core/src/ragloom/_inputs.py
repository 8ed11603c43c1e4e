"""Telling users clearly what went wrong when an item is not what a step takes."""

from __future__ import annotations

from typing import Any

__all__ = ["full_class_name", "wrong_item"]

#: Foreign document classes (by top-level package) and the adapter that converts them.
_ADAPTERS = {
    "langchain_core": "ragloom_interop.langchain.from_langchain()",
    "langchain": "ragloom_interop.langchain.from_langchain()",
    "llama_index": "ragloom_interop.llama_index.from_llama_index()",
    "haystack": "ragloom_interop.haystack.from_haystack()",
}


def full_class_name(value: Any) -> str:
    """``module.QualName`` of ``value``'s class (``builtins`` left out)."""
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def wrong_item(value: Any, expected: str) -> TypeError:
    """A ``TypeError`` for an item that is not ``expected``, naming its full class and, for
    documents of another framework or plain dicts, the way to convert them."""
    name = full_class_name(value)
    hint = ""
    package = type(value).__module__.split(".", 1)[0]
    if package in _ADAPTERS:
        from ._install import install_hint

        hint = f"; convert it with {_ADAPTERS[package]} ({install_hint('ragloom-interop')})"
    elif isinstance(value, dict):
        hint = "; build one with ragloom.Document(**data) or Document.model_validate(data)"
    elif isinstance(value, str):
        hint = "; wrap text with ragloom.Document.from_text(text) (or call chunker.chunk(text))"
    return TypeError(f"expected {expected}, got {name}{hint}")
