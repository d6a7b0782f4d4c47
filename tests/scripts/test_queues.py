"""Queue listings, counts and pausing.

Classic `jobs`, `queues`, `length`, `pause`, `unpause`, `queue.forget` (CORE 6.20-6.25) and
reqless `jobs.completed`, `queue.jobsByState`, `queue.counts`, `queues.counts`, `queues.names`,
`queue.length`, `queue.pause`, `queue.unpause` (REQLESS 6.9, 8.15, 8.16).
"""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import pop, put, rpop, rput
from tests.scripts.expect import refused


def counts(
    name: str = "queue",
    *,
    waiting: int = 0,
    stalled: int = 0,
    running: int = 0,
    scheduled: int = 0,
    depends: int = 0,
    recurring: int = 0,
    paused: bool = False,
    throttled: int | None = None,
) -> dict[str, Any]:
    """A counts object: 8 keys (classic `queues`) or 9 with `throttled` (reqless)."""
    result: dict[str, Any] = {
        "name": name,
        "waiting": waiting,
        "stalled": stalled,
        "running": running,
        "scheduled": scheduled,
        "depends": depends,
        "recurring": recurring,
        "paused": paused,
    }
    if throttled is not None:
        result["throttled"] = throttled
    return result


async def complete(lua: Lua, now: float, jid: str, *, classic: bool = True) -> None:
    if classic:
        assert await lua("complete", now, jid, "worker", "queue", "{}") == "complete"
    else:
        assert await lua("job.complete", now, jid, "worker", "queue", "{}") == "complete"


async def every_state(lua: Lua, *, classic: bool = True) -> None:
    """One job in each state of `queue` (at time 70): stalled `s1` (lock expired at 60),
    running `r1`, waiting `w1`, scheduled `sch` (due 150), depends `dep` (on `w1`), and a
    recurring template `rec` (first spawn at 1050)."""
    put_ = put if classic else rput
    pop_ = pop if classic else rpop
    await put_(lua, 0, "s1")
    assert await pop_(lua, 0) == ["s1"]
    await put_(lua, 50, "r1")
    assert await pop_(lua, 50) == ["r1"]
    await put_(lua, 50, "w1")
    await put_(lua, 50, "sch", delay=100)
    await put_(lua, 50, "dep", "depends", '["w1"]')
    if classic:
        await lua("recur", 50, "queue", "rec", "klass", "{}", "interval", 60, 1000)
    else:
        await lua("queue.recurAtInterval", 50, "queue", "rec", "klass", "{}", 60, 1000)


# ---------------------------------------------------------------------------------------------
# classic `jobs` (CORE 6.20)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), 'Jobs(): Arg "state" missing'),
        (("complete", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("complete", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        (("running",), 'Jobs(): Arg "queue" missing'),
        (("running", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("running", "queue", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        (("stalled",), 'Jobs(): Arg "queue" missing'),
        (("stalled", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("stalled", "queue", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        (("scheduled", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("scheduled", "queue", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        (("depends", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("depends", "queue", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        (("recurring", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("recurring", "queue", "0", "foo"), 'Jobs(): Arg "count" not a number: foo'),
        # an unknown state still needs a queue, and the paging is checked before the state
        (("foo",), 'Jobs(): Arg "queue" missing'),
        (("foo", "queue", "bar"), 'Jobs(): Arg "offset" not a number: bar'),
        (("foo", "queue", "0", "bar"), 'Jobs(): Arg "count" not a number: bar'),
        (("foo", "queue", "0", "25"), 'Jobs(): Unknown type "foo"'),
        (("complete", "nan"), 'Jobs(): Arg "offset" not a number: nan'),
        (("running", "queue", "0", "inf"), 'Jobs(): Arg "count" not a number: inf'),
    ],
)
async def test_jobs_malformed(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await put(lua, 0, "due", delay=1)  # due at 1: a bad `jobs scheduled` must not promote it
    await refused(lua, text, "jobs", 5, *args)


async def test_jobs_complete_newest_first(lua: Lua) -> None:
    assert await lua("jobs", 0, "complete") == []
    for i in range(10):
        await put(lua, i, f"jid-{i}")
        await pop(lua, i)
        await complete(lua, i, f"jid-{i}")
    assert await lua("jobs", 10, "complete") == [f"jid-{i}" for i in range(9, -1, -1)]
    assert await lua("jobs", 10, "complete", 2, 3) == ["jid-7", "jid-6", "jid-5"]
    assert await lua("jobs", 10, "complete", 8) == ["jid-1", "jid-0"]
    assert await lua("jobs", 10, "complete", 20) == []


async def test_jobs_complete_default_count_and_ties(lua: Lua) -> None:
    for i in range(30):
        await put(lua, 0, f"jid-{i:02}")
    await pop(lua, 0, 30)
    for i in range(30):
        await complete(lua, 1, f"jid-{i:02}")
    listed = await lua("jobs", 1, "complete")
    # 25 by default; equal completion times come out in reverse jid order (ZREVRANGE)
    assert listed == [f"jid-{i:02}" for i in range(29, 4, -1)]


async def test_jobs_running_and_stalled_split_at_now(lua: Lua) -> None:
    for i in range(10):
        await put(lua, i, f"jid-{i}")
        assert await pop(lua, i) == [f"jid-{i}"]  # lock expires at 60 + i
    assert await lua("jobs", 10, "running", "queue") == [f"jid-{i}" for i in range(10)]
    assert await lua("jobs", 10, "stalled", "queue") == []
    # running = locks in [now, +inf], stalled = locks in [-inf, now]: 65 is in both
    assert await lua("jobs", 65, "running", "queue") == [f"jid-{i}" for i in range(5, 10)]
    assert await lua("jobs", 65, "stalled", "queue") == [f"jid-{i}" for i in range(6)]
    assert await lua("jobs", 10, "running", "queue", 2, 3) == ["jid-2", "jid-3", "jid-4"]
    assert await lua("jobs", 100, "stalled", "queue", 7, 25) == ["jid-7", "jid-8", "jid-9"]
    assert await lua("jobs", 10, "running", "other") == []


async def test_jobs_stalled_with_short_heartbeat(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 10)
    for i in range(10):
        await put(lua, i, f"jid-{i}")
        assert await pop(lua, i) == [f"jid-{i}"]
    assert await lua("jobs", 29, "stalled", "queue") == [f"jid-{i}" for i in range(10)]
    assert await lua("jobs", 29, "running", "queue") == []


async def test_jobs_stalled_includes_negative_expiry(lua: Lua, redis: aioredis.Redis) -> None:
    await redis.hset("ql:config", "heartbeat", -10)  # stored unchecked (another client)
    await put(lua, 0, "jid")
    await pop(lua, 0)  # expires at -10
    assert await lua("jobs", 0, "stalled", "queue") == ["jid"]


async def test_jobs_scheduled_in_due_order_and_promotes(lua: Lua) -> None:
    for delay in range(10, 0, -1):
        await put(lua, 0, f"jid-{delay}", delay=delay)
    assert await lua("jobs", 0, "scheduled", "queue") == [f"jid-{d}" for d in range(1, 11)]
    assert await lua("jobs", 0, "scheduled", "queue", 3, 2) == ["jid-4", "jid-5"]
    # at 5 the jobs due at 1..5 are promoted first and are not listed any more
    assert await lua("jobs", 5, "scheduled", "queue") == [f"jid-{d}" for d in range(6, 11)]
    job = await lua.json("get", 5, "jid-3")
    assert job["state"] == "waiting"
    assert await lua.redis.zcard("ql:q:queue-scheduled") == 5
    assert await lua.redis.zcard("ql:q:queue-work") == 5


async def test_jobs_depends_in_entry_order(lua: Lua) -> None:
    await put(lua, 0, "a")
    for now, jid in enumerate(["z", "y", "x"], start=1):
        await put(lua, now, jid, "depends", '["a"]')
    assert await lua("jobs", 5, "depends", "queue") == ["z", "y", "x"]
    assert await lua("jobs", 5, "depends", "queue", 1, 1) == ["y"]


async def test_jobs_recurring_includes_future_templates(lua: Lua) -> None:
    await lua("recur", 0, "queue", "b", "klass", "{}", "interval", 60, 0)
    await lua("recur", 0, "queue", "a", "klass", "{}", "interval", 60, 10)
    assert await lua("jobs", 0, "recurring", "queue") == ["b", "a"]
    assert await lua("jobs", 0, "recurring", "queue", 1, 1) == ["a"]
    assert await lua("jobs", 0, "recurring", "other") == []


async def test_jobs_publishes_nothing(lua: Lua) -> None:
    await put(lua, 0, "jid", delay=1)
    async with EventCapture(lua.redis, "ql:*") as captured:
        await lua("jobs", 5, "scheduled", "queue")
        await lua("jobs", 5, "complete")
    assert captured.messages == []


# ---------------------------------------------------------------------------------------------
# classic `queues` (CORE 6.21)


async def test_queues_empty(lua: Lua) -> None:
    assert await lua.json("queues", 0) == {}
    # any name works, known or not, and is not registered by the query
    assert await lua.json("queues", 0, "nope") == counts("nope")
    assert await lua.json("queues", 0) == {}


async def test_queues_counts_every_state(lua: Lua) -> None:
    await every_state(lua)
    expected = counts(waiting=1, stalled=1, running=1, scheduled=1, depends=1, recurring=1)
    assert await lua.json("queues", 70, "queue") == expected
    assert await lua.json("queues", 70) == [expected]


async def test_queues_promotes_due_jobs_first(lua: Lua) -> None:
    await put(lua, 0, "jid", delay=10)
    assert await lua.json("queues", 9, "queue") == counts(scheduled=1)
    assert await lua.json("queues", 10, "queue") == counts(waiting=1)
    assert (await lua.json("get", 10, "jid"))["state"] == "waiting"


async def test_queues_stalled_lower_bound_is_zero(lua: Lua, redis: aioredis.Redis) -> None:
    await redis.hset("ql:config", "heartbeat", -10)  # stored unchecked (another client)
    await put(lua, 0, "jid")
    await pop(lua, 0)  # lock score -10: not in [0, now], so it counts as running
    assert await lua.json("queues", 0, "queue") == counts(running=1)


async def test_queues_counts_a_timed_out_job_as_waiting(lua: Lua) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0)
    await lua("timeout", 1, "jid")
    assert await lua.json("queues", 1, "queue") == counts(waiting=1)


async def test_queues_order_by_registration_then_name(lua: Lua) -> None:
    await put(lua, 0, "a", queue="queue")
    await put(lua, 0, "b", queue="another")
    await put(lua, 1, "c", queue="early")  # registered later despite its name
    await put(lua, 2, "d", queue="queue")  # a known queue keeps its first score
    names = [q["name"] for q in await lua.json("queues", 2)]
    assert names == ["another", "queue", "early"]
    assert await lua.redis.zscore("ql:queues", "queue") == 0


async def test_queues_lists_the_queue_of_an_advanced_job(lua: Lua) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0)
    await lua("complete", 0, "jid", "worker", "queue", "{}", "next", "another")
    assert await lua.json("queues", 0) == [counts("another", waiting=1), counts("queue")]


async def test_queues_follows_a_moved_recurring_template(lua: Lua) -> None:
    await lua("recur", 0, "queue", "rec", "klass", "{}", "interval", 60, 0)
    await lua("recur.update", 0, "rec", "queue", "other")
    assert await lua.json("queues", 0) == [counts("other", recurring=1), counts("queue")]


# ---------------------------------------------------------------------------------------------
# classic `length` (CORE 6.22)


async def test_length_malformed(lua: Lua) -> None:
    await refused(lua, "Queue(): no queue name provided", "length", 0)


async def test_length_counts_locks_work_and_scheduled(lua: Lua) -> None:
    assert await lua("length", 0, "queue") == 0
    await every_state(lua)
    await put(lua, 50, "w2")
    # s1 (expired lock), r1, w1, w2, sch (even when due: no promotion); not dep nor rec
    assert await lua("length", 70, "queue") == 5
    assert await lua("length", 500, "queue") == 5
    assert await lua.redis.zcard("ql:q:queue-scheduled") == 1


# ---------------------------------------------------------------------------------------------
# classic `pause` / `unpause` (CORE 6.23, 6.24)


@pytest.mark.parametrize("command", ["pause", "unpause", "queue.pause", "queue.unpause"])
async def test_pause_without_queue_names(lua: Lua, command: str) -> None:
    await lua("pause", 0, "queue")
    await refused(lua, None, command, 0)


async def test_pause_and_unpause_sets(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua("pause", 0, "q1", "q2", "q3") is None
    assert await redis.smembers("ql:paused_queues") == {"q1", "q2", "q3"}
    assert await redis.zcard("ql:queues") == 0  # pausing registers nothing
    assert await lua("unpause", 0, "q1", "q3", "unknown") is None
    assert await redis.smembers("ql:paused_queues") == {"q2"}
    assert await lua("pause", 0, "q2") is None  # idempotent
    assert await redis.smembers("ql:paused_queues") == {"q2"}


async def test_paused_queue_pops_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    for i in range(10):
        await put(lua, 0, f"jid-{i}")
    async with EventCapture(redis, "ql:*") as captured:
        await lua("pause", 0, "queue")
    assert captured.messages == []
    assert await lua.json("pop", 1, "queue", "worker", 10) == {}
    assert await redis.zcard("ql:workers") == 0  # the worker is not registered
    assert await lua.json("queues", 1, "queue") == counts(waiting=10, paused=True)
    assert len(await lua.json("peek", 1, "queue", 10)) == 10  # peek ignores the pause
    await lua("unpause", 1, "queue")
    assert await lua.json("queues", 1, "queue") == counts(waiting=10)
    assert len(await pop(lua, 2, 10)) == 10


# ---------------------------------------------------------------------------------------------
# `queue.forget` (CORE 6.25; same command in both vocabularies)


async def test_queue_forget_removes_names_only(lua: Lua, redis: aioredis.Redis) -> None:
    await put(lua, 0, "a", queue="q1")
    await put(lua, 0, "b", queue="q2")
    await put(lua, 0, "c", queue="q3")
    assert await lua("queue.forget", 1, "q1", "q3", "unknown") is None
    assert await redis.zrange("ql:queues", 0, -1) == ["q2"]
    assert await redis.zrange("ql:q:q1-work", 0, -1) == ["a"]  # nothing else is deleted
    assert await lua.json("queues", 1, "q1") == counts("q1", waiting=1)
    assert await lua.json("queues.names", 1) == ["q2"]
    # the queue comes back, with its new registration time, when it is used again
    await put(lua, 5, "d", queue="q1")
    assert await redis.zscore("ql:queues", "q1") == 5
    assert await lua.json("queues.names", 5) == ["q2", "q1"]


async def test_queue_forget_without_names(lua: Lua) -> None:
    await put(lua, 0, "a")
    await refused(lua, None, "queue.forget", 0)


# ---------------------------------------------------------------------------------------------
# reqless `jobs.completed` and `queue.jobsByState` (REQLESS 8.15, 6.9)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("foo",), 'Jobs(): Arg "offset" not a number: foo'),
        (("0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
        (("inf",), 'Jobs(): Arg "offset" not a number: inf'),
        (("0", "nan"), 'Jobs(): Arg "limit" not a number: nan'),
    ],
)
async def test_jobs_completed_malformed(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await rput(lua, 0, "jid")
    await refused(lua, text, "jobs.completed", 0, *args)


async def test_jobs_completed_newest_first(lua: Lua) -> None:
    assert await lua("jobs.completed", 0) == "[]"
    for i in range(10):
        await rput(lua, i, f"jid-{i}")
        await rpop(lua, i)
        await complete(lua, i, f"jid-{i}", classic=False)
    assert await lua.json("jobs.completed", 10) == [f"jid-{i}" for i in range(9, -1, -1)]
    assert await lua.json("jobs.completed", 10, 2, 3) == ["jid-7", "jid-6", "jid-5"]
    assert await lua.json("jobs.completed", 10, 20) == []


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), 'Jobs(): Arg "state" missing'),
        (("running",), 'Jobs(): Arg "queue" missing'),
        (("running", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("running", "queue", "0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
        (("stalled", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("scheduled", "queue", "0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
        (("depends", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("recurring", "queue", "0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
        (("throttled",), 'Jobs(): Arg "queue" missing'),
        (("throttled", "queue", "foo"), 'Jobs(): Arg "offset" not a number: foo'),
        (("throttled", "queue", "0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
        (("foo", "queue", "0", "25"), 'Jobs(): Unknown type "foo"'),
        (("complete", "0", "foo"), 'Jobs(): Arg "limit" not a number: foo'),
    ],
)
async def test_jobs_by_state_malformed(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await rput(lua, 0, "due", delay=1)
    await refused(lua, text, "queue.jobsByState", 5, *args)


async def test_jobs_by_state_empty_lists_are_arrays(lua: Lua) -> None:
    for state in ["running", "stalled", "scheduled", "depends", "recurring", "throttled"]:
        assert await lua("queue.jobsByState", 0, state, "queue") == "[]"


async def test_jobs_by_state_running_and_stalled(lua: Lua) -> None:
    for i in range(10):
        await rput(lua, i, f"jid-{i}")
        assert await rpop(lua, i) == [f"jid-{i}"]
    assert await lua.json("queue.jobsByState", 10, "running", "queue") == [
        f"jid-{i}" for i in range(10)
    ]
    assert await lua.json("queue.jobsByState", 65, "running", "queue") == [
        f"jid-{i}" for i in range(5, 10)
    ]
    assert await lua.json("queue.jobsByState", 65, "stalled", "queue") == [
        f"jid-{i}" for i in range(6)
    ]
    assert await lua.json("queue.jobsByState", 10, "running", "queue", 2, 3) == [
        "jid-2",
        "jid-3",
        "jid-4",
    ]


async def test_jobs_by_state_scheduled_depends_recurring(lua: Lua) -> None:
    for delay in range(5, 0, -1):
        await rput(lua, 0, f"s-{delay}", delay=delay)
    await rput(lua, 0, "a")
    for now, jid in enumerate(["z", "y", "x"], start=1):
        await rput(lua, now, jid, "depends", '["a"]')
    await lua("queue.recurAtInterval", 0, "queue", "r-b", "klass", "{}", 60, 0)
    await lua("queue.recurAtInterval", 0, "queue", "r-a", "klass", "{}", 60, 1000)
    assert await lua.json("queue.jobsByState", 0, "scheduled", "queue") == [
        f"s-{d}" for d in range(1, 6)
    ]
    assert await lua.json("queue.jobsByState", 3, "scheduled", "queue") == ["s-4", "s-5"]
    assert (await lua.json("job.get", 3, "s-2"))["state"] == "waiting"
    assert await lua.json("queue.jobsByState", 5, "depends", "queue") == ["z", "y", "x"]
    assert await lua.json("queue.jobsByState", 5, "depends", "queue", 1, 1) == ["y"]
    assert await lua.json("queue.jobsByState", 5, "recurring", "queue") == ["r-b", "r-a"]


async def test_jobs_by_state_throttled(lua: Lua) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "a")
    await rput(lua, 1, "c")
    await rput(lua, 2, "b")
    assert await rpop(lua, 3, 3) == ["a"]  # c and b are parked at 3
    await rput(lua, 4, "d")  # parked immediately
    await rput(lua, 4, "aa")
    listed = await lua.json("queue.jobsByState", 5, "throttled", "queue")
    assert listed == ["b", "c", "aa", "d"]  # by park time, ties lexicographic
    assert await lua.json("queue.jobsByState", 5, "throttled", "queue", 1, 2) == ["c", "aa"]


async def test_jobs_by_state_complete_quirk(lua: Lua) -> None:
    for i in range(3):
        await rput(lua, 0, f"jid-{i}")
        await rpop(lua, i)
        await complete(lua, i, f"jid-{i}", classic=False)
    # state `complete` reads the following two arguments as offset and limit
    assert await lua.json("queue.jobsByState", 5, "complete") == ["jid-2", "jid-1", "jid-0"]
    assert await lua.json("queue.jobsByState", 5, "complete", 1, 1) == ["jid-1"]


# ---------------------------------------------------------------------------------------------
# reqless `queue.counts`, `queues.counts`, `queues.names` (REQLESS 8.16)


async def test_counts_empty(lua: Lua) -> None:
    assert await lua("queues.counts", 0) == "[]"
    assert await lua("queues.names", 0) == "[]"
    assert await lua.json("queue.counts", 0) == {}  # plain cjson without a queue
    assert await lua.json("queue.counts", 0, "nope") == counts("nope", throttled=0)
    assert await lua("queues.names", 0) == "[]"  # the query registered nothing


async def test_counts_every_state(lua: Lua) -> None:
    await every_state(lua, classic=False)
    expected = counts(
        waiting=1, stalled=1, running=1, scheduled=1, depends=1, recurring=1, throttled=0
    )
    assert await lua.json("queue.counts", 70, "queue") == expected
    assert await lua.json("queue.counts", 70) == [expected]
    assert await lua.json("queues.counts", 70) == [expected]
    assert await lua.json("queues.names", 70) == ["queue"]


async def test_counts_throttled_and_paused(lua: Lua) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "a")
    await rput(lua, 1, "b")
    assert await rpop(lua, 2, 2) == ["a"]
    assert await lua.json("queue.counts", 3, "queue") == counts(running=1, throttled=1)
    assert await lua("queue.pause", 3, "queue") is None
    assert await lua.json("queue.counts", 3, "queue") == counts(running=1, throttled=1, paused=True)
    assert await lua("queue.unpause", 3, "queue") is None
    assert await lua.json("queue.counts", 3, "queue") == counts(running=1, throttled=1)


async def test_counts_promote_due_jobs(lua: Lua) -> None:
    await rput(lua, 0, "jid", delay=10)
    assert await lua.json("queue.counts", 10, "queue") == counts(waiting=1, throttled=0)
    assert (await lua.json("job.get", 10, "jid"))["state"] == "waiting"


async def test_counts_and_names_order(lua: Lua) -> None:
    await rput(lua, 0, "jid")
    await rpop(lua, 0)
    await lua("job.completeAndRequeue", 0, "jid", "worker", "queue", "{}", "another")
    assert await lua.json("queues.counts", 0) == [
        counts("another", waiting=1, throttled=0),
        counts("queue", throttled=0),
    ]
    for i in range(9, -1, -1):
        await rput(lua, 1, f"j{i}", queue=f"queue-{i}")
    assert await lua.json("queues.names", 1) == ["another", "queue"] + [
        f"queue-{i}" for i in range(10)
    ]


async def test_counts_follow_a_moved_recurring_template(lua: Lua) -> None:
    await lua("queue.recurAtInterval", 0, "queue", "rec", "klass", "{}", 60, 0)
    await lua("recurringJob.update", 0, "rec", "queue", "other")
    assert await lua.json("queues.counts", 0) == [
        counts("other", recurring=1, throttled=0),
        counts("queue", throttled=0),
    ]


# ---------------------------------------------------------------------------------------------
# reqless `queue.length`, `queue.pause`, `queue.unpause`


async def test_queue_length_malformed(lua: Lua) -> None:
    await refused(lua, "Queue(): no queue name provided", "queue.length", 0)


async def test_queue_length_ignores_parked_jobs(lua: Lua) -> None:
    assert await lua("queue.length", 0, "queue") == 0
    await every_state(lua, classic=False)
    assert await lua("queue.length", 70, "queue") == 4  # s1, r1, w1, sch
    await lua("queue.throttle.set", 70, "queue", 1)
    await rput(lua, 71, "parked")  # two locks held: parked at once
    assert await lua.json("queue.jobsByState", 71, "throttled", "queue") == ["parked"]
    assert await lua("queue.length", 71, "queue") == 4


async def test_queue_pause_and_unpause(lua: Lua, redis: aioredis.Redis) -> None:
    for i in range(3):
        await rput(lua, 0, f"jid-{i}")
    assert await lua("queue.pause", 0, "queue", "other") is None
    assert await redis.smembers("ql:paused_queues") == {"queue", "other"}
    assert await lua("queue.pop", 1, "queue", "worker", 10) == "[]"
    assert await redis.zcard("ql:workers") == 0
    assert len(await lua.json("queue.peek", 1, "queue", 0, 10)) == 3
    assert await lua("queue.unpause", 1, "queue") is None
    assert await redis.smembers("ql:paused_queues") == {"other"}
    assert len(await rpop(lua, 2, 10)) == 3
