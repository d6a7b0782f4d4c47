"""`Queue.latency`: how long the job first in line has waited, on every client variant (the
verb is declared once, on its contract, with its Lua command in
aqless/scripts/lua/commands/queue.latency.lua)."""

from __future__ import annotations

import uuid

import pytest

import aqless
import aqless.sync
from tests.support.clients import ManualClock

pytest_plugins = [
    "tests.support.client_fixtures",
    "tests.support.sharding_fixtures",
    "tests.support.door_fixtures",
]


async def test_latency_is_the_wait_of_the_job_a_pop_takes_next(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["latency"]
    assert await queue.latency() == 0  # nothing waits

    await queue.put("app.Job", {})
    clock.advance(30)
    urgent = await queue.put("app.Job", {}, priority=10)
    clock.advance(12)
    assert await queue.latency() == 12  # the urgent job is first in line

    job = await queue.pop(worker="w")
    assert job is not None
    assert job.jid == urgent
    assert await queue.latency() == 42  # then the first one, put 42 s ago


async def test_a_job_put_again_waits_from_its_last_put(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["latency-again"]
    jid = await queue.put("app.Job", {})
    clock.advance(100)
    assert await queue.latency() == 100
    await queue.put("app.Job", {}, jid=jid)  # put again: it waits from now
    clock.advance(5)
    assert await queue.latency() == 5
    await timed_client.jobs.cancel(jid)
    assert await queue.latency() == 0


def test_latency_is_the_same_verb_on_the_blocking_clients(
    plain: aqless.sync.Client, sharded: aqless.sync.ShardedClient
) -> None:
    for client in (plain, sharded):
        queue = client.queues[f"latency-{uuid.uuid4().hex[:6]}"]
        assert queue.latency() == 0
        for _ in range(6):  # a sharded queue spreads them over its shards
            queue.put("app.Job", {})
        assert 0 <= queue.latency() < 60


def test_a_call_without_a_queue_is_refused_by_the_script(plain: aqless.sync.Client) -> None:
    with pytest.raises(aqless.InvalidArgumentError, match="no queue name provided"):
        plain.call(lambda client: client.protocol.integer("queue.latency"))
