"""aqless's own throughput counts: each completion and each failure of a job adds one to its
queue's minute in the hash of that hour (ql:aqless:tp:<hour>:<q>, fields c<minute> and
f<minute>), which expires 25 hours after its hour began; and in the same hash, each job
class's completions by run time and its failed jobs of the hour (fields <klass>|r<bucket>,
<klass>|f). Nothing else changes."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import Lua
from tests.scripts._lifecycle_helpers import BOTH, Vocabulary, pop, put

HOUR = 7200  # the hour bin the test's times fall in
KEY = f"ql:aqless:tp:{HOUR}:queue"


async def minutes(redis: aioredis.Redis, key: str) -> dict[str, str]:
    """The hash's per-minute fields (its per-class fields left out)."""
    found = {str(name): str(count) for name, count in (await redis.hgetall(key)).items()}
    return {name: count for name, count in found.items() if "|" not in name}


async def classes(redis: aioredis.Redis, key: str) -> dict[str, str]:
    found = {str(name): str(count) for name, count in (await redis.hgetall(key)).items()}
    return {name: count for name, count in found.items() if "|" in name}


async def expires_in(redis: aioredis.Redis, key: str) -> int:
    """Seconds left to `key` (the script sets them relative to the server's clock)."""
    return int(await redis.ttl(key))


@BOTH
async def test_completions_and_failures_count_per_minute(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    for jid in ("a", "b", "c", "d", "e"):
        await put(lua, v, HOUR, jid)
    await pop(lua, v, HOUR + 1, 5)
    assert await v.complete(lua, HOUR + 65, "a") == "complete"  # minute 1
    assert await v.complete(lua, HOUR + 119.5, "b") == "complete"  # minute 1
    await lua(v.fail, HOUR + 120, "c", "worker", "group", "message")  # minute 2
    # completed with a next queue: counted as completed in the queue it leaves
    await lua("job.complete" if v.reqless else "complete", HOUR + 3599, "d", "worker",
              "queue", "{}", "next", "other")  # fmt: skip
    assert await minutes(redis, KEY) == {"c1": "2", "f2": "1", "c59": "1"}
    # per class: runs of 64 s, 118.5 s and 3598 s, in buckets of at most 2^(i/2) ms
    assert await classes(redis, KEY) == {
        "klass|f": "1",
        "klass|r32": "1",  # 64,000 ms <= 2^16
        "klass|r34": "1",  # 118,500 ms <= 2^17
        "klass|r44": "1",  # 3,598,000 ms <= 2^22
    }
    # each minute's first count (the last at 3599 s into the hour) sets it to expire 25
    # hours after the hour's start
    assert 90000 - 3599 - 5 <= await expires_in(redis, KEY) <= 90000 - 3599
    assert not await redis.exists(f"ql:aqless:tp:{HOUR}:other")

    # the next hour: a hash of its own
    assert await v.complete(lua, HOUR + 3600, "e") == "complete"
    assert await minutes(redis, f"ql:aqless:tp:{HOUR + 3600}:queue") == {"c0": "1"}
    assert 90000 - 5 <= await expires_in(redis, f"ql:aqless:tp:{HOUR + 3600}:queue") <= 90000


@BOTH
async def test_unfailing_or_a_refused_completion_counts_nothing(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, HOUR, "a")
    await pop(lua, v, HOUR + 1)
    await lua(v.fail, HOUR + 10, "a", "worker", "group", "message")
    before = await redis.hgetall(KEY)
    assert before == {"f0": "1", "klass|f": "1"}
    await put(lua, v, HOUR + 20, "a")  # a failed job put again: `failed` goes down by one
    assert await redis.hgetall(KEY) == before
    await pop(lua, v, HOUR + 21)
    with pytest.raises(ResponseError, match="another worker"):
        await v.complete(lua, HOUR + 30, "a", worker="someone-else")
    assert await redis.hgetall(KEY) == before


@BOTH
async def test_a_job_out_of_retries_counts_as_failed(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, HOUR, "a", "retries", 0)
    await pop(lua, v, HOUR + 1)
    remaining = await lua(v.retry, HOUR + 200, "a", "queue", "worker", 0)
    assert remaining < 0
    assert await redis.hgetall(KEY) == {"f3": "1", "klass|f": "1"}


@BOTH
async def test_a_job_whose_lock_expires_out_of_retries_counts_as_failed_for_its_class(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await redis.hset("ql:config", "heartbeat", -10)  # stored unchecked (another client)
    await put(lua, v, HOUR, "a", "retries", 0)
    await pop(lua, v, HOUR + 1)
    assert await lua(v.pop, HOUR + 130, "queue", "other", 1) == v.empty  # reclaims, fails
    assert (await lua.json(v.get, HOUR + 131, "a"))["state"] == "failed"
    assert await redis.hgetall(KEY) == {"f2": "1", "klass|f": "1"}
