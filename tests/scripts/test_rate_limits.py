"""Rate limits (aqless's own, ratelimit.lua): the rateLimit commands, the queue's limiter
cutting a pop, named limiters deferring jobs to the scheduled set, and the wait that
`rateLimit.pop` reports."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import Lua
from tests.scripts._queues_helpers import rput

QUEUE_ID = "ql:q:queue"


async def rated_pop(
    lua: Lua, now: float, count: int, queue: str = "queue"
) -> tuple[list[str], Any]:
    reply = await lua.json("rateLimit.pop", now, queue, "worker", count)
    return [job["jid"] for job in reply["jobs"]], reply["wait"]


async def test_set_get_delete(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua.json("rateLimit.get", 0, "api") == {
        "id": "api",
        "limit": 0,
        "period": 0,
        "used": 0,
        "wait": 0,
    }
    assert await lua("rateLimit.set", 0, "api", 3, 1.5) is None
    assert await redis.hgetall("ql:rl:api") == {"id": "api", "limit": "3", "period": "1.5"}
    assert await lua.json("rateLimit.get", 0, "api") == {
        "id": "api",
        "limit": 3,
        "period": 1.5,
        "used": 0,
        "wait": 0,
    }
    assert await lua.json("rateLimit.all", 0) == [
        {"id": "api", "limit": 3, "period": 1.5, "used": 0, "wait": 0}
    ]
    assert await lua("rateLimit.delete", 0, "api") is None
    assert await redis.keys("ql:rl*") == []
    assert await lua.json("rateLimit.all", 0) == []


@pytest.mark.parametrize(
    ("limit", "period", "text"),
    [
        (0, 1, 'Arg "limit" not a number of at least 1: 0'),
        ("x", 1, 'Arg "limit" not a number of at least 1: x'),
        (1, 0, 'Arg "period" not a number of seconds above 0: 0'),
        (1, "nan", 'Arg "period" not a number of seconds above 0: nan'),
    ],
)
async def test_set_refuses_bad_arguments(
    lua: Lua, redis: aioredis.Redis, limit: object, period: object, text: str
) -> None:
    with pytest.raises(ResponseError, match=text):
        await lua("rateLimit.set", 0, "api", limit, period)  # type: ignore[arg-type]
    with pytest.raises(ResponseError, match="RateLimit\\(\\): no id provided"):
        await lua("rateLimit.get", 0)
    assert await redis.keys("ql:rl*") == []


async def test_the_queue_limit_cuts_pops_in_a_sliding_window(lua: Lua) -> None:
    await lua("rateLimit.set", 0, QUEUE_ID, 3, 10)
    for i in range(8):
        await rput(lua, i / 100, f"j{i}")
    assert await rated_pop(lua, 1, 2) == (["j0", "j1"], None)
    assert await rated_pop(lua, 4, 5) == (["j2"], pytest.approx(7))  # j0's start frees at 11
    assert await rated_pop(lua, 10.5, 5) == ([], pytest.approx(0.5))
    # at 11 the two starts at 1 have left the window; the one at 4 has not
    assert await rated_pop(lua, 11, 5) == (["j3", "j4"], pytest.approx(3))
    info = await lua.json("rateLimit.get", 11, QUEUE_ID)
    assert (info["used"], info["wait"]) == (3, pytest.approx(3))
    # classic pop and reqless pop obey the same limit
    assert await lua.json("queue.pop", 12, "queue", "worker", 5) == []
    assert [job["jid"] for job in await lua.json("queue.pop", 14, "queue", "worker", 5)] == ["j5"]


async def test_a_pop_that_is_not_held_back_reports_no_wait(lua: Lua) -> None:
    await lua("rateLimit.set", 0, QUEUE_ID, 5, 1)
    await rput(lua, 0, "a")
    assert await rated_pop(lua, 0, 3) == (["a"], None)
    assert await rated_pop(lua, 0, 3) == ([], None)  # empty, not limited


async def test_a_job_whose_named_limiter_is_full_waits_scheduled(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("rateLimit.set", 0, "api", 1, 5)
    await rput(lua, 0, "a", "rate_limits", json.dumps(["api"]))
    await rput(lua, 0.1, "b", "rate_limits", json.dumps(["api"]))
    await rput(lua, 0.2, "c")
    assert await redis.hget("ql:j:a", "rate_limits") == '["api"]'
    assert await rated_pop(lua, 1, 3) == (["a", "c"], pytest.approx(5))
    assert await redis.zscore("ql:q:queue-scheduled", "b") == 6
    assert (await lua.json("job.get", 1, "b"))["state"] == "scheduled"
    assert await rated_pop(lua, 5.9, 3) == ([], pytest.approx(0.1))  # b is due at 6
    assert (await lua.json("rateLimit.pop", 5.9, "queue", "worker", 3))["held"] is True
    assert await rated_pop(lua, 6, 3) == (["b"], None)


async def test_held_says_whether_a_rate_limit_held_the_pop_back(lua: Lua) -> None:
    await lua("rateLimit.set", 0, QUEUE_ID, 1, 10)
    await rput(lua, 0, "a")
    await rput(lua, 0.1, "b")
    await rput(lua, 0.2, "later", delay=5)
    replies = [await lua.json("rateLimit.pop", 1, "queue", "worker", 1) for _ in range(2)]
    assert [(len(r["jobs"]), r["held"]) for r in replies] == [(1, False), (0, True)]
    await lua("rateLimit.delete", 0, QUEUE_ID)
    reply = await lua.json("rateLimit.pop", 2, "queue", "worker", 5)
    assert (len(reply["jobs"]), reply["held"], reply["wait"]) == (1, False, pytest.approx(3.2))


async def test_a_short_pop_waits_for_the_next_scheduled_job(lua: Lua) -> None:
    await rput(lua, 0, "later", delay=5)
    assert await rated_pop(lua, 1, 3) == ([], pytest.approx(4))
    assert await lua.json("queue.pop", 1, "queue", "worker", 3) == []
    await rput(lua, 1, "now")
    assert await rated_pop(lua, 2, 1) == (["now"], None)  # not short: no wait


async def test_a_job_put_again_without_limiters_loses_them(lua: Lua, redis: aioredis.Redis) -> None:
    await rput(lua, 0, "a", "rate_limits", json.dumps(["api"]))
    await rput(lua, 0, "a")
    assert await redis.hget("ql:j:a", "rate_limits") is None
    with pytest.raises(ResponseError, match='Put\\(\\): Arg "rate_limits" not JSON array: 3'):
        await rput(lua, 0, "b", "rate_limits", "3")
