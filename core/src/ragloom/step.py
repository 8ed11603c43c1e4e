"""``PipelineStep``: the contract every step fills, first-party and third-party alike.

A step maps each upstream item to zero or more items. It implements one hook,
:meth:`PipelineStep.transform`, in whichever form fits its work:

- a plain function returning the outputs (a list, one output, or ``None`` for none);
- a generator yielding them;
- an ``async def`` function or an async generator, when the work awaits (I/O, a model server).

``transform`` takes the item, and optionally the :class:`~ragloom.context.ExecutionContext` as a
second argument. Everything else is optional: ``validate_input`` / ``validate_output`` checks,
``output_model`` (what the cache reads back), a policy and a cache. How a step is run (inline,
on worker tasks, with retries and timeouts, through its cache) is the engine's business
(:mod:`ragloom._engine`), decided from these public capabilities alone, so the documented way to
write a step is also the fast way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Iterable,
    Sequence,
)
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from ._engine import default_hook, document_windows, hooks_of, process_windows
from .component import Component
from .context import ExecutionContext
from .errors import ComponentTypeError, ConfigurationError
from .models import Document
from .policy import Policy

if TYPE_CHECKING:
    from typing import Self

    from .cache.base import CacheStore

__all__ = ["IterableSource", "PipelineStep"]

T = TypeVar("T")

#: Items per window when a source reads from a synchronous iterable. A window's outputs are
#: held while the next step (an index writer, say) takes them: with an embedder, each chunk's
#: vector is a list of Python floats (8 KB for 256 dimensions), so the window sets how much an
#: ingest holds in flight. Windows of 256 documents (about 7,000 chunks) made a 200 MB ingest
#: peak 920-943 MB against 830-849 MB with 64, which was also 7-10 % faster (bench_scale.py).
DEFAULT_WINDOW = 64
#: Characters of document content per source window (bounds memory for large documents).
DEFAULT_WINDOW_CHARS = 1_000_000

_UNSET: Any = object()


class PipelineStep(Component, ABC, Generic[T]):
    """An async, streaming step: maps each upstream item to zero or more items.

    ``step(upstream)`` binds an upstream step and returns ``step``; :meth:`evaluate` streams the
    outputs in input order; :meth:`run` runs the step's graph on its own.
    """

    #: Pydantic model of this step's outputs, used to read them back from a cache (``None``:
    #: the step's outputs are not cached).
    output_model: ClassVar[type[BaseModel] | None] = Document
    #: Items read from the cache per batch, independent of the worker concurrency.
    cache_window: ClassVar[int] = 256
    #: Items per call of :meth:`transform_batch`, for steps that implement it.
    batch_size: ClassVar[int] = 64
    #: Whether the step routes each item to one of its :attr:`children` (``select(item)``)
    #: instead of transforming it itself.
    routes_items: ClassVar[bool] = False
    #: The type(s) of item this step takes, when it takes only some (a pipeline whose first
    #: step declares it refuses other inputs with a ``TypeError`` as they are read).
    input_type: ClassVar[type | tuple[type, ...] | None] = None
    identity_ignores: ClassVar[frozenset[str]] = frozenset({"cache", "policy", "name"})
    #: The kind of step (a row of the table of kinds): plugins' policy defaults are per kind.
    kind: ClassVar[str] = "step"
    #: What of an input item keys its cache entry. ``"item"``: all of it (id, metadata,
    #: content). ``"content"``: a step whose outputs depend only on a document's content and
    #: format, and take ids and metadata from it mechanically (a chunker's lineage, an
    #: embedding): the key leaves ids and metadata out, so moving or renaming a file still
    #: hits, and a replay rebuilds ids and metadata from the current input.
    cache_scope: ClassVar[Literal["item", "content"]] = "item"
    #: ``"auto"``: cached unless measured cheaper to recompute than to replay; ``"always"``;
    #: ``None``: ``$RAGLOOM_CACHE_MODE``, else ``"auto"``.
    cache_mode: Literal["auto", "always"] | None = None

    def __init__(
        self,
        *,
        cache: CacheStore | Literal[False] | None = None,
        policy: Policy | None = None,
        name: str | None = None,
    ) -> None:
        self._upstream: PipelineStep[Any] | None = None
        self._cache: CacheStore | Literal[False] | None = None
        self._policy: Policy | None = None
        self.name = type(self).__name__
        self.configure(cache=cache, policy=policy, name=name)

    def configure(
        self,
        *,
        cache: CacheStore | Literal[False] | None = _UNSET,
        policy: Policy | None = _UNSET,
        name: str | None = _UNSET,
        cache_version: str | int | None = _UNSET,
        cache_mode: Literal["auto", "always"] | None = _UNSET,
    ) -> Self:
        """Set this step's own cache, policy or name (arguments left out are kept); returns it.

        ``cache``: a store, ``False`` (never cache this step) or ``None`` (inherit).
        ``policy``: the fields this step sets (``None``: inherit every field).
        ``cache_version``: lets a step with an argument that has no stable identity (an open
        model, a client object) be cached anyway: that argument is then left out of the cache
        identity and this version stands in for it. Change it whenever such an argument changes
        in a way that changes the output.
        ``cache_mode``: ``"auto"`` (the default) skips the cache for a step measured to be
        cheaper to recompute than to replay; ``"always"`` keeps it cached.
        """
        if cache_mode is not _UNSET:
            if cache_mode not in ("auto", "always", None):
                raise ConfigurationError(
                    f"cache_mode must be 'auto' or 'always', got {cache_mode!r}"
                )
            self.cache_mode = cache_mode
        if cache_version is not _UNSET:
            if cache_version is not None and (
                isinstance(cache_version, bool) or not isinstance(cache_version, str | int)
            ):
                raise ConfigurationError(
                    f"cache_version must be a string or an integer, got {cache_version!r}"
                )
            self.__dict__["cache_version"] = cache_version
        if cache is not _UNSET:
            if cache is not None and cache is not False and not hasattr(cache, "get_many"):
                raise ComponentTypeError(
                    f"cache must be None, False or a CacheStore, got {type(cache).__name__}"
                )
            self._cache = cache
        if policy is not _UNSET:
            if policy is not None and not isinstance(policy, Policy):
                raise ComponentTypeError(f"policy must be a Policy, got {type(policy).__name__}")
            self._policy = policy
            self.__dict__.pop("_policy_memo", None)
        if name is not _UNSET and name is not None:
            if not isinstance(name, str) or not name:
                raise ConfigurationError(f"a step name must be a non-empty string, got {name!r}")
            self.name = name
        return self

    # -- composition -----------------------------------------------------------------------

    def __call__(self, upstream: PipelineStep[Any]) -> Self:
        """Bind ``upstream`` as this step's input and return this step."""
        if not isinstance(upstream, PipelineStep):
            raise ComponentTypeError(
                f"{type(self).__name__} can only be bound to a PipelineStep, "
                f"got {type(upstream).__name__}"
                + (
                    " (calling a step binds its input); to chunk text or documents, call "
                    "chunker.chunk(...) or chunker.split_text(text)"
                    if hasattr(self, "chunk")
                    else ""
                )
            )
        node: PipelineStep[Any] | None = upstream
        while node is not None:
            if node is self:
                raise ConfigurationError(f"binding {self.name} would create a cycle")
            node = node.upstream
        self._upstream = upstream
        return self

    def unbind(self) -> Self:
        """Remove the bound upstream (the step becomes a root again); returns it."""
        self._upstream = None
        return self

    @property
    def upstream(self) -> PipelineStep[Any] | None:
        """The step bound with ``step(upstream)``, or ``None``."""
        return self._upstream

    @property
    def children(self) -> Sequence[PipelineStep[Any]]:
        """Steps nested inside this one (a router's routes)."""
        return ()

    @property
    def event_name(self) -> str:
        """The stage label: the first ``event_name`` declared in a class body along the MRO.

        Falls back to the concrete class's own name, computed per instance so subclasses of an
        undeclared family each keep their own name.
        """
        for klass in type(self).__mro__:
            declared = klass.__dict__.get("event_name")
            if isinstance(declared, str):
                return declared
        return type(self).__name__

    @property
    def cache(self) -> CacheStore | Literal[False] | None:
        """The cache explicitly configured for this step (``None``: inherit)."""
        return self._cache

    @property
    def policy(self) -> Policy | None:
        """The policy explicitly configured for this step (``None``: inherit everything)."""
        return self._policy

    @property
    def awaits(self) -> bool:
        """Whether this step's work awaits (an ``async`` ``transform`` or output check).

        Derived from the hooks: a step whose work never awaits runs its items inline, one plain
        call each, whatever the concurrency.
        """
        return hooks_of(self).awaits

    def effective_policy(self, context: ExecutionContext) -> Policy:
        """This step's set fields, then the inherited policy's (router, pipeline), then the
        plugins' defaults for its kind, then ragloom's defaults."""
        own = self._policy
        inherited = context.policy
        plugins = context.plugin_policy(self)
        memo = self.__dict__.get("_policy_memo")
        if memo is not None and memo[0] is own and memo[1] is inherited and memo[2] is plugins:
            return memo[3]  # type: ignore[no-any-return]
        merged = own.merged_over(inherited) if own is not None else inherited
        if plugins is not None:
            merged = merged.merged_over(plugins)
        resolved = merged.resolved()
        self.__dict__["_policy_memo"] = (own, inherited, plugins, resolved)
        return resolved

    def effective_cache(self, context: ExecutionContext) -> CacheStore | None:
        """The store this step reads and writes, or ``None`` when caching is off."""
        cache = self._cache if self._cache is not None else context.cache
        return None if cache is None or cache is False else cache

    # -- hooks -----------------------------------------------------------------------------

    @abstractmethod
    def transform(self, item: T, context: ExecutionContext) -> Any:
        """The outputs for one item.

        Write it as a plain function returning a list of outputs (or one output, or ``None``),
        as a generator, or, when the work awaits, as an ``async def`` function or async
        generator. The ``context`` argument may be left out of the signature.
        """

    @default_hook
    def transform_batch(self, items: list[T], context: ExecutionContext) -> list[Any]:
        """Optional: the outputs of many items at once, one result per item, in order.

        A step that gains from batching (an embedder, a model server) implements this; the
        engine then hands it up to ``batch_size`` items at a time instead of calling
        :meth:`transform` per item. May be ``async``. If a batch fails, its items are retried
        one at a time, so a bad item fails alone.
        """
        raise NotImplementedError

    @default_hook
    def validate_input(self, item: T) -> None:
        """Reject an item this step cannot process (raise ``InvalidInputError``).

        Runs before processing and before a cached replay.
        """

    @default_hook
    def validate_output(
        self, item: T, produced: list[T], context: ExecutionContext
    ) -> Awaitable[None] | None:
        """Check what one item produced (raise to fail the item); may be ``async``."""
        return None

    def cache_id(self, item: T) -> str:
        """The cache id of ``item`` at this step: config hash, item identity, content hash."""
        from .cache.keys import cache_key

        return cache_key(self.config_hash, item)

    # -- running ---------------------------------------------------------------------------

    def windows(self, context: ExecutionContext) -> AsyncGenerator[list[T], None]:
        """This step's outputs for the whole run, in windows (lists) in input order.

        Raises:
            ConfigurationError: no upstream is bound and the context feeds none.
        """
        upstream = self._upstream
        if upstream is None:
            upstream = context.feed_for(self)
            if upstream is None:
                raise ConfigurationError(
                    f"{self.name} has no upstream step: bind one with step(upstream) "
                    "or run it through Pipeline.run(inputs)"
                )
        return process_windows(self, upstream.windows(context), context)

    async def evaluate(self, context: ExecutionContext) -> AsyncIterator[T]:
        """Stream this step's outputs for every upstream item, in input order.

        Raises:
            ConfigurationError: no upstream is bound.
        """
        windows = self.windows(context)
        try:
            async for window in windows:
                for out in window:
                    yield out
        finally:
            await windows.aclose()

    async def evaluate_items(
        self, items: Iterable[Any], context: ExecutionContext
    ) -> AsyncIterator[T]:
        """Process ``items`` through this step (and its cache), ignoring any bound upstream."""
        source = IterableSource(items)
        windows = process_windows(self, source.windows(context), context)
        try:
            async for window in windows:
                for out in window:
                    yield out
        finally:
            await windows.aclose()

    async def run(self, inputs: Iterable[Any] | AsyncIterable[Any] | None = None) -> list[T]:
        """Run this step's graph on its own and return every output (a coroutine: ``await``
        it, or use :meth:`run_sync`). ``inputs`` feed the root step when it has no source."""
        context = ExecutionContext()
        if inputs is not None:
            root: PipelineStep[Any] = self
            while root.upstream is not None:
                root = root.upstream
            context.feed(root, IterableSource(inputs))
        return [out async for out in self.evaluate(context)]

    def run_sync(self, inputs: Iterable[Any] | None = None) -> list[T]:
        """:meth:`run` from synchronous code (scripts and notebooks alike)."""
        from ._sync import run_sync

        return run_sync(self.run, inputs)


class IterableSource(PipelineStep[T]):
    """A root step that feeds items from an iterable or an async iterable.

    A synchronous iterable is read in windows of at most ``window`` items, and of documents
    totalling about ``window_chars`` characters, so memory stays bounded whatever the document
    sizes; an async iterable is passed on item by item, so a slow producer never holds items
    back. ``check`` (optional) runs on every item as it is read: raise ``TypeError`` there to
    refuse items of the wrong type before any work starts on them.
    """

    event_name = "Source"
    output_model = None

    def __init__(
        self,
        items: Iterable[T] | AsyncIterable[T],
        *,
        window: int = DEFAULT_WINDOW,
        window_chars: int = DEFAULT_WINDOW_CHARS,
        name: str | None = None,
        check: Any = None,
    ) -> None:
        super().__init__(cache=False, name=name)
        if not isinstance(items, Iterable | AsyncIterable) or isinstance(items, str | bytes):
            raise ComponentTypeError(
                f"IterableSource needs an iterable of items, got {type(items).__name__}"
            )
        if window < 1:
            raise ConfigurationError(f"window must be >= 1, got {window}")
        if window_chars < 1:
            raise ConfigurationError(f"window_chars must be >= 1, got {window_chars}")
        self.items = items
        self.window = window
        self.window_chars = window_chars
        self.check = check

    def __call__(self, upstream: PipelineStep[Any]) -> Self:
        raise ConfigurationError("IterableSource is a source: it takes no upstream")

    def transform(self, item: T, context: ExecutionContext) -> T:
        return item

    def windows(self, context: ExecutionContext) -> AsyncGenerator[list[T], None]:
        return document_windows(
            self.items,
            window=self.window,
            window_chars=self.window_chars,
            stats=context.stats_for(self),
            check=self.check,
        )
