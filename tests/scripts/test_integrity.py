"""A job is held by exactly one structure, also after the protocol's odd paths.

`retry` with another queue's name puts the job in that queue's sets but leaves its `queue`
field alone (CORE 6.7, a quirk kept as is). Every later command must still find the job
where it really is.
"""

from __future__ import annotations

import pytest
import redis as sync_redis
import redis.asyncio as aioredis

from tests.conftest import Lua
from tests.scripts.invariants import violations

QUEUES = ["queue", "other", "third"]


async def retried_into_other(lua: Lua) -> None:
    await lua("put", 0, "w", "queue", "jid", "k", "{}", 0)
    await lua("pop", 1, "queue", "worker", 1)
    await lua("retry", 2, "jid", "other", "worker")


def consistent(server_url: str) -> list[str]:
    with sync_redis.Redis.from_url(server_url) as connection:
        return violations(connection, QUEUES)


async def test_a_put_after_a_retry_into_another_queue(
    lua: Lua, redis: aioredis.Redis, server_url: str
) -> None:
    await retried_into_other(lua)
    await lua("put", 3, "w", "third", "jid", "k", "{}", 0)
    assert await redis.zrange("ql:q:other-work", 0, -1) == []
    assert await redis.zrange("ql:q:third-work", 0, -1) == ["jid"]
    assert await redis.hget("ql:j:jid", "held_in") is None
    assert consistent(server_url) == []


async def test_popping_and_completing_it_from_the_other_queue(
    lua: Lua, redis: aioredis.Redis, server_url: str
) -> None:
    await retried_into_other(lua)
    popped = await lua.json("pop", 3, "other", "worker", 1)
    assert [job["jid"] for job in popped] == ["jid"]
    assert popped[0]["queue"] == "queue"  # the quirk stays visible
    assert await lua("heartbeat", 4, "jid", "worker") == 64
    assert await redis.zrange("ql:q:queue-locks", 0, -1) == []
    assert await lua("complete", 5, "jid", "worker", "queue", "{}") == "complete"
    assert await redis.zrange("ql:q:other-locks", 0, -1) == []
    assert consistent(server_url) == []


async def test_timeout_cancel_and_priority_find_it(
    lua: Lua, redis: aioredis.Redis, server_url: str
) -> None:
    await retried_into_other(lua)
    await lua("priority", 3, "jid", 7)
    assert await redis.zscore("ql:q:other-work", "jid") == 7
    await lua("pop", 4, "other", "worker", 1)
    await lua("timeout", 5, "jid")
    assert await redis.zrange("ql:q:other-work", 0, -1) == ["jid"]
    assert consistent(server_url) == []
    assert await lua("cancel", 6, "jid") == ["jid"]
    assert await redis.zrange("ql:q:other-work", 0, -1) == []
    assert consistent(server_url) == []


async def test_a_stale_held_in_left_by_another_client_is_ignored(
    lua: Lua, redis: aioredis.Redis, server_url: str
) -> None:
    await retried_into_other(lua)
    # another qless client re-puts the job into its own queue without knowing `held_in`
    await redis.zrem("ql:q:other-work", "jid")
    await redis.zadd("ql:q:queue-work", {"jid": 0})
    assert await redis.hget("ql:j:jid", "held_in") == "other"
    popped = await lua.json("pop", 3, "queue", "worker", 1)
    assert [job["jid"] for job in popped] == ["jid"]
    assert await lua("complete", 4, "jid", "worker", "queue", "{}") == "complete"
    assert await redis.zrange("ql:q:queue-locks", 0, -1) == []
    assert consistent(server_url) == []


async def test_a_job_popped_from_a_queue_its_field_does_not_name(
    lua: Lua, redis: aioredis.Redis, server_url: str
) -> None:
    await lua("put", 0, "w", "queue", "jid", "k", "{}", 0)
    # data written by another client: the job waits in `other` though it says `queue`
    await redis.zrem("ql:q:queue-work", "jid")
    await redis.zadd("ql:q:other-work", {"jid": 0})
    assert [job["jid"] for job in await lua.json("pop", 1, "other", "worker", 1)] == ["jid"]
    assert await lua("complete", 2, "jid", "worker", "queue", "{}") == "complete"
    assert await redis.zrange("ql:q:other-locks", 0, -1) == []
    assert consistent(server_url) == []


@pytest.mark.parametrize(
    ("options", "place"),
    [
        ((5, "depends", '["b"]'), "scheduled"),
        ((5,), "scheduled"),
        ((0, "depends", '["b"]'), "work"),
    ],
)
async def test_a_job_re_put_while_parked_leaves_its_throttle_line(
    lua: Lua, redis: aioredis.Redis, server_url: str, options: tuple[int | str, ...], place: str
) -> None:
    # REQLESS 6.8 leaves a re-put job in the pending set it was parked in, and a release
    # (6.6) then adds it to its queue's work set whatever the put made of it
    await lua("queue.throttle.set", 0, "q2", 1)
    await lua("put", 0, "w", "q2", "a", "k", "{}", 0)
    await lua("put", 0, "w", "q1", "b", "k", "{}", 0)
    assert await lua.json("pop", 1, "q2", "w1", 1)
    await lua("put", 2, "w", "q2", "d", "k", "{}", 0)
    assert not await lua.json("pop", 3, "q2", "w1", 1)  # d is parked on ql:q:q2
    await lua("put", 4, "w", "q2", "d", "k", "{}", *options)
    assert await lua("complete", 5, "a", "w1", "q2", "{}") == "complete"
    assert consistent(server_url) == []
    assert await lua.json("pop", 6, "q1", "w1", 1)
    assert await lua("complete", 7, "b", "w1", "q1", "{}") == "complete"
    assert await redis.zrange(f"ql:q:q2-{place}", 0, -1) == ["d"]
    assert consistent(server_url) == []
