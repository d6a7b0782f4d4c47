"""Job lifecycle, part 1: put, requeue, pop, peek, get, multiget in both vocabularies.

CORE 2.3 (work-set order), 4.1/4.3 (job object, history, max-job-history), 5.3 (wait
statistics), 6.1-6.4, 6.13, 6.14, 6.26, 7.3; REQLESS 5.1, 5.3, 6.3, 6.7, 8.1-8.3, 8.14, 12.
"""

from __future__ import annotations

import json
import statistics
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
from tests.scripts.expect import (
    classic_job,
    hfield,
    popped_entry,
    put_entry,
    refused,
    reqless_job,
    snapshot,
)

PUT_EVENT = '{"jid":"jid","event":"put","queue":"queue"}'
LOST_EVENT = '{"jid":"jid","event":"lock_lost","worker":"worker"}'


# --------------------------------------------------------------------------------- put


@BOTH
async def test_put_returns_jid_and_stores_a_waiting_job(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    assert await put(lua, v, 0) == "jid"  # bare bulk string, not JSON-quoted
    assert await lua.json(v.get, 0, "jid") == v.job()
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [("jid", 0.0)]
    assert await redis.zrange("ql:queues", 0, -1, withscores=True) == [("queue", 0.0)]
    job = await redis.hgetall("ql:j:jid")
    assert {k: job[k] for k in ("jid", "klass", "data", "state", "worker", "queue")} == {
        "jid": "jid",
        "klass": "klass",
        "data": "{}",
        "state": "waiting",
        "worker": "",
        "queue": "queue",
    }
    assert json.loads(job["tags"]) in ({}, [])
    assert float(job["priority"]) == 0
    assert float(job["expires"]) == 0
    assert float(job["retries"]) == float(job["remaining"]) == 5
    assert float(job["time"]) == 0
    assert await redis.llen("ql:j:jid-history") == 1


@BOTH
async def test_put_stores_data_verbatim(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0, "a", data="[]")
    await put(lua, v, 0, "b", data='{"path": "x/y",  "n": 1.50}')
    assert (await lua.json(v.get, 0, "a"))["data"] == "[]"
    assert (await lua.json(v.get, 0, "b"))["data"] == '{"path": "x/y",  "n": 1.50}'
    assert await redis.hget("ql:j:b", "data") == '{"path": "x/y",  "n": 1.50}'


@BOTH
async def test_put_with_delay_schedules_the_job(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, delay=1)
    assert await lua.json(v.get, 0, "jid") == v.job(state="scheduled")
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("jid", 1.0)]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await lua(v.pop, 0, "queue", "worker", 1) == v.empty
    popped = await pop(lua, v, 2)
    assert popped == [
        v.job(
            state="running", worker="worker", expires=62, history=[v.put_entry(0), popped_entry(2)]
        )
    ]


@BOTH
async def test_put_with_negative_delay_is_immediate(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, delay=-5)
    assert (await lua.json(v.get, 0, "jid"))["state"] == "waiting"


@BOTH
async def test_put_options(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 3, "jid", "retries", 2, "tags", '["foo", "bar"]', "priority", 1)
    assert await lua.json(v.get, 3, "jid") == v.job(
        retries=2, remaining=2, tags=["foo", "bar"], priority=1, history=[v.put_entry(3)]
    )
    assert await redis.zscore("ql:q:queue-work", "jid") == score(1, 3)
    assert await redis.zrange("ql:t:foo", 0, -1, withscores=True) == [("jid", 3.0)]
    assert await redis.zscore("ql:tags", "bar") == 1


@BOTH
async def test_put_options_last_value_wins_and_unknown_names_are_ignored(
    lua: Lua, v: Vocabulary
) -> None:
    await put(lua, v, 0, "jid", "priority", 1, "colour", "blue", "priority", 3)
    assert await lua.json(v.get, 0, "jid") == v.job(priority=3)


@BOTH
async def test_put_with_dependencies(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0, "a")
    await put(lua, v, 1, "b", "depends", '["a", "missing"]')
    assert await lua.json(v.get, 1, "b") == v.job(
        "b", state="depends", dependencies=["a"], history=[v.put_entry(1)]
    )
    assert (await lua.json(v.get, 1, "a"))["dependents"] == ["b"]
    assert await redis.zrange("ql:q:queue-depends", 0, -1, withscores=True) == [("b", 1.0)]
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["a"]
    # a dependency on a missing job only is satisfied at once (CORE 5.8)
    await put(lua, v, 2, "c", "depends", '["missing"]')
    assert (await lua.json(v.get, 2, "c"))["state"] == "waiting"


@BOTH
async def test_put_with_dependencies_and_delay_waits_for_dependencies(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, "a")
    await put(lua, v, 1, "b", "depends", '["a"]', delay=10)
    assert (await lua.json(v.get, 1, "b"))["state"] == "depends"
    assert float(await hfield(redis, "ql:j:b", "scheduled")) == 11
    assert await redis.zrange("ql:q:queue-depends", 0, -1, withscores=True) == [("b", 1.0)]
    assert await redis.zcard("ql:q:queue-scheduled") == 0


@BOTH
async def test_put_with_new_dependencies_replaces_old_ones(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "a")
    await put(lua, v, 0, "b")
    await put(lua, v, 0, "c", "depends", '["a"]')
    await put(lua, v, 1, "c", "depends", '["b"]')
    assert (await lua.json(v.get, 1, "c"))["dependencies"] == ["b"]
    assert (await lua.json(v.get, 1, "a"))["dependents"] == {}
    # no depends option: existing dependencies are kept
    await put(lua, v, 2, "c")
    job = await lua.json(v.get, 2, "c")
    assert (job["state"], job["dependencies"]) == ("depends", ["b"])


@BOTH
async def test_put_moves_a_job_keeping_its_attributes(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, "jid", "priority", 2, "tags", '["t"]', "retries", 3)
    await pop(lua, v, 1)
    assert await lua(v.retry, 2, "jid", "queue", "worker") == 2
    await put(lua, v, 3, queue="other")
    assert await lua.json(v.get, 3, "jid") == v.job(
        queue="other",
        priority=2,
        tags=["t"],
        retries=3,
        remaining=3,
        history=[v.put_entry(0), popped_entry(1), v.put_entry(3, "other")],
    )
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await redis.zrange("ql:q:other-work", 0, -1, withscores=True) == [("jid", score(2, 3))]
    assert await redis.zrange("ql:queues", 0, -1, withscores=True) == [
        ("queue", 0.0),
        ("other", 3.0),
    ]
    assert await redis.zscore("ql:t:t", "jid") == 3


@BOTH
async def test_put_moves_a_job_overriding_its_attributes(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "jid", "priority", 2, "tags", '["t"]', "retries", 3)
    await put(lua, v, 1, "jid", "priority", 5, "tags", '["u"]', "retries", 1, queue="other")
    assert await lua.json(v.get, 1, "jid") == v.job(
        queue="other",
        priority=5,
        tags=["u"],
        retries=1,
        remaining=1,
        history=[v.put_entry(0), v.put_entry(1, "other")],
    )


@BOTH
async def test_put_events(lua: Lua, events: Any, v: Vocabulary) -> None:
    async with events() as captured:
        await put(lua, v, 0)
    assert captured.messages == [("ql:log", PUT_EVENT)]
    async with events() as captured:
        await put(lua, v, 0, "jid", queue="a/b")
    assert captured.messages == [("ql:log", '{"jid":"jid","event":"put","queue":"a\\/b"}')]


@BOTH
async def test_put_of_a_tracked_job_publishes_put(lua: Lua, events: Any, v: Vocabulary) -> None:
    await put(lua, v, 0)
    await v.track(lua, 0)
    async with events() as captured:
        await put(lua, v, 1)
    assert captured.messages == [("ql:log", PUT_EVENT), ("ql:put", "jid")]


@BOTH
async def test_put_by_another_worker_takes_the_lock(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await put(lua, v, 0)
    await pop(lua, v, 1)
    async with events() as captured:
        await put(lua, v, 2, worker="other")
    assert captured.messages == [
        ("ql:log", PUT_EVENT),
        ("ql:w:worker", LOST_EVENT),
        ("ql:log", LOST_EVENT),
    ]
    assert await redis.zcard("ql:w:worker:jobs") == 0
    assert await redis.zcard("ql:q:queue-locks") == 0
    assert await lua.json(v.get, 2, "jid") == v.job(
        history=[v.put_entry(0), popped_entry(1), v.put_entry(2)]
    )
    text = (
        "Heartbeat(): Job not currently running: waiting"
        if v.reqless
        else ("Heartbeat(): Job jid not currently running: waiting")
    )
    await refused(lua, text, v.heartbeat, 3, "jid", "worker")


@BOTH
async def test_put_by_the_owning_worker_publishes_only_put(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await put(lua, v, 0)
    await pop(lua, v, 1)
    async with events() as captured:
        await put(lua, v, 2)
    assert captured.messages == [("ql:log", PUT_EVENT)]
    assert await redis.zcard("ql:w:worker:jobs") == 0


@BOTH
async def test_put_of_a_failed_job(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0)
    await pop(lua, v, 1)
    await lua(v.fail, 2, "jid", "worker", "group", "message")
    await put(lua, v, 3)
    failure = {"group": "group", "message": "message", "when": 2, "worker": "worker"}
    assert await lua.json(v.get, 3, "jid") == v.job(
        failure=failure,
        history=[
            v.put_entry(0),
            popped_entry(1),
            {"when": 2, "what": "failed", "group": "group", "worker": "worker"},
            v.put_entry(3),
        ],
    )
    assert await redis.exists("ql:f:group") == 0
    assert await redis.sismember("ql:failures", "group") == 0
    day = await lua.json(v.stats, 3, "queue", 0)
    assert (day["failed"], day["failures"]) == (0, 1)


@BOTH
async def test_put_of_a_completed_job(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0)
    await pop(lua, v, 1)
    await v.complete(lua, 2)
    await put(lua, v, 3)
    assert await redis.zcard("ql:completed") == 0
    assert (await lua.json(v.get, 3, "jid"))["state"] == "waiting"


# ------------------------------------------------------------------ put: validation order

W, Q, J, K = "worker", "queue", "jid", "klass"
PUT_CASES = [
    # CORE 6.1 steps 1..11, one malformed case per step (None: any error text)
    ((), "Queue(): no queue name provided"),
    ((W,), "Queue(): no queue name provided"),
    ((W, Q), 'Put(): Arg "jid" missing'),
    ((W, Q, J), 'Put(): Arg "klass" missing'),
    ((W, Q, J, K), None),
    ((W, Q, J, K, "{]"), None),
    ((W, Q, J, K, "false"), 'Put(): Arg "data" missing or not JSON: false'),
    ((W, Q, J, K, "{}"), 'Put(): Arg "delay" not a number: nil'),
    ((W, Q, J, K, "{}", "foo"), 'Put(): Arg "delay" not a number: foo'),
    ((W, Q, J, K, "{}", "nan"), 'Put(): Arg "delay" not a number: nan'),
    ((W, Q, J, K, "{}", "inf"), 'Put(): Arg "delay" not a number: inf'),
    ((W, Q, J, K, "{}", 0, "priority"), "Odd number of additional args: "),
    ((W, Q, J, K, "{}", 0, "retries", "foo"), 'Put(): Arg "retries" not a number: foo'),
    ((W, Q, J, K, "{}", 0, "retries", "-inf"), 'Put(): Arg "retries" not a number: -inf'),
    ((W, Q, J, K, "{}", 0, "tags", "{]"), None),
    ((W, Q, J, K, "{}", 0, "tags", "false"), 'Put(): Arg "tags" not JSONfalse'),
    ((W, Q, J, K, "{}", 0, "priority", "foo"), 'Put(): Arg "priority" not a numberfoo'),
    ((W, Q, J, K, "{}", 0, "priority", "nan"), 'Put(): Arg "priority" not a numbernan'),
    ((W, Q, J, K, "{}", 0, "depends", "{]"), None),
    ((W, Q, J, K, "{}", 0, "depends", "false"), 'Put(): Arg "depends" not JSON: false'),
    # two problems: the earlier step wins, whatever the argument order
    ((W, Q, J, K, "false", "foo"), 'Put(): Arg "data" missing or not JSON: false'),
    ((W, Q, J, K, "{}", "foo", "priority"), 'Put(): Arg "delay" not a number: foo'),
    ((W, Q, J, K, "{}", 0, "retries", "foo", "priority"), "Odd number of additional args: "),
    (
        (W, Q, J, K, "{}", 0, "priority", "foo", "retries", "bar"),
        'Put(): Arg "retries" not a number: bar',
    ),
    (
        (W, Q, J, K, "{}", 0, "tags", "false", "retries", "bar"),
        'Put(): Arg "retries" not a number: bar',
    ),
    ((W, Q, J, K, "{}", 0, "priority", "foo", "tags", "false"), 'Put(): Arg "tags" not JSONfalse'),
    (
        (W, Q, J, K, "{}", 0, "depends", "false", "priority", "foo"),
        'Put(): Arg "priority" not a numberfoo',
    ),
    ((W, Q, J, K, "{]", "foo"), None),
    ((W, Q, J, K, "{}", 0, "priority", "foo", "tags", "{]"), None),
]


@BOTH
@pytest.mark.parametrize(("args", "text"), PUT_CASES, ids=[str(i) for i in range(len(PUT_CASES))])
async def test_put_validation_order(
    lua: Lua, v: Vocabulary, args: tuple[Any, ...], text: str | None
) -> None:
    await put(lua, v, 0, "other")
    message = await refused(lua, text, v.put, 1, *args)
    if text is None:  # a JSON error, not the text of a later step
        assert "not a number" not in message


@BOTH
@pytest.mark.parametrize(
    "options",
    [
        ("retries", "foo"),
        ("tags", "false"),
        ("priority", "foo"),
        ("depends", "false"),
        ("depends", "{]"),
        ("tags", '["x"]', "priority"),
    ],
)
async def test_bad_put_of_an_existing_job_changes_nothing(
    lua: Lua, v: Vocabulary, options: tuple[str, ...]
) -> None:
    # CORE 6.1 step 7: the reference drops the old tags before checking the options; here
    # nothing may change (project decision 1), nor may anything be published (`refused`)
    await put(lua, v, 0, "jid", "tags", '["a", "b"]')
    await pop(lua, v, 1)
    await refused(lua, None, v.put, 2, "other", "queue", "jid", "klass", "{}", 0, *options)


async def test_queue_put_bad_throttles(lua: Lua) -> None:
    await refused(
        lua,
        'Put(): Arg "throttles" not JSON array: false',
        "queue.put",
        0,
        W,
        Q,
        J,
        K,
        "{}",
        0,
        "throttles",
        "false",
    )
    await refused(lua, None, "queue.put", 0, W, Q, J, K, "{}", 0, "throttles", "{]")


# -------------------------------------------------------------------- reqless throttle lists


async def test_queue_put_throttle_lists(lua: Lua, redis: aioredis.Redis) -> None:
    await put(lua, REQLESS, 0, "a", "throttles", '["tid"]')
    await put(lua, REQLESS, 0, "b", "throttles", '["tid", "wid"]')
    assert (await lua.json("job.get", 0, "a"))["throttles"] == ["tid", "ql:q:queue"]
    assert (await lua.json("job.get", 0, "b"))["throttles"] == ["tid", "wid", "ql:q:queue"]
    assert json.loads(await hfield(redis, "ql:j:a", "throttles")) == ["tid", "ql:q:queue"]
    # moving drops the old queue's throttle; a re-put without the option resets the list
    await put(lua, REQLESS, 1, "a", "throttles", '["ql:q:queue"]', queue="other")
    assert await lua.json("job.get", 1, "a") == reqless_job(
        "a",
        queue="other",
        throttles=["ql:q:other"],
        history=[put_entry(0, reqless=True), put_entry(1, "other", reqless=True)],
    )
    await put(lua, REQLESS, 2, "b")
    assert (await lua.json("job.get", 2, "b"))["throttles"] == ["ql:q:queue"]


async def test_history_is_shown_in_the_readers_vocabulary(lua: Lua, redis: aioredis.Redis) -> None:
    # project decision 4 (put entries) and 3 (classic put stores the queue throttle)
    await put(lua, CLASSIC, 0, "a")
    await put(lua, REQLESS, 0, "b")
    assert await lua.json("get", 0, "a") == classic_job("a")
    assert await lua.json("get", 0, "b") == classic_job("b")
    assert await lua.json("job.get", 0, "a") == reqless_job("a")
    assert await lua.json("job.get", 0, "b") == reqless_job("b")
    assert json.loads(await hfield(redis, "ql:j:a", "throttles")) == ["ql:q:queue"]


# ------------------------------------------------------------------------------- requeue


@BOTH
async def test_requeue_moves_an_existing_job(lua: Lua, events: Any, v: Vocabulary) -> None:
    await put(lua, v, 0)
    async with events() as captured:
        assert await lua(v.requeue, 1, "worker", "other", "jid", "klass", "{}", 0) == "jid"
    assert captured.messages == [("ql:log", '{"jid":"jid","event":"put","queue":"other"}')]
    assert await lua.json(v.get, 1, "jid") == v.job(
        queue="other", history=[v.put_entry(0), v.put_entry(1, "other")]
    )


async def test_job_requeue_keeps_everything_but_queue_throttles_history(lua: Lua) -> None:
    await put(lua, REQLESS, 0, "jid", "throttles", '["tid"]', "priority", 3, "tags", '["t"]')
    before = await lua.json("job.get", 0, "jid")
    await lua(
        "job.requeue", 1, "worker", "queue-2", "jid", "klass", "{}", 0, "throttles", '["tid"]'
    )
    after = await lua.json("job.get", 1, "jid")
    assert after["throttles"] == ["tid", "ql:q:queue-2"]
    assert after["queue"] == "queue-2"
    assert after["history"] == before["history"] + [put_entry(1, "queue-2", reqless=True)]
    for key in ("throttles", "queue", "history"):
        del before[key], after[key]
    assert after == before


@BOTH
async def test_requeue_validation(lua: Lua, v: Vocabulary) -> None:
    await refused(lua, "Job(): no jid provided", v.requeue, 0)
    await refused(lua, "Job(): no jid provided", v.requeue, 0, W, Q)
    missing = "Requeue(): Job jid does not exist"
    await refused(lua, missing, v.requeue, 0, W, Q, J, K, "{}", 0)
    await refused(lua, missing, v.requeue, 0, W, Q, J)  # existence first
    await put(lua, v, 0)
    await refused(lua, 'Put(): Arg "klass" missing', v.requeue, 0, W, Q, J)
    await refused(
        lua, 'Put(): Arg "delay" not a number: foo', v.requeue, 0, W, Q, J, K, "{}", "foo"
    )
    await lua("cancel" if not v.reqless else "job.cancel", 1, "jid")
    await refused(lua, missing, v.requeue, 2, W, Q, J, K, "{}", 0)


# ----------------------------------------------------------------------------------- pop


@BOTH
async def test_pop_validation(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0)
    name = "limit" if v.reqless else "count"
    await refused(lua, "Queue(): no queue name provided", v.pop, 1)
    await refused(lua, 'Pop(): Arg "worker" missing', v.pop, 1, "queue")
    for bad in ("number", "nan"):
        await refused(
            lua,
            f'Pop(): Arg "{name}" missing or not a number: {bad}',
            v.pop,
            1,
            "queue",
            "worker",
            bad,
        )
    await refused(
        lua, f'Pop(): Arg "{name}" missing or not a number: nil', v.pop, 1, "queue", "worker"
    )


@BOTH
async def test_pop_of_an_empty_queue_registers_the_worker(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    assert await lua(v.pop, 3, "queue", "worker", 10) == v.empty
    assert await redis.zrange("ql:workers", 0, -1, withscores=True) == [("worker", 3.0)]


@BOTH
async def test_pop_hands_out_a_job(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0)
    expected = v.job(
        state="running", worker="worker", expires=61, history=[v.put_entry(0), popped_entry(1)]
    )
    assert await pop(lua, v, 1, 10) == [expected]
    assert await lua.json(v.get, 1, "jid") == expected
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True) == [("jid", 61.0)]
    assert await redis.zrange("ql:w:worker:jobs", 0, -1, withscores=True) == [("jid", 61.0)]
    assert await redis.zrange("ql:workers", 0, -1, withscores=True) == [("worker", 1.0)]
    assert float(await hfield(redis, "ql:j:jid", "time")) == 1
    assert float(await hfield(redis, "ql:j:jid", "expires")) == 61
    if v.reqless:
        assert await redis.zrange("ql:th:ql:q:queue-locks", 0, -1) == ["jid"]


@BOTH
async def test_pop_uses_the_heartbeat_of_the_queue(lua: Lua, v: Vocabulary) -> None:
    await lua("config.set", 0, "heartbeat", 100)
    await lua("config.set", 0, "queue-heartbeat", 30)
    await put(lua, v, 0, "a")
    await put(lua, v, 0, "b", queue="other")
    assert [job["expires"] for job in await pop(lua, v, 2)] == [32]
    assert [job["expires"] for job in await pop(lua, v, 2, queue="other")] == [102]


@BOTH
async def test_pop_pages_through_the_queue_in_put_order(lua: Lua, v: Vocabulary) -> None:
    for i in range(10):
        await put(lua, v, i, f"jid-{i}")
    assert [job["jid"] for job in await pop(lua, v, 10, 7)] == [f"jid-{i}" for i in range(7)]
    assert [job["jid"] for job in await pop(lua, v, 10, 10)] == ["jid-7", "jid-8", "jid-9"]
    assert await lua(v.pop, 10, "queue", "worker", 10) == v.empty


@BOTH
async def test_pop_serves_higher_priority_first(lua: Lua, v: Vocabulary) -> None:
    priorities = [3, -10, 9, 0, -1, 5, 7, -4, 1, 8, 2, -7, 4, -2, 6, -9, -3, -8, -5, -6]
    for priority in priorities:
        await put(lua, v, 0, f"p{priority}", "priority", priority)
    popped = await pop(lua, v, 1, 20)
    assert [job["priority"] for job in popped] == list(range(9, -11, -1))


@BOTH
async def test_pop_serves_equal_priorities_first_in_first_out(lua: Lua, v: Vocabulary) -> None:
    # the jids sort the other way round, so only the insertion time can give this order
    for i in range(20):
        await put(lua, v, i, f"jid-{19 - i:02d}")
    popped = await pop(lua, v, 20, 20)
    assert [job["jid"] for job in popped] == [f"jid-{19 - i:02d}" for i in range(20)]


@BOTH
async def test_pop_breaks_exact_ties_by_reverse_jid(lua: Lua, v: Vocabulary) -> None:
    for jid in ("b", "c", "a"):
        await put(lua, v, 0, jid)
    assert [job["jid"] for job in await pop(lua, v, 0, 3)] == ["c", "b", "a"]


@BOTH
async def test_priority_beats_insertion_time(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, "early")
    await put(lua, v, 5, "late", "priority", 1)
    await put(lua, v, 6, "low", "priority", -1)
    assert await redis.zscore("ql:q:queue-work", "late") == score(1, 5)
    assert [job["jid"] for job in await pop(lua, v, 7, 3)] == ["late", "early", "low"]


@BOTH
async def test_pop_of_a_paused_queue(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    await put(lua, v, 0)
    await lua("queue.pause" if v.reqless else "pause", 0, "queue")
    assert await lua(v.pop, 1, "queue", "worker", 10) == v.empty
    assert await redis.zcard("ql:workers") == 0  # nothing else happens, CORE 6.3 step 2
    assert (await lua.json(v.get, 1, "jid"))["state"] == "waiting"
    await lua("queue.unpause" if v.reqless else "unpause", 1, "queue")
    assert [job["jid"] for job in await pop(lua, v, 2)] == ["jid"]


async def test_classic_pop_honours_max_concurrency(lua: Lua) -> None:
    await lua("config.set", 0, "queue-max-concurrency", 5)
    for i in range(10):
        await put(lua, CLASSIC, 0, f"jid-{i}")
    popped = await pop(lua, CLASSIC, 1, 10)
    assert len(popped) == 5
    assert await lua("pop", 1, "queue", "worker", 10) == "{}"
    await lua("complete", 2, popped[0]["jid"], "worker", "queue", "{}")
    assert len(await pop(lua, CLASSIC, 3, 10)) == 1


@BOTH
async def test_pop_events(lua: Lua, events: Any, v: Vocabulary) -> None:
    await put(lua, v, 0, "jid")
    await put(lua, v, 0, "untracked")
    await v.track(lua, 0)
    async with events() as captured:
        assert len(await pop(lua, v, 1, 2)) == 2
    assert captured.messages == [("ql:popped", "jid")]


# ------------------------------------------------------------------------- wait statistics


@BOTH
async def test_pop_records_wait_statistics(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    for i in range(20):
        await put(lua, v, 0, f"jid-{i}")
    for i in range(20):
        await pop(lua, v, i)
    day = await lua.json(v.stats, 20, "queue", 0)
    assert day["wait"]["count"] == 20
    assert day["wait"]["mean"] == pytest.approx(9.5)
    assert day["wait"]["std"] == pytest.approx(5.916079783099)
    assert day["wait"]["histogram"] == histogram(**{f"s{i}": 1 for i in range(20)})
    assert day["run"] == {"count": 0, "mean": 0, "std": 0, "histogram": histogram()}
    assert (day["retries"], day["failed"], day["failures"]) == (0, 0, 0)
    stored = {str(k): str(n) for k, n in (await redis.hgetall("ql:s:wait:0:queue")).items()}
    assert int(stored["total"]) == 20
    assert float(stored["mean"]) == pytest.approx(9.5)
    assert float(stored["vk"]) == pytest.approx(665)
    assert {k: int(n) for k, n in stored.items() if k.startswith("s")} == {
        f"s{i}": 1 for i in range(20)
    }


@BOTH
async def test_wait_histogram_buckets(lua: Lua, redis: aioredis.Redis, v: Vocabulary) -> None:
    t = 700000  # day bin 691200
    waits = [0, 59.5, 60, 3599, 3600, 86399, 86400, 172800, 604800]
    for i, wait in enumerate(waits):
        await put(lua, v, t - wait, f"jid-{i}")
    for _ in waits:
        await pop(lua, v, t)
    expected = histogram(s0=1, s59=1, m1=1, m59=1, h1=1, h23=1, d1=1, d2=1)  # d7 not shown
    for date in (t, 691200, 777599):
        day = await lua.json(v.stats, t, "queue", date)
        assert day["wait"]["count"] == len(waits)
        assert day["wait"]["histogram"] == expected
        assert day["wait"]["mean"] == pytest.approx(statistics.mean(waits))
        assert day["wait"]["std"] == pytest.approx(statistics.stdev(waits))
    assert (await lua.json(v.stats, t, "queue", 777600))["wait"]["count"] == 0
    assert await redis.hget("ql:s:wait:691200:queue", "d7") == "1"


@BOTH
async def test_stats_of_an_empty_day(lua: Lua, v: Vocabulary) -> None:
    empty: dict[str, Any] = {"count": 0, "mean": 0, "std": 0, "histogram": histogram()}
    assert len(empty["histogram"]) == 148
    assert await lua.json(v.stats, 0, "queue", 0) == {
        "retries": 0,
        "failed": 0,
        "failures": 0,
        "wait": empty,
        "run": empty,
    }


@BOTH
async def test_stats_validation(lua: Lua, v: Vocabulary) -> None:
    await refused(lua, "Queue(): no queue name provided", v.stats, 0)
    for args, bad in ((("queue",), "nil"), (("queue", "foo"), "foo"), (("queue", "nan"), "nan")):
        await refused(lua, f'Stats(): Arg "date" missing or not a number: {bad}', v.stats, 0, *args)


# ---------------------------------------------------------------------------------- peek


async def test_peek_validation(lua: Lua) -> None:
    await put(lua, CLASSIC, 0)
    await refused(lua, "Queue(): no queue name provided", "peek", 0)
    await refused(lua, 'Peek(): Arg "count" missing or not a number: nil', "peek", 0, "queue")
    await refused(
        lua,
        'Peek(): Arg "count" missing or not a number: number',
        "peek",
        0,
        "queue",
        "number",
    )


async def test_queue_peek_validation(lua: Lua) -> None:
    await put(lua, REQLESS, 0)
    await refused(lua, "Queue(): no queue name provided", "queue.peek", 0)
    offset = 'Peek(): Arg "offset" missing or not a number: '
    limit = 'Peek(): Arg "limit" missing or not a number: '
    await refused(lua, offset + "nil", "queue.peek", 0, "queue")
    await refused(lua, offset + "foo", "queue.peek", 0, "queue", "foo", 10)
    await refused(lua, offset + "foo", "queue.peek", 0, "queue", "foo", "bar")
    await refused(lua, limit + "nil", "queue.peek", 0, "queue", 0)
    await refused(lua, limit + "bar", "queue.peek", 0, "queue", 0, "bar")


@BOTH
async def test_peek_of_an_empty_queue(lua: Lua, v: Vocabulary) -> None:
    assert await lua(v.peek, 0, "queue", *v.peek_args(10)) == v.empty


async def test_queue_peek_with_a_limit_of_zero_or_less(lua: Lua) -> None:
    await put(lua, REQLESS, 0)
    assert await lua("queue.peek", 0, "queue", 0, 0) == "[]"
    assert await lua("queue.peek", 0, "queue", 0, -1) == "[]"


@BOTH
async def test_peek_lists_without_changing_anything(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    for priority in (0, 2, 1):
        await put(lua, v, 0, f"p{priority}", "priority", priority)
    before = await snapshot(redis)
    async with events() as captured:
        peeked = await lua.json(v.peek, 5, "queue", *v.peek_args(2))
    assert peeked == [v.job("p2", priority=2), v.job("p1", priority=1)]
    assert captured.messages == []
    assert await snapshot(redis) == before  # no worker, no statistics, no lock


@BOTH
async def test_peek_promotes_due_scheduled_jobs(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await put(lua, v, 0, delay=10)
    assert await lua(v.peek, 5, "queue", *v.peek_args(10)) == v.empty
    assert await lua.json(v.peek, 10, "queue", *v.peek_args(10)) == [v.job()]
    assert (await lua.json(v.get, 10, "jid"))["state"] == "waiting"
    assert await redis.zcard("ql:q:queue-scheduled") == 0
    # inserted with the promotion time, CORE 5.4
    assert await redis.zscore("ql:q:queue-work", "jid") == score(0, 10)


@BOTH
async def test_peek_lists_expired_locks_first_without_reclaiming(
    lua: Lua, redis: aioredis.Redis, events: Any, v: Vocabulary
) -> None:
    await put(lua, v, 0, "stale")
    await pop(lua, v, 0)
    await put(lua, v, 1, "high", "priority", 10)
    before = await snapshot(redis)
    async with events() as captured:
        peeked = await lua.json(v.peek, 100, "queue", *v.peek_args(2))
    assert [job["jid"] for job in peeked] == ["stale", "high"]
    assert peeked[0] == v.job(
        "stale",
        state="running",
        worker="worker",
        expires=60,
        history=[v.put_entry(0), popped_entry(0)],
    )
    assert captured.messages == []
    assert await snapshot(redis) == before


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [
        (0, 10, range(10)),
        (0, 20, range(20)),
        (10, 10, range(10, 20)),
        (0, 3, range(3)),
        (10, 3, range(10, 13)),
        (12, 3, range(12, 15)),
        (18, 3, range(18, 20)),
        (20, 5, range(0)),
        *[(k, 1, range(k, k + 1)) for k in range(20)],
    ],
)
async def test_queue_peek_offset_and_limit(
    lua: Lua, redis: aioredis.Redis, offset: int, limit: int, expected: range
) -> None:
    # REQLESS 8.3: expired locks first (by expiry, then jid), then the work set
    await redis.hset("ql:config", "heartbeat", 0)  # stored unchecked (another client)
    await lua("config.set", 0, "grace-period", 0)
    for k in range(20):
        await put(lua, REQLESS, k + 1, f"jid-{k}")
    assert len(await pop(lua, REQLESS, 21, 10)) == 10
    peeked = await lua.json("queue.peek", 22, "queue", offset, limit)
    assert [job["jid"] for job in peeked] == [f"jid-{k}" for k in expected]


# ------------------------------------------------------------------------ get / multiget


@BOTH
async def test_get(lua: Lua, v: Vocabulary) -> None:
    assert await lua(v.get, 0, "jid") is None
    await refused(lua, "Job(): no jid provided", v.get, 0)
    await put(lua, v, 0)
    assert await lua.json(v.get, 0, "jid") == v.job()


@BOTH
async def test_multiget(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "a")
    await put(lua, v, 1, "b")
    b = v.job("b", history=[v.put_entry(1)])
    assert await lua.json(v.multiget, 1, "b", "missing", "a") == [b, v.job("a")]
    assert await lua(v.multiget, 1, "missing") == v.empty
    assert await lua(v.multiget, 1) == v.empty


# ------------------------------------------------------------------------ history limits


@BOTH
async def test_max_job_history_keeps_the_first_entry(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    await lua("config.set", 0, "max-job-history", 5)
    for t in range(100):
        await put(lua, v, t)
    history = (await lua.json(v.get, 100, "jid"))["history"]
    assert history == [v.put_entry(t) for t in (0, 96, 97, 98, 99)]
    assert await redis.llen("ql:j:jid-history") == 5


@BOTH
async def test_max_job_history_default_is_100(lua: Lua, v: Vocabulary) -> None:
    for t in range(150):
        await put(lua, v, t)
    history = (await lua.json(v.get, 150, "jid"))["history"]
    assert history == [v.put_entry(t) for t in (0, *range(51, 150))]


@BOTH
async def test_max_job_history_zero_is_unlimited(lua: Lua, v: Vocabulary) -> None:
    await lua("config.set", 0, "max-job-history", 0)
    for t in range(120):
        await put(lua, v, t)
    assert len((await lua.json(v.get, 120, "jid"))["history"]) == 120


@BOTH
async def test_put_ignores_dependencies_on_complete_jobs(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0, "done")
    await pop(lua, v, 1)
    await v.complete(lua, 2, "done")
    await put(lua, v, 3, "jid", "depends", '["done"]')
    job = await lua.json(v.get, 3, "jid")
    assert (job["state"], job["dependencies"]) == ("waiting", {})


async def test_classic_max_concurrency_does_not_count_expired_locks(lua: Lua) -> None:
    await lua("config.set", 0, "queue-max-concurrency", 1)
    await lua("config.set", 0, "grace-period", 0)
    await put(lua, CLASSIC, 0, "a")
    await put(lua, CLASSIC, 0, "b")
    assert [job["jid"] for job in await pop(lua, CLASSIC, 1, 2)] == ["b"]
    assert await lua("pop", 2, "queue", "worker", 2) == "{}"
    popped = await pop(lua, CLASSIC, 71, 1, worker="other")
    assert [(job["jid"], job["remaining"]) for job in popped] == [("b", 4)]


async def test_queue_pop_skips_jids_without_a_job(lua: Lua, redis: aioredis.Redis) -> None:
    # REQLESS 6.7 steps 9-10: such jids are dropped from the work set, nothing is handed out
    await put(lua, REQLESS, 0)
    await redis.zadd("ql:q:queue-work", {"phantom": 5})
    popped = await pop(lua, REQLESS, 1, 2)
    assert [job["jid"] for job in popped] == ["jid"]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert await redis.exists("ql:j:phantom", "ql:j:phantom-history") == 0
    assert await redis.zrange("ql:q:queue-locks", 0, -1) == ["jid"]
    await redis.zadd("ql:q:queue-work", {"phantom": 5})
    assert await lua("queue.pop", 2, "queue", "worker", 5) == "[]"
    assert await redis.zcard("ql:q:queue-work") == 0


@BOTH
async def test_priority_change_reorders_the_work_set(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    command = "job.setPriority" if v.reqless else "priority"
    await put(lua, v, 0, "a")
    await put(lua, v, 1, "b", "priority", 1)
    assert [job["jid"] for job in await lua.json(v.peek, 2, "queue", *v.peek_args(2))] == [
        "b",
        "a",
    ]
    assert await lua(command, 2, "a", 2) == 2
    assert await redis.zscore("ql:q:queue-work", "a") == 2  # CORE 2.3: time part dropped
    assert [job["jid"] for job in await lua.json(v.peek, 2, "queue", *v.peek_args(2))] == [
        "a",
        "b",
    ]
    missing = (
        "Queue(): no queue name provided" if v.reqless else "Priority(): Job missing does not exist"
    )
    await refused(lua, missing, command, 2, "missing", 1)


async def popped_and_stored(lua: Lua, v: Vocabulary, now: float, count: int) -> tuple[Any, Any]:
    """A pop's objects, and the same jobs read with `get` right after it."""
    popped = await pop(lua, v, now, count)
    stored = [await lua.json(v.get, now, job["jid"]) for job in popped]
    return popped, stored


@BOTH
async def test_popped_objects_are_the_stored_jobs(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    # the objects a pop returns are built from what it read and wrote, not read again
    await put(lua, v, 0, "a", "tags", '["t"]', "priority", 2, "retries", 3)
    await put(lua, v, 0, "b", data='{"n": 1.5}')
    await put(lua, v, 0, "c", "depends", '["a"]')
    await put(lua, v, 0.25, "d")
    await v.track(lua, 0, "b")
    await redis.sadd("ql:j:d-dependencies", "gone")  # written by another client
    popped, stored = await popped_and_stored(lua, v, 1.125, 5)
    assert [job["jid"] for job in popped] == ["a", "b", "d"]
    assert popped == stored
    assert popped[0]["dependents"] == ["c"]
    assert popped[2]["dependencies"] == ["gone"]
    assert popped[1]["tracked"] is True
    assert popped[0]["expires"] == 61.125


@BOTH
async def test_a_job_taken_twice_by_one_pop_shows_its_final_state(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    # a running job whose lock expired, also back in the work set (a throttle release of a
    # stale pending entry): the pop reclaims it, then takes it again from the work set
    await lua("config.set", 0, "grace-period", 0)
    await put(lua, v, 0)
    await pop(lua, v, 1)
    await redis.zadd("ql:q:queue-work", {"jid": 0})
    popped, stored = await popped_and_stored(lua, v, 100, 2)
    assert [job["jid"] for job in popped] == ["jid", "jid"]
    assert popped == stored
    assert [entry["what"] for entry in popped[0]["history"]][-2:] == ["popped", "popped"]


async def test_a_job_reclaimed_then_parked_by_one_pop_shows_its_final_state(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await lua("throttle.set", 0, "t", 1)
    await put(lua, REQLESS, 0, "jid", "throttles", '["t"]')
    await pop(lua, REQLESS, 1)
    await redis.zadd("ql:q:queue-work", {"jid": 0})
    popped, stored = await popped_and_stored(lua, REQLESS, 100, 2)
    assert [job["jid"] for job in popped] == ["jid"]
    assert popped == stored
    assert popped[0]["state"] == "throttled"


@BOTH
async def test_a_pop_of_several_jobs_takes_their_throttle_slots(
    lua: Lua, redis: aioredis.Redis, v: Vocabulary
) -> None:
    # slots on unlimited throttles are added together, limited ones one by one
    await lua("throttle.set", 0, "limited", 2)
    for i in range(4):
        await lua(
            "queue.put", i, "w", "queue", f"j{i}", "K", "{}", 0, "throttles", '["u", "limited"]'
        )
    popped = await pop(lua, v, 5, 4)
    assert [job["jid"] for job in popped] == ["j0", "j1"]
    for tid in ("ql:th:u-locks", "ql:th:limited-locks", "ql:th:ql:q:queue-locks"):
        assert await redis.zrange(tid, 0, -1, withscores=True) == [("j0", 1.0), ("j1", 1.0)]
    assert await redis.zrange("ql:th:limited-pending", 0, -1) == ["j2", "j3"]
    assert await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True) == [
        ("j0", 65.0),
        ("j1", 65.0),
    ]
    assert await redis.zrange("ql:w:worker:jobs", 0, -1) == ["j0", "j1"]
