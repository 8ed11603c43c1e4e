"""What the engine reads from what it is given: a step, the run's context, a resolved policy,
per-step stats, a cache store and the plugins' step wrappers.

The engine never imports ``step.py``, ``pipeline.py`` or ``context.py``: these Protocols are its
whole contract with them (``PipelineStep``, ``ExecutionContext``, ``StepStats``, ``Policy`` and
every ``CacheStore`` satisfy them structurally; mypy checks that where the engine is called).

The engine hands a step back the very context it was given (to ``transform``,
``effective_policy``...), and a step declares the concrete context class it takes: so
:class:`RunStep` is generic in its context type ``C`` and the engine's entry points take a
``RunStep[C]`` with a context ``C``. Where the engine only passes a router's policy or cache
back to the context (:meth:`RunContext.scoped`), they keep the context's own types
(``Policy``, ``CacheStore``): a Protocol in their place could not be handed back.

Items and outputs flowing through steps are user data: they are typed :data:`Item`, which is
``Any`` on purpose (a step may take and produce anything).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

if TYPE_CHECKING:
    import random
    from typing import Self

    from pydantic import BaseModel

    from ..cache.base import CacheEntry, CacheStore
    from ..events import Event
    from ..policy import Policy

__all__ = [
    "C", "Item", "MaybeAsyncCall", "Named", "RunContext", "RunPolicy", "RunRouter", "RunStats",
    "RunStep", "RunStore", "StepInfo", "StepWrappers",
]

#: An item or an output flowing through steps: user data, ``Any`` on purpose.
Item: TypeAlias = Any
#: A per-item call that returns its result directly or as an awaitable, as the ``is_async``
#: flag always handed along with it says (a type cannot tie the flag to the return).
MaybeAsyncCall: TypeAlias = Callable[[Item], Any]


class RunStats(Protocol):
    """The per-step counts the engine keeps (``StepStats``)."""

    name: str
    event_name: str
    items_in: int
    items_out: int
    failed: int
    retried: int
    cache_hits: int
    cache_misses: int
    seconds: float


class RunPolicy(Protocol):
    """What the engine reads from a resolved policy (``Policy.resolved()``)."""

    @property
    def max_attempts(self) -> int | None: ...

    @property
    def timeout(self) -> float | None: ...

    @property
    def concurrency(self) -> int | None: ...

    @property
    def on_failure(self) -> str | None: ...

    def is_retryable(self, error: BaseException) -> bool: ...

    def delay_before(self, retry: int, rng: random.Random | None = None) -> float: ...


class RunStore(Protocol):
    """What the engine calls on a cache store. Optional capabilities are read with their
    defaults where they are used: ``read_only`` and ``path`` (:mod:`.cached`),
    ``get_decisions`` and ``put_decision`` (:mod:`.costs`)."""

    def get_many(self, keys: Sequence[str]) -> Mapping[str, CacheEntry]: ...

    def put_many(self, entries: Iterable[CacheEntry]) -> None: ...


class StepWrappers(Protocol):
    """The plugins' ``ragloom_wrap_step`` hooks, as the engine calls them (a context's
    optional ``hooks``)."""

    def implements(self, hook: str) -> bool: ...

    def wrap_step(
        self, step: StepInfo, call: Callable[..., Any], is_async: bool
    ) -> Callable[..., Any]: ...


class Named(Protocol):
    """What a context reads of a step to keep its stats: its name and stage label."""

    @property
    def name(self) -> str: ...

    @property
    def event_name(self) -> str: ...


class RunContext(Protocol):
    """What the engine reads from the run's execution context. An optional ``hooks``
    (:class:`StepWrappers` or ``None``) is read with its default where it is used."""

    @property
    def run_id(self) -> str: ...

    @property
    def observed(self) -> bool: ...

    @property
    def cache(self) -> CacheStore | Literal[False] | None: ...

    def stats_for(self, step: Named) -> RunStats: ...

    def emit(self, event: Event) -> Awaitable[None]: ...

    def scoped(
        self, *, policy: Policy | None = None, cache: CacheStore | Literal[False] | None = None
    ) -> Self: ...


#: The context type of a run: the engine passes it on to the step's hooks unchanged.
C = TypeVar("C", bound=RunContext)
C_contra = TypeVar("C_contra", contravariant=True)


class StepInfo(Protocol):
    """What the engine reads from a step without handing it a context: its name, cache
    identity, output model and input check. Optional settings (``transform_batch``,
    ``batch_size``, ``cache_mode``, ``cache_scope``, ``cache_window``, ``routes_items``,
    ``uncached_reason``) are read with their defaults where they are used."""

    name: str

    @property
    def event_name(self) -> str: ...

    @property
    def output_model(self) -> type[BaseModel] | None: ...

    @property
    def config_hash(self) -> str: ...

    @classmethod
    def identity(cls) -> str: ...

    def validate_input(self, item: Item) -> None: ...


class RunStep(StepInfo, Protocol[C_contra]):
    """What the engine reads from a step it runs under a context of type ``C_contra``: its
    public hooks (``transform`` may also take ``(item)`` alone; the engine inspects it) and
    its effective policy and cache."""

    def transform(self, item: Item, context: C_contra) -> Any: ...

    def validate_output(
        self, item: Item, produced: list[Item], context: C_contra
    ) -> Awaitable[None] | None: ...

    def effective_policy(self, context: C_contra) -> Policy: ...

    def effective_cache(self, context: C_contra) -> RunStore | None: ...


class RunRouter(RunStep[C_contra], Protocol[C_contra]):
    """A step that routes items (``routes_items = True``): its children, how it picks one,
    and the cache it sets for them."""

    @property
    def cache(self) -> CacheStore | Literal[False] | None: ...

    @property
    def children(self) -> Sequence[RunStep[C_contra]]: ...

    def select(self, item: Item) -> RunStep[C_contra] | None: ...
