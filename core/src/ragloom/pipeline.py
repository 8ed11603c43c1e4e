"""``Pipeline``: runs a step graph from its terminal step, with observers and a summary."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from ._inputs import wrong_item
from ._interrupts import watching as watching_interrupts
from .context import ExecutionContext, Observer, StepStats, warn_no_chunks
from .errors import ComponentTypeError, ConfigurationError
from .events import ItemFailed, RunFinished, RunStarted
from .policy import Policy
from .step import IterableSource, PipelineStep

if TYPE_CHECKING:
    from .cache.base import CacheStore

__all__ = ["Pipeline", "RunResult"]

T = TypeVar("T")


class RunResult(list[T]):
    """The outputs of a run (it *is* the list of output items, in input order), plus:

    - ``failed``: the ``ItemFailed`` events, one per item that produced no output at a step;
    - ``steps``: per-step counts (in, out, failed, retried, cache hits and misses, seconds);
    - ``seconds``: wall time of the run.
    """

    failed: list[ItemFailed]
    steps: dict[str, StepStats]
    seconds: float

    def __init__(
        self,
        outputs: Iterable[T] = (),
        *,
        failed: list[ItemFailed] | None = None,
        steps: dict[str, StepStats] | None = None,
        seconds: float = 0.0,
    ) -> None:
        super().__init__(outputs)
        self.failed = failed or []
        self.steps = steps or {}
        self.seconds = seconds

    def __repr__(self) -> str:
        return (
            f"RunResult({len(self)} outputs, {len(self.failed)} failed, "
            f"{len(self.steps)} steps, {self.seconds:.3f}s)"
        )

    @property
    def outputs(self) -> list[T]:
        return list(self)

    @property
    def cache_hits(self) -> int:
        return sum(s.cache_hits for s in self.steps.values())

    @property
    def cache_misses(self) -> int:
        return sum(s.cache_misses for s in self.steps.values())


class Pipeline(Generic[T]):
    """A runnable step graph, named by its terminal step.

    ``policy`` and ``cache`` are inherited by every step that does not set its own. Observers
    (sync or async callables taking an event) see every event of every run.

    A pipeline owns the resources given to it in ``owns`` (and those its builder opened, such
    as a pipeline file's cache): use it as a context manager (``with`` or ``async with``), or
    call :meth:`close`, to release them.
    """

    def __init__(
        self,
        terminal: PipelineStep[T],
        *,
        policy: Policy | None = None,
        cache: CacheStore | Literal[False] | None = None,
        observers: Iterable[Observer] = (),
        name: str | None = None,
        owns: Iterable[Any] = (),
        registry: Any = None,
        block: Any = None,
        plugin_hooks: bool = True,
    ) -> None:
        if not isinstance(terminal, PipelineStep):
            raise ComponentTypeError(
                f"Pipeline needs a PipelineStep, got {type(terminal).__name__}"
            )
        self.terminal = terminal
        self.policy = policy
        self.cache = cache
        self.observers: list[Observer] = list(observers)
        self.name = name or terminal.name
        #: The plugin registry this pipeline was built with (``None``: built in code).
        self.registry = registry
        #: The reusable block that built this pipeline (e.g. a ``MultiQueryRoutingPipeline``).
        self.block = block
        #: Whether runs call the installed plugins' hooks (events, step wrappers, policy
        #: defaults). Turning it off is an explicit choice: an audit plugin sees every
        #: pipeline that does not.
        self.plugin_hooks = plugin_hooks
        self._owned: list[Any] = []
        for resource in owns:
            self.own(resource)

    # -- resources -------------------------------------------------------------------------

    def own(self, resource: Any) -> Any:
        """Make this pipeline responsible for closing ``resource`` (anything with ``close()``);
        returns it."""
        if not callable(getattr(resource, "close", None)):
            raise ComponentTypeError(
                f"a pipeline can only own resources with a close() method, got "
                f"{type(resource).__name__}"
            )
        if all(r is not resource for r in self._owned):
            self._owned.append(resource)
        return resource

    def close(self) -> None:
        """Close every resource this pipeline owns (each once; idempotent)."""
        owned, self._owned = self._owned, []
        errors: list[BaseException] = []
        for resource in reversed(owned):
            try:
                resource.close()
            except Exception as exc:  # noqa: BLE001 - close the rest, then report
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> Pipeline[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Pipeline[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- the graph -------------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> Observer:
        """Add an observer (usable as a decorator)."""
        self.observers.append(observer)
        return observer

    def steps(self) -> list[PipelineStep[Any]]:
        """The chain from the root to the terminal step (routers' children not included)."""
        chain: list[PipelineStep[Any]] = []
        node: PipelineStep[Any] | None = self.terminal
        while node is not None:
            chain.append(node)
            node = node.upstream
        chain.reverse()
        return chain

    def walk(self) -> Iterator[PipelineStep[Any]]:
        """Every step of the graph, root first, routers' children after their router."""

        def visit(step: PipelineStep[Any]) -> Iterator[PipelineStep[Any]]:
            yield step
            for child in step.children:
                yield from visit(child)

        for step in self.steps():
            yield from visit(step)

    @property
    def root(self) -> PipelineStep[Any]:
        return self.steps()[0]

    # -- running ---------------------------------------------------------------------------

    def hooks(self) -> Any:
        """The plugin registry whose hooks runs call (``None`` with ``plugin_hooks=False``).

        A pipeline built in code gets one on its first run (the installed plugins' hooks).
        """
        if not self.plugin_hooks:
            return None
        if self.registry is None:
            from .plugins import Registry

            self.registry = Registry()
        return self.registry

    def context(
        self, inputs: Iterable[Any] | AsyncIterable[Any] | None = None
    ) -> ExecutionContext:
        """A fresh execution context for one run of this pipeline, fed with ``inputs``.

        Raises:
            PolicyViolationError: the organisation's policy requires step wrappers this run
                would not have; nothing runs.
        """
        hooks = self.hooks()
        _check_required_wrappers(hooks)
        observers = list(self.observers)
        if hooks is not None:
            if hooks.implements("ragloom_event"):
                observers.append(hooks.emit)
            if hooks.implements("ragloom_event_async"):
                observers.append(hooks.aemit)
        context = ExecutionContext(
            policy=self.policy, cache=self.cache, observers=observers, hooks=hooks
        )
        root = self.root
        if inputs is not None:
            if isinstance(root, IterableSource):
                raise ConfigurationError(
                    f"pipeline {self.name!r} starts with a source; run() takes no inputs"
                )
            context.feed(root, IterableSource(inputs, check=_input_check(root)))
        elif not isinstance(root, IterableSource) and root.upstream is None:
            raise ConfigurationError(
                f"pipeline {self.name!r} has no source at its root ({root.name}); "
                "pass inputs to run()"
            )
        for step in self.walk():
            context.stats_for(step)
        return context

    async def stream(
        self,
        inputs: Iterable[Any] | AsyncIterable[Any] | None = None,
        *,
        context: ExecutionContext | None = None,
    ) -> AsyncIterator[T]:
        """Stream outputs as they are released (input order); failures go to observers.

        A stream is a run: observers see ``RunStarted`` and ``RunFinished`` around it.
        """
        ctx = context or self.context(inputs)
        if context is not None and inputs is not None:
            ctx.feed(self.root, IterableSource(inputs, check=_input_check(self.root)))
        windows = self._windows(ctx)
        try:
            async for window in windows:
                for out in window:
                    yield out
        finally:
            # Closed here, in this task, when the consumer stops early: not left to the
            # garbage collector (which would finalize it in another task, or not at all).
            await windows.aclose()

    async def _windows(self, context: ExecutionContext) -> AsyncGenerator[list[T], None]:
        """The run's output windows, between its ``RunStarted`` and ``RunFinished`` events."""
        started = time.perf_counter()
        if context.observed:
            await context.emit(
                RunStarted(context.run_id, steps=tuple(s.name for s in self.steps()))
            )
        outputs = 0
        aborted = True
        try:
            windows = self.terminal.windows(context)
            # Signals are noted while the run goes on, so that a KeyboardInterrupt a step
            # raises on its own fails that item instead of stopping the run.
            with watching_interrupts():
                try:
                    async for window in windows:
                        outputs += len(window)
                        yield window
                finally:
                    await windows.aclose()
            aborted = False
        finally:
            if context.observed:
                await context.emit(
                    RunFinished(
                        context.run_id,
                        outputs=outputs,
                        failed=len(context.failures),
                        seconds=time.perf_counter() - started,
                        aborted=aborted,
                    )
                )

    async def run(
        self,
        inputs: Iterable[Any] | AsyncIterable[Any] | None = None,
        *,
        show_progress: bool = False,
    ) -> RunResult[T]:
        """Run to completion; return outputs with failures and per-step counts.

        ``inputs`` feeds the root step when the graph has no source of its own (e.g. a pipeline
        built by ``MultiQueryRoutingPipeline``). ``show_progress=True`` shows a progress bar on
        stderr (a rich bar on a terminal or in a notebook, plain lines otherwise): the inputs
        taken in, out of ``len(inputs)`` when it has one, with the outputs and failures so far.
        It needs the rich library (it comes with ``ragloom[cli]``).

        Raises:
            TypeError: an input is not of the type the first step takes (named in full).
            ItemProcessingError: an item failed under ``on_failure = "abort"``.
            ModuleNotFoundError: ``show_progress=True`` without rich installed.
        """
        counter: _Counted | None = None
        if show_progress:
            from ._display import require_rich

            require_rich()
            counter = _Counted(inputs)
            inputs = counter.items
        context = self.context(inputs)
        started = time.perf_counter()
        outputs: list[T] = []
        shown = _shown(counter, context, outputs) if counter is not None else None
        windows = self._windows(context)
        try:
            async for window in windows:
                outputs.extend(window)
                if shown is not None:
                    shown.show()
        finally:
            await windows.aclose()  # type: ignore[attr-defined]
            if shown is not None:
                shown.close()
        seconds = time.perf_counter() - started
        warn_no_chunks({name: stats.no_chunks for name, stats in context.stats.items()})
        return RunResult(
            outputs, failed=list(context.failures), steps=dict(context.stats), seconds=seconds
        )

    def run_sync(
        self, inputs: Iterable[Any] | None = None, *, show_progress: bool = False
    ) -> RunResult[T]:
        """:meth:`run` from synchronous code: a script, or a notebook (inside a running event
        loop it runs on a fresh loop in a helper thread)."""
        from ._sync import run_sync

        if not show_progress:
            return run_sync(self.run, inputs)
        return run_sync(self._run_shown, inputs)

    async def _run_shown(self, inputs: Iterable[Any] | None) -> RunResult[T]:
        return await self.run(inputs, show_progress=True)


class _Counted:
    """The inputs of a run, counted as the pipeline takes them."""

    def __init__(self, inputs: Iterable[Any] | AsyncIterable[Any] | None) -> None:
        self.taken = 0
        self.total: int | None = None
        self.items: Iterable[Any] | AsyncIterable[Any] | None = None
        if inputs is None:
            return
        try:
            self.total = len(inputs)  # type: ignore[arg-type]
        except TypeError:
            self.total = None
        if isinstance(inputs, AsyncIterable):
            self.items = self._acount(inputs)
        elif isinstance(inputs, Iterable) and not isinstance(inputs, str | bytes):
            self.items = self._count(inputs)
        else:
            self.items = inputs  # refused by the source, with its own message

    def _count(self, inputs: Iterable[Any]) -> Iterator[Any]:
        for item in inputs:
            self.taken += 1
            yield item

    async def _acount(self, inputs: AsyncIterable[Any]) -> AsyncIterator[Any]:
        async for item in inputs:
            self.taken += 1
            yield item


class _Shown:
    """A run's progress display: inputs taken in (or outputs, for a pipeline with its own
    source), updated as each window of outputs is released."""

    def __init__(
        self, counter: _Counted, context: ExecutionContext, outputs: list[Any], progress: Any
    ) -> None:
        self.counter = counter
        self.context = context
        self.outputs = outputs
        self.progress = progress

    def show(self) -> None:
        failed = len(self.context.failures)
        if self.counter.items is None:
            self.progress.update(len(self.outputs), note=f"{failed} failed")
        else:
            self.progress.update(
                self.counter.taken, note=f"{len(self.outputs)} outputs, {failed} failed"
            )

    def close(self) -> None:
        self.show()
        self.progress.close()


def _shown(counter: _Counted, context: ExecutionContext, outputs: list[Any]) -> _Shown:
    from ._display import Progress

    if counter.items is None:
        progress = Progress(None, label="outputs")
    else:
        progress = Progress(counter.total, label="inputs")
    return _Shown(counter, context, outputs, progress)


def _input_check(root: PipelineStep[Any]) -> Any:
    """A check refusing inputs of another type than ``root`` takes (``None``: takes any)."""
    expected = root.input_type
    if expected is None:
        return None
    names = (
        " or ".join(f"{t.__module__}.{t.__qualname__}" for t in expected)
        if isinstance(expected, tuple)
        else f"a {expected.__module__.split('.')[0]}.{expected.__qualname__}"
    )

    def check(item: Any) -> None:
        if not isinstance(item, expected):
            raise wrong_item(item, f"{names} for {root.name}")

    return check


def _check_required_wrappers(hooks: Any) -> None:
    """Refuse a run without the step wrappers the organisation's policy requires."""
    if hooks is not None:
        check = getattr(hooks, "check_required_wrappers", None)
        if check is not None:
            check()
        return
    from .plugins._policy import policy_in_force

    required = policy_in_force().require_wrappers
    if required:
        from .errors import PolicyViolationError

        dist, who = next(iter(required.items()))
        raise PolicyViolationError(
            f"the run does not start: the policy in {who} requires the step wrappers of "
            f"{dist}, and this pipeline was built with plugin_hooks=False"
        )
