"""Fidelity audit of the classic vocabulary against CORE.md (and the project decisions).

The first part pins behaviours where an audit found the Lua departing from CORE.md (all
fixed since); the second pins documented behaviours and quirks no other file covered.

Later commands on a job retried into another queue follow tests/scripts/test_integrity.py
(a project decision: the job is found where it really is), not CORE's letter.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import EventCapture, Lua
from tests.scripts.expect import snapshot

# ---------------------------------------------------------------------------------------------
# helpers


async def put(
    lua: Lua,
    now: float,
    jid: str = "jid",
    *options: Any,
    queue: str = "queue",
    delay: int = 0,
    worker: str = "worker",
) -> Any:
    return await lua("put", now, worker, queue, jid, "klass", "{}", delay, *options)


async def pop(
    lua: Lua, now: float, count: int = 1, *, queue: str = "queue", worker: str = "worker"
) -> Any:
    return await lua.json("pop", now, queue, worker, count)


async def get(lua: Lua, now: float, jid: str = "jid") -> Any:
    return await lua.json("get", now, jid)


async def retried_into_other(lua: Lua) -> None:
    """`jid` put into `queue`, popped at 1, retried at 2 with the queue argument `other`:
    CORE 6.7 puts it into `other`'s work set and leaves its `queue` field at `queue`."""
    await put(lua, 0)
    await pop(lua, 1)
    assert await lua("retry", 2, "jid", "other", "worker") == 4


# =============================================================================================
# Part 1: departures an audit found (fixed)


async def test_fail_with_json_false_data_is_accepted(lua: Lua) -> None:
    # CORE 6.6 validation 5: only data that is *not JSON* is an error; `false` is JSON.
    # (The reference decodes it and, `false` being falsy, leaves `data` as it was.)
    await put(lua, 0)
    await pop(lua, 1)
    assert await lua("fail", 2, "jid", "worker", "group", "message", "false") == "jid"
    assert (await get(lua, 2))["state"] == "failed"


async def test_heartbeat_with_json_false_data_is_accepted(lua: Lua) -> None:
    # CORE 6.8 validation 4: only data that is *not JSON* is an error; `false` is JSON.
    # (The reference decodes it and, `false` being falsy, leaves `data` as it was.)
    await put(lua, 0)
    await pop(lua, 1)
    assert await lua("heartbeat", 2, "jid", "worker", "false") == 62
    assert (await get(lua, 2))["expires"] == 62


async def test_timeout_of_a_repeated_jid_fails_and_changes_nothing(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # CORE 6.9: jids are handled in order; the second `jid` is no longer running
    # (`stalled`), so the call fails with `Timeout(): Job jid not running`. Decision 1: the
    # failing call leaves no partial state (and publishes nothing).
    await put(lua, 0)
    await pop(lua, 1)
    before = await snapshot(redis)
    async with EventCapture(redis, "ql:*") as captured:
        with pytest.raises(ResponseError, match=re.escape("Timeout(): Job jid not running")):
            await lua("timeout", 2, "jid", "jid")
    assert captured.messages == []
    assert await snapshot(redis) == before


async def test_classic_jobs_knows_no_throttled_state(lua: Lua) -> None:
    # CORE 6.20: the classic states are running, stalled, scheduled, depends, recurring
    # (and complete); anything else is `Jobs(): Unknown type "<state>"`.
    await put(lua, 0)
    with pytest.raises(ResponseError, match=re.escape('Jobs(): Unknown type "throttled"')):
        await lua("jobs", 0, "throttled", "queue")


# =============================================================================================
# Part 2: documented behaviours not covered elsewhere


@pytest.mark.parametrize(
    ("limit", "whens"),
    [(1, [0, 5]), (2, [0, 1, 2, 3, 4, 5]), (3, [0, 4, 5])],
)
async def test_history_limit_quirks_of_tiny_limits(lua: Lua, limit: int, whens: list[int]) -> None:
    # CORE 4.3: pop the first entry, LTRIM the rest from 2 - max, push the first back,
    # append. A limit of 2 never trims, a limit of 1 keeps two entries.
    await lua("config.set", 0, "max-job-history", limit)
    for t in range(6):
        await put(lua, t)
    assert [entry["when"] for entry in (await get(lua, 6))["history"]] == whens


async def test_history_limit_lowered_on_a_long_history(lua: Lua) -> None:
    # CORE 4.3: the next append trims to first + last (max - 1) entries
    for t in range(20):
        await put(lua, t)
    await lua("config.set", 20, "max-job-history", 5)
    await put(lua, 20)
    whens = [entry["when"] for entry in (await get(lua, 20))["history"]]
    assert whens == [0, 17, 18, 19, 20]


async def test_reput_of_a_failed_job_decrements_the_target_queue_on_the_failure_day(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # CORE 6.1 effect 10 (quirk): HINCRBY ql:s:stats:<bin(failure.when)>:<target queue>
    # failed -1, although the job failed in `queue` (CORE 6.26: 1.5 days later, the bin of
    # the failure's day is the one decremented).
    await put(lua, 0)
    await pop(lua, 0)
    await lua("fail", 100, "jid", "worker", "group", "message")
    await put(lua, 129600, queue="other")
    assert await redis.hgetall("ql:s:stats:0:queue") == {"failures": "1", "failed": "1"}
    assert await redis.hgetall("ql:s:stats:0:other") == {"failed": "-1"}
    assert await redis.keys("ql:s:stats:86400:*") == []
    assert not await redis.exists("ql:f:group")
    assert await redis.smembers("ql:failures") == set()


async def test_lock_loss_of_a_job_retried_into_another_queue_names_both_queues(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # CORE 5.6 invalidation: the group uses the job's `queue` field, the message and the
    # statistics the queue being popped.
    await lua("config.set", 0, "grace-period", 0)
    await put(lua, 0, "jid", "retries", 1)
    await pop(lua, 1)
    assert await lua("retry", 2, "jid", "other", "worker") == 0
    assert [job["queue"] for job in await pop(lua, 3, queue="other")] == ["queue"]
    async with EventCapture(redis, "ql:log") as captured:
        assert await lua("pop", 100, "other", "another", 1) == "{}"
    message = 'Job exhausted retries in queue "other"'
    job = await get(lua, 100)
    assert (job["state"], job["queue"], job["remaining"]) == ("failed", "queue", -1)
    assert job["failure"] == {
        "group": "failed-retries-queue",
        "message": message,
        "when": 100,
        "worker": "",
    }
    assert captured.on("ql:log")[-1] == (
        '{"message":"Job exhausted retries in queue \\"other\\"","jid":"jid",'
        '"group":"failed-retries-queue","event":"failed","worker":"worker"}'
    )
    assert await redis.lrange("ql:f:failed-retries-queue", 0, -1) == ["jid"]
    assert await redis.hgetall("ql:s:stats:0:other") == {
        "retries": "1",
        "failures": "1",
        "failed": "1",
    }


async def test_put_does_not_clear_the_courtesy_warning(lua: Lua, redis: aioredis.Redis) -> None:
    # CORE 5.6: put does not clear `grace`; a job warned, re-put and popped again is
    # reclaimed at its next expiry without a new warning (and it costs a retry).
    await put(lua, 0)
    await pop(lua, 1)
    assert await pop(lua, 61, worker="other") == {}  # courtesy warning only
    assert await redis.hget("ql:j:jid", "grace") == "1"
    await put(lua, 62)
    assert await redis.hget("ql:j:jid", "grace") == "1"
    await pop(lua, 63)
    async with EventCapture(redis, "ql:*") as captured:
        (job,) = await pop(lua, 123, worker="other")
    assert captured.messages == []  # no lock_lost: no new courtesy step
    assert (job["worker"], job["remaining"]) == ("other", 4)
    assert [entry["what"] for entry in job["history"]][-3:] == ["put", "popped", "popped"]
    assert await redis.hexists("ql:j:jid", "grace") == 0


async def test_spawn_over_an_existing_job_keeps_its_other_fields(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # CORE 5.5 step 4.3 and the note of 6.37: unrecur deletes the count, so a new template
    # with the same id spawns `jid-1` again over the old job, whose other fields (here its
    # `failure`) and history stay.
    await lua("recur", 0, "queue", "jid", "klass", "{}", "interval", 60, 0)
    await pop(lua, 0)
    await lua("fail", 1, "jid-1", "worker", "group", "message")
    assert await lua("unrecur", 2, "jid") == 1
    await lua("recur", 3, "queue", "jid", "klass2", "[]", "interval", 60, 0)
    (job,) = await pop(lua, 3)
    assert (job["jid"], job["klass"], job["data"], job["state"]) == (
        "jid-1",
        "klass2",
        "[]",
        "running",
    )
    assert job["failure"] == {"group": "group", "message": "message", "when": 1, "worker": "worker"}
    assert [(entry["when"], entry["what"]) for entry in job["history"]] == [
        (0, "put"),
        (0, "popped"),
        (1, "failed"),
        (3, "put"),
        (3, "popped"),
    ]


async def test_reply_numbers_have_14_significant_digits(lua: Lua) -> None:
    # CORE 1.4 rule 3: numbers are printed with %.14g; CORE 4.3: history stores floor(now)
    await put(lua, 1700000000.123456)
    text = await lua("pop", 1700000000.123456, "queue", "worker", 1)
    assert '"expires":1700000060.1235' in text
    assert '"when":1700000000' in text
    (job,) = json.loads(text)
    assert job["expires"] == 1700000060.1235
