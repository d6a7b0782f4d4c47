"""Idle fleets (issue 20): offering workers are pushed their jobs, so only a few of them (the
put listeners, aqless._worker.pickup) listen to put events as well. A put into the queues of
many idle workers then costs the server a push and a few deliveries, not two messages per
worker; the put listeners hear what comes without a push (an advanced job, another client's
put)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

import aqless
from aqless._worker.pickup import _PUT_LISTENERS, Pickup
from aqless._worker.reservers import QueueSelection
from aqless._worker.served import ServedQueues
from tests.conftest import EventCapture
from tests.support.connection_kinds import Pops
from tests.support.deployments import Deployment
from tests.support.worker import WORKER, make_worker, one, running, until, until_state

pytestmark = pytest.mark.every_deployment

FLEET = 4


@asynccontextmanager
async def clients(deployment: Deployment, count: int) -> AsyncIterator[list[aqless.Client]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(deployment.open_client(worker_name=f"fleet-{n}"))
            for n in range(count)
        ]


async def offered(client: aqless.Client, queue: str = "q") -> bool:
    return await client.redis.hget(f"{client.prefix}offers:{queue}", client.worker_name) is not None


async def one_by_one(
    stack: AsyncExitStack, fleet: list[aqless.Client], handlers: aqless.Handlers
) -> None:
    """Start a worker of each client once the one before offers: each offer counts the
    put listeners before it (none polls: interval 30 s)."""
    for each in fleet:
        await stack.enter_async_context(running(make_worker(each, ["q"], handlers, interval=30)))
        await until(lambda: offered(each), what="the worker offers")  # noqa: B023


async def test_of_idle_workers_only_two_hear_put_events_and_each_is_pushed_its_jobs(
    deployment: Deployment, client: aqless.Client
) -> None:
    done: list[str] = []
    handlers = one(lambda job: done.append(job.jid))
    async with clients(deployment, FLEET) as fleet, AsyncExitStack() as stack:
        pops = [Pops(each) for each in fleet]
        # one after the other: each offer sees the put listeners before it
        for each in fleet:
            await stack.enter_async_context(
                running(make_worker(each, ["q"], handlers, interval=30))
            )
            await until(lambda: offered(each), what="the worker offers")  # noqa: B023
        log, pushed = f"{client.prefix}log", f"{client.prefix}pushed"
        assert await deployment.subscribers(log) == _PUT_LISTENERS
        assert await deployment.subscribers(pushed) == _PUT_LISTENERS
        before = [pop.count for pop in pops]
        assert all(before), "each worker's first pop, before it offered, was counted"
        jids = []
        for _ in range(2 * FLEET):
            jids.append(await client.queues["q"].put("app.job"))
            await until(lambda: jids[-1] in done, timeout=2, what="the job is pushed and runs")
        assert sorted(done) == sorted(jids)
        assert [pop.count for pop in pops] == before, "every job was pushed: no pop"


async def test_an_advanced_job_is_heard_by_an_ear_of_an_idle_fleet(
    deployment: Deployment, client: aqless.Client
) -> None:
    """An advanced job comes without a push: a put listener pops it at once (no poll for
    30 s)."""
    async with clients(deployment, FLEET) as fleet, AsyncExitStack() as stack:
        for each in fleet:
            await stack.enter_async_context(
                running(make_worker(each, ["q"], one(lambda job: None), interval=30))
            )
            await until(lambda: offered(each), what="the worker offers")  # noqa: B023
        jid = await client.queues["first"].put("app.job")
        job = await client.queues["first"].pop()
        assert job is not None
        await job.complete(next_queue="q")
        await until_state(client, jid, aqless.JobState.COMPLETE, timeout=2)


async def test_an_idle_fleet_started_at_once_settles_to_two_put_listeners(
    deployment: Deployment, client: aqless.Client
) -> None:
    """Workers that start together all find too few put listeners and become one; at their
    offers' renewals the surplus stops listening to put events at random, and the fleet
    settles at two."""
    pushed = f"{client.prefix}pushed"
    async with clients(deployment, FLEET + 1) as fleet, AsyncExitStack() as stack:
        workers = [make_worker(each, ["q"], one(lambda job: None), interval=0.1) for each in fleet]
        for worker in workers:
            await stack.enter_async_context(running(worker))
        for each in fleet:
            await until(lambda: offered(each), what="the worker offers")  # noqa: B023

        async def settled() -> bool:
            return await deployment.subscribers(pushed) == _PUT_LISTENERS

        await until(settled, timeout=30, what="two put listeners")
        await anyio.sleep(0.5)  # five renewals: two put listeners stay two
        assert await deployment.subscribers(pushed) == _PUT_LISTENERS
        assert all(worker.listening for worker in workers)


@pytest.mark.deployments("unix", reason="reads handed over by hand: the kind does not matter")
async def test_the_put_event_of_a_pushed_job_is_known_by_its_bytes(
    deployment: Deployment, client: aqless.Client
) -> None:
    """The put event the script writes is recognised without parsing its JSON; any other
    form (another client's key order, an escaped jid, another event) is parsed in full."""
    news: list[bool] = []

    class Taker:
        name, capacity, interval = WORKER, 1, 30.0

        def take_pushed(self, jobs: Any, unreadable: Any = ()) -> None:
            pass

        def pushes_may_be_lost(self) -> None:
            pass

    served = ServedQueues(client, QueueSelection(["q"]), refresh=60)
    pickup = Pickup(client, served, lambda: news.append(True), Taker())
    admin = deployment.admin()
    async with EventCapture(admin, f"{client.prefix}log") as captured:
        jid = await client.queues["q"].put("app.job", jid="the-jid")
    await admin.aclose()
    [written] = captured.on(f"{client.prefix}log")
    assert written.startswith('{"jid":"the-jid","event":"put"')

    pickup._remember_pushed(jid)
    assert not pickup._was_pushed(b'{"event":"put","jid":"the-jid","queue":"q"}')
    assert not pickup._was_pushed(b'{"jid":"the-jid","event":"completed","queue":"q"}')
    assert not pickup._was_pushed(b'{"jid":"other","event":"put","queue":"q"}')
    assert pickup._was_pushed(written.encode())
    assert not pickup._was_pushed(written.encode()), "told once"

    pickup._remember_pushed("a\\")  # a jid ending in a backslash: JSON escapes it
    assert not pickup._was_pushed(b'{"jid":"a\\","event":"put","queue":"q"}')
    assert news == []
