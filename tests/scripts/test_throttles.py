"""Throttles (REQLESS 6): the throttle commands, throttle lists, acquisition in `queue.pop` (and
classic `pop`, decision 3), parking, releases, `max-pop-retry`, and their interactions with
dependencies, retries and timeouts.
"""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import pop, put, rpop, rput
from tests.scripts.expect import popped_entry, put_entry, refused, reqless_job


def throttled_entry(when: int, queue: str = "queue") -> dict[str, object]:
    return {"when": when, "what": "throttled", "queue": queue}


async def locks(lua: Lua, tid: str) -> list[str]:
    reply = await lua.json("throttle.locks", 0, tid)
    assert isinstance(reply, list)
    return reply


async def pending(lua: Lua, tid: str) -> list[str]:
    reply = await lua.json("throttle.pending", 0, tid)
    assert isinstance(reply, list)
    return reply


async def state(lua: Lua, jid: str) -> str:
    job = await lua.json("job.get", 0, jid)
    assert isinstance(job["state"], str)
    return job["state"]


async def complete(lua: Lua, now: float, jid: str, queue: str = "queue") -> None:
    assert await lua("job.complete", now, jid, "worker", queue, "{}") == "complete"


# ---------------------------------------------------------------------------------------------
# throttle records (REQLESS 6.2, 6.10)


async def test_throttle_set(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua("throttle.set", 0, "tid", 5, 0) is None
    assert await redis.hgetall("ql:th:tid") == {"id": "tid", "maximum": "5"}
    assert await redis.ttl("ql:th:tid") == -1
    assert await lua("throttle.set", 0, "tid", 7) is None  # overwrite, no expiration
    assert await lua.json("throttle.get", 0, "tid") == {"id": "tid", "maximum": 7, "ttl": -1}


async def test_queue_throttle_set(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua("queue.throttle.set", 0, "queue", 5) is None
    assert await redis.hgetall("ql:th:ql:q:queue") == {"id": "ql:q:queue", "maximum": "5"}
    assert await redis.ttl("ql:th:ql:q:queue") == -1
    assert await lua.json("queue.throttle.get", 0, "queue") == {
        "id": "ql:q:queue",
        "maximum": 5,
        "ttl": -1,
    }
    assert await lua.json("throttle.get", 0, "ql:q:queue") == {
        "id": "ql:q:queue",
        "maximum": 5,
        "ttl": -1,
    }


async def test_throttle_set_with_expiration(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "tid", 5, 1000)
    assert 0 < await redis.ttl("ql:th:tid") <= 1000
    assert await lua.json("throttle.get", 0, "tid") == {"id": "tid", "maximum": 5, "ttl": 1000}
    # a non-positive expiration does not clear an existing TTL
    await lua("throttle.set", 0, "tid", 6, 0)
    assert await redis.ttl("ql:th:tid") > 0
    await lua("throttle.set", 0, "tid", 6, -5)
    assert await redis.ttl("ql:th:tid") > 0
    assert (await lua.json("throttle.get", 0, "tid"))["maximum"] == 6


async def test_throttle_get_reads_the_hash(lua: Lua, redis: aioredis.Redis) -> None:
    await redis.hset("ql:th:ql:q:queue", mapping={"id": "something-else", "maximum": 5})
    assert await lua.json("queue.throttle.get", 0, "queue") == {
        "id": "ql:q:queue",
        "maximum": 5,
        "ttl": -1,
    }


async def test_throttle_get_uninitialised_and_deleted(lua: Lua, redis: aioredis.Redis) -> None:
    unset = {"id": "tid", "maximum": 0, "ttl": -2}
    assert await lua.json("throttle.get", 0, "tid") == unset
    assert await lua.json("queue.throttle.get", 0, "q") == {
        "id": "ql:q:q",
        "maximum": 0,
        "ttl": -2,
    }
    assert await redis.keys("*") == []
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "jid1", "throttles", '["tid"]')
    await rput(lua, 0, "jid2", "throttles", '["tid"]')
    await rpop(lua, 0, 2)
    assert await lua("throttle.delete", 0, "tid") is None
    assert await lua.json("throttle.get", 0, "tid") == unset
    # only the record is deleted: locks and pending sets keep their members
    assert await locks(lua, "tid") == ["jid2"]
    assert await pending(lua, "tid") == ["jid1"]
    assert await lua("throttle.delete", 0, "never") is None
    # the throttle is unlimited now
    await rput(lua, 1, "jid3", "throttles", '["tid"]')
    assert await rpop(lua, 2) == ["jid3"]
    assert await locks(lua, "tid") == ["jid2", "jid3"]


@pytest.mark.parametrize(
    "command",
    [
        "throttle.set",
        "throttle.get",
        "throttle.delete",
        "throttle.locks",
        "throttle.pending",
        "throttle.release",
    ],
)
async def test_throttle_commands_need_a_tid(lua: Lua, command: str) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await refused(lua, "Throttle(): no tid provided", command, 0)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("throttle.set", ("tid",)),
        ("throttle.set", ("tid", "abc")),
        ("throttle.set", ("tid", "nan")),
        ("throttle.set", ("tid", "inf")),
        ("throttle.set", ("tid", "5", "soon")),
        ("throttle.set", ("tid", "5", "nan")),
        ("queue.throttle.get", ()),
        ("queue.throttle.set", ()),
        ("queue.throttle.set", ("queue",)),
        ("queue.throttle.set", ("queue", "abc")),
    ],
)
async def test_throttle_malformed(lua: Lua, command: str, args: tuple[str, ...]) -> None:
    # decisions 1, 2 and 6: a clear error, and the record is not written
    await lua("throttle.set", 0, "tid", 2)
    await lua("queue.throttle.set", 0, "queue", 2)
    await refused(lua, None, command, 0, *args)


async def test_throttle_lists_empty(lua: Lua) -> None:
    assert await lua("throttle.locks", 0, "tid") == "[]"
    assert await lua("throttle.pending", 0, "tid") == "[]"


async def test_throttle_commands_publish_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        await lua("throttle.set", 0, "tid", 1)
        await lua("queue.throttle.set", 0, "queue", 1)
        await rput(lua, 0, "jid1", "throttles", '["tid"]')
        await rput(lua, 0, "jid2", "throttles", '["tid"]')
        await rpop(lua, 1, 2)  # parks one of them
        await rput(lua, 2, "jid3", "throttles", '["tid"]')  # parked at once
        await lua("throttle.get", 2, "tid")
        await lua("queue.throttle.get", 2, "queue")
        await lua("throttle.locks", 2, "tid")
        await lua("throttle.pending", 2, "tid")
        await lua("throttle.release", 2, "tid", "jid2")
        await lua("throttle.delete", 2, "tid")
    assert captured.on("ql:log") == [
        '{"jid":"jid1","event":"put","queue":"queue"}',
        '{"jid":"jid2","event":"put","queue":"queue"}',
        '{"jid":"jid3","event":"put","queue":"queue"}',
    ]
    assert captured.channels() == ["ql:log"] * 3


# ---------------------------------------------------------------------------------------------
# throttle lists (REQLESS 6.3)


async def test_throttle_list_of_a_new_job(lua: Lua, redis: aioredis.Redis) -> None:
    await rput(lua, 0, "jid")
    assert await redis.hget("ql:j:jid", "throttles") == '["ql:q:queue"]'
    assert await lua.json("job.get", 0, "jid") == reqless_job(
        "jid", history=[put_entry(0, reqless=True)]
    )
    await rput(lua, 0, "one", "throttles", '["tid"]')
    assert (await lua.json("job.get", 0, "one"))["throttles"] == ["tid", "ql:q:queue"]
    await rput(lua, 0, "two", "throttles", '["tid", "wid"]')
    assert (await lua.json("job.get", 0, "two"))["throttles"] == ["tid", "wid", "ql:q:queue"]


async def test_throttle_list_when_moving(lua: Lua) -> None:
    await rput(lua, 0, "jid", "throttles", '["tid"]')
    await rput(lua, 1, "jid", "throttles", '["ql:q:queue"]', queue="other")
    assert (await lua.json("job.get", 1, "jid"))["throttles"] == ["ql:q:other"]
    # the previous list is not kept
    await rput(lua, 2, "jid", queue="third")
    assert (await lua.json("job.get", 2, "jid"))["throttles"] == ["ql:q:third"]


async def test_throttle_list_of_a_requeued_job(lua: Lua) -> None:
    await rput(lua, 0, "jid", "throttles", '["tid"]')
    before = await lua.json("job.get", 0, "jid")
    reply = await lua(
        "job.requeue", 1, "worker", "queue-2", "jid", "klass", "{}", 0, "throttles", '["tid"]'
    )
    assert reply == "jid"
    after = await lua.json("job.get", 1, "jid")
    assert after["throttles"] == ["tid", "ql:q:queue-2"]
    assert after["queue"] == "queue-2"
    assert after["history"] == [put_entry(0, reqless=True), put_entry(1, "queue-2", reqless=True)]
    for key in ("throttles", "queue", "history"):
        del before[key], after[key]
    assert after == before


@pytest.mark.parametrize(
    ("command", "value", "text"),
    [
        ("queue.put", "false", 'Put(): Arg "throttles" not JSON array: false'),
        ("queue.put", "[}", None),
        ("job.requeue", "false", 'Put(): Arg "throttles" not JSON array: false'),
        ("job.requeue", "[}", None),
    ],
)
async def test_throttle_list_malformed(
    lua: Lua, command: str, value: str, text: str | None
) -> None:
    await rput(lua, 0, "jid", "throttles", '["tid"]')
    await refused(
        lua, text, command, 1, "worker", "other", "jid", "klass", "{}", 0, "throttles", value
    )


# ---------------------------------------------------------------------------------------------
# acquiring and parking (REQLESS 6.4, 6.5, 6.7)


async def test_acquire_every_throttle(lua: Lua, redis: aioredis.Redis) -> None:
    await rput(lua, 0, "jid", "throttles", '["tid", "wid"]')
    assert await rpop(lua, 1) == ["jid"]
    for tid in ("tid", "wid", "ql:q:queue"):
        assert await redis.zrange(f"ql:th:{tid}-locks", 0, -1, withscores=True) == [("jid", 1)]


async def test_throttle_limits_pops(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "tid", 1)
    for i in range(1, 5):
        await rput(lua, i, f"jid{i}", "throttles", '["tid"]')
    assert await rpop(lua, 5, 4) == ["jid1"]
    assert await locks(lua, "tid") == ["jid1"]
    assert await pending(lua, "tid") == ["jid2", "jid3", "jid4"]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1, withscores=True) == [
        ("jid2", 5),
        ("jid3", 5),
        ("jid4", 5),
    ]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await lua.json("job.get", 5, "jid2") == reqless_job(
        "jid2",
        state="throttled",
        throttles=["tid", "ql:q:queue"],
        history=[put_entry(2, reqless=True), throttled_entry(5)],
    )
    assert await lua("queue.pop", 6, "queue", "worker", 4) == "[]"


async def test_no_partial_acquisition(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await lua("throttle.set", 0, "wid", 1)
    await rput(lua, 0, "holder", "throttles", '["tid"]')
    await rput(lua, 1, "blocked", "throttles", '["wid", "tid", "other"]')
    assert await rpop(lua, 2, 2) == ["holder"]
    assert await state(lua, "blocked") == "throttled"
    assert await locks(lua, "wid") == []
    assert await locks(lua, "other") == []
    assert await locks(lua, "ql:q:queue") == ["holder"]
    assert await pending(lua, "tid") == ["blocked"]
    assert await pending(lua, "wid") == []


async def test_park_on_the_first_unavailable_throttle_only(lua: Lua) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await lua("throttle.set", 0, "wid", 1)
    await rput(lua, 0, "holder", "throttles", '["tid", "wid"]')
    assert await rpop(lua, 0) == ["holder"]
    await rput(lua, 1, "jid", "throttles", '["tid", "wid"]')
    assert await pending(lua, "tid") == ["jid"]
    assert await pending(lua, "wid") == []


async def test_put_parks_a_ready_job_only(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "holder")
    assert await rpop(lua, 0) == ["holder"]
    await rput(lua, 1, "ready")
    await rput(lua, 1, "later", delay=10)
    await rput(lua, 1, "dependent", "depends", '["holder"]')
    assert await lua.json("queue.jobsByState", 1, "throttled", "queue") == ["ready"]
    assert await state(lua, "later") == "scheduled"
    assert await state(lua, "dependent") == "depends"
    assert (await lua.json("job.get", 1, "ready"))["history"] == [
        put_entry(1, reqless=True),
        throttled_entry(1),
    ]
    assert await redis.zscore("ql:th:ql:q:queue-pending", "ready") == 1


async def test_parked_job_is_only_recorded_once(lua: Lua) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await lua("throttle.set", 0, "wid", 1)
    await rput(lua, 0, "a", "throttles", '["tid"]')
    await rput(lua, 0, "b", "throttles", '["wid"]')
    assert sorted(await rpop(lua, 0, 2)) == ["a", "b"]
    await rput(lua, 1, "c", "throttles", '["tid", "wid"]')  # parked on tid
    await complete(lua, 2, "a")  # c goes back to the work set, still `throttled`
    assert await lua.json("queue.jobsByState", 2, "throttled", "queue") == []
    peeked = await lua.json("queue.peek", 2, "queue", 0, 10)
    assert [(job["jid"], job["state"]) for job in peeked] == [("c", "throttled")]
    assert await rpop(lua, 3) == []  # parked again, on wid this time
    assert await pending(lua, "wid") == ["c"]
    history = (await lua.json("job.get", 3, "c"))["history"]
    assert history == [put_entry(1, reqless=True), throttled_entry(1)]


async def test_released_job_enters_the_work_set_at_release_time(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "a", "throttles", '["tid"]')
    await rput(lua, 1, "b", "throttles", '["tid"]', "priority", 2)
    assert await rpop(lua, 2, 2) == ["b"]
    await complete(lua, 6, "b")
    assert await redis.zscore("ql:q:queue-work", "a") == pytest.approx(0 - 6 / 1e10)
    assert await redis.zcard("ql:q:queue-throttled") == 0
    assert await state(lua, "a") == "throttled"


# ---------------------------------------------------------------------------------------------
# max-pop-retry (REQLESS 6.7)


async def two_throttles(lua: Lua) -> None:
    """`tid1` (max 1) with jid1, jid2 and `tid2` (max 1) with jid3, jid4, put in that order."""
    await lua("throttle.set", 0, "tid1", 1)
    await lua("throttle.set", 0, "tid2", 1)
    await rput(lua, 0, "jid1", "throttles", '["tid1"]')
    await rput(lua, 1, "jid2", "throttles", '["tid1"]')
    await rput(lua, 2, "jid3", "throttles", '["tid2"]')
    await rput(lua, 3, "jid4", "throttles", '["tid2"]')


async def peeked(lua: Lua, now: float) -> list[str]:
    return [job["jid"] for job in await lua.json("queue.peek", now, "queue", 0, 10)]


async def test_max_pop_retry_default(lua: Lua) -> None:
    await two_throttles(lua)
    assert await rpop(lua, 5, 2) == ["jid1"]
    assert await pending(lua, "tid1") == ["jid2"]
    assert await peeked(lua, 5) == ["jid3", "jid4"]


async def test_max_pop_retry_global(lua: Lua) -> None:
    await lua("config.set", 0, "max-pop-retry", 99)
    await two_throttles(lua)
    assert await rpop(lua, 5, 2) == ["jid1", "jid3"]
    assert await peeked(lua, 5) == ["jid4"]


async def test_max_pop_retry_per_queue(lua: Lua) -> None:
    await lua("config.set", 0, "max-pop-retry", 1)
    await lua("config.set", 0, "queue-max-pop-retry", 2)
    await two_throttles(lua)
    assert await rpop(lua, 5, 2) == ["jid1", "jid3"]
    await lua("config.set", 0, "other-max-pop-retry", 5)  # another queue's option is not read
    await lua("config.set", 0, "queue-max-pop-retry", 1)
    await rput(lua, 6, "jid5")
    assert await rpop(lua, 8, 1) == []  # jid4 parked, one pass only: jid5 waits
    assert await pending(lua, "tid2") == ["jid4"]
    assert await peeked(lua, 8) == ["jid5"]


async def test_max_pop_retry_takes_only_what_is_missing(lua: Lua) -> None:
    await lua("config.set", 0, "max-pop-retry", 2)
    await lua("throttle.set", 0, "tid1", 1)
    await lua("throttle.set", 0, "tid2", 1)
    await rput(lua, 0, "jid1", "throttles", '["tid1"]')
    await rput(lua, 1, "jid2", "throttles", '["tid1"]')
    await rput(lua, 2, "jid3", "throttles", '["tid1"]')
    await rput(lua, 3, "jid4", "throttles", '["tid2"]')
    assert await rpop(lua, 5, 2) == ["jid1"]
    assert await pending(lua, "tid1") == ["jid2", "jid3"]
    assert await peeked(lua, 5) == ["jid4"]


# ---------------------------------------------------------------------------------------------
# the queue throttle (REQLESS 6.7)


async def test_queue_throttle_limits_concurrency(lua: Lua) -> None:
    await lua("throttle.set", 0, "ql:q:queue", 5)
    for i in range(10):
        await rput(lua, i, f"jid-{i}")
    assert await rpop(lua, 10, 10) == [f"jid-{i}" for i in range(5)]
    assert await lua.json("queue.pop", 11, "queue", "worker", 10) == []
    for i in range(5):
        await complete(lua, 12 + i, f"jid-{i}")
        assert await rpop(lua, 12 + i, 10) == [f"jid-{5 + i}"]
    assert await rpop(lua, 20, 10) == []


async def test_lowering_the_queue_throttle(lua: Lua) -> None:
    for i in range(10):
        await rput(lua, i, f"jid-{i}")
    assert len(await rpop(lua, 10, 10)) == 10
    for i in range(10, 20):
        await rput(lua, i, f"jid-{i}")
    await lua("queue.throttle.set", 20, "queue", 5)
    for i in range(5):
        await complete(lua, 21, f"jid-{i}")
        assert await rpop(lua, 21, 10) == []
    await complete(lua, 22, "jid-5")
    assert await rpop(lua, 22, 10) == ["jid-10"]


async def test_full_queue_throttle_still_reclaims_stalled_jobs(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "jid")
    assert await rpop(lua, 0) == ["jid"]
    popped = await lua.json("queue.pop", 61, "queue", "another", 10)
    assert [(job["jid"], job["remaining"], job["worker"]) for job in popped] == [
        ("jid", 4, "another")
    ]
    assert await locks(lua, "ql:q:queue") == ["jid"]


async def test_full_queue_throttle_skips_spawning_and_promotion(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "holder")
    assert await rpop(lua, 0) == ["holder"]
    await lua("queue.recurAtInterval", 0, "queue", "rec", "klass", "{}", 60, 1)
    await rput(lua, 0, "later", delay=1)
    assert await rpop(lua, 5, 10) == []
    assert (await lua.json("recurringJob.get", 5, "rec"))["count"] == 0
    assert await redis.zscore("ql:q:queue-scheduled", "later") == 1
    await complete(lua, 6, "holder")
    assert await rpop(lua, 7, 1) != []
    assert (await lua.json("recurringJob.get", 7, "rec"))["count"] == 1


async def test_failing_frees_a_slot(lua: Lua) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "a")
    await rput(lua, 1, "b")
    assert await rpop(lua, 2, 2) == ["a"]
    assert await lua("job.fail", 3, "a", "worker", "group", "message") == "a"
    assert await locks(lua, "ql:q:queue") == []
    assert await rpop(lua, 4, 2) == ["b"]
    assert await locks(lua, "ql:q:queue") == ["b"]


async def test_classic_pop_acquires_throttles(lua: Lua) -> None:
    # decision 3: classic puts carry their queue throttle and classic pops acquire it
    await lua("queue.throttle.set", 0, "queue", 1)
    await put(lua, 0, "a")
    await put(lua, 1, "b")
    assert await pop(lua, 2, 2) == ["a"]
    assert await locks(lua, "ql:q:queue") == ["a"]
    assert await lua("complete", 3, "a", "worker", "queue", "{}") == "complete"
    assert await locks(lua, "ql:q:queue") == []
    assert await pop(lua, 4, 2) == ["b"]
    # classic counts objects do not grow a `throttled` key
    assert set(await lua.json("queues", 4, "queue")) == {
        "name", "waiting", "stalled", "running", "scheduled", "depends", "recurring", "paused",
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------
# releases (REQLESS 6.6, 6.8)


async def held_and_pending(lua: Lua) -> None:
    """`tid` (max 1): `jid1` running (holding `tid` and `ql:q:queue`), `jid2` parked."""
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "jid1", "throttles", '["tid"]')
    await rput(lua, 1, "jid2", "throttles", '["tid"]')
    assert await rpop(lua, 2, 2) == ["jid1"]
    assert await pending(lua, "tid") == ["jid2"]


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("job.complete", ("jid1", "worker", "queue", "{}")),
        ("job.completeAndRequeue", ("jid1", "worker", "queue", "{}", "other")),
        ("job.fail", ("jid1", "worker", "group", "message")),
        ("job.retry", ("jid1", "queue", "worker", "10")),
        ("job.cancel", ("jid1",)),
    ],
)
async def test_release_moves_the_first_pending_job(
    lua: Lua, redis: aioredis.Redis, command: str, args: tuple[str, ...]
) -> None:
    await held_and_pending(lua)
    await lua(command, 5, *args)
    assert await locks(lua, "tid") == []
    assert await locks(lua, "ql:q:queue") == []
    assert await pending(lua, "tid") == []
    assert await redis.zcard("ql:q:queue-throttled") == 0
    assert await redis.zscore("ql:q:queue-work", "jid2") == pytest.approx(-5 / 1e10)
    assert await state(lua, "jid2") == "throttled"
    assert await rpop(lua, 6) == ["jid2"]
    assert await locks(lua, "tid") == ["jid2"]
    assert await state(lua, "jid2") == "running"


async def test_retry_and_pending_tie(lua: Lua) -> None:
    await held_and_pending(lua)
    assert await lua("job.retry", 5, "jid1", "queue", "worker") == 4
    # both re-enter the work set at 5: the tie pops jid2 first (reverse jid order)
    assert await rpop(lua, 6, 2) == ["jid2"]
    assert await locks(lua, "tid") == ["jid2"]
    assert await pending(lua, "tid") == ["jid1"]
    assert await state(lua, "jid1") == "throttled"


async def test_timeout_releases_and_reacquires(lua: Lua) -> None:
    await held_and_pending(lua)
    assert await lua("job.timeout", 5, "jid1") is None
    job = await lua.json("job.get", 5, "jid1")
    assert (job["state"], job["worker"]) == ("stalled", "")
    assert await locks(lua, "tid") == []
    assert await locks(lua, "ql:q:queue") == []
    assert await pending(lua, "tid") == []
    assert await state(lua, "jid2") == "throttled"  # moved to the work set
    assert await rpop(lua, 6) == ["jid1"]  # +inf score first, acquires again
    assert await locks(lua, "tid") == ["jid1"]
    assert await rpop(lua, 7) == []  # jid2 is parked again
    assert await pending(lua, "tid") == ["jid2"]


async def test_cancel_a_pending_job(lua: Lua, redis: aioredis.Redis) -> None:
    await held_and_pending(lua)
    await rput(lua, 3, "jid3", "throttles", '["tid"]')
    assert await lua("job.cancel", 4, "jid2") == ["jid2"]
    assert await pending(lua, "tid") == ["jid3"]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["jid3"]
    assert await redis.zcard("ql:q:queue-work") == 0  # no free slot: nothing moved
    assert await locks(lua, "tid") == ["jid1"]


async def test_release_takes_the_longest_waiting_first(lua: Lua) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "holder", "throttles", '["tid"]')
    assert await rpop(lua, 0) == ["holder"]
    for now, jid in [(1, "c"), (2, "b"), (2, "a")]:
        await rput(lua, now, jid, "throttles", '["tid"]')
    assert await pending(lua, "tid") == ["c", "a", "b"]
    await complete(lua, 3, "holder")
    assert await peeked(lua, 3) == ["c"]
    assert await pending(lua, "tid") == ["a", "b"]


async def test_throttle_release_command(lua: Lua, redis: aioredis.Redis) -> None:
    await held_and_pending(lua)
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("throttle.release", 5, "tid", "jid1") is None
    assert captured.messages == []
    assert await locks(lua, "tid") == []
    assert await locks(lua, "ql:q:queue") == ["jid1"]  # only the named throttle
    assert await state(lua, "jid1") == "running"  # job hashes are not touched
    assert await redis.zscore("ql:q:queue-work", "jid2") == pytest.approx(-5 / 1e10)
    assert await pending(lua, "tid") == []


async def test_throttle_release_pending_before_holder(lua: Lua, redis: aioredis.Redis) -> None:
    await held_and_pending(lua)
    assert await lua("throttle.release", 5, "tid", "jid2", "jid1") is None
    # jid2 left the pending set first, so releasing jid1 moved nothing
    assert await locks(lua, "tid") == []
    assert await pending(lua, "tid") == []
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["jid2"]
    assert await state(lua, "jid2") == "throttled"
    await lua("job.cancel", 6, "jid2")
    assert await redis.zcard("ql:q:queue-throttled") == 0


async def test_raising_the_maximum(lua: Lua, redis: aioredis.Redis) -> None:
    await held_and_pending(lua)
    await rput(lua, 3, "jid3", "throttles", '["tid"]')
    await lua("throttle.set", 4, "tid", 3)
    assert await pending(lua, "tid") == ["jid2", "jid3"]  # nothing moves by itself
    assert await redis.zcard("ql:q:queue-work") == 0
    await complete(lua, 5, "jid1")
    assert await pending(lua, "tid") == []
    assert sorted(await rpop(lua, 6, 10)) == ["jid2", "jid3"]


async def test_lowering_the_maximum(lua: Lua) -> None:
    await lua("throttle.set", 0, "tid", 2)
    for i in range(1, 4):
        await rput(lua, i, f"jid{i}", "throttles", '["tid"]')
    assert await rpop(lua, 4, 3) == ["jid1", "jid2"]
    await lua("throttle.set", 5, "tid", 1)
    await complete(lua, 6, "jid1")
    assert await pending(lua, "tid") == ["jid3"]  # still one lock for one slot
    await complete(lua, 7, "jid2")
    assert await pending(lua, "tid") == []
    assert await rpop(lua, 8) == ["jid3"]


async def test_reput_does_not_release(lua: Lua, redis: aioredis.Redis) -> None:
    await held_and_pending(lua)
    # quirk: the holder re-put with the same throttle waits for itself
    await rput(lua, 5, "jid1", "throttles", '["tid"]')
    assert await locks(lua, "tid") == ["jid1"]
    assert await pending(lua, "tid") == ["jid2", "jid1"]
    assert await state(lua, "jid1") == "throttled"
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["jid2", "jid1"]


async def test_cancelling_a_job_that_waits_for_itself_leaves_nothing_behind(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 1, "e")
    assert await rpop(lua, 2) == ["e"]
    await rput(lua, 3, "e")  # re-put while holding the queue's only slot: parked on itself
    assert await pending(lua, "ql:q:queue") == ["e"]
    await lua("job.cancel", 4, "e")
    # the release moved it to the work set; the cancel takes it out again
    assert await redis.zrange("ql:q:queue-work", 0, -1) == []
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == []
    assert await pending(lua, "ql:q:queue") == []
    assert await locks(lua, "ql:q:queue") == []
    assert await rpop(lua, 5) == []


async def test_unfail_goes_straight_to_work(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("queue.throttle.set", 0, "queue", 1)
    await rput(lua, 0, "a")
    await rput(lua, 1, "b")
    assert await rpop(lua, 2) == ["a"]
    await lua("job.fail", 3, "a", "worker", "group", "message")
    assert await rpop(lua, 4) == ["b"]
    assert await lua("queue.unfail", 5, "queue", "group") == 1
    assert await state(lua, "a") == "waiting"  # no throttle check
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["a"]
    # the queue throttle is full: the pop returns before looking at the work set
    assert await rpop(lua, 6) == []
    assert await state(lua, "a") == "waiting"


# ---------------------------------------------------------------------------------------------
# dependencies (REQLESS 6.8)


async def test_dependencies_and_throttles(lua: Lua) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "a", "throttles", '["tid"]')
    assert await rpop(lua, 0) == ["a"]
    await rput(lua, 1, "b", "throttles", '["tid"]', "depends", '["a"]')
    await rput(lua, 1, "c", "throttles", '["tid"]', "depends", '["b"]')
    assert await state(lua, "b") == "depends"  # not throttled, although tid is full
    assert await pending(lua, "tid") == []
    await complete(lua, 2, "a")
    assert await state(lua, "b") == "waiting"
    assert await rpop(lua, 3) == ["b"]
    assert await locks(lua, "tid") == ["b"]
    await complete(lua, 4, "b")
    assert await rpop(lua, 5) == ["c"]
    assert await locks(lua, "tid") == ["c"]


# ---------------------------------------------------------------------------------------------
# the observed walk-through (REQLESS 6.10)


async def test_walk_through(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await lua("queue.put", 1, "w", "q", "jid1", "k", "{}", 0, "throttles", '["tid"]')
    await lua("queue.put", 2, "w", "q", "jid2", "k", "{}", 0, "throttles", '["tid"]')
    popped = await lua.json("queue.pop", 3, "q", "worker", 5)
    assert [job["jid"] for job in popped] == ["jid1"]
    assert await redis.zrange("ql:th:tid-locks", 0, -1, withscores=True) == [("jid1", 1)]
    assert await redis.zrange("ql:th:tid-pending", 0, -1, withscores=True) == [("jid2", 3)]
    assert await redis.zrange("ql:q:q-throttled", 0, -1, withscores=True) == [("jid2", 3)]
    jid2 = await lua.json("job.get", 3, "jid2")
    assert jid2["state"] == "throttled"
    assert jid2["history"] == [put_entry(2, "q", reqless=True), throttled_entry(3, "q")]

    counts = await lua.json("queue.counts", 4, "q")
    assert (counts["running"], counts["throttled"], counts["waiting"]) == (1, 1, 0)

    await lua("queue.put", 5, "w", "q", "jid3", "k", "{}", 0, "throttles", '["tid"]')
    jid3 = await lua.json("job.get", 5, "jid3")
    assert jid3["state"] == "throttled"
    assert jid3["history"] == [put_entry(5, "q", reqless=True), throttled_entry(5, "q")]

    assert await lua("job.complete", 6, "jid1", "worker", "q", "{}") == "complete"
    assert await redis.zrange("ql:q:q-work", 0, -1, withscores=True) == [
        ("jid2", pytest.approx(0 - 6 / 1e10))
    ]
    assert await state(lua, "jid2") == "throttled"
    assert await redis.zrange("ql:th:tid-pending", 0, -1, withscores=True) == [("jid3", 5)]
    assert await redis.zrange("ql:q:q-throttled", 0, -1, withscores=True) == [("jid3", 5)]

    peeked_jobs = await lua.json("queue.peek", 8, "q", 0, 10)
    assert [(job["jid"], job["state"]) for job in peeked_jobs] == [("jid2", "throttled")]
    counts = await lua.json("queue.counts", 8, "q")
    assert (counts["waiting"], counts["throttled"]) == (1, 1)

    expected = reqless_job(
        "jid2",
        queue="q",
        state="running",
        worker="worker",
        expires=69,
        throttles=["tid", "ql:q:q"],
        history=[put_entry(2, "q", reqless=True), throttled_entry(3, "q"), popped_entry(9)],
    )
    expected["klass"] = "k"
    assert await lua.json("queue.pop", 9, "q", "worker", 10) == [expected]
    assert await redis.zrange("ql:th:tid-locks", 0, -1) == ["jid2"]


async def test_release_of_an_unlimited_throttle_moves_ten(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "holder", "throttles", '["tid"]')
    assert await rpop(lua, 0) == ["holder"]
    for i in range(12):
        await rput(lua, 1, f"jid-{i:02}", "throttles", '["tid"]')
    await lua("throttle.delete", 2, "tid")
    await lua("throttle.release", 3, "tid", "holder")
    assert await redis.zcard("ql:q:queue-work") == 10
    assert await pending(lua, "tid") == ["jid-10", "jid-11"]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["jid-10", "jid-11"]


async def test_release_of_a_vanished_pending_job(lua: Lua, redis: aioredis.Redis) -> None:
    # decision 6: a pending jid without a job hash never causes a Lua runtime error
    await lua("throttle.set", 0, "tid", 1)
    await rput(lua, 0, "holder", "throttles", '["tid"]')
    assert await rpop(lua, 0) == ["holder"]
    await rput(lua, 1, "gone", "throttles", '["tid"]')
    await redis.delete("ql:j:gone")
    message = ""
    try:
        await lua("throttle.release", 2, "tid", "holder")
    except ResponseError as error:
        message = str(error)
    assert "attempt to" not in message


async def test_max_concurrency_binds_both_vocabularies(lua: Lua) -> None:
    # qless's `queue.max_concurrency = n`: reqless-core stopped reading it (REQLESS 4.4);
    # aqless reads it in both, so a cap a qless client set binds every worker of a fleet
    await lua("config.set", 0, "queue-max-concurrency", 2)
    for i in range(4):
        await rput(lua, i, f"jid-{i}")
    assert await pop(lua, 5, 3) == ["jid-0", "jid-1"]  # classic pop honours the option
    assert await rpop(lua, 6, 3) == []  # and so does reqless's: both slots are held
    await lua("job.complete", 7, "jid-0", "worker", "queue", "{}")
    assert await rpop(lua, 8, 3) == ["jid-2"]
