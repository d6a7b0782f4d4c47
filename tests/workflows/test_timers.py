"""A parked workflow resumes on time, not at a worker's next poll: the worker that parks it
may be busy, and an idle worker that last looked at the queue before the park is told of
the earlier wake-up (a put event from the park), then waits only until it is due. A signal
that wakes a workflow pushes it to an offering worker, as a put pushes its job."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

import aqless
from aqless import WorkflowContext
from tests.support.deployments import Deployment
from tests.support.worker import make_worker, running, until

#: the idle worker polls this rarely: a wake-up that waited for its poll would be this late
INTERVAL = 5.0
#: how late a 0.3 s sleep may resume (it is a few ms; generous against a loaded machine)
LATE = 1.0


@pytest.fixture
async def parker(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    async with deployment.open_client(worker_name="parker") as client:
        await deployment.flush()
        yield client


@pytest.fixture
async def idle(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    async with deployment.open_client(worker_name="idle") as client:
        yield client


@pytest.mark.parametrize("park", ["sleep", "wait"])
async def test_a_park_resumes_on_time_on_a_worker_idle_since_before_it(
    parker: aqless.Client, idle: aqless.Client, park: str
) -> None:
    handlers = aqless.Handlers()
    due: list[float] = []
    resumed: list[float] = []

    @handlers.workflow("wf.Nap")
    async def nap(ctx: WorkflowContext) -> Any:
        when = await ctx.step("when", lambda: time.time() + 0.3)
        due.append(when)
        if park == "sleep":
            await ctx.sleep_until(when)
        else:  # a wait for a signal that never comes times out on time
            with pytest.raises(aqless.SignalTimeoutError):
                await ctx.wait_for("never", timeout=max(when - time.time(), 0.01))
        resumed.append(time.time())
        return "rested"

    jid = await parker.queues["q"].put("wf.Nap", {})
    job = await parker.queues["q"].pop()  # held by "parker", a worker that will stay busy
    assert job is not None
    assert job.jid == jid
    async with running(make_worker(idle, handlers=handlers, interval=INTERVAL)) as other:
        await anyio.sleep(0.2)  # it popped, found nothing due, and waits for news or a poll
        # the parker runs the workflow to its sleep and takes no more work (as if busy)
        parking = make_worker(parker, handlers=handlers, interval=INTERVAL)
        assert await parking.perform(job) == "parked"
        assert await parker.result(jid, timeout=INTERVAL + 5) == "rested"
        assert other.worker.counters.started == 1
    assert resumed[0] - due[-1] < LATE, f"resumed {resumed[0] - due[-1]:.3f} s late"


async def test_a_signal_pushes_the_woken_workflow_to_an_offering_worker(
    parker: aqless.Client, idle: aqless.Client
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Approval")
    async def approval(ctx: WorkflowContext) -> Any:
        return await ctx.wait_for("go")

    jid = await parker.queues["q"].put("wf.Approval", {})
    job = await parker.queues["q"].pop()
    assert job is not None
    parking = make_worker(parker, handlers=handlers, interval=INTERVAL)
    assert await parking.perform(job) == "parked"
    async with running(make_worker(idle, handlers=handlers, interval=INTERVAL)):
        offers = f"{parker.prefix}offers:q"

        async def offering() -> bool:
            return bool(await parker.redis.hexists(offers, "idle"))

        await until(offering, what="the idle worker's offer")
        pushed = parker.redis.pubsub()
        await pushed.subscribe(f"{parker.prefix}pushed")
        assert await pushed.get_message(timeout=5) is not None  # subscribed
        try:
            assert await parker.signal(jid, "go", "yes") == "woken"
            assert await parker.result(jid, timeout=10) == "yes"
            messages = []
            while (
                message := await pushed.get_message(ignore_subscribe_messages=True, timeout=0.2)
            ) is not None:
                messages.append(message["data"])
        finally:
            await pushed.aclose()
    assert jid in messages  # it came with the news, not by a pop of the worker's


async def test_a_retry_with_a_delay_runs_on_time_on_a_worker_that_polls_rarely(
    parker: aqless.Client,
) -> None:
    """Not a workflow: any scheduled job. The worker that retried the job pops at once (its
    slot freed), and that pop's reply tells it when the job is due."""
    runs: list[float] = []
    handlers = aqless.Handlers()

    @handlers.register("flaky", retry=aqless.RetryPolicy(strategy="fixed", delay=0.3))
    async def flaky(job: aqless.Job) -> str:
        runs.append(time.monotonic())
        if len(runs) == 1:
            raise RuntimeError("once")
        return "done"

    jid = await parker.queues["q"].put("flaky", {})
    async with running(make_worker(parker, handlers=handlers, interval=INTERVAL)):
        assert await parker.result(jid, timeout=INTERVAL + 5) == "done"
    assert runs[1] - runs[0] < 0.3 + LATE, f"ran again {runs[1] - runs[0]:.3f} s later"
