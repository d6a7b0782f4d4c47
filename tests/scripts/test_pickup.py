"""The pickup's shorter road (Worker.pickup and Worker.hand_over, worker.lua): a put whose job
an offering worker takes at once must leave exactly what that put, made with no offer, and
then that worker's pop leave: every key and field, and the same publications beside the push
and its news. Each case says whether the put takes the shorter road (no member leaves the
work set, which the job never enters) or falls back to the push's whole pop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import rpop, rput
from tests.scripts.expect import snapshot
from tests.scripts.test_offers import listening

OFFERS = "ql:offers:queue"
NOW = 100.0

Setup = Callable[[Lua], Awaitable[object]]


async def nothing(lua: Lua) -> None:
    """No state before the put."""


async def waiting_job(lua: Lua) -> None:
    await rput(lua, 1, "ahead", "priority", 2)


async def scheduled_due(lua: Lua) -> None:
    await rput(lua, 1, "later", delay=10)


async def scheduled_not_due(lua: Lua) -> None:
    await rput(lua, 1, "later", delay=1000)


async def tracked(lua: Lua) -> None:
    await rput(lua, 1, "other", queue="elsewhere")
    await lua("track", 1, "track", "other")


async def tracked_itself(lua: Lua) -> None:
    await rput(lua, 1, "jid", queue="elsewhere")
    await lua("track", 1, "track", "jid")


async def throttled_queue(lua: Lua) -> None:
    await lua("queue.throttle.set", 1, "queue", 3)
    await rput(lua, 1, "running")
    await rpop(lua, 1, worker="w2")


async def expired_lock(lua: Lua) -> None:
    await rput(lua, 1, "stale")
    await rpop(lua, 1, worker="w2")  # its lock (a heartbeat of 60) expired before NOW


async def running_job(lua: Lua) -> None:
    await rput(lua, 1, "busy")
    await rpop(lua, NOW - 5, worker="w2")


async def retried_job(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await rpop(lua, 2, worker="w2")
    await lua("job.retry", 3, "jid", "queue", "w2", 0, "group", "message")


async def paused(lua: Lua) -> None:
    await lua("queue.pause", 1, "queue")


async def capped(lua: Lua) -> None:
    await lua("config.set", 1, "queue-max-concurrency", 3)


async def no_pop_passes(lua: Lua) -> None:
    await lua.redis.hset("ql:config", "max-pop-retry", 0)  # as another client may write it


async def rate_limited(lua: Lua) -> None:
    await lua("rateLimit.set", 1, "ql:q:queue", 10, 60)


async def recurring(lua: Lua) -> None:
    await lua("queue.recurAtInterval", 1, "queue", "r", "klass", "{}", 1000, 0)


async def job_there(lua: Lua) -> None:
    await rput(lua, 1, "jid", "priority", 4, queue="elsewhere")


async def dependent(lua: Lua) -> None:
    # (a set only another client's script leaves: no verb makes a job depend on a jid that
    # names no job)
    await lua.redis.sadd("ql:j:jid-dependents", "child")


async def history(lua: Lua) -> None:
    await lua("config.set", 1, "max-job-history", 1)
    await lua.redis.rpush("ql:j:jid-history", '[0,"put",{"queue":"gone"}]', '[0,"done"]')


async def job_done_without_history(lua: Lua) -> None:
    await job_there(lua)
    await rpop(lua, 2, queue="elsewhere", worker="w2")  # (its attempt 1)
    assert await lua("job.complete", 3, "jid", "w2", "elsewhere", "{}") == "complete"
    await lua.redis.delete("ql:j:jid-history")


async def dependency(lua: Lua) -> None:
    await rput(lua, 1, "first", queue="elsewhere")


@dataclass(frozen=True)
class Case:
    name: str
    setup: Setup = nothing
    options: tuple[Argument, ...] = ()
    data: str = "{}"
    command: str = "queue.put"
    staged: bool = False
    delay: float = 0
    waits: bool = True  # the job waits (else nothing is pushed, and no pop follows the put)
    fast: bool = True  # the shorter road is taken


BIG = json.dumps({"text": "é" + "x" * 20_000, "n": [1, 2.5, None]})

CASES = [
    Case("plain"),
    Case("classic", command="put"),
    Case("priority and tags", options=("priority", 7.25, "tags", '["a", "b\\"c"]')),
    Case("negative priority", options=("priority", -3)),
    Case("retries", options=("retries", 2)),
    Case("no tags", options=("tags", "[]")),
    Case("data of 1 KB", data=json.dumps({"k": "v" * 1000})),
    Case("staged data of 20 KB", data=BIG, staged=True),
    Case("negative delay", delay=-5),
    Case("another job waiting", setup=waiting_job, fast=False),
    Case("a higher-priority job put", setup=waiting_job, options=("priority", 9), fast=False),
    Case("a scheduled job due", setup=scheduled_due, fast=False),
    Case("a scheduled job not due", setup=scheduled_not_due, fast=False),
    Case("something tracked", setup=tracked, fast=False),
    Case("the job itself tracked", setup=tracked_itself, fast=False),
    Case("a throttled queue", setup=throttled_queue, fast=False),
    Case("a job's own throttle", options=("throttles", '["t"]'), fast=False),
    Case("an expired lock", setup=expired_lock, fast=False),
    Case("a running job", setup=running_job),
    Case("a retried job put again", setup=retried_job, fast=False),
    Case("a paused queue", setup=paused, fast=False),
    Case("a capped queue", setup=capped, fast=False),
    Case("no pop passes", setup=no_pop_passes, fast=False),
    Case("a rate-limited queue", setup=rate_limited, fast=False),
    Case("a job's own rate limit", options=("rate_limits", '["rl"]'), fast=False),
    Case("a recurring job", setup=recurring, fast=False),
    Case("the job put again", setup=job_there, fast=False),
    Case("dependents of its jid", setup=dependent, fast=False),
    Case("a history of its jid", setup=history, fast=False),
    Case("a job done put again, its history gone", setup=job_done_without_history, fast=False),
    Case("a delayed put", delay=10, fast=False, waits=False),
    Case(
        "a dependency", setup=dependency, options=("depends", '["first"]'), fast=False, waits=False
    ),
    Case("a group", options=("group", "g"), fast=False),
    Case("deduplicated", command="queue.putDeduplicated"),
]


async def put(lua: Lua, case: Case) -> None:
    """The case's put at NOW, its data staged when the case says so."""
    data = case.data
    options = case.options
    if case.staged:
        await lua.redis.hset("ql:j:jid-staged", "data", data)
        data, options = "", (*options, "staged", "jid")
    arguments: tuple[Argument, ...] = (
        "worker",
        "queue",
        "jid",
        "klass",
        data,
        case.delay,
        *options,
    )
    if case.command == "queue.putDeduplicated":
        arguments = ("order-1", "job", 0, *arguments)
    await lua(case.command, NOW, *arguments)
    if case.staged:
        await lua.redis.delete("ql:j:jid-staged")


async def zrems(lua: Lua) -> int:
    """ZREM calls since the last CONFIG RESETSTAT: a pop's removal from the work set, which
    the shorter road spares (nor does anything else in its put remove a member)."""
    stats = await lua.redis.info("commandstats")
    return int(stats.get("cmdstat_zrem", {}).get("calls", 0))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_a_pushed_put_leaves_what_a_put_and_the_workers_pop_leave(
    lua: Lua, case: Case
) -> None:
    # the reference: the put into a queue nobody offers to take, then the worker's pop
    await case.setup(lua)
    async with EventCapture(lua.redis, "ql:*") as reference_events:
        await put(lua, case)
        reply = await lua.json("queue.pop", NOW, "queue", "w1", 1) if case.waits else []
    popped = [job["jid"] for job in reply]
    assert popped or not case.waits or case.setup in (paused, no_pop_passes)
    objects = []
    for jid in popped:
        stored = await lua.json("job.get", NOW, jid)
        attempt = int(await lua.redis.hget(f"ql:j:{jid}", "attempt") or 0)
        objects.append({**{k: v for k, v in stored.items() if k != "history"}, "attempt": attempt})
    reference = await snapshot(lua)
    await lua.redis.flushall()

    # the same put into the queue a listening worker offers to take
    await case.setup(lua)
    assert await lua("worker.offer", 0, "w1", 5, 10_000, "queue") == 0
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as events:
        await lua.redis.config_resetstat()
        await put(lua, case)
        removals = await zrems(lua)
    pushed = await snapshot(lua)
    pushed.pop(OFFERS, None)
    assert pushed == reference

    pushes = [job for payload in events.on("ql:push:w1") for job in json.loads(payload)]
    assert pushes == objects
    assert events.on("ql:pushed") == popped
    others = [m for m in events.messages if m[0] not in ("ql:push:w1", "ql:pushed")]
    assert sorted(others) == sorted(reference_events.messages)
    if popped:  # the push and its news come before the put event; the road the put took
        order = [
            channel
            for channel, payload in events.messages
            if channel in ("ql:push:w1", "ql:pushed") or is_put_event(channel, payload)
        ]
        # (a put that takes the job from a worker publishes its put event first, then
        # lock_lost: the protocol's order, see put.lua)
        assert order in (
            ["ql:push:w1", "ql:pushed", "ql:log"],
            ["ql:log", "ql:push:w1", "ql:pushed"],
        )
        assert order[0] == "ql:push:w1" or case.setup is retried_job
        assert (removals == 0) == case.fast


def is_put_event(channel: str, payload: str) -> bool:
    """The message is the put event of the job put (`jid`)."""
    if channel != "ql:log":
        return False
    decoded = json.loads(payload)
    return (
        isinstance(decoded, dict) and decoded.get("jid") == "jid" and decoded.get("event") == "put"
    )
