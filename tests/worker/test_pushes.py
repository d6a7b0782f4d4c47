"""Pushed jobs: an idle worker offers to take its queues' next jobs, and a put pops the job
for it and publishes it on its push channel (aqless._worker.pickup, worker.lua). The job starts
without a pop; a full, stopped or paused worker is not pushed to; a push lost with its
connection is taken back; a worker of any client is pushed to
(tests/support/connection_kinds.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from json import dumps, loads
from typing import Any
from urllib.parse import urlparse

import anyio
import pytest
import redis.asyncio as aioredis

import aqless
from aqless import Job, JobState
from tests.conftest import Captured, EventCapture
from tests.support.connection_kinds import (
    Pops,
    assert_a_worker_is_pushed_its_job,
    assert_script_calls_go_lean,
)
from tests.support.deployments import Deployment
from tests.support.worker import WORKER, get_job, make_worker, one, running, until, until_state

pytestmark = pytest.mark.every_deployment


def offers_key(client: aqless.Client) -> str:
    return f"{client.prefix}offers:q"


async def offered_slots(client: aqless.Client) -> int:
    """The slots the worker offers on queue q (0: no offer)."""
    offer = await client.redis.hget(offers_key(client), WORKER)
    return 0 if offer is None else int(offer.split()[0])


def offers(client: aqless.Client) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return await offered_slots(client) > 0

    return check


@asynccontextmanager
async def pushes_to(deployment: Deployment, client: aqless.Client) -> AsyncIterator[Captured]:
    """The messages on the push channels while the block runs (read as the admin: the worker
    user may not subscribe to patterns), on the node the client's calls go to: there the
    pushes and the capture's closing sentinel are published in order (on a Cluster another
    node hears the pushes a moment later, over the cluster bus)."""
    home = client.protocol.wire.endpoint.address
    ports = [urlparse(node).port for node in deployment.nodes]
    node = ports.index(home[1]) if isinstance(home, tuple) and home[1] in ports else 0
    admin = deployment.admin(node)
    try:
        async with EventCapture(admin, f"{client.prefix}push:*") as captured:
            yield captured
    finally:
        await admin.aclose()


@pytest.fixture
async def plain_client(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    """A client of a redis-py client made by the user (of a class of their own)."""

    class PlainRedis(aioredis.Redis):
        pass

    assert deployment.url is not None
    redis = PlainRedis.from_url(deployment.url, decode_responses=True)
    async with aqless.Client(redis=redis, worker_name=WORKER) as client:
        await deployment.flush()
        yield client
    await redis.aclose()


async def test_an_idle_worker_offers_and_is_pushed_its_jobs_without_a_pop(
    deployment: Deployment, client: aqless.Client
) -> None:
    done: list[str] = []
    # no poll for 30 s: any pop during the puts would be one the put made
    worker = make_worker(
        client, ["q"], one(lambda job: done.append(job.jid)), concurrency=3, interval=30
    )
    pops = Pops(client)
    async with running(worker):
        await until(lambda: worker.listening, what="the worker listens")
        await until(offers(client), what="the worker offers")
        assert await offered_slots(client) == 3
        pops_before = pops.count
        assert pops_before > 0, "the worker's first pop, before it offered, was counted"
        jids = []
        async with pushes_to(deployment, client) as captured:
            for _ in range(5):
                jids.append(await client.queues["q"].put("app.job"))
                await until(lambda: jids[-1] in done, timeout=2)
        pops_after = pops.count
    assert pops_after == pops_before  # neither the push nor the put event cost a pop
    channel = f"{client.prefix}push:{WORKER}"
    pushed = [job["jid"] for payload in captured.on(channel) for job in loads(payload)]
    assert pushed == jids
    for job in await client.jobs.get_many(jids):
        assert job.state == JobState.COMPLETE


async def test_a_full_worker_is_not_pushed_and_pops_once_a_slot_frees(
    client: aqless.Client,
) -> None:
    gate = anyio.Event()

    async def gated(job: Job) -> None:
        await gate.wait()

    worker = make_worker(client, ["q"], one(gated), concurrency=1, interval=30)
    async with running(worker):
        await until(offers(client), what="the worker offers")
        first = await client.queues["q"].put("app.job")
        await until(lambda: first in worker.running, timeout=2)
        second = await client.queues["q"].put("app.job")
        await anyio.sleep(0.2)
        assert (await get_job(client, second)).state == JobState.WAITING
        gate.set()
        await until_state(client, second, JobState.COMPLETE, timeout=2)


async def test_a_stopped_worker_withdraws_its_offer(client: aqless.Client) -> None:
    worker = make_worker(client, ["q"], one(lambda job: None))
    async with running(worker) as run:
        await until(offers(client), what="the worker offers")
        worker.stop()
        await run.stopped()
    assert await client.redis.exists(offers_key(client)) == 0
    jid = await client.queues["q"].put("app.job")
    assert (await get_job(client, jid)).state == JobState.WAITING


async def test_a_paused_worker_is_not_pushed(client: aqless.Client) -> None:
    worker = make_worker(client, ["q"], one(lambda job: None), interval=30)
    async with running(worker):
        await until(lambda: worker.listening, what="the worker listens")
        worker.pause()
        await until(lambda: not worker.listening, what="the worker stops listening")
        jid = await client.queues["q"].put("app.job")
        await anyio.sleep(0.2)
        assert (await get_job(client, jid)).state == JobState.WAITING
        worker.resume_popping()
        await until_state(client, jid, JobState.COMPLETE, timeout=2)


async def test_a_push_lost_with_the_connection_is_taken_back(
    deployment: Deployment, client: aqless.Client, other: aqless.Client
) -> None:
    done: list[str] = []
    worker = make_worker(client, ["q"], one(lambda job: done.append(job.jid)), interval=30)
    async with running(worker):
        await until(lambda: worker.listening, what="the worker listens")
        # a job popped in the worker's name whose push never arrived
        await other.queues["q"].pause()
        jid = await other.queues["q"].put("app.job")  # paused: neither pushed nor popped
        await anyio.sleep(0.1)
        await other.queues["q"].unpause()
        await other.protocol.call("queue.pop", "q", WORKER, 1)
        assert jid not in worker.running
        await deployment.on_every_node("CLIENT", "KILL", "TYPE", "pubsub")  # the push channel's too
        await until(lambda: jid in done, timeout=5)
    assert (await get_job(client, jid)).state == JobState.COMPLETE


@pytest.mark.deployments(
    "unix", "tcp", "tls", "mtls", reason="a redis-py client from a URL: Sentinel, Cluster have none"
)
async def test_a_worker_on_a_redis_client_of_ones_own_is_pushed_too(
    deployment: Deployment, plain_client: aqless.Client
) -> None:
    kind = {"tcp": "tcp", "tls": "tls", "mtls": "tls"}.get(deployment.kind, "unix")
    await assert_script_calls_go_lean(plain_client, kind)
    await assert_a_worker_is_pushed_its_job(plain_client)


@pytest.mark.parametrize("options", [{"burst": True}, {"max_jobs": 5}])
async def test_workers_that_end_by_themselves_make_no_offer(
    client: aqless.Client, options: dict[str, Any]
) -> None:
    worker = make_worker(client, ["q"], one(lambda job: None), **options)
    jid = await client.queues["q"].put("app.job")
    async with running(worker):
        await until_state(client, jid, JobState.COMPLETE, timeout=2)
        await anyio.sleep(0.3)
        assert await client.redis.exists(offers_key(client)) == 0


@pytest.mark.deployments("unix", reason="reads handed over by hand: the kind does not matter")
async def test_a_put_event_read_after_its_push_costs_no_pop(client: aqless.Client) -> None:
    """The script tells of a push before it publishes the put event; the two may come in
    reads of their own (TLS writes them as records of their own, a loaded machine reads
    late): however they are split, the event of a pushed job makes no pop, and the event of
    a job pushed nowhere makes one at once."""
    from aqless._worker.pickup import Pickup
    from aqless._worker.reservers import QueueSelection
    from aqless._worker.served import ServedQueues

    news: list[float] = []
    taken: list[str] = []

    class Taker:
        name, capacity, interval = WORKER, 1, 30.0

        def take_pushed(self, jobs: Any, unreadable: Any = ()) -> None:
            taken.extend(job.jid for job in jobs)

        def pushes_may_be_lost(self) -> None:
            pass

    served = ServedQueues(client, QueueSelection(["q"]), refresh=60)
    pickup = Pickup(client, served, lambda: news.append(anyio.current_time()), Taker())
    pickup._offered = ("q",)
    push_channel = f"{client.prefix}push:{WORKER}"

    def put_event(jid: str) -> tuple[bytes, bytes]:
        payload = {"event": "put", "jid": jid, "queue": "q"}
        return (f"{client.prefix}log".encode(), dumps(payload).encode())

    async def push_of(jid: str) -> tuple[bytes, bytes]:
        fields = await client.protocol.json("job.get", jid)
        return (push_channel.encode(), dumps([fields]).encode())

    def pushed_news(jid: str) -> tuple[bytes, bytes]:
        return (f"{client.prefix}pushed".encode(), jid.encode())

    first = await client.queues["q"].put("app.job")
    pickup._receive(push_channel, [await push_of(first), pushed_news(first)])
    pickup._receive(push_channel, [put_event(first)])
    assert taken == [first]
    second = await client.queues["q"].put("app.job")  # pushed to another worker
    pickup._receive(push_channel, [pushed_news(second)])
    pickup._receive(push_channel, [put_event(second)])
    assert news == [], "both jobs went to workers: nothing to pop"

    third = await client.queues["q"].put("app.job")  # pushed nowhere
    pickup._receive(push_channel, [put_event(third)])
    assert len(news) == 1, "a pop at once"


async def test_a_job_pushed_to_one_idle_worker_costs_the_others_no_pop(
    client: aqless.Client, other: aqless.Client
) -> None:
    """Every idle worker hears a put event; the one the job was pushed to starts it, and the
    others learn of the push (``ql:pushed``) instead of popping: 500 idle workers would
    otherwise make 499 pops of each put."""
    done: list[str] = []
    handlers = one(lambda job: done.append(job.jid))
    clients = (client, other)
    workers = [make_worker(each, ["q"], handlers, interval=30) for each in clients]
    pops = [Pops(each) for each in clients]
    async with running(workers[0]), running(workers[1]):
        for worker in workers:
            await until(lambda: worker.listening, what="the worker listens")  # noqa: B023

        async def both_offer() -> bool:
            offered = await client.redis.hgetall(offers_key(client))
            return set(offered) == {each.worker_name for each in clients}

        await until(both_offer, what="both workers offer")
        before = [pop.count for pop in pops]
        jids = []
        for _ in range(4):
            jids.append(await client.queues["q"].put("app.job"))
            await until(lambda: jids[-1] in done, timeout=2)
        await anyio.sleep(0.2)  # twenty times the wait for a push that does not come
        after = [pop.count for pop in pops]
    assert sorted(done) == sorted(jids)
    assert after == before, "a put pushed to one worker made the other pop"
