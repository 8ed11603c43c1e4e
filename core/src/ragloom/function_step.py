"""``FunctionStep``: a step made from a plain function."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ._hashing import canonical
from .errors import ComponentTypeError
from .policy import Policy
from .step import PipelineStep

if TYPE_CHECKING:
    from .cache.base import CacheStore
    from .context import ExecutionContext

__all__ = ["FunctionStep"]


class FunctionStep(PipelineStep[Any]):
    """A step from a function ``item -> output | list of outputs | None``.

    The function *is* the step's ``transform`` hook: a plain function runs inline, an
    ``async def`` function under the policy's concurrency, exactly like a step class written
    with the same hook. ``output_model`` (a pydantic model) makes its outputs cacheable: the
    function then returns instances of it. Without one (a function returning plain dicts,
    say) the step runs uncached, and a run with a cache says so once (a ``CacheSkipped``
    event).
    """

    output_model = None

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        name: str | None = None,
        cache: CacheStore | Literal[False] | None = None,
        policy: Policy | None = None,
        output_model: type[BaseModel] | None = None,
    ) -> None:
        if not callable(fn):
            raise ComponentTypeError(f"FunctionStep needs a callable, got {type(fn).__name__}")
        super().__init__(cache=cache, policy=policy, name=name or getattr(fn, "__name__", None))
        self.fn = fn
        # The function is this instance's transform hook (called with the item alone).
        self.__dict__["transform"] = fn
        if output_model is not None:
            self.output_model = output_model  # type: ignore[misc]

    @property
    def uncached_reason(self) -> str | None:
        """Why this step is never cached (``None``: it is cached when a cache is in effect)."""
        if self.output_model is not None:
            return None
        return (
            "its outputs are not cached: a FunctionStep without an output_model can return "
            "anything (plain dicts, say), which the cache cannot store and rebuild. To cache "
            "them, pass output_model=<a pydantic model> and return instances of it"
        )

    def config(self) -> Mapping[str, Any]:
        return {"fn": canonical(self.fn)}

    def transform(self, item: Any, context: ExecutionContext) -> Any:  # pragma: no cover
        # Replaced per instance by the function itself (see __init__).
        return self.fn(item)
