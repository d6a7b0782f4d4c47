"""aqless's offers and pushes (worker.lua): `worker.offer`, `worker.withdraw`, and the pop a
put makes for an offering worker that listens on ``ql:push:<worker>``.

A push must leave exactly what a put followed by that worker's pop leaves, and publish the
pop's reply; without a listening, unexpired offer with a free slot nothing changes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import redis.asyncio as aioredis

from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import rpop, rput
from tests.scripts.expect import refused, snapshot

OFFERS = "ql:offers:queue"


@asynccontextmanager
async def listening(redis: aioredis.Redis, *workers: str) -> AsyncIterator[None]:
    """Subscribe to the workers' push channels, as their Pickups do."""
    pubsub = redis.pubsub()
    await pubsub.subscribe(*(f"ql:push:{worker}" for worker in workers))
    try:
        yield
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]


async def offer(lua: Lua, now: float, worker: str, slots: int, *queues: str) -> None:
    listeners = await lua("worker.offer", now, worker, slots, 30, *(queues or ("queue",)))
    assert listeners == 0, "no worker listens to put events here"


def pushed_jobs(captured: list[str]) -> list[dict[str, object]]:
    return [job for payload in captured for job in json.loads(payload)]


async def test_a_put_pops_its_job_for_a_listening_offer_and_publishes_it(lua: Lua) -> None:
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid")
    jobs = pushed_jobs(captured.on("ql:push:w1"))
    assert [(job["jid"], job["worker"], job["state"]) for job in jobs] == [("jid", "w1", "running")]
    # the job as stored and its attempt (a push is aqless's own, as its pops), without its
    # history, which a worker does not read (as its own pops leave it out)
    stored = await lua.json("job.get", 1, "jid")
    assert "history" not in jobs[0]
    assert jobs[0] == {**{k: v for k, v in stored.items() if k != "history"}, "attempt": 1}
    # the push and the news that it was pushed (for the other workers) come before the put
    # event, so that no worker hearing the event has to wait to learn whether a push follows
    assert captured.channels() == ["ql:push:w1", "ql:pushed", "ql:log"]
    assert captured.on("ql:pushed") == ["jid"]
    assert await lua.redis.zrange("ql:w:w1:jobs", 0, -1) == ["jid"]
    assert await lua.redis.zcard("ql:q:queue-work") == 0


async def hash_reads(redis: aioredis.Redis) -> tuple[int, int]:
    """HGET and HGETALL calls since the last CONFIG RESETSTAT (inside scripts too)."""
    stats = await redis.info("commandstats")

    def calls(name: str) -> int:
        return int(stats.get(f"cmdstat_{name}", {}).get("calls", 0))

    return calls("hget"), calls("hgetall")


async def test_a_push_reads_the_configuration_with_one_command(lua: Lua) -> None:
    # the pickup's critical path: the listeners' check (aqless-pubsub) and the push's pop
    # (the lock's heartbeat) share one HGETALL of ql:config, with no HGET of an option
    await lua("config.set", 0, "heartbeat", 120)
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await lua.redis.config_resetstat()
        await rput(lua, 1, "jid")
        reads = await hash_reads(lua.redis)
    assert len(pushed_jobs(captured.on("ql:push:w1"))) == 1
    # HGETALL: the configuration, then the offers; no HGET of the queue's throttle maximum
    # (put's one EXISTS found its hash absent, and the pickup knows it before the job waits)
    assert reads == (0, 2)
    assert (await lua.json("job.get", 1, "jid"))["expires"] == 121  # the heartbeat was read


async def test_a_push_asks_after_no_key_puts_question_found_absent(lua: Lua) -> None:
    # put's one EXISTS found only the offers: the push's pop asks neither whether anything
    # is tracked nor for the job's history (the push leaves it out)
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await lua.redis.config_resetstat()
        await rput(lua, 1, "jid")
        stats = await lua.redis.info("commandstats")
    assert len(pushed_jobs(captured.on("ql:push:w1"))) == 1
    # put's, then the pickup's (the pop's questions and the job's relations in one)
    assert int(stats["cmdstat_exists"]["calls"]) == 2
    assert "cmdstat_lrange" not in stats


async def test_a_pushed_tracked_job_is_tracked(lua: Lua) -> None:
    # put's EXISTS counts the tracking set then: each push asks after its own job
    await rput(lua, 0, "jid2", queue="elsewhere")
    await lua("track", 0, "track", "jid2")
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid")
        await rput(lua, 2, "jid2")
    assert [job["tracked"] for job in pushed_jobs(captured.on("ql:push:w1"))] == [False, True]
    assert captured.on("ql:popped") == ["jid2"]


async def test_a_push_leaves_what_a_put_and_a_pop_leave(lua: Lua) -> None:
    await rput(lua, 1, "jid", "priority", 3, "tags", '["a"]')
    await rpop(lua, 1, 1, worker="w1")
    popped = await snapshot(lua)
    await lua.redis.flushall()

    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"):
        await rput(lua, 1, "jid", "priority", 3, "tags", '["a"]')
    pushed = await snapshot(lua)
    assert pushed.pop(OFFERS) == ("hash", {"w1": "2 30.000"}, -1)
    assert pushed == popped


@pytest.mark.parametrize("command", ["put", "queue.put"])
async def test_both_vocabularies_push(lua: Lua, command: str) -> None:
    await offer(lua, 0, "w1", 1)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await lua(command, 1, "", "queue", "jid", "klass", "{}", 0)
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["jid"]


async def test_nothing_is_pushed_to_a_worker_that_does_not_listen(lua: Lua) -> None:
    await offer(lua, 0, "w1", 2)
    async with EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid")
    assert captured.on("ql:push:w1") == []
    assert captured.on("ql:pushed") == []  # the other workers pop for it
    assert await lua.redis.hget("ql:j:jid", "state") == "waiting"
    assert await lua.redis.hgetall(OFFERS) == {"w1": "2 30.000"}  # it may listen again


async def test_a_lapsed_offer_is_dropped_and_pushes_nothing(lua: Lua) -> None:
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 31, "jid")
    assert captured.on("ql:push:w1") == []
    assert await lua.redis.exists(OFFERS) == 0
    assert await lua.redis.hget("ql:j:jid", "state") == "waiting"


async def test_no_push_beyond_the_offered_slots(lua: Lua) -> None:
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        for n in range(3):
            await rput(lua, 1 + n, f"jid-{n}")
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["jid-0", "jid-1"]
    assert await lua.redis.hget("ql:j:jid-2", "state") == "waiting"


async def test_locks_that_expired_free_their_slots(lua: Lua) -> None:
    await offer(lua, 0, "w1", 1)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "first")
        await rput(lua, 2, "second")  # w1 holds `first`: no slot
        await offer(lua, 61, "w1", 1)  # renewed, as a listening worker does
        await rput(lua, 62, "third")  # first's lock (60 s) has expired
    # the pop takes what a pop would: the oldest waiting job, not necessarily the one put
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["first", "second"]
    assert await lua.redis.hget("ql:j:third", "state") == "waiting"


async def test_the_worker_with_the_most_free_slots_takes_the_job(lua: Lua) -> None:
    await offer(lua, 0, "small", 1)
    await offer(lua, 0, "big", 5)
    async with (
        listening(lua.redis, "small", "big"),
        EventCapture(lua.redis, "ql:*") as captured,
    ):
        await rput(lua, 1, "jid")
    assert captured.on("ql:push:small") == []
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:big"))] == ["jid"]


@pytest.mark.parametrize(
    ("setup", "options", "delay", "state"),
    [
        (None, (), 5, "scheduled"),
        ("paused", (), 0, "waiting"),
        ("dependency", ("depends", '["other"]'), 0, "depends"),
        ("throttle", ("throttles", '["t"]'), 0, "throttled"),
    ],
)
async def test_a_job_that_is_not_waiting_is_not_pushed(
    lua: Lua, setup: str | None, options: tuple[str, ...], delay: float, state: str
) -> None:
    if setup == "paused":
        await lua("queue.pause", 0, "queue")
    elif setup == "dependency":
        await rput(lua, 0, "other", queue="elsewhere")
    elif setup == "throttle":
        await lua("throttle.set", 0, "t", 1)
        await rput(lua, 0, "holder", "throttles", '["t"]', queue="elsewhere")
        await rpop(lua, 0, 1, queue="elsewhere", worker="other")
    await offer(lua, 0, "w1", 5)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid", *options, delay=delay)
    assert captured.on("ql:push:w1") == []
    assert await lua.redis.hget("ql:j:jid", "state") == state


async def test_a_push_caps_the_queue_as_queue_pop_does(lua: Lua) -> None:
    # the queue's throttle binds a push, exactly as the worker's own `queue.pop`
    await lua("queue.throttle.set", 0, "queue", 2)
    await offer(lua, 0, "w1", 5)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        for n in range(3):
            await rput(lua, 1 + n, f"jid-{n}")
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["jid-0", "jid-1"]
    assert await lua.redis.hget("ql:j:jid-2", "state") == "throttled"


async def test_a_push_obeys_the_queue_max_concurrency(lua: Lua) -> None:
    await lua("config.set", 0, "queue-max-concurrency", 1)
    await offer(lua, 0, "w1", 5)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        for n in range(3):
            await rput(lua, 1 + n, f"jid-{n}")
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["jid-0"]
    assert await lua.redis.hget("ql:j:jid-2", "state") == "waiting"


async def test_an_offer_covers_each_queue_it_names(lua: Lua) -> None:
    await offer(lua, 0, "w1", 3, "a", "b")
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "in-a", queue="a")
        await rput(lua, 1, "in-b", queue="b")
        await rput(lua, 1, "in-c", queue="c")
    assert [job["jid"] for job in pushed_jobs(captured.on("ql:push:w1"))] == ["in-a", "in-b"]


async def test_an_offer_counts_the_workers_that_listen_to_put_events(lua: Lua) -> None:
    """The put listeners: the subscribers of ql:pushed (an offering worker needs put events only
    while too few workers hear them)."""
    listeners = [lua.redis.pubsub() for _ in range(3)]
    try:
        for count, pubsub in enumerate(listeners, start=1):
            await pubsub.subscribe("ql:pushed", "ql:log")
            assert await lua("worker.offer", 0, "w1", 2, 30, "queue") == count
    finally:
        for pubsub in listeners:
            await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]


async def test_withdraw_takes_the_offer_back(lua: Lua) -> None:
    await offer(lua, 0, "w1", 3, "a", "b")
    assert await lua("worker.withdraw", 0, "w1", "a", "b") is None
    assert await lua.redis.exists("ql:offers:a", "ql:offers:b") == 0
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid", queue="a")
    assert captured.on("ql:push:w1") == []


async def test_many_offers_are_sampled_and_the_job_still_goes_to_a_listener(lua: Lua) -> None:
    for n in range(20):
        await offer(lua, 0, f"idle-{n}", 1)  # none of them listens
    await offer(lua, 0, "w1", 1)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        for n in range(40):  # eight offers are drawn per put
            await rput(lua, 1, f"jid-{n}")
            if captured.on("ql:push:w1"):
                break
    assert len(pushed_jobs(captured.on("ql:push:w1"))) == 1


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), 'Offer(): Arg "worker" missing'),
        (("w1",), 'Offer(): Arg "slots" not a positive number: nil'),
        (("w1", 0, 30, "q"), 'Offer(): Arg "slots" not a positive number: 0'),
        (("w1", "x", 30, "q"), 'Offer(): Arg "slots" not a positive number: x'),
        (("w1", 2, 0, "q"), 'Offer(): Arg "seconds" not a positive number: 0'),
        (("w1", 2, "soon", "q"), 'Offer(): Arg "seconds" not a positive number: soon'),
        (("w1", 2, 30), "Offer(): wrong number of arguments"),
    ],
)
async def test_a_malformed_offer_is_refused(lua: Lua, args: tuple[object, ...], text: str) -> None:
    await refused(lua, text, "worker.offer", 0, *args)  # type: ignore[arg-type]


async def test_a_withdraw_without_a_worker_is_refused(lua: Lua) -> None:
    await refused(lua, 'Withdraw(): Arg "worker" missing', "worker.withdraw", 0)


async def test_a_put_that_takes_a_job_from_a_worker_keeps_the_protocols_event_order(
    lua: Lua,
) -> None:
    await rput(lua, 0, "jid")
    await rpop(lua, 0, 1, worker="w2")
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"), EventCapture(lua.redis, "ql:*") as captured:
        await rput(lua, 1, "jid")
    # put, then lock_lost (CORE.md 7.3); the push follows
    assert captured.channels() == ["ql:log", "ql:w:w2", "ql:log", "ql:push:w1", "ql:pushed"]


@pytest.mark.parametrize("command", ["queue.popAfter", "jobs.outcomes"])
async def test_a_pop_after_outcomes_keeps_within_the_standing_offer(lua: Lua, command: str) -> None:
    """A worker's pop sent with its outcomes may cross a push it has not read yet: while its
    offer stands, the pop takes at most the slots offered less the jobs locked to it."""
    await offer(lua, 0, "w1", 2)
    async with listening(lua.redis, "w1"):
        for jid in ("a", "b", "c", "d"):
            await rput(lua, 1, jid)  # a and b are pushed; c and d wait
    assert sorted(await lua.redis.zrange("ql:w:w1:jobs", 0, -1)) == ["a", "b"]
    complete = ("job.complete", 2, "a", "w1", "queue", "{}")
    if command == "queue.popAfter":
        await lua(command, 2, "queue", "w1", 3, *complete)
    else:
        await lua(command, 2, "queue", "w1", 3, complete[0], 2, 4, *complete[2:])
    # a done, b still locked: one slot of the two was left, so one job of the three asked
    locked = set(await lua.redis.zrange("ql:w:w1:jobs", 0, -1))
    waiting = set(await lua.redis.zrange("ql:q:queue-work", 0, -1))
    assert len(locked) == 2
    assert "b" in locked
    assert locked | waiting == {"b", "c", "d"}
    assert len(waiting) == 1
    # with no offer standing, the pop takes what it asks
    await lua("worker.withdraw", 3, "w1", "queue")
    complete = ("job.complete", 3, "b", "w1", "queue", "{}")
    if command == "queue.popAfter":
        await lua(command, 3, "queue", "w1", 3, *complete)
    else:
        await lua(command, 3, "queue", "w1", 3, complete[0], 3, 4, *complete[2:])
    assert sorted(await lua.redis.zrange("ql:w:w1:jobs", 0, -1)) == ["c", "d"]
