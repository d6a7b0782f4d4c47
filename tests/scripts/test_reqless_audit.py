"""Fidelity audit of the reqless vocabulary against REQLESS.md (and the project decisions).

The first part pins behaviours where an audit found the Lua departing from the documents
(all fixed since). The second part pins documented behaviours (mostly
quirks of REQLESS 6.3, 6.6 and 8.18) that no other test file covered yet.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import EventCapture, Lua
from tests.scripts.expect import refused, snapshot

# ---------------------------------------------------------------------------------------------
# helpers


async def put(
    lua: Lua, now: float, jid: str, *options: Any, queue: str = "queue", delay: float = 0
) -> None:
    reply = await lua("queue.put", now, "worker", queue, jid, "klass", "{}", delay, *options)
    assert reply == jid


async def pop(
    lua: Lua, now: float, count: int = 1, *, queue: str = "queue", worker: str = "worker"
) -> list[str]:
    reply = await lua.json("queue.pop", now, queue, worker, count)
    assert isinstance(reply, list)
    return [job["jid"] for job in reply]


async def outcome(call: Awaitable[Any]) -> Any:
    """The reply of a call, or the ResponseError it raised."""
    try:
        return await call
    except ResponseError as error:
        return error


async def get(lua: Lua, jid: str) -> Any:
    return await lua.json("job.get", 0, jid)


async def locks(lua: Lua, tid: str) -> Any:
    return await lua.json("throttle.locks", 0, tid)


async def pending(lua: Lua, tid: str) -> Any:
    return await lua.json("throttle.pending", 0, tid)


async def running_job_in_the_work_set(lua: Lua, redis: aioredis.Redis) -> None:
    """Job `a` running in `queue` *and* a member of `ql:q:queue-work`.

    REQLESS 6.6 (quirk): a release moves a pending jid into the work set of its current
    queue whatever its state, and 6.8: a re-put by the reference does not clean pending sets
    (aqless's does, so the test writes what the reference leaves). So: `a` is parked on
    `tid` (held by `h`), re-put without `tid`, popped, and then `h` completes.
    """
    await lua("throttle.set", 0, "tid", 1)
    await put(lua, 0, "h", "throttles", '["tid"]')
    assert await pop(lua, 1) == ["h"]
    await put(lua, 2, "a", "throttles", '["tid"]')
    assert (await get(lua, "a"))["state"] == "throttled"
    assert await pending(lua, "tid") == ["a"]
    await put(lua, 3, "a")  # re-put: leaves the throttled set and (aqless) the pending set
    await redis.zadd("ql:th:tid-pending", {"a": 2})  # where the reference leaves it
    assert await pop(lua, 4) == ["a"]
    assert await lua("job.complete", 5, "h", "worker", "queue", "{}") == "complete"
    # the release of tid moved `a` (running) into the work set, state unchanged
    assert await redis.zscore("ql:q:queue-work", "a") is not None
    assert (await get(lua, "a"))["state"] == "running"
    assert await pending(lua, "tid") == []


# ---------------------------------------------------------------------------------------------
# discrepancies (these tests fail against the current Lua)


@pytest.mark.parametrize(
    ("command", "args", "reply"),
    [
        ("job.complete", ("a", "worker", "queue", "{}"), "complete"),
        ("job.completeAndRequeue", ("a", "worker", "queue", "{}", "other"), "waiting"),
        ("job.fail", ("a", "worker", "group", "message"), "a"),
    ],
)
async def test_finishing_a_job_removes_it_from_every_set_of_its_queue(
    lua: Lua, redis: aioredis.Redis, command: str, args: tuple[str, ...], reply: str
) -> None:
    # REQLESS 8.4: "The job is removed from its queue's work, locks, throttled, depends and
    # scheduled sets"; 8.5: job.fail "Removes the job from all five queue sets".
    await running_job_in_the_work_set(lua, redis)
    assert await lua(command, 6, *args) == reply
    for kind in ("work", "locks", "throttled", "depends", "scheduled"):
        assert await redis.zscore(f"ql:q:queue-{kind}", "a") is None, kind
    # so the finished job is not handed out a second time
    assert await pop(lua, 7, 5, worker="other-worker") == []
    assert (await get(lua, "a"))["state"] != "running"


async def test_negative_throttle_maximum_is_not_unlimited(lua: Lua, redis: aioredis.Redis) -> None:
    # REQLESS 6.2: available(tid) <=> maximum == 0 or ZCARD(locks) < maximum; only 0 means
    # unlimited. A negative maximum, stored verbatim by the reference (6.10; aqless's
    # throttle.set refuses one), makes the throttle never available: a ready job put with it
    # is parked at once (8.1 effect 5).
    refusal = 'Throttle(): Arg "maximum" must not be negative: -1'
    for command, tid in (("throttle.set", "tid"), ("queue.throttle.set", "queue")):
        await refused(lua, refusal, command, 0, tid, -1)
    await redis.hset("ql:th:tid", mapping={"id": "tid", "maximum": -1})  # another client's
    assert await lua.json("throttle.get", 0, "tid") == {"id": "tid", "maximum": -1, "ttl": -1}
    await put(lua, 1, "jid", "throttles", '["tid"]')
    job = await get(lua, "jid")
    assert job["state"] == "throttled"
    assert await pending(lua, "tid") == ["jid"]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["jid"]
    assert await pop(lua, 2) == []
    assert await locks(lua, "tid") == []


async def test_fractional_throttle_maximum_does_not_break_a_completion(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # Decisions 1 and 6: no command may fail half way. With maximum 1.5 two jobs hold the
    # throttle (1 < 1.5); when the last holder completes, free slots = 1.5 and the release
    # asks Redis for ZRANGE pending 0 0.5, which the server refuses after `complete` has
    # already appended `done` and dropped the locks.
    await lua("throttle.set", 0, "tid", 1.5)
    for jid in ("j1", "j2", "j3"):
        await put(lua, 0, jid, "throttles", '["tid"]')
    assert await pop(lua, 1, 5) == ["j3", "j2"]  # equal scores: reverse jid order
    assert await pending(lua, "tid") == ["j1"]
    assert await lua("job.complete", 2, "j2", "worker", "queue", "{}") == "complete"
    before = await snapshot(redis)
    refusal = await outcome(lua("job.complete", 3, "j3", "worker", "queue", "{}"))
    if isinstance(refusal, ResponseError):  # a clear refusal is acceptable, a half-done one not
        assert "not an integer" not in str(refusal)
        assert await snapshot(redis) == before
    else:
        assert refusal == "complete"
        assert (await get(lua, "j3"))["state"] == "complete"
        assert await locks(lua, "tid") == []


async def test_throttle_set_with_a_fractional_expiration_leaves_no_partial_state(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # Decision 1. REQLESS 6.10: HSET the record, then EXPIRE it when expiration > 0. EXPIRE
    # accepts only integers, so 1.5 makes the server fail after the record was written.
    await lua("throttle.set", 0, "tid", 5)
    before = await snapshot(redis)
    refusal = await outcome(lua("throttle.set", 0, "tid", 1, 1.5))
    if isinstance(refusal, ResponseError):
        assert "not an integer" not in str(refusal)
        assert await snapshot(redis) == before
    else:
        assert await lua.json("throttle.get", 0, "tid") == {"id": "tid", "maximum": 1, "ttl": 1}


async def test_timeout_of_a_repeated_jid(lua: Lua, redis: aioredis.Redis) -> None:
    # REQLESS 8.8: "For each jid in order: error for a job that ... is not running". The
    # second occurrence finds the job `stalled`, so the call fails with
    # `Timeout(): Job jid not running`; by decision 1 the first occurrence must not be
    # applied either. The Lua validates every jid before the first one is timed out, so it
    # times the job out twice: two `timed-out` entries and two lock_lost pairs, no error.
    await put(lua, 0, "jid")
    assert await pop(lua, 1) == ["jid"]
    before = await snapshot(redis)
    async with EventCapture(redis, "ql:*") as captured:
        with pytest.raises(ResponseError, match="Timeout\\(\\): Job jid not running"):
            await lua("job.timeout", 2, "jid", "jid")
    assert captured.messages == []
    assert await snapshot(redis) == before


async def test_priority_patterns_after_a_default_entry_are_not_examined(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # REQLESS 7.2 step 3: the scan stops at the first default entry, so later elements are
    # stored as given without being decoded. (The Lua validates every element, which
    # decision 1 does not require: it is about partial state, not about what is accepted.)
    default = '{"fairly": true, "pattern": ["default"]}'
    later = '{"fairly": false}'  # no `pattern`: never looked at by the reference
    assert await lua("queuePriorityPatterns.setAll", 0, default, later) is None
    assert await lua.json("queuePriorityPatterns.getAll", 0) == [default, later]


# ---------------------------------------------------------------------------------------------
# documented behaviours not covered elsewhere (these pass)


async def test_put_removes_old_queue_throttles_scanning_forwards(lua: Lua) -> None:
    # REQLESS 6.3 step 2 (quirk): removal while scanning forwards skips the entry right
    # after a removed one, so two adjacent `ql:q:<old>` entries leave one behind.
    await put(lua, 0, "jid")
    await put(lua, 1, "jid", "throttles", '["ql:q:queue", "ql:q:queue", "x"]', queue="other")
    assert (await get(lua, "jid"))["throttles"] == ["ql:q:queue", "x", "ql:q:other"]
    # separated entries are all removed
    await put(lua, 2, "jid", "throttles", '["ql:q:other", "x", "ql:q:other"]', queue="third")
    assert (await get(lua, "jid"))["throttles"] == ["x", "ql:q:third"]


async def test_new_job_naming_its_own_queue_throttle_gets_a_duplicate(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # REQLESS 6.3: a brand-new job with an option that already contains ql:q:<queue>
    # gets a duplicate entry; harmless, because a lock is a set member.
    await put(lua, 0, "jid", "throttles", '["ql:q:queue"]')
    assert (await get(lua, "jid"))["throttles"] == ["ql:q:queue", "ql:q:queue"]
    await lua("queue.throttle.set", 0, "queue", 1)
    assert await pop(lua, 1) == ["jid"]
    assert await redis.zrange("ql:th:ql:q:queue-locks", 0, -1, withscores=True) == [("jid", 1)]
    assert await lua("job.complete", 2, "jid", "worker", "queue", "{}") == "complete"
    assert await locks(lua, "ql:q:queue") == []


async def test_a_re_put_takes_a_parked_job_out_of_its_throttle_line(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # REQLESS 6.6 (quirk) and 6.8: the reference's re-put keeps the job in the pending set it
    # was in, and a later release inserts it into the work set of its *current* queue, state
    # untouched: here `a` would be in other's work *and* scheduled sets. aqless keeps a job
    # in one place: a re-put of a parked job takes it out of its line (its locks stay).
    await lua("throttle.set", 0, "tid", 1)
    await put(lua, 0, "h", "throttles", '["tid"]')
    assert await pop(lua, 1) == ["h"]
    await put(lua, 2, "a", "throttles", '["tid"]')
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["a"]
    await put(lua, 3, "a", "throttles", '["tid"]', queue="other", delay=100)
    assert (await get(lua, "a"))["state"] == "scheduled"  # delay: no throttle check
    assert await redis.zcard("ql:q:queue-throttled") == 0
    assert await pending(lua, "tid") == []
    assert await lua("job.complete", 4, "h", "worker", "queue", "{}") == "complete"
    assert await redis.zscore("ql:q:other-work", "a") is None
    assert await redis.zscore("ql:q:other-scheduled", "a") == 103
    assert await redis.zcard("ql:q:queue-work") == 0
    assert (await get(lua, "a"))["state"] == "scheduled"


async def test_two_releases_can_move_more_jobs_than_free_slots(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # REQLESS 6.6: moved jobs reserve nothing, so two releases in a row can move more jobs
    # than there are free slots; the next pop parks the surplus again (no new history
    # entry: its state is still `throttled`, 6.5 step 3).
    await lua("throttle.set", 0, "tid", 1)
    for now, jid in enumerate(("h", "j1", "j2")):
        await put(lua, now, jid, "throttles", '["tid"]')
    assert await pop(lua, 3, 3) == ["h"]
    assert await pending(lua, "tid") == ["j1", "j2"]
    await lua("throttle.release", 4, "tid", "h")
    await lua("throttle.release", 5, "tid", "h")  # h holds nothing now: still frees a slot
    assert await pending(lua, "tid") == []
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["j2", "j1"]
    assert [(await get(lua, j))["state"] for j in ("j1", "j2")] == ["throttled", "throttled"]
    assert await pop(lua, 6, 5) == ["j1"]
    assert await locks(lua, "tid") == ["j1"]
    assert await redis.zrange("ql:th:tid-pending", 0, -1, withscores=True) == [("j2", 6)]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1, withscores=True) == [("j2", 6)]
    history = (await get(lua, "j2"))["history"]
    assert [entry["what"] for entry in history] == ["put", "throttled"]
    assert history[1]["when"] == 3


async def test_job_with_an_empty_throttle_list_acquires_nothing(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # REQLESS 6.4: "A job with an empty list ... always succeeds"; 5.1: an empty list prints
    # as {} (reachable only through a recurring template updated to []).
    await lua("queue.recurAtInterval", 0, "queue", "rec", "klass", "{}", 60, 0)
    await lua("recurringJob.update", 0, "rec", "throttles", "[]")
    popped = await lua.json("queue.pop", 0, "queue", "worker", 1)
    assert [(job["jid"], job["throttles"]) for job in popped] == [("rec-1", {})]
    assert await redis.keys("ql:th:*") == []
    assert await lua("job.complete", 1, "rec-1", "worker", "queue", "{}") == "complete"
    assert await redis.keys("ql:th:*") == []


async def test_recurring_update_queue_removes_old_queue_throttles_scanning_forwards(
    lua: Lua,
) -> None:
    # REQLESS 8.18: recurringJob.update queue removes ql:q:<old> entries "(same
    # forward-scan quirk as 6.3)" and appends ql:q:<new>.
    await lua("queue.recurAtInterval", 0, "queue", "rec", "klass", "{}", 60, 0)
    await lua("recurringJob.update", 0, "rec", "throttles", '["ql:q:queue", "ql:q:queue", "x"]')
    await lua("recurringJob.update", 0, "rec", "queue", "other")
    template = await lua.json("recurringJob.get", 0, "rec")
    assert template["throttles"] == ["ql:q:queue", "x", "ql:q:other"]
    # spawned children copy the template's list verbatim
    popped = await lua.json("queue.pop", 0, "other", "worker", 1)
    assert popped[0]["throttles"] == ["ql:q:queue", "x", "ql:q:other"]


async def test_job_track_replies_are_bare_counts(lua: Lua) -> None:
    # REQLESS 3 (notes): job.track / job.untrack reply the JSON encoding of the ZADD/ZREM
    # count: the bulk strings "1" and "0".
    await put(lua, 0, "jid")
    assert await lua("job.track", 0, "jid") == "1"
    assert await lua("job.track", 0, "jid") == "0"
    assert await lua("job.untrack", 0, "jid") == "1"
    assert await lua("job.untrack", 0, "jid") == "0"


async def test_throttled_job_cannot_be_finished(lua: Lua) -> None:
    # REQLESS 4.2: only running jobs can be completed, failed, retried, heartbeated or
    # timed out: e.g. `Complete(): Job is not currently running: throttled`.
    await lua("queue.throttle.set", 0, "queue", 1)
    await put(lua, 0, "a")
    await put(lua, 0, "b")
    assert await pop(lua, 1, 2) == ["b"]
    assert (await get(lua, "a"))["state"] == "throttled"
    calls = [
        (
            "job.complete",
            ("a", "worker", "queue", "{}"),
            "Complete(): Job is not currently running: throttled",
        ),
        (
            "job.fail",
            ("a", "worker", "group", "message"),
            "Fail(): Job not currently running: throttled",
        ),
        ("job.retry", ("a", "queue", "worker"), "Retry(): Job is not currently running: throttled"),
        ("job.heartbeat", ("a", "worker"), "Heartbeat(): Job not currently running: throttled"),
        ("job.timeout", ("a",), "Timeout(): Job a not running"),
    ]
    for command, args, text in calls:
        with pytest.raises(ResponseError) as info:
            await lua(command, 2, *args)
        assert text in str(info.value), command


async def test_job_get_multi_shapes(lua: Lua) -> None:
    # REQLESS 8.14 and 11.2: `[]` when nothing exists, missing jids skipped.
    assert await lua("job.getMulti", 0) == "[]"
    assert await lua("job.getMulti", 0, "nope") == "[]"
    await put(lua, 0, "a")
    await put(lua, 0, "b")
    reply = await lua.json("job.getMulti", 0, "b", "nope", "a")
    assert [job["jid"] for job in reply] == ["b", "a"]
    assert all(len(job) == 18 for job in reply)
