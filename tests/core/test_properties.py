"""Property-based checks of the engine: accounting, order, and policy precedence."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import fields
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom import (
    DEFAULT_POLICY,
    ExecutionContext,
    FunctionStep,
    InvalidInputError,
    Pipeline,
    PipelineStep,
    Policy,
    RoutedStep,
)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TIMEOUT = 0.03  # per attempt; "slow" attempts sleep far longer and must be cancelled
BEHAVIOURS = ["ok", "transient1", "transient2", "permanent", "invalid", "slow_once", "slow_always"]


class Scripted(PipelineStep[int]):
    """Behaves per item as scripted: succeeds, fails transiently/permanently, or hangs."""

    def __init__(self, script: list[tuple[str, int, float]], **kw: Any) -> None:
        super().__init__(name="scripted", **kw)
        self.script = script
        self.attempts: dict[int, int] = {}
        self.late: list[int] = []

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[Any]:
        behaviour, outputs, pause = self.script[item]
        n = self.attempts[item] = self.attempts.get(item, 0) + 1
        if behaviour == "transient1" and n == 1 or behaviour == "transient2" and n <= 2:
            await anyio.sleep(pause)
            raise ConnectionError(f"transient {item}/{n}")
        if behaviour == "permanent":
            raise ValueError(f"permanent {item}")
        if behaviour == "invalid":
            raise InvalidInputError(f"invalid {item}")
        if behaviour == "slow_always" or behaviour == "slow_once" and n == 1:
            await anyio.sleep(5)
            self.late.append(item)  # must never happen: the attempt is cancelled
        await anyio.sleep(pause)
        for k in range(outputs):
            yield (item, k)


def expected_attempts(behaviour: str, max_attempts: int, retry_all: bool) -> tuple[bool, int]:
    """``(succeeds, attempts made)`` for one item under the policy."""
    if behaviour == "ok":
        return True, 1
    if behaviour in ("transient1", "slow_once"):
        return (True, 2) if max_attempts >= 2 else (False, 1)
    if behaviour == "transient2":
        return (True, 3) if max_attempts >= 3 else (False, max_attempts)
    if behaviour == "permanent":
        return False, max_attempts if retry_all else 1
    if behaviour == "invalid":
        return False, 1
    assert behaviour == "slow_always"
    return False, max_attempts


item_scripts = st.lists(
    st.tuples(
        st.sampled_from(BEHAVIOURS),
        st.integers(min_value=1, max_value=2),
        st.sampled_from([0.0, 0.0, 0.001, 0.002]),
    ),
    max_size=12,
)


@SETTINGS
@given(
    script=item_scripts,
    max_attempts=st.integers(min_value=1, max_value=3),
    concurrency=st.sampled_from([1, 2, 16]),
    retry_all=st.booleans(),
    poison=st.sets(st.integers(min_value=0, max_value=11)),
)
def test_every_item_is_accounted_for_exactly_once_in_order(
    script: list[tuple[str, int, float]],
    max_attempts: int,
    concurrency: int,
    retry_all: bool,
    poison: set[int],
) -> None:
    policy = Policy(
        max_attempts=max_attempts,
        backoff=0.0005,
        jitter=0.5,
        timeout=TIMEOUT,
        concurrency=concurrency,
        retry_on=None if retry_all else (ConnectionError, TimeoutError),
    )
    scripted = Scripted(script, policy=policy)

    def second(out: tuple[int, int]) -> tuple[int, int]:
        item, k = out
        if k == 1 and item in poison:
            raise KeyError(f"poisoned {out}")
        return out

    terminal = FunctionStep(second, name="second")(scripted)

    async def main() -> Any:
        with anyio.fail_after(30):
            return await Pipeline(terminal).run(range(len(script)))

    result = anyio.run(main)

    survivors: list[int] = []
    failed_first: list[tuple[int, int]] = []
    retried = 0
    for item, (behaviour, _outputs, _pause) in enumerate(script):
        ok, attempts = expected_attempts(behaviour, max_attempts, retry_all)
        assert scripted.attempts.get(item) == attempts, (item, behaviour)
        retried += attempts - 1
        if ok:
            survivors.append(item)
        else:
            failed_first.append((item, attempts))
    produced = [(i, k) for i in survivors for k in range(script[i][1])]
    expected_out = [out for out in produced if not (out[1] == 1 and out[0] in poison)]
    expected_poisoned = [out for out in produced if out[1] == 1 and out[0] in poison]

    # outputs: exactly the expected ones, in input order
    assert list(result) == expected_out
    # failures: exactly one per failed item per step, none for survivors
    first = [(f.item, f.attempts) for f in result.failed if f.step == "scripted"]
    assert first == failed_first
    assert [f.item for f in result.failed if f.step == "second"] == expected_poisoned
    assert len(result.failed) == len(failed_first) + len(expected_poisoned)
    # accounting at each step: in == accounted (outputs or failures), exactly once
    s1, s2 = result.steps["scripted"], result.steps["second"]
    assert s1.items_in == len(script) and s1.failed == len(failed_first)
    assert s1.items_out == len(produced) and s1.retried == retried
    assert s2.items_in == len(produced) == s2.items_out + s2.failed
    assert scripted.late == []


OPTIONAL_FIELDS = {
    "max_attempts": st.integers(min_value=1, max_value=5),
    "backoff": st.sampled_from([0.0, 0.001, 0.5]),
    "backoff_multiplier": st.sampled_from([1.0, 1.5, 3.0]),
    "backoff_max": st.sampled_from([0.0, 1.0, 60.0]),
    "jitter": st.sampled_from([0.0, 0.2, 1.0]),
    "retry_on": st.sampled_from([(ConnectionError,), (KeyError, OSError), (Exception,)]),
    "timeout": st.sampled_from([5.0, 30.0, 600.0]),
    "concurrency": st.integers(min_value=1, max_value=32),
    "on_failure": st.sampled_from(["emit", "abort"]),
}

partial_policies = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional=OPTIONAL_FIELDS).map(lambda kw: Policy(**kw)),
)


def first_set(name: str, *levels: Policy | None) -> Any:
    for level in levels:
        value = getattr(level, name) if level is not None else None
        if value is not None:
            return value
    return getattr(DEFAULT_POLICY, name)


class Probe(PipelineStep[int]):
    """Records the policy it runs under, as resolved from inside ``transform``."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.seen: list[Policy] = []

    async def transform(self, item: int, context: ExecutionContext) -> AsyncIterator[int]:
        self.seen.append(self.effective_policy(context))
        yield item


@SETTINGS
@given(step=partial_policies, router=partial_policies, pipeline=partial_policies)
def test_policy_precedence_is_field_by_field(
    step: Policy | None, router: Policy | None, pipeline: Policy | None
) -> None:
    routed_child = Probe(policy=step)
    routed = RoutedStep[int](policy=router).default(routed_child)
    direct = Probe(policy=step)

    async def main() -> None:
        assert await Pipeline(routed, policy=pipeline).run([1]) == [1]
        assert await Pipeline(direct, policy=pipeline).run([1]) == [1]

    anyio.run(main)
    (in_router,) = routed_child.seen
    (alone,) = direct.seen
    router_effective = routed.effective_policy(ExecutionContext(policy=pipeline))
    for f in fields(Policy):
        name = f.name
        assert getattr(in_router, name) == first_set(name, step, router, pipeline), name
        assert getattr(alone, name) == first_set(name, step, pipeline), name
        assert getattr(router_effective, name) == first_set(name, router, pipeline), name
