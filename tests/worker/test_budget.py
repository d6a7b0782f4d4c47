"""Workers sharing a slot budget (aqless._worker.budget, as a ShardedWorker's do): together
they never run more jobs than the budget, one with all the work may use all of it, and a
slot one frees wakes the other."""

from __future__ import annotations

import anyio
import pytest

import aqless
from aqless._worker.budget import SlotBudget
from tests.worker.helpers import Gate, all_complete, make_worker, one, running

pytestmark = pytest.mark.every_deployment

SLOTS = 3
SLOW_POLL = 30.0  # no poll comes during these tests: only wake-ups can explain a pickup


async def test_two_workers_never_run_more_than_their_shared_slots(
    client: aqless.Client, other: aqless.Client
) -> None:
    gauge = Gate(0.02)
    budget = SlotBudget(SLOTS)
    jids = [await client.queues["a"].put("app.job", {"n": n}) for n in range(12)]
    jids += [await client.queues["b"].put("app.job", {"n": n}) for n in range(12)]
    first, second = (
        make_worker(each, [queue], one(gauge), concurrency=SLOTS, budget=budget)
        for each, queue in ((client, "a"), (other, "b"))
    )
    async with running(first), running(second):
        await all_complete(client, jids, timeout=20)
    assert gauge.most == SLOTS
    assert budget.free() == SLOTS  # every reservation given back


async def test_a_worker_with_all_the_work_uses_every_shared_slot(
    client: aqless.Client, other: aqless.Client
) -> None:
    gauge = Gate(0.02)
    budget = SlotBudget(SLOTS)
    jids = [await client.queues["a"].put("app.job", {"n": n}) for n in range(9)]
    busy = make_worker(client, ["a"], one(gauge), concurrency=SLOTS, budget=budget)
    idle = make_worker(other, ["b"], one(gauge), concurrency=SLOTS, budget=budget)
    async with running(busy), running(idle):
        await all_complete(client, jids, timeout=10)
    assert gauge.most == SLOTS
    assert idle.counters.started == 0


async def test_a_slot_freed_by_one_worker_wakes_the_other(
    client: aqless.Client, other: aqless.Client
) -> None:
    release = anyio.Event()
    holding = anyio.Event()

    async def hold(job: aqless.Job) -> None:
        holding.set()
        await release.wait()

    budget = SlotBudget(1)
    held = await client.queues["a"].put("app.job", {})
    holder = make_worker(client, ["a"], one(hold), concurrency=1, budget=budget)
    waiter = make_worker(other, ["b"], one(hold), concurrency=1, interval=SLOW_POLL, budget=budget)
    async with running(holder), running(waiter):
        with anyio.fail_after(5):
            await holding.wait()
        waiting = await other.queues["b"].put("app.job", {})  # no slot: the budget is full
        await anyio.sleep(0.3)  # time to take it, had the budget a slot
        assert waiter.counters.started == 0
        release.set()
        await all_complete(client, [held, waiting], timeout=3)  # not after a 30 s poll
    assert waiter.counters.started == 1


def test_a_reservation_given_back_unused_wakes_the_waiting_members() -> None:
    """A member whose pop reserved the slot another freed, and came back empty, hands it on:
    the member that woke meanwhile and found it reserved is woken again."""
    budget = SlotBudget(1)
    woken: list[str] = []
    budget.reserve(1)  # one member's pop is on its way
    budget.wait(2, lambda: woken.append("waiter"))
    assert budget.free() == 0
    budget.give_back(0)  # a pop that brought the jobs it asked for frees nothing
    assert woken == []
    budget.give_back(1)
    assert woken == ["waiter"]
    assert budget.free() == 1


async def test_a_budget_of_jobs_is_taken_once_over_its_workers(
    client: aqless.Client, other: aqless.Client
) -> None:
    gauge = Gate(0.02)
    spent = anyio.Event()
    budget = SlotBudget(SLOTS, jobs=5, on_spent=spent.set)
    for queue in ("a", "b"):
        await client.queues[queue].put_many([aqless.PutRequest("app.job") for _ in range(6)])
    first, second = (
        make_worker(each, [queue], one(gauge), concurrency=SLOTS, budget=budget)
        for each, queue in ((client, "a"), (other, "b"))
    )
    async with running(first), running(second):
        with anyio.fail_after(10):
            await spent.wait()
        await anyio.sleep(0.3)  # time to take a sixth, had the budget one
    assert first.counters.started + second.counters.started == 5
    assert budget.jobs_left == 0
