"""Events: what observers see, immutability, and ``event_name`` resolution (spec 004)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    Document,
    Event,
    ExecutionContext,
    FunctionStep,
    ItemFailed,
    ItemRetried,
    IterableSource,
    Pipeline,
    PipelineStep,
    Policy,
    RoutedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)


class Flaky(PipelineStep[int]):
    """Item 1 fails once (then succeeds); item 2 always fails."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.tries: dict[int, int] = {}

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        n = self.tries[item] = self.tries.get(item, 0) + 1
        if item == 2 or (item == 1 and n == 1):
            raise RuntimeError(f"boom {item}")
        yield item * 10


def build(observers: list[Any]) -> tuple[Pipeline[int], Flaky]:
    flaky = Flaky(name="flaky", policy=Policy(max_attempts=2, backoff=0.0))
    terminal = FunctionStep(lambda x: x + 1, name="inc")(flaky(IterableSource([0, 1, 2, 3])))
    return Pipeline(terminal, observers=observers), flaky


@pytest.mark.anyio
async def test_sync_and_async_observers_receive_every_event_in_order() -> None:
    sync_seen: list[Event] = []
    async_seen: list[Event] = []

    async def async_observer(event: Event) -> None:
        await anyio.sleep(0)
        async_seen.append(event)

    pipeline, _ = build([sync_seen.append, async_observer])
    result = await pipeline.run()
    assert list(result) == [1, 11, 31]
    assert sync_seen == async_seen
    kinds = [type(e) for e in sync_seen]
    assert kinds[0] is RunStarted and kinds[-1] is RunFinished
    for cls in (StepStarted, StepFinished, ItemRetried, ItemFailed):
        assert cls in kinds
    run_ids = {e.run_id for e in sync_seen}
    assert len(run_ids) == 1

    started = sync_seen[0]
    assert isinstance(started, RunStarted) and started.steps == ("IterableSource", "flaky", "inc")
    finished = sync_seen[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.outputs, finished.failed, finished.aborted) == (3, 1, False)

    retried = [e for e in sync_seen if isinstance(e, ItemRetried)]
    assert sorted((e.step, e.attempt, e.error) for e in retried) == [
        ("flaky", 1, "RuntimeError: boom 1"),
        ("flaky", 1, "RuntimeError: boom 2"),
    ]
    failed = [e for e in sync_seen if isinstance(e, ItemFailed)]
    assert [(e.step, e.item, e.attempts, e.error_type) for e in failed] == [
        ("flaky", 2, 2, "RuntimeError")
    ]
    assert failed[0].reason == "RuntimeError: boom 2"
    assert failed == result.failed

    step_finished = {e.step: e for e in sync_seen if isinstance(e, StepFinished)}
    flaky_done = step_finished["flaky"]
    assert (flaky_done.items_in, flaky_done.items_out, flaky_done.failed, flaky_done.retried) == (
        4,
        3,
        1,
        2,
    )
    assert step_finished["inc"].items_in == 3 and step_finished["inc"].event_name == "FunctionStep"
    # every step that started also finished, each after it started
    names = [e.step for e in sync_seen if isinstance(e, StepStarted)]
    assert sorted(names) == sorted(step_finished) == ["flaky", "inc"]
    for name in names:
        start = next(
            i for i, e in enumerate(sync_seen) if isinstance(e, StepStarted) and e.step == name
        )
        end = next(
            i for i, e in enumerate(sync_seen) if isinstance(e, StepFinished) and e.step == name
        )
        assert start < end


@pytest.mark.anyio
async def test_observer_added_with_subscribe_decorator() -> None:
    seen: list[str] = []
    pipeline, _ = build([])

    @pipeline.subscribe
    def record(event: Event) -> None:
        seen.append(event.kind)

    await pipeline.run()
    assert seen[0] == "run_started" and seen[-1] == "run_finished"
    assert "item_failed" in seen and "item_retried" in seen


@pytest.mark.anyio
async def test_failures_are_collected_without_observers() -> None:
    pipeline, flaky = build([])
    result = await pipeline.run()
    assert [f.item for f in result.failed] == [2]
    assert flaky.tries == {0: 1, 1: 2, 2: 2, 3: 1}


def test_events_are_immutable() -> None:
    events: list[Event] = [
        RunStarted("r", steps=("a",)),
        StepFinished("r", step="a", items_in=1),
        ItemFailed("r", step="a", item_id="x", error_type="E", message="m"),
        ItemRetried("r", step="a", item_id="x", attempt=1),
    ]
    for event in events:
        assert dataclasses.is_dataclass(event)
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.run_id = "other"  # type: ignore[misc]
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
            event.extra = 1  # type: ignore[attr-defined]


def test_events_serialise_to_json() -> None:
    failure = ItemFailed(
        "r",
        step="s",
        item_id="d1",
        error_type="ValueError",
        message="no",
        item=Document(id="d1", content="x"),
        exception=ValueError("no"),
    )
    data = failure.to_dict()
    assert data["kind"] == "item_failed" and data["item_id"] == "d1"
    json.dumps(data)
    json.dumps(StepFinished("r", step="s", seconds=0.5).to_dict())


# -- event_name ---------------------------------------------------------------------------


class Undeclared(PipelineStep[Any]):
    async def transform(self, item: Any, context: ExecutionContext) -> AsyncIterator[Any]:
        yield item


class UndeclaredChild(Undeclared):
    pass


class Family(Undeclared):
    event_name = "Family"


class Member(Family):
    pass


class PlainMixin:
    """Declares nothing: contributes nothing to the label."""


class LabelMixin:
    event_name = "Labelled"


class MixedFirst(PlainMixin, Member):
    pass


class LabelledFirst(LabelMixin, Member):
    pass


class OptOut(Member):
    event_name = "OptOut"


class RouterOfFamily(RoutedStep[Any], Family):
    """A routing mixin listed first contributes nothing: the family's label wins."""


class MixinAfterBase(Undeclared, LabelMixin):
    """A declaring mixin later in the MRO still labels the step."""


class TextSplitter(Chunker):
    def split(self, document: Document) -> Iterable[str]:
        yield document.content


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (Undeclared(), "Undeclared"),
        (UndeclaredChild(), "UndeclaredChild"),  # own name, not its base's
        (Family(), "Family"),
        (Member(), "Family"),
        (MixedFirst(), "Family"),
        (LabelledFirst(), "Labelled"),
        (OptOut(), "OptOut"),
        (RouterOfFamily(), "Family"),
        (MixinAfterBase(), "Labelled"),
        (RoutedStep(), "RoutedStep"),
        (TextSplitter(), "Chunking"),
        (ChunkerRouter(), "Chunking"),
        (IterableSource([]), "Source"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_event_name_resolution(step: PipelineStep[Any], expected: str) -> None:
    assert step.event_name == expected


def test_undeclared_fallback_is_not_assigned_onto_the_class() -> None:
    assert Undeclared().event_name == "Undeclared"
    # computing the base's label must not make it look declared to subclasses
    assert "event_name" not in Undeclared.__dict__
    assert UndeclaredChild().event_name == "UndeclaredChild"


@pytest.mark.anyio
async def test_step_events_carry_the_event_name() -> None:
    seen: list[Event] = []
    step = Member(name="m")(IterableSource([1]))
    await Pipeline(step, observers=[seen.append]).run()
    started = [e for e in seen if isinstance(e, StepStarted)]
    assert [(e.step, e.event_name) for e in started] == [("m", "Family")]
