"""Job lifecycle, part 2: complete, fail, retry, heartbeat, timeout and lock expiry.

CORE 4.1/4.3, 5.3 (run statistics), 5.6 (lock expiry, grace period, retries), 5.7
(completed-job retention), 6.5-6.9, 6.26, 7.2/7.3; REQLESS 5.1, 5.3, 6.8, 8.4-8.8, 10, 12.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.conftest import Lua
from tests.scripts._lifecycle_helpers import (
    BOTH,
    CLASSIC,
    REQLESS,
    Vocabulary,
    histogram,
    pop,
    put,
    score,
)
from tests.scripts.expect import hfield, popped_entry, refused

COMPLETED_EVENT = '{"jid":"jid","event":"completed","queue":"queue"}'
ADVANCED_EVENT = '{"jid":"jid","to":"other","event":"advanced","queue":"queue"}'
LOST_EVENT = '{"jid":"jid","event":"lock_lost","worker":"worker"}'
FAILED_EVENT = (
    '{"message":"message","jid":"jid","group":"group","event":"failed","worker":"worker"}'
)
EXHAUSTED_EVENT = (
    '{"message":"Job exhausted retries in queue \\"queue\\"","jid":"jid",'
    '"group":"failed-retries-queue","event":"failed","worker":"worker"}'
)
EXHAUSTED_MESSAGE = 'Job exhausted retries in queue "queue"'
# the failure of a job whose retries ran out at 2.5 (no worker holds it any more)
EXHAUSTED_FAILURE_AT_2_5 = {
    "group": "failed-retries-queue",
    "message": EXHAUSTED_MESSAGE,
    "when": 2.5,
    "worker": "",
}


def done(when: int) -> dict[str, Any]:
    return {"when": when, "what": "done"}


def timed_out(when: int) -> dict[str, Any]:
    return {"when": when, "what": "timed-out"}


async def running(lua: Lua, v: Vocabulary, jid: str = "jid", *options: Any) -> None:
    """Put ``jid`` at 0 and pop it at 1 by `worker` (expires 61)."""
    await put(lua, v, 0, jid, *options)
    assert [job["jid"] for job in await pop(lua, v, 1)] == [jid]


def running_job(v: Vocabulary, jid: str = "jid", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "state": "running",
        "worker": "worker",
        "expires": 61,
        "history": [v.put_entry(0), popped_entry(1)],
    }
    return v.job(jid, **{**base, **fields})


async def make_state(lua: Lua, v: Vocabulary, state: str) -> None:
    """Leave job `jid` in ``state`` (one of the non-running states)."""
    if state == "waiting":
        await put(lua, v, 0)
    elif state == "scheduled":
        await put(lua, v, 0, delay=100)
    elif state == "depends":
        await put(lua, v, 0, "blocker")
        await put(lua, v, 0, "jid", "depends", '["blocker"]')
    elif state == "failed":
        await running(lua, v)
        await lua(v.fail, 1, "jid", "worker", "group", "message")
    elif state == "complete":
        await running(lua, v)
        await v.complete(lua, 1)
    else:  # pragma: no cover
        raise AssertionError(state)


STATES = pytest.mark.parametrize("state", ["waiting", "scheduled", "depends", "failed", "complete"])


# ------------------------------------------------------------------------------ complete


@BOTH
async def test_complete(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    assert await v.complete(lua, 2) == "complete"
    assert await lua.json(v.get, 2, "jid") == v.job(
        state="complete",
        queue="",
        history=[v.put_entry(0), popped_entry(1), done(2)],
        throttles=["ql:q:queue"],
    )
    assert await redis.zrange("ql:completed", 0, -1, withscores=True) == [("jid", 2.0)]
    for key in ("ql:q:queue-locks", "ql:q:queue-work", "ql:w:worker:jobs"):
        assert await redis.zcard(key) == 0, key
    assert float(await hfield(redis, "ql:j:jid", "time")) == 2
    if v.reqless:  # REQLESS 6.8: the locks of every throttle are released
        assert await redis.zcard("ql:th:ql:q:queue-locks") == 0


@BOTH
async def test_complete_stores_data_verbatim(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await v.complete(lua, 2, data='{"a": [], "b": "x/y"}')
    assert (await lua.json(v.get, 2, "jid"))["data"] == '{"a": [], "b": "x/y"}'


@BOTH
async def test_complete_events(lua: Lua, events: Any, v: Vocabulary) -> None:
    await running(lua, v, "jid")
    async with events() as captured:
        await v.complete(lua, 2)
    assert captured.messages == [("ql:log", COMPLETED_EVENT)]
    await running(lua, v, "jid")
    await v.track(lua, 1)
    async with events() as captured:
        await v.complete(lua, 2)
    assert captured.messages == [("ql:completed", "jid"), ("ql:log", COMPLETED_EVENT)]


@BOTH
async def test_complete_clears_the_failure(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.fail, 2, "jid", "worker", "group", "message")
    await put(lua, v, 3)
    await pop(lua, v, 4)
    assert (await lua.json(v.get, 4, "jid"))["failure"]["group"] == "group"
    await v.complete(lua, 5)
    assert (await lua.json(v.get, 5, "jid"))["failure"] == {}


@BOTH
async def test_complete_releases_dependents(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0, "a")
    await put(lua, v, 0, "b", "depends", '["a"]')
    await put(lua, v, 0, "c", "depends", '["a"]', delay=10)
    await pop(lua, v, 1)
    await v.complete(lua, 2, "a")
    assert (await lua.json(v.get, 2, "b"))["state"] == "waiting"
    assert (await lua.json(v.get, 2, "c"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [("b", score(0, 2))]
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("c", 10.0)]
    assert await redis.zcard("ql:q:queue-depends") == 0
    assert await redis.exists("ql:j:a-dependents") == 0


async def complete_next(lua: Lua, v: Vocabulary, now: float, *options: Any) -> Any:
    if v.reqless:
        return await lua(
            "job.completeAndRequeue", now, "jid", "worker", "queue", "{}", "other", *options
        )
    return await lua("complete", now, "jid", "worker", "queue", "{}", "next", "other", *options)


@BOTH
async def test_complete_with_next_advances_the_job(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await running(lua, v, "jid", "retries", 2)
    await lua(v.retry, 2, "jid", "queue", "worker")
    await pop(lua, v, 3)
    assert (await lua.json(v.get, 3, "jid"))["remaining"] == 1
    async with events() as captured:
        assert await complete_next(lua, v, 4) == "waiting"
    assert captured.messages == [("ql:log", ADVANCED_EVENT)]
    history = [v.put_entry(0), popped_entry(1), popped_entry(3), done(4), v.put_entry(4, "other")]
    # REQLESS 6.3: the throttle list is not updated by an advance
    expected = v.job(
        queue="other", retries=2, remaining=2, history=history, throttles=["ql:q:queue"]
    )
    assert await lua.json(v.get, 4, "jid") == expected
    assert await redis.zrange("ql:q:other-work", 0, -1, withscores=True) == [("jid", score(0, 4))]
    assert await redis.zscore("ql:queues", "other") == 4
    assert await redis.zcard("ql:completed") == 0
    assert [job["jid"] for job in await pop(lua, v, 5, queue="other")] == ["jid"]


@BOTH
async def test_complete_with_next_keeps_array_data(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    if v.reqless:
        await lua("job.completeAndRequeue", 2, "jid", "worker", "queue", "[]", "other")
    else:
        await lua("complete", 2, "jid", "worker", "queue", "[]", "next", "other")
    assert (await lua.json(v.get, 2, "jid"))["data"] == "[]"


@BOTH
async def test_complete_with_next_of_a_tracked_job(lua: Lua, events: Any, v: Vocabulary) -> None:
    await running(lua, v)
    await v.track(lua, 1)
    async with events() as captured:
        await complete_next(lua, v, 2)
    assert captured.messages == [("ql:completed", "jid"), ("ql:log", ADVANCED_EVENT)]


@BOTH
async def test_complete_with_next_and_delay(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    assert await complete_next(lua, v, 2, "delay", 10) == "scheduled"
    # the reference stores `waiting` here (CORE 6.5); aqless stores the state it reports
    assert (await lua.json(v.get, 2, "jid"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:other-scheduled", 0, -1, withscores=True) == [("jid", 12.0)]
    assert await redis.zcard("ql:q:other-work") == 0
    assert await lua(v.pop, 11, "other", "worker", 1) == v.empty
    assert (await lua.json(v.get, 11, "jid"))["state"] == "scheduled"
    # due: a peek promotes it, and its state with it, as for a job put with a delay
    peeked = await lua.json(v.peek, 12, "other", *v.peek_args(1))
    assert [job["jid"] for job in peeked] == ["jid"]
    assert (await lua.json(v.get, 12, "jid"))["state"] == "waiting"
    assert [job["jid"] for job in await pop(lua, v, 12, queue="other")] == ["jid"]


@BOTH
async def test_complete_with_next_and_depends(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, "b")
    await running(lua, v)
    assert await complete_next(lua, v, 2, "depends", '["b"]', "delay", 10) == "depends"
    job = await lua.json(v.get, 2, "jid")
    assert (job["state"], job["queue"], job["dependencies"]) == ("depends", "other", ["b"])
    assert await redis.zrange("ql:q:other-depends", 0, -1, withscores=True) == [("jid", 2.0)]
    assert float(await hfield(redis, "ql:j:jid", "scheduled")) == 12


async def test_complete_with_next_depends_and_delay_counts_the_delay_from_completion(
    lua: Lua, redis: aioredis.Redis
) -> None:
    # CORE 6.5 notes: completed at 3 with delay 10 -> due at 13, whenever b completes
    await put(lua, CLASSIC, 0, "b", queue="bq")
    await put(lua, CLASSIC, 0, "a")
    await pop(lua, CLASSIC, 1)
    reply = await lua(
        "complete", 3, "a", "worker", "queue", "{}", "next", "foo", "depends", '["b"]', "delay", 10
    )
    assert reply == "depends"
    await pop(lua, CLASSIC, 4, queue="bq")
    await lua("complete", 6, "b", "worker", "bq", "{}")
    assert (await lua.json("get", 6, "a"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:foo-scheduled", 0, -1, withscores=True) == [("a", 13.0)]
    assert await redis.hexists("ql:j:a", "scheduled") == 0
    assert await lua("peek", 12, "foo", 10) == "{}"
    assert [job["jid"] for job in await lua.json("peek", 13, "foo", 10)] == ["a"]
    assert (await lua.json("get", 13, "a"))["state"] == "waiting"


@BOTH
async def test_complete_with_satisfied_depends_ignores_the_delay(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await running(lua, v)
    assert await complete_next(lua, v, 2, "depends", '["missing"]', "delay", 10) == "waiting"
    assert await redis.zrange("ql:q:other-work", 0, -1) == ["jid"]


async def test_job_complete_ignores_extra_arguments(lua: Lua) -> None:
    await running(lua, REQLESS)
    assert await lua("job.complete", 2, "jid", "worker", "queue", "{}", "next", "other") == (
        "complete"
    )
    assert (await lua.json("job.get", 2, "jid"))["queue"] == ""


async def test_job_complete_and_requeue_without_next_queue_completes(lua: Lua) -> None:
    await running(lua, REQLESS)
    assert await lua("job.completeAndRequeue", 2, "jid", "worker", "queue", "{}") == "complete"
    assert (await lua.json("job.get", 2, "jid"))["state"] == "complete"


J, W, Q = "jid", "worker", "queue"
COMPLETE_CASES = [
    # CORE 6.5 validation 1..9 (on a job that does not exist: arguments come first)
    ((), "Job(): no jid provided"),
    ((J,), 'Complete(): Arg "worker" missing'),
    ((J, W), 'Complete(): Arg "queue" missing'),
    ((J, W, Q), None),
    ((J, W, Q, "{]"), None),
    ((J, W, Q, "false"), 'Complete(): Arg "data" missing or not JSON: false'),
    ((J, W, Q, "{}", "next"), "Complete(): Job jid does not exist"),
    ((J, W, Q, "{}", "next", "other", "delay"), "Complete(): Job jid does not exist"),
    ((J, W, Q, "{}", "next", "other", "delay", "foo"), "assertion failed!"),
    ((J, W, Q, "{}", "next", "other", "delay", "nan"), "assertion failed!"),
    ((J, W, Q, "{}", "delay", "foo"), "assertion failed!"),
    (
        (J, W, Q, "{}", "next", "other", "depends", "false"),
        'Complete(): Arg "depends" not JSON: false',
    ),
    ((J, W, Q, "{}", "next", "other", "depends", "{]"), None),
    ((J, W, Q, "{}", "delay", 5), 'Complete(): "delay" cannot be used without a "next".'),
    ((J, W, Q, "{}", "delay", 0), 'Complete(): "delay" cannot be used without a "next".'),
    ((J, W, Q, "{}", "depends", "[]"), 'Complete(): "depends" cannot be used without a "next".'),
    (
        (J, W, Q, "{}", "depends", "[]", "delay", 5),
        'Complete(): "delay" cannot be used without a "next".',
    ),
    ((J, W, Q, "{}", "depends", "false", "next", "other", "delay", "foo"), "assertion failed!"),
    ((J, W, Q, "{}", "next", "other", "delay", 5), "Complete(): Job jid does not exist"),
]


@pytest.mark.parametrize(
    ("args", "text"), COMPLETE_CASES, ids=[str(i) for i in range(len(COMPLETE_CASES))]
)
async def test_complete_validation(lua: Lua, args: tuple[Any, ...], text: str | None) -> None:
    await put(lua, CLASSIC, 0, "other-job")
    message = await refused(lua, text, "complete", 1, *args)
    if text is None:
        assert "does not exist" not in message


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("job.complete", (), "Job(): no jid provided"),
        ("job.complete", (J,), 'Complete(): Arg "worker" missing'),
        ("job.complete", (J, W), 'Complete(): Arg "queue_name" missing'),
        ("job.complete", (J, W, Q), None),
        ("job.complete", (J, W, Q, "[}"), None),
        ("job.complete", (J, W, Q, "{}"), "Complete(): Job does not exist"),
        ("job.completeAndRequeue", (), "Job(): no jid provided"),
        ("job.completeAndRequeue", (J, W), 'Complete(): Arg "queue_name" missing'),
        ("job.completeAndRequeue", (J, W, Q, "{}", "q2", "delay", "foo"), "assertion failed!"),
        ("job.completeAndRequeue", (J, W, Q, "{}", "q2", "depends", "[}"), None),
        ("job.completeAndRequeue", (J, W, Q, "{}", "q2"), "Complete(): Job does not exist"),
    ],
)
async def test_job_complete_validation(
    lua: Lua, command: str, args: tuple[Any, ...], text: str | None
) -> None:
    await put(lua, REQLESS, 0, "other-job")
    message = await refused(lua, text, command, 1, *args)
    if text is None:
        assert "does not exist" not in message


@BOTH
@STATES
async def test_complete_of_a_job_that_is_not_running(lua: Lua, v: Vocabulary, state: str) -> None:
    await make_state(lua, v, state)
    jid = "" if v.reqless else "jid "
    text = f"Complete(): Job {jid}is not currently running: {state}"
    await refused(lua, text, "job.complete" if v.reqless else "complete", 2, J, W, Q, "{}")


@BOTH
async def test_complete_by_another_worker_or_in_another_queue(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    command = "job.complete" if v.reqless else "complete"
    jid = "" if v.reqless else "jid "
    await refused(
        lua,
        f"Complete(): Job {jid}has been handed out to another worker: worker",
        command,
        2,
        J,
        "other",
        Q,
        "{}",
    )
    await refused(
        lua,
        f"Complete(): Job {jid}running in another queue: queue",
        command,
        2,
        J,
        W,
        "other",
        "{}",
    )
    # the worker is compared before the queue
    await refused(lua, "another worker", command, 2, "jid", "other", "other", "{}")
    await refused(
        lua,
        "Complete(): Job does not exist" if v.reqless else "Complete(): Job missing does not exist",
        command,
        2,
        "missing",
        W,
        Q,
        "{}",
    )


@BOTH
async def test_complete_records_run_statistics(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    for i in range(20):
        await put(lua, v, 0, f"jid-{i}")
    popped = await pop(lua, v, 0, 20)
    for i, job in enumerate(popped):
        await v.complete(lua, i, job["jid"])
    day = await lua.json(v.stats, 20, "queue", 0)
    assert day["run"]["count"] == 20
    assert day["run"]["mean"] == pytest.approx(9.5)
    assert day["run"]["std"] == pytest.approx(5.916079783099)
    assert day["run"]["histogram"] == histogram(**{f"s{i}": 1 for i in range(20)})
    assert day["wait"]["count"] == 20
    assert day["wait"]["histogram"] == histogram(s0=20)
    assert int((await redis.hgetall("ql:s:run:0:queue"))["total"]) == 20


# ------------------------------------------------------------------------------ retention


@BOTH
async def test_retention_by_count(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await lua("config.set", 0, "jobs-history-count", 5)
    for i in range(10):
        await put(lua, v, i, f"jid-{i}")
        await pop(lua, v, i)
        await v.complete(lua, i, f"jid-{i}")
    assert await redis.zrange("ql:completed", 0, -1) == [f"jid-{i}" for i in range(5, 10)]
    for i in range(5):
        assert await lua(v.get, 10, f"jid-{i}") is None
        assert await redis.exists(f"ql:j:jid-{i}", f"ql:j:jid-{i}-history") == 0
    for i in range(5, 10):
        assert (await lua.json(v.get, 10, f"jid-{i}"))["state"] == "complete"


@BOTH
async def test_retention_by_time(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await lua("config.set", 0, "jobs-history", 100)
    for jid, t in (("a", 0), ("b", 99)):
        await put(lua, v, t, jid)
        await pop(lua, v, t)
        await v.complete(lua, t, jid)
    assert await redis.zrange("ql:completed", 0, -1) == ["a", "b"]
    await put(lua, v, 101, "c")
    await pop(lua, v, 101)
    await v.complete(lua, 101, "c")
    assert await redis.zrange("ql:completed", 0, -1) == ["b", "c"]
    assert await lua(v.get, 101, "a") is None


@BOTH
async def test_retention_of_negative_time_purges_at_once(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await redis.hset("ql:config", "jobs-history", -1)  # stored unchecked (another client)
    await running(lua, v, "jid", "tags", '["abc"]')
    await v.track(lua, 1)
    assert await v.complete(lua, 2) == "complete"
    assert await lua(v.get, 2, "jid") is None
    assert await redis.zcard("ql:completed") == 0
    assert await redis.exists("ql:j:jid", "ql:j:jid-history", "ql:t:abc") == 0
    assert await redis.zrange("ql:tracked", 0, -1) == ["jid"]  # left alone, CORE 5.7
    if v.reqless:  # REQLESS 4.4: the last carrier is gone, so is the tag
        assert await redis.zrange("ql:tags", 0, -1) == []
    else:
        assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("abc", 0.0)]


# ----------------------------------------------------------------------------------- fail


@BOTH
async def test_fail(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    assert await lua(v.fail, 2, "jid", "worker", "group", "message") == "jid"
    failure = {"group": "group", "message": "message", "when": 2, "worker": "worker"}
    assert await lua.json(v.get, 2, "jid") == v.job(
        state="failed",
        failure=failure,
        history=[
            v.put_entry(0),
            popped_entry(1),
            {"when": 2, "what": "failed", "group": "group", "worker": "worker"},
        ],
    )
    assert await redis.smembers("ql:failures") == {"group"}
    assert await redis.lrange("ql:f:group", 0, -1) == ["jid"]
    assert await redis.hget("ql:j:jid", "expires") == ""
    for key in ("ql:q:queue-locks", "ql:q:queue-work", "ql:w:worker:jobs"):
        assert await redis.zcard(key) == 0, key
    stats = await redis.hgetall("ql:s:stats:0:queue")
    assert (int(stats["failures"]), int(stats["failed"])) == (1, 1)
    day = await lua.json(v.stats, 2, "queue", 0)
    assert (day["failed"], day["failures"], day["retries"]) == (1, 1, 0)
    if v.reqless:
        assert await redis.zcard("ql:th:ql:q:queue-locks") == 0


@BOTH
async def test_fail_floors_the_time(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.fail, 2.75, "jid", "worker", "group", "message")
    job = await lua.json(v.get, 3, "jid")
    assert job["failure"]["when"] == 2
    assert job["history"][-1]["when"] == 2


@BOTH
async def test_fail_reencodes_data(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v, "a")
    await running(lua, v, "b")
    await lua(v.fail, 2, "a", "worker", "group", "message", '{"list": []}')
    await lua(v.fail, 2, "b", "worker", "group", "message", '{"path":  "x/y"}')
    assert await redis.hget("ql:j:a", "data") == '{"list":{}}'
    assert await redis.hget("ql:j:b", "data") == '{"path":"x\\/y"}'
    assert (await lua.json(v.get, 2, "b"))["data"] == '{"path":"x\\/y"}'


@BOTH
async def test_fail_events(lua: Lua, events: Any, v: Vocabulary) -> None:
    await running(lua, v, "jid")
    async with events() as captured:
        await lua(v.fail, 2, "jid", "worker", "group", "message")
    assert captured.messages == [("ql:log", FAILED_EVENT)]
    await running(lua, v, "jid")
    await v.track(lua, 1)
    async with events() as captured:
        await lua(v.fail, 2, "jid", "worker", "g/1", 'it "broke"')
    assert captured.messages == [
        (
            "ql:log",
            '{"message":"it \\"broke\\"","jid":"jid","group":"g\\/1","event":"failed",'
            '"worker":"worker"}',
        ),
        ("ql:failed", "jid"),
    ]


@BOTH
async def test_fail_validation(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "other-job", queue="elsewhere")
    await refused(lua, "Job(): no jid provided", v.fail, 1)
    await refused(lua, 'Fail(): Arg "worker" missing', v.fail, 1, J)
    await refused(lua, 'Fail(): Arg "group" missing', v.fail, 1, J, W)
    await refused(lua, 'Fail(): Arg "message" missing', v.fail, 1, J, W, "group")
    missing = "Fail(): Job does not exist" if v.reqless else "Fail(): Job jiddoes not exist"
    await refused(lua, missing, v.fail, 1, J, W, "group", "message")
    message = await refused(lua, None, v.fail, 1, J, W, "group", "message", "[}")
    assert "does not exist" not in message  # data is checked before the job
    await running(lua, v)
    await refused(lua, None, v.fail, 2, J, W, "group", "message", "[}")
    other = (
        "Fail(): Job running with another worker: worker"
        if v.reqless
        else ("Fail(): Job jid running with another worker: worker")
    )
    await refused(lua, other, v.fail, 2, J, "other", "group", "message")


@BOTH
@STATES
async def test_fail_of_a_job_that_is_not_running(lua: Lua, v: Vocabulary, state: str) -> None:
    await make_state(lua, v, state)
    # classic: no space after the jid (CORE 6.6); reqless: no jid (REQLESS 8.5)
    text = f"Fail(): Job {'' if v.reqless else 'jid'}not currently running: {state}"
    if v.reqless:
        text = f"Fail(): Job not currently running: {state}"
    await refused(lua, text, v.fail, 2, "jid", "worker", "group", "message")


# ---------------------------------------------------------------------------------- retry


@BOTH
async def test_retry(lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary) -> None:
    await running(lua, v)
    async with events() as captured:
        assert await lua(v.retry, 2, "jid", "queue", "worker") == 4
    assert captured.messages == []
    # no history entry; worker and expires are left as they were (CORE 6.7)
    assert await lua.json(v.get, 2, "jid") == running_job(v, state="waiting", remaining=4)
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [("jid", score(0, 2))]
    for key in ("ql:q:queue-locks", "ql:w:worker:jobs"):
        assert await redis.zcard(key) == 0, key
    if v.reqless:
        assert await redis.zcard("ql:th:ql:q:queue-locks") == 0


@BOTH
async def test_retry_with_delay(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    assert await lua(v.retry, 2, "jid", "queue", "worker", 10) == 4
    assert (await lua.json(v.get, 2, "jid"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("jid", 12.0)]
    assert await lua(v.pop, 2, "queue", "worker", 1) == v.empty
    assert [job["jid"] for job in await pop(lua, v, 12)] == ["jid"]


@BOTH
async def test_retry_with_group_and_message_records_the_failure(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.retry, 2.5, "jid", "queue", "worker", 0, "group", "message")
    job = await lua.json(v.get, 3, "jid")
    assert (job["state"], job["remaining"]) == ("waiting", 4)
    assert job["failure"] == {"group": "group", "message": "message", "when": 2, "worker": "worker"}


@BOTH
async def test_retry_into_another_queue(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.retry, 2, "jid", "other", "worker")
    assert await redis.zrange("ql:q:other-work", 0, -1) == ["jid"]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert (await lua.json(v.get, 2, "jid"))["queue"] == "queue"  # CORE 6.7 quirk


@BOTH
async def test_retry_exhausting_the_retries(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await running(lua, v, "jid", "retries", 0)
    async with events() as captured:
        assert await lua(v.retry, 2.5, "jid", "queue", "worker") == -1
    assert captured.messages == []
    what = "failed-retries" if v.reqless else "failed"
    assert await lua.json(v.get, 3, "jid") == v.job(
        state="failed",
        retries=0,
        remaining=-1,
        failure=EXHAUSTED_FAILURE_AT_2_5,
        history=[
            v.put_entry(0),
            popped_entry(1),
            {"when": 2, "what": what, "group": "failed-retries-queue"},
        ],
    )
    assert await redis.lrange("ql:f:failed-retries-queue", 0, -1) == ["jid"]
    assert await redis.smembers("ql:failures") == {"failed-retries-queue"}
    assert await redis.zcard("ql:w:worker:jobs") == 0
    day = await lua.json(v.stats, 3, "queue", 0)
    assert (day["failed"], day["failures"]) == (1, 1)


@BOTH
async def test_retry_exhausting_the_retries_with_group_and_message(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v, "jid", "retries", 0)
    assert await lua(v.retry, 2.5, "jid", "queue", "worker", 0, "group", "message") == -1
    job = await lua.json(v.get, 3, "jid")
    assert job["failure"] == {"group": "group", "message": "message", "when": 2, "worker": "worker"}
    what = "failed-retries" if v.reqless else "failed"
    assert job["history"][-1] == {"when": 2, "what": what, "group": "group"}


@BOTH
async def test_retry_exhausted_into_another_queue(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    # the group and the statistics use the queue argument, the message the job's queue
    await running(lua, v, "jid", "retries", 0)
    await lua(v.retry, 2, "jid", "other", "worker")
    job = await lua.json(v.get, 3, "jid")
    assert job["failure"]["group"] == "failed-retries-other"
    assert job["failure"]["message"] == EXHAUSTED_MESSAGE
    assert await redis.lrange("ql:f:failed-retries-other", 0, -1) == ["jid"]
    assert (await lua.json(v.stats, 3, "other", 0))["failures"] == 1
    assert (await lua.json(v.stats, 3, "queue", 0))["failures"] == 0


@BOTH
async def test_retry_exhausting_a_tracked_job(lua: Lua, events: Any, v: Vocabulary) -> None:
    await running(lua, v, "jid", "retries", 0)
    await v.track(lua, 1)
    async with events() as captured:
        await lua(v.retry, 2, "jid", "queue", "worker")
    # classic: only ql:failed (CORE 7.3); reqless publishes nothing (REQLESS 10)
    assert captured.messages == ([] if v.reqless else [("ql:failed", "jid")])


@BOTH
async def test_retry_validation(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "other-job", queue="elsewhere")
    queue_arg = "queue_name" if v.reqless else "queue"
    await refused(lua, "Job(): no jid provided", v.retry, 1)
    await refused(lua, f'Retry(): Arg "{queue_arg}" missing', v.retry, 1, J)
    await refused(lua, 'Retry(): Arg "worker" missing', v.retry, 1, J, Q)
    for bad in ("foo", "nan"):
        await refused(lua, f'Retry(): Arg "delay" not a number: {bad}', v.retry, 1, J, Q, W, bad)
    missing = "Retry(): Job does not exist" if v.reqless else "Retry(): Job jid does not exist"
    await refused(lua, missing, v.retry, 1, J, Q, W)
    await running(lua, v)
    other = (
        "Retry(): Job has been given to another worker: worker"
        if v.reqless
        else ("Retry(): Job jid has been given to another worker: worker")
    )
    await refused(lua, other, v.retry, 2, J, Q, "other")
    await refused(lua, 'Retry(): Arg "delay" not a number: foo', v.retry, 2, J, Q, W, "foo")


@BOTH
@STATES
async def test_retry_of_a_job_that_is_not_running(lua: Lua, v: Vocabulary, state: str) -> None:
    await make_state(lua, v, state)
    jid = "" if v.reqless else "jid "
    await refused(lua, f"Retry(): Job {jid}is not currently running: {state}", v.retry, 2, J, Q, W)


@BOTH
async def test_a_retried_job_is_not_running(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.retry, 2, "jid", "queue", "worker")
    jid = "" if v.reqless else "jid "
    await refused(
        lua,
        f"Complete(): Job {jid}is not currently running: waiting",
        "job.complete" if v.reqless else "complete",
        3,
        J,
        W,
        Q,
        "{}",
    )
    fail = (
        "Fail(): Job not currently running: waiting"
        if v.reqless
        else ("Fail(): Job jidnot currently running: waiting")
    )
    await refused(lua, fail, v.fail, 3, J, W, "group", "message")
    await refused(
        lua, f"Heartbeat(): Job {jid}not currently running: waiting", v.heartbeat, 3, J, W
    )


# ------------------------------------------------------------------------------ heartbeat


@BOTH
async def test_heartbeat(lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary) -> None:
    await running(lua, v)
    async with events() as captured:
        assert await lua(v.heartbeat, 10, "jid", "worker") == 70
    assert captured.messages == []
    assert await lua.json(v.get, 10, "jid") == running_job(v, expires=70)
    assert float(await hfield(redis, "ql:j:jid", "expires")) == 70
    assert await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True) == [("jid", 70.0)]
    assert await redis.zrange("ql:w:worker:jobs", 0, -1, withscores=True) == [("jid", 70.0)]
    # classic heartbeats keep the worker registered; reqless ones do not (REQLESS 8.7)
    assert await redis.zscore("ql:workers", "worker") == (1 if v.reqless else 10)


@BOTH
async def test_heartbeat_reply_is_truncated(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    assert await lua(v.heartbeat, 9.5, "jid", "worker") == 69


@BOTH
async def test_heartbeat_uses_the_heartbeat_of_the_queue(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await lua("config.set", 1, "queue-heartbeat", 30)
    assert await lua(v.heartbeat, 10, "jid", "worker") == 40


@BOTH
async def test_heartbeat_reencodes_data(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await running(lua, v)
    await lua(v.heartbeat, 10, "jid", "worker", '{"list": [], "n": 1}')
    assert json.loads(await hfield(redis, "ql:j:jid", "data")) == {"list": {}, "n": 1}
    await lua(v.heartbeat, 11, "jid", "worker", '{"path": "x/y"}')
    assert (await lua.json(v.get, 11, "jid"))["data"] == '{"path":"x\\/y"}'


@BOTH
async def test_heartbeat_validation(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "other-job", queue="elsewhere")
    await refused(lua, "Job(): no jid provided", v.heartbeat, 1)
    await refused(lua, 'Heatbeat(): Arg "worker" missing', v.heartbeat, 1, J)
    message = await refused(lua, None, v.heartbeat, 1, J, W, "[}")
    assert "does not exist" not in message  # data is checked before the job
    missing = (
        "Heartbeat(): Job does not exist" if v.reqless else ("Heartbeat(): Job jid does not exist")
    )
    await refused(lua, missing, v.heartbeat, 1, J, W)
    await running(lua, v)
    await refused(lua, None, v.heartbeat, 2, J, W, "[}")
    other = (
        "Heartbeat(): Job given out to another worker: worker"
        if v.reqless
        else ("Heartbeat(): Job jid given out to another worker: worker")
    )
    await refused(lua, other, v.heartbeat, 2, J, "other")
    await lua("job.cancel" if v.reqless else "cancel", 3, "jid")
    await refused(lua, missing, v.heartbeat, 4, J, W)


@BOTH
@STATES
async def test_heartbeat_of_a_job_that_is_not_running(lua: Lua, v: Vocabulary, state: str) -> None:
    await make_state(lua, v, state)
    jid = "" if v.reqless else "jid "
    await refused(
        lua, f"Heartbeat(): Job {jid}not currently running: {state}", v.heartbeat, 2, J, W
    )


# -------------------------------------------------------------------------------- timeout


@BOTH
async def test_timeout(lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary) -> None:
    await running(lua, v)
    await put(lua, v, 2, "important", "priority", 10)
    async with events() as captured:
        assert await lua(v.timeout, 3, "jid") is None
    assert captured.messages == [("ql:w:worker", LOST_EVENT), ("ql:log", LOST_EVENT)]
    history = [v.put_entry(0), popped_entry(1), timed_out(3)]
    assert await lua.json(v.get, 3, "jid") == v.job(
        state="stalled", worker="" if v.reqless else "worker", history=history
    )
    assert await redis.zscore("ql:q:queue-work", "jid") == float("inf")
    assert await redis.zcard("ql:q:queue-locks") == 0
    assert await redis.zrange("ql:w:worker:jobs", 0, -1) == ["jid"]  # left alone
    if v.reqless:
        assert await redis.zcard("ql:th:ql:q:queue-locks") == 0
    # timed-out jobs are handed out before anything else
    assert [job["jid"] for job in await pop(lua, v, 4, 2, worker="other")] == ["jid", "important"]


@BOTH
async def test_timeout_validation(lua: Lua, events: Any, v: Vocabulary) -> None:
    missing = (
        "Timeout(): Job jid not running" if v.reqless else ("Timeout(): Job jid does not exist")
    )
    await refused(lua, missing, v.timeout, 0, "jid")
    await put(lua, v, 0, "waiting", queue="elsewhere")
    await refused(lua, "Timeout(): Job waiting not running", v.timeout, 0, "waiting")
    # project decision 1: a later bad jid leaves the earlier ones alone
    await running(lua, v)
    async with events() as captured:
        await refused(lua, "Timeout(): Job waiting not running", v.timeout, 2, "jid", "waiting")
    assert captured.messages == []
    assert (await lua.json(v.get, 2, "jid"))["state"] == "running"


# -------------------------------------------------------------------------- lock expiry


@BOTH
async def test_lock_expiry_with_the_grace_period(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await running(lua, v)  # expires 61
    assert await lua(v.pop, 60, "queue", "other", 1) == v.empty
    async with events() as captured:  # courtesy step: warning only
        assert await lua(v.pop, 61, "queue", "other", 1) == v.empty
    assert captured.messages == [("ql:w:worker", LOST_EVENT), ("ql:log", LOST_EVENT)]
    history = [v.put_entry(0), popped_entry(1), timed_out(61)]
    assert await lua.json(v.get, 61, "jid") == running_job(v, history=history)
    assert await redis.hget("ql:j:jid", "grace") == "1"
    assert await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True) == [("jid", 71.0)]
    assert await redis.zcard("ql:w:worker:jobs") == 0
    assert (await lua.json(v.stats, 61, "queue", 0))["retries"] == 1
    async with events() as captured:
        assert await lua(v.pop, 70, "queue", "other", 1) == v.empty
    assert captured.messages == []
    async with events() as captured:  # invalidation step: reclaimed
        popped = await pop(lua, v, 71, worker="other")
    assert captured.messages == []
    expected = v.job(
        state="running",
        worker="other",
        expires=131,
        remaining=4,
        history=[*history, popped_entry(71, "other")],
    )
    assert popped == [expected]
    assert await redis.hexists("ql:j:jid", "grace") == 0
    assert await redis.zrange("ql:w:other:jobs", 0, -1, withscores=True) == [("jid", 131.0)]
    assert (await lua.json(v.stats, 71, "queue", 0))["retries"] == 1


@BOTH
async def test_lock_expiry_without_grace_period(lua: Lua, v: Vocabulary) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await running(lua, v)
    popped = await pop(lua, v, 71, worker="another")
    assert popped == [
        v.job(
            state="running",
            worker="another",
            expires=131,
            remaining=4,
            history=[v.put_entry(0), popped_entry(1), timed_out(71), popped_entry(71, "another")],
        )
    ]
    text = (
        "Heartbeat(): Job given out to another worker: another"
        if v.reqless
        else ("Heartbeat(): Job jid given out to another worker: another")
    )
    await refused(lua, text, v.heartbeat, 72, "jid", "worker")


@BOTH
async def test_lock_expiry_of_a_tracked_job(lua: Lua, events: Any, v: Vocabulary) -> None:
    await running(lua, v)
    await v.track(lua, 1)
    async with events() as captured:
        await lua(v.pop, 61, "queue", "other", 1)
    assert captured.messages == [
        ("ql:stalled", "jid"),
        ("ql:w:worker", LOST_EVENT),
        ("ql:log", LOST_EVENT),
    ]
    async with events() as captured:
        await lua(v.pop, 71, "queue", "other", 1)
    assert captured.messages == [("ql:popped", "jid")]


@BOTH
@pytest.mark.parametrize("tracked", [False, True])
async def test_lock_loss_exhausting_the_retries(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary, tracked: bool
) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await redis.hset("ql:config", "heartbeat", -10)  # stored unchecked (another client)
    await running(lua, v, "jid", "retries", 0)
    if tracked:
        await v.track(lua, 1)
    async with events() as captured:
        assert await lua(v.pop, 2.5, "queue", "other", 1) == v.empty
    assert captured.messages == [
        *([("ql:stalled", "jid")] if tracked else []),
        ("ql:w:worker", LOST_EVENT),
        ("ql:log", LOST_EVENT),
        *([("ql:failed", "jid")] if tracked else []),
        ("ql:log", EXHAUSTED_EVENT),
    ]
    assert await lua.json(v.get, 3, "jid") == v.job(
        state="failed",
        retries=0,
        remaining=-1,
        tracked=tracked,
        failure=EXHAUSTED_FAILURE_AT_2_5,
        history=[
            v.put_entry(0),
            popped_entry(1),
            timed_out(2),
            {"when": 2, "what": "failed", "group": "failed-retries-queue"},
        ],
    )
    assert await redis.lrange("ql:f:failed-retries-queue", 0, -1) == ["jid"]
    assert await redis.hget("ql:j:jid", "expires") == ""
    for key in ("ql:q:queue-locks", "ql:q:queue-work", "ql:q:queue-scheduled"):
        assert await redis.zcard(key) == 0, key
    day = await lua.json(v.stats, 3, "queue", 0)
    assert (day["retries"], day["failed"], day["failures"]) == (1, 1, 1)
    if v.reqless:
        assert await redis.zcard("ql:th:ql:q:queue-locks") == 0
    # a job failed by lost retries can be put again
    await put(lua, v, 4)
    assert (await lua.json(v.get, 4, "jid"))["state"] == "waiting"


@BOTH
async def test_each_lost_lock_costs_one_retry(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await redis.hset("ql:config", "heartbeat", -10)  # stored unchecked (another client)
    await running(lua, v)
    for remaining in (4, 3, 2):
        (job,) = await pop(lua, v, 10 - remaining)
        assert job["remaining"] == remaining


@BOTH
async def test_repeated_lock_losses_with_the_grace_period(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v, "jid", "retries", 20)  # expires 61
    t = 61
    for lost in range(1, 11):
        assert await lua(v.pop, t, "queue", "worker", 1) == v.empty  # warning
        (job,) = await pop(lua, v, t + 10)  # reclaimed, expires t + 70
        assert job["remaining"] == 20 - lost
        t += 70
    assert (await lua.json(v.stats, t, "queue", 0))["retries"] == 10


@BOTH
async def test_the_owner_may_finish_during_the_grace_period(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v, "a")
    await running(lua, v, "b")
    await lua(v.pop, 61, "queue", "other", 2)  # both warned
    assert await v.complete(lua, 65, "a") == "complete"
    assert await lua(v.fail, 65, "b", "worker", "group", "message") == "b"
    assert await lua(v.pop, 71, "queue", "other", 2) == v.empty
    assert (await lua.json(v.get, 71, "a"))["state"] == "complete"
    assert (await lua.json(v.get, 71, "b"))["state"] == "failed"


@BOTH
async def test_a_heartbeat_does_not_reset_the_courtesy_warning(
    lua: Lua, events: Any, v: Vocabulary
) -> None:
    # CORE 5.6: only the invalidation step and retry clear `grace`
    await running(lua, v)
    await lua(v.pop, 61, "queue", "other", 1)  # warning
    assert await lua(v.heartbeat, 65, "jid", "worker") == 125
    async with events() as captured:
        (job,) = await pop(lua, v, 125, worker="other")
    assert captured.messages == []
    assert job["remaining"] == 4
    assert job["history"][-2:] == [timed_out(61), popped_entry(125, "other")]


@BOTH
async def test_retry_clears_the_courtesy_warning(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await running(lua, v)
    await lua(v.pop, 61, "queue", "other", 1)  # warning
    await lua(v.retry, 62, "jid", "queue", "worker")
    assert await redis.hexists("ql:j:jid", "grace") == 0


async def test_reclaim_ignores_a_full_queue_throttle(lua: Lua) -> None:
    # REQLESS 6.7: expired locks are handed out without acquiring the throttles again
    await lua("config.set", 0, "grace-period", 0)
    await lua("queue.throttle.set", 0, "queue", 1)
    await running(lua, REQLESS)
    await put(lua, REQLESS, 2, "waiting")
    popped = await pop(lua, REQLESS, 71, worker="other")
    assert [(job["jid"], job["remaining"]) for job in popped] == [("jid", 4)]


@BOTH
@pytest.mark.parametrize("tracked", [False, True], ids=["untracked", "tracked"])
@pytest.mark.parametrize("dependent", [False, True], ids=["alone", "dependent"])
@pytest.mark.parametrize("other_tracked", [False, True], ids=["", "other-tracked"])
async def test_complete_reads_tracking_and_dependents_together(
    lua: Lua, events: Any, v: Vocabulary, tracked: bool, dependent: bool, other_tracked: bool
) -> None:
    # one EXISTS answers both when neither key exists; every combination still publishes
    # exactly when the job is tracked and releases exactly its dependents
    await running(lua, v, "jid")
    await put(lua, v, 1, "other")
    if dependent:
        await put(lua, v, 0, "child", "depends", '["jid"]')
    if tracked:
        await v.track(lua, 0, "jid")
    if other_tracked:
        await v.track(lua, 0, "other")
    async with events() as captured:
        assert await v.complete(lua, 2) == "complete"
    expected = [("ql:log", COMPLETED_EVENT)]
    if tracked:
        expected.insert(0, ("ql:completed", "jid"))
    assert captured.messages == expected
    if dependent:
        assert (await lua.json(v.get, 2, "child"))["state"] == "waiting"
