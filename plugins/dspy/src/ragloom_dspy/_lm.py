"""Which DSPy LM (and adapter) a ragloom component uses, and how its config describes it.

A component gets its LM in one of three ways: a ``dspy.LM`` object passed in code; a DSPy model
string plus options from a pipeline config (``dspy.LM(model, **lm_options)``); or neither, in
which case it uses the LM of the DSPy context it runs in (``dspy.configure``/``dspy.context``).
The LM is applied per call with ``dspy.context(lm=...)``, never by changing DSPy's globals,
so two components with different LMs can run side by side in one process.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ADAPTERS", "LMBinding", "describe_lm_options"]

#: Adapter names a config may give (DSPy's default is its ChatAdapter).
ADAPTERS = ("chat", "json")
#: Option names never written to a config: credentials and connection headers.
_SECRET = re.compile(r"key|secret|password|credential|auth|header|(^|_)token$", re.IGNORECASE)


def _jsonable(value: Any) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        return False
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def describe_lm_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as config data: secrets and ``None`` values dropped, values that are not
    JSON described by their ``repr`` (a config must stay JSON; they cannot be rebuilt from it)."""
    described: dict[str, Any] = {}
    for key in sorted(options):
        value = options[key]
        if value is None or _SECRET.search(key):
            continue
        described[key] = value if _jsonable(value) else repr(value)
    return described


def _build_lm(model: str, options: Mapping[str, Any]) -> Any:
    from .local import LOCAL_MODEL_PREFIX, lm_from_model_string

    if model.startswith(LOCAL_MODEL_PREFIX):
        return lm_from_model_string(model, **options)
    import dspy

    return dspy.LM(model, **options)


def _adapter(name: str | None) -> Any:
    if name is None:
        return None
    import dspy

    return dspy.JSONAdapter() if name == "json" else dspy.ChatAdapter()


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio's (DSPy's async path needs it: under trio
    the components run DSPy's synchronous path in a worker thread instead)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _lm_identity(lm: Any) -> dict[str, Any]:
    """What makes a DSPy LM answer as it does: its class, model and generation options
    (secrets left out)."""
    return {
        "model": str(getattr(lm, "model", "")),
        "options": describe_lm_options(getattr(lm, "kwargs", {}) or {}),
    }


def _declare_lm_identity(base: type) -> None:
    """Tell the cache how to identify DSPy LM objects passed to a component."""
    from ragloom.identity import register_identity

    register_identity(base, _lm_identity)


class LMBinding:
    """The LM and adapter of one component, validated at construction.

    Raises ``ValueError`` when both ``lm`` and ``model`` are given, when ``lm_options`` come
    without a ``model``, when ``model`` is not a non-empty string, when ``lm`` is not a DSPy LM,
    or for an unknown ``adapter``. Building the LM from ``model`` can raise DSPy's own errors.
    """

    def __init__(
        self,
        lm: Any = None,
        model: str | None = None,
        lm_options: Mapping[str, Any] | None = None,
        adapter: str | None = None,
    ) -> None:
        if lm is not None and model is not None:
            raise ValueError("give either lm (a DSPy LM object) or model (a DSPy model string)")
        if lm_options is not None and not isinstance(lm_options, Mapping):
            raise ValueError(f"lm_options must be a mapping, got {type(lm_options).__name__}")
        options = dict(lm_options or {})
        if any(not isinstance(k, str) for k in options):
            raise ValueError("lm_options keys must be strings")
        if options and model is None:
            raise ValueError("lm_options need a model string (options of an LM object are its own)")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"model must be a non-empty DSPy model string, got {model!r}")
        if adapter is not None and adapter not in ADAPTERS:
            raise ValueError(f"adapter must be one of {ADAPTERS} or None, got {adapter!r}")
        if lm is not None:
            from dspy.clients.base_lm import BaseLM

            if not isinstance(lm, BaseLM):
                raise ValueError(f"lm must be a DSPy LM (dspy.BaseLM), got {type(lm).__name__}")
            _declare_lm_identity(BaseLM)
        self.model = model.strip() if model is not None else None
        self.lm_options = options
        self.adapter = adapter
        self.lm = (
            lm
            if lm is not None
            else (_build_lm(self.model, options) if self.model is not None else None)
        )
        self._adapter = _adapter(adapter)

    def config(self) -> dict[str, Any]:
        """``model`` and ``lm_options`` (plus ``adapter`` when set): what rebuilds the binding.

        An LM object passed in code is described by its model name and generation options
        (``lm.kwargs``), secrets excluded. Without any LM the model is ``None``: the component
        uses the LM of the DSPy context it runs in.
        """
        if self.model is not None:
            config: dict[str, Any] = {
                "model": self.model,
                "lm_options": describe_lm_options(self.lm_options),
            }
        elif self.lm is not None:
            config = {
                "model": str(getattr(self.lm, "model", type(self.lm).__name__)),
                "lm_options": describe_lm_options(getattr(self.lm, "kwargs", {}) or {}),
            }
        else:
            config = {"model": None, "lm_options": {}}
        if self.adapter is not None:
            config["adapter"] = self.adapter
        return config

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        """Run the enclosed DSPy calls with this binding's LM and adapter (if any).

        Uses ``dspy.context``, which is local to the current thread or task; DSPy's global
        settings are never changed.
        """
        overrides: dict[str, Any] = {}
        if self.lm is not None:
            overrides["lm"] = self.lm
        if self._adapter is not None:
            overrides["adapter"] = self._adapter
        if not overrides:
            yield
            return
        import dspy

        with dspy.context(**overrides):
            yield

    def describe(self) -> str:
        """A short human-readable name of the LM in use (for messages)."""
        if self.lm is not None:
            return str(getattr(self.lm, "model", type(self.lm).__name__))
        return "the LM of the current DSPy context"
