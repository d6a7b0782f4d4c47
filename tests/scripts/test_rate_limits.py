"""Rate limits (aqless's own, ratelimit.lua): the rateLimit commands, the queue's limiter
cutting a pop, named limiters deferring jobs to the scheduled set, and the wait that
`rateLimit.pop` reports."""

from __future__ import annotations

import bisect
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
    # the mode is a field of its own: a client that knows none reads limit and period
    assert await lua("rateLimit.set", 0, "api", 3, 1.5, "smooth") is None
    assert (await redis.hgetall("ql:rl:api"))["mode"] == "smooth"
    assert (await lua.json("rateLimit.get", 0, "api"))["mode"] == "smooth"
    assert (await lua.json("rateLimit.all", 0))[0]["mode"] == "smooth"
    assert await lua("rateLimit.set", 0, "api", 3, 1.5, "burst") is None
    assert await redis.hgetall("ql:rl:api") == {"id": "api", "limit": "3", "period": "1.5"}
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
        (1, 1, 'Arg "mode" not burst or smooth: even'),
    ],
)
async def test_set_refuses_bad_arguments(
    lua: Lua, redis: aioredis.Redis, limit: object, period: object, text: str
) -> None:
    mode = ["even"] if "mode" in text else []
    with pytest.raises(ResponseError, match=text):
        await lua("rateLimit.set", 0, "api", limit, period, *mode)  # type: ignore[arg-type]
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


async def starts_of_a_busy_worker(
    lua: Lua, limiter: str, seconds: float, *options: str, count: int = 10
) -> list[float]:
    """The pop times of jobs started by a worker that pops `count` at a time whenever the
    reply's wait says a start is free (or 10 ms later), for `seconds` of the client's clock;
    `options`: put options (a named limiter)."""
    for i in range(600):
        await rput(lua, 0, f"j{i}", *options)
    starts: list[float] = []
    now = 0.0
    while now < seconds:
        reply = await lua.json("rateLimit.pop", now, "queue", "worker", count)
        starts += [now] * len(reply["jobs"])
        now += reply["wait"] or 0.01
    assert reply["wait"] is not None, "the jobs ran out"
    return starts


def most_in_a_closed_window(starts: list[float], width: float) -> int:
    """The most starts in any window [t, t + width], both ends included."""
    ordered = sorted(starts)
    return max(bisect.bisect_right(ordered, t + width) - i for i, t in enumerate(ordered))


@pytest.mark.parametrize(
    ("limiter", "options"),
    [(QUEUE_ID, ()), ("api", ("rate_limits", '["api"]'))],
    ids=["queue", "named"],
)
async def test_a_smooth_limit_spreads_its_starts_over_the_period(
    lua: Lua, limiter: str, options: tuple[str, ...]
) -> None:
    await lua("rateLimit.set", 0, limiter, 50, 1, "smooth")
    starts = await starts_of_a_busy_worker(lua, limiter, 5, *options)
    # no window of a second, both ends counted, holds more than the limit
    assert most_in_a_closed_window(starts, 1.0) <= 50
    # the starts are 20 ms apart, one per pop, and the limit is used to the full
    assert most_in_a_closed_window(starts, 0.02 - 1e-6) == 1
    assert 245 <= len(starts) <= 250


async def test_a_burst_limit_starts_its_whole_limit_at_once(lua: Lua) -> None:
    await lua("rateLimit.set", 0, QUEUE_ID, 50, 1)
    starts = await starts_of_a_busy_worker(lua, QUEUE_ID, 5, count=50)
    assert starts.count(0) == 50
    assert starts.count(1) == 50
    # the documented burst: a second with both ends counted holds twice the limit
    assert most_in_a_closed_window(starts, 1.0) == 100


async def test_a_smooth_limit_reports_its_wait(lua: Lua) -> None:
    await lua("rateLimit.set", 0, QUEUE_ID, 2, 1, "smooth")
    for i in range(5):
        await rput(lua, 0, f"j{i}")

    async def popped(now: float) -> tuple[int, Any]:
        jids, wait = await rated_pop(lua, now, 5)
        return len(jids), wait

    assert await popped(0) == (1, pytest.approx(0.5))
    assert await popped(0.2) == (0, pytest.approx(0.3))
    # (both starts in the window: the next is free when the one at 0 leaves it)
    assert await popped(0.5) == (1, pytest.approx(0.500001))
    # the start at 0 is in the window [0, 1] until just after 1
    assert await popped(1) == (0, pytest.approx(1e-6))
    info = await lua.json("rateLimit.get", 1, QUEUE_ID)
    assert (info["mode"], info["used"]) == ("smooth", 2)
    assert await popped(1.000001) == (1, pytest.approx(0.5))
