"""Workers sharing a slot budget (aqless._worker.budget, as a ShardedWorker's do): together
they never run more jobs than the budget, one with all the work may use all of it, and a
slot one frees wakes the other."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import anyio
import hiredis
import pytest

import aqless
from aqless._connection.lean import NO_MORE
from aqless._connection.subscriber import Subscriber
from aqless._worker.budget import Member, SlotBudget
from aqless._worker.pickup import Pickup
from aqless._worker.reservers import QueueSelection
from aqless._worker.running import RunningJobs
from aqless._worker.served import ServedQueues
from tests.support.connection_kinds import Pops, settled
from tests.support.worker import Gate, all_complete, make_worker, one, running, until
from tests.worker import conftest as worker_fixtures

pytestmark = pytest.mark.every_deployment

# the worker tests' clients (this module moved here from tests/worker, which defines them)
client = worker_fixtures.client
other = worker_fixtures.other

SLOTS = 3
SLOW_POLL = 30.0  # no poll comes during these tests: only wake-ups can explain a pickup


@pytest.mark.deployments(
    "unix", reason="slots counted by the workers: wake-ups and pushes are tested on every kind"
)
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


@pytest.mark.deployments(
    "unix", reason="slots counted by the workers: wake-ups and pushes are tested on every kind"
)
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


@pytest.mark.deployments(
    "unix", reason="slots counted by the workers: wake-ups and pushes are tested on every kind"
)
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


# -- pushed jobs: offers within the budget ----------------------------------------------------


def members(total: int, count: int) -> tuple[SlotBudget, list[Member]]:
    budget = SlotBudget(total)
    return budget, [budget.join(RunningJobs(total)) for _ in range(count)]


def take(member: Member, jid: str, *, popped: bool = False) -> None:
    member.running.take(cast(aqless.Job, SimpleNamespace(jid=jid)), 1.0, 0.0)
    if popped:
        member.popped(jid)


def test_an_offer_counts_from_before_it_is_sent_until_no_push_under_it_can_arrive() -> None:
    budget, (first, second) = members(4, 2)
    ceiling = first.offer(2)
    assert budget.free() == 2  # the server may push two jobs without asking
    take(first, "pushed")
    assert budget.free() == 2  # a push fills an offered slot
    smaller = first.offer(1)  # a shrink: pushes made under the old offer may still come
    assert budget.free() == 2
    first.settle(smaller)  # after the smaller offer's reply and a PING
    assert budget.free() == 3
    assert second.counted() == 0
    first.settle()  # withdrawn, PING answered
    assert budget.free() == 3  # the pushed job is held still
    assert ceiling not in first.ceilings


def test_a_job_popped_while_an_offer_stands_counts_on_top_of_its_slots() -> None:
    """A pop takes jobs whatever the offer: a job pushed before it may still be on its way,
    so the budget counts both until the ceiling is settled."""
    budget, (first, _) = members(4, 2)
    first.offer(1)
    take(first, "popped", popped=True)
    assert first.counted() == 2
    assert budget.free() == 2
    first.settle()
    assert budget.free() == 3


def test_a_member_offers_a_share_of_the_free_slots_and_leaves_one_for_pops() -> None:
    budget, (first, second, third) = members(4, 3)
    assert budget.share == 1
    for member in (first, second, third):
        member.offer(member.ceiling_to_offer())
    assert [member.ceilings[0].slots for member in (first, second, third)] == [1, 1, 1]
    assert budget.free() == 1
    budget.reserve(1)  # a pop on its way
    assert first.ceiling_to_offer() == 1  # its own offered slot, no more
    budget, (one_slot, two_slots) = members(6, 2)
    assert one_slot.ceiling_to_offer() == 3
    one_slot.offer(3)
    assert two_slots.ceiling_to_offer() == 2  # the last free slot stays for pops
    take(two_slots, "held")
    assert two_slots.ceiling_to_offer() == 2  # held, and one offered


def test_a_job_taken_over_the_budget_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Never expected (a pushed job the budget has no slot for): the job runs, its lock
    being held, and the budget says so loudly."""
    budget, (first, second) = members(1, 2)
    take(first, "fits")
    budget.took()
    assert budget.overdrawn == 0
    take(second, "over")
    budget.took()
    assert budget.overdrawn == 1
    assert "the workers hold 2 jobs, over their 1 slots" in caplog.text


def test_a_member_short_of_a_slot_asks_the_members_with_offered_slots_to_give_them_back() -> None:
    budget, (holder, offerer, _) = members(2, 3)
    asked: list[str] = []
    holder.give_back = lambda: asked.append("holder")
    offerer.give_back = lambda: asked.append("offerer")
    take(holder, "held")
    offerer.offer(1)
    budget.wait(1, lambda: None)  # waiting for another reason (paused, full): asks nothing
    assert asked == []
    budget.reserve(1)
    woken: list[str] = []
    budget.wait(2, lambda: woken.append("waiter"), short=True)
    assert asked == []  # a pop on its way may give its slot back: wait for its reply
    budget.give_back(1)  # the pop brought nothing
    assert woken == ["waiter"]  # it looks again
    budget.wait(2, lambda: woken.append("waiter"), short=True)
    assert asked == ["offerer"]  # the holder holds its slot: only offered ones come back
    offerer.settle()
    assert woken == ["waiter", "waiter"]
    assert budget.free() == 1


async def test_workers_sharing_a_budget_are_pushed_their_jobs_within_it(
    client: aqless.Client, other: aqless.Client
) -> None:
    done: list[str] = []
    budget = SlotBudget(4)
    first, second = (
        make_worker(
            each,
            [queue],
            one(lambda job: done.append(job.jid)),
            concurrency=4,
            interval=SLOW_POLL,
            budget=budget,
        )
        for each, queue in ((client, "a"), (other, "b"))
    )
    pops = [Pops(client), Pops(other)]

    async def both_offer() -> bool:
        a, b = f"{client.prefix}offers:a", f"{other.prefix}offers:b"
        return await offered(client, a) and await offered(other, b)

    async with running(first), running(second):
        await settled(pops, both_offer)
        before = [pop.count for pop in pops]
        jids = []
        for queue in ("a", "b", "a", "b"):  # one at a time: each finds its offer unfilled
            jids.append(await client.queues[queue].put("app.job", {}))
            await all_complete(client, jids[-1:], timeout=3)
        assert [pop.count for pop in pops] == before, "every job was pushed: no pop"
    assert sorted(done) == sorted(jids)
    assert budget.overdrawn == 0


async def offered(client: aqless.Client, offers: str) -> bool:
    return await client.redis.hget(offers, client.worker_name) is not None


async def test_a_push_read_with_the_pong_is_heard_before_the_ping_returns() -> None:
    """What lowers a ceiling safely: a push published before the PING is heard first, even
    when it comes in the read that brings the PONG."""
    order: list[str] = []
    subscriber = Subscriber(
        hiredis.Reader(notEnoughData=NO_MORE),
        None,
        lambda messages: order.extend(payload.decode() for _, payload in messages),
    )

    async def ping() -> None:
        await subscriber.ping()
        order.append("pong")

    async with anyio.create_task_group() as group:
        group.start_soon(ping)
        await anyio.wait_all_tasks_blocked()
        subscriber.data_received(
            b"*3\r\n$7\r\nmessage\r\n$4\r\npush\r\n$3\r\njob\r\n*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        )
    assert order == ["job", "pong"]


class Taker:
    """The worker, as a Pickup sees it, taking nothing."""

    capacity, interval = 4, SLOW_POLL

    def __init__(self, name: str) -> None:
        self.name = name

    def take_pushed(self, jobs: Any, unreadable: Any = ()) -> None:
        pass

    def pushes_may_be_lost(self) -> None:
        pass


async def served_q(client: aqless.Client) -> ServedQueues:
    served = ServedQueues(client, QueueSelection(["q"]), refresh=60)
    await served.current()
    return served


async def test_an_offer_is_made_again_at_once_when_its_slots_change(client: aqless.Client) -> None:
    budget, (member, _) = members(4, 2)
    taker = Taker(client.worker_name)
    pickup = Pickup(client, await served_q(client), lambda: None, taker, member)
    subscriber = await Subscriber.open(client.protocol.endpoint, lambda _: None)
    offers = f"{client.prefix}offers:q"
    try:
        await pickup._offer(subscriber, taker)
        assert str(await client.redis.hget(offers, client.worker_name)).startswith("2 ")
        take(member, "pushed")  # its offer is half filled: it may offer one more
        await pickup._offer(subscriber, taker)  # long before the offer is due for renewal
        assert str(await client.redis.hget(offers, client.worker_name)).startswith("3 ")
        assert [ceiling.slots for ceiling in member.ceilings] == [3]  # the PING came back
        assert budget.free() == 1
    finally:
        subscriber.close()


async def test_a_pickup_wanted_then_unwanted_in_one_turn_neither_listens_nor_offers(
    client: aqless.Client,
) -> None:
    """As when a pop comes back short just before a stop: the stopping worker, which took
    its offer back, must not offer again (a member would count its slots for ever)."""
    pickup = Pickup(client, await served_q(client), lambda: None, Taker(client.worker_name))
    offers = f"{client.prefix}offers:q"
    async with anyio.create_task_group() as group:
        group.start_soon(pickup.run)
        pickup.want(True)
        await until(lambda: offered(client, offers), what="the pickup offers")
        pickup.want(False)
        await until(lambda: not pickup.listening, what="the pickup stops listening")
        await pickup.withdraw()
        pickup.want(True)
        pickup.want(False)
        await anyio.sleep(0.3)  # time to subscribe and offer, had it heard the first
        assert not pickup.listening
        assert not await offered(client, offers)
        group.cancel_scope.cancel()
