"""Deduplication through the client: `put(dedup=)`, `put_result`, `put_many_results`, the
sync client, and the events of a deduplicated put."""

from __future__ import annotations

import asyncio

import anyio
import pytest
import redis

import aqless
import aqless.sync
from aqless.documents import dedup_id
from aqless.puts import PutRequest, PutSender
from tests.support.clients import ManualClock, get_job

pytest_plugins = ["tests.support.client_fixtures"]


async def test_a_second_put_returns_the_job_that_holds_the_id(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    first = await queue.put("Ship", {"order": 7}, dedup="order-7")
    again = await queue.put_result("Ship", {"order": 8}, dedup="order-7")
    assert again == aqless.PutResult(first, deduplicated=True)
    assert await queue.length() == 1
    assert (await get_job(client, first)).data == {"order": 7}
    assert await dedup_id(client, first) == "order-7"
    job = await queue.pop()
    assert job is not None
    await job.complete()
    after = await queue.put_result("Ship", {"order": 9}, dedup="order-7")
    assert not after.deduplicated
    assert after.jid != first


async def test_fifty_concurrent_puts_make_exactly_one_job(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    results = await asyncio.gather(
        *(queue.put_result("Ship", {"n": n}, dedup="once") for n in range(50))
    )
    assert len({result.jid for result in results}) == 1
    assert sum(not result.deduplicated for result in results) == 1
    assert await queue.length() == 1


async def test_ttl_mode_outlives_the_job(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["mail"]
    first = await queue.put("Mail", dedup=aqless.Dedup("welcome:bob", ttl=3600))
    job = await queue.pop()
    assert job is not None
    assert job.jid == first
    await job.complete()
    again = await queue.put_result("Mail", dedup=aqless.Dedup("welcome:bob", ttl=3600))
    assert again == aqless.PutResult(first, deduplicated=True)
    assert await queue.length() == 0


async def test_debounce_keeps_the_last_data(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["search"]
    window = aqless.Dedup("index:alice", ttl=60, debounce=True)
    first = await queue.put("Index", {"q": "a"}, delay=5, dedup=window)
    clock.advance(3)
    result = await queue.put_result("Index", {"q": "al"}, delay=5, dedup=window)
    assert result == aqless.PutResult(first, deduplicated=True, debounced=True)
    job = await get_job(timed_client, first)
    assert job.data == {"q": "al"}
    assert job.state == aqless.JobState.SCHEDULED
    clock.advance(3)  # 6 s after the first put, 3 after the last: not yet due
    assert await queue.pop() is None
    clock.advance(3)
    popped = await queue.pop()
    assert popped is not None
    assert popped.data == {"q": "al"}
    # the job has started: the next put makes a new job, which holds the id from now on
    later = await queue.put_result("Index", {"q": "ali"}, dedup=window)
    assert not later.deduplicated
    assert later.jid != first


async def test_put_many_deduplicates_within_and_across_batches(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    held = await queue.put("Ship", dedup="a")
    requests = [
        PutRequest("Ship", {"n": 1}, dedup="a"),
        PutRequest("Ship", {"n": 2}, dedup="b"),
        PutRequest("Ship", {"n": 3}, dedup="b"),
        PutRequest("Ship", {"n": 4}),
    ]
    results = await queue.put_many_results(requests, batch=2)
    assert [r.deduplicated for r in results] == [True, False, True, False]
    assert results[0].jid == held
    assert results[1].jid == results[2].jid
    jids = await queue.put_many([PutRequest("Ship", dedup="b")])
    assert jids == [results[1].jid]
    assert await queue.length() == 3


async def test_put_hooks_see_deduplicated_puts(client: aqless.Client) -> None:
    seen: list[str | aqless.Dedup | None] = []

    async def hook(queue: aqless.Queue, requests: list[PutRequest], send: PutSender) -> list[str]:
        seen.extend(request.dedup for request in requests)
        return await send(requests)

    client.put_hooks.append(hook)
    queue = client.queues["hooked"]
    first = await queue.put("Ship", dedup="x")
    assert await queue.put_result("Ship", dedup="x") == aqless.PutResult(first, True)
    assert seen == ["x", "x"]


async def test_a_deduplicated_put_publishes_an_event(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    first = await queue.put("Ship", dedup="order-1")
    async with client.events("log") as events:
        await queue.put("Ship", dedup="order-1")
        with anyio.fail_after(10):
            async for event in events:
                if event.kind == "deduplicated":
                    break
    assert (event.jid, event.queue, event.dedup) == (first, "orders", "order-1")


@pytest.mark.parametrize(
    "options",
    [
        {"id": ""},
        {"id": "x", "ttl": 0},
        {"id": "x", "ttl": float("nan")},
        {"id": "x", "debounce": True},
    ],
)
def test_bad_dedup_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(aqless.ConfigurationError):
        aqless.Dedup(**options)  # type: ignore[arg-type]


async def test_a_requeue_takes_no_dedup(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    jid = await queue.put("Ship")
    with pytest.raises(aqless.ConfigurationError):
        await queue.put("Ship", jid=jid, requeue=True, dedup="x")


def test_the_sync_client_deduplicates(server_url: str) -> None:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    with aqless.sync.Client(server_url) as client:
        queue = client.queues["orders"]
        first = queue.put("Ship", {"n": 1}, dedup="order-3")
        assert queue.put_result("Ship", {"n": 2}, dedup="order-3") == aqless.PutResult(
            first, deduplicated=True
        )
        assert queue.put_many([PutRequest("Ship", dedup="order-3")]) == [first]
        assert queue.length() == 1
