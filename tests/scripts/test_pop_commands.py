"""What a pop asks the server: the questions mostly answered "no" share one EXISTS.

A queue with no rate limit, no throttle hash and no recurring jobs is the usual case; a pop
of it asks once whether any of these exists instead of reading each one (see queue.lua).
The replies of both cases are guarded by the differential test; this counts commands.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.conftest import Lua
from tests.scripts._queues_helpers import rput


async def commands_of_a_pop(lua: Lua, redis: aioredis.Redis, now: float) -> dict[str, int]:
    await redis.config_resetstat()
    reply = await lua.json("rateLimit.pop", now, "queue", "worker", 1)
    assert len(reply["jobs"]) == 1
    stats = await redis.info("commandstats")
    counted = {name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()}
    for ours in ("fcall", "evalsha", "config|resetstat"):
        counted.pop(ours, None)
    return counted


async def test_a_plain_queue_asks_one_exists(lua: Lua, redis: aioredis.Redis) -> None:
    await rput(lua, 1, "a")
    await rput(lua, 2, "b")
    plain = await commands_of_a_pop(lua, redis, 3)
    # no throttle maximum, no rate limit definition, no recurring jobs read
    assert "hget" not in plain
    assert plain["hmget"] == 2  # the job's fields and the wait statistics
    assert plain["zrangebyscore"] == 2  # expired locks and due scheduled jobs
    # the three questions, whether anything is tracked, the job's relations
    assert plain["exists"] == 3


async def test_a_queue_with_a_throttle_reads_it(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "ql:q:queue", 5)
    await rput(lua, 1, "a")
    await rput(lua, 2, "b")
    with_throttle = await commands_of_a_pop(lua, redis, 3)
    assert with_throttle["hget"] == 1  # the maximum
    assert with_throttle["hmget"] == 3  # and the rate limit's definition
    assert with_throttle["zrangebyscore"] == 3  # and the due recurring jobs
    assert with_throttle["exists"] == 3
