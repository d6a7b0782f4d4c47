"""Recurring jobs.

Classic `recur`, `recur.get`, `recur.update`, `recur.tag`, `recur.untag`, `unrecur`
(CORE 6.32-6.37) and reqless `queue.recurAtInterval`, `recurringJob.get`,
`recurringJob.update`, `recurringJob.addTag`, `recurringJob.removeTag`, `recurringJob.cancel`
(REQLESS 8.18, 5.2); spawning through pop and peek (CORE 5.5).
"""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import pop, put, rpop
from tests.scripts.expect import (
    classic_job,
    popped_entry,
    put_entry,
    refused,
    reqless_job,
    throttle_list,
)


async def recur(lua: Lua, now: float, *options: str | int, **kwargs: Any) -> None:
    """Classic `recur` of template `jid` (class `klass`, data `{}`) into `queue`."""
    queue = kwargs.get("queue", "queue")
    jid = kwargs.get("jid", "jid")
    interval = kwargs.get("interval", 60)
    offset = kwargs.get("offset", 0)
    reply = await lua(
        "recur", now, queue, jid, "klass", "{}", "interval", interval, offset, *options
    )
    assert reply == jid


async def rrecur(lua: Lua, now: float, *options: str | int, **kwargs: Any) -> None:
    """Reqless `queue.recurAtInterval` of template `jid` (class `klass`, data `{}`)."""
    queue = kwargs.get("queue", "queue")
    jid = kwargs.get("jid", "jid")
    interval = kwargs.get("interval", 60)
    offset = kwargs.get("offset", 0)
    reply = await lua(
        "queue.recurAtInterval", now, queue, jid, "klass", "{}", interval, offset, *options
    )
    assert reply == jid


def template(**fields: Any) -> dict[str, Any]:
    """The classic 11-key recurring object (CORE 4.2)."""
    result: dict[str, Any] = {
        "jid": "jid",
        "klass": "klass",
        "state": "recur",
        "queue": "queue",
        "priority": 0,
        "interval": 60,
        "retries": 0,
        "count": 0,
        "data": "{}",
        "tags": {},
        "backlog": 0,
    }
    result.update(fields)
    return result


def rtemplate(throttles: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The reqless 12-key recurring object (REQLESS 5.2)."""
    result = template(**fields)
    result["throttles"] = throttle_list(result["queue"], throttles)
    return result


def spawned(jid: str, when: int, **fields: Any) -> dict[str, Any]:
    """A classic child of template `jid` spawned at `when` and popped at `popped`."""
    popped = fields.pop("popped", when)
    return classic_job(
        jid,
        state="running",
        worker="worker",
        expires=popped + 60,
        retries=fields.pop("retries", 0),
        spawned_from_jid="jid",
        history=[put_entry(when), popped_entry(popped)],
        **fields,
    )


# ---------------------------------------------------------------------------------------------
# classic `recur` (CORE 6.32)

BASE = ("queue", "jid", "klass", "{}", "interval", "60", "0")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Queue(): no queue name provided"),
        (("queue",), 'RecurringJob On(): Arg "jid" missing'),
        (("queue", "jid"), 'RecurringJob On(): Arg "klass" missing'),
        (("queue", "jid", "klass"), 'RecurringJob On(): Arg "spec" missing'),
        (("queue", "jid", "klass", "{}"), 'RecurringJob On(): Arg "spec" missing'),
        (("queue", "jid", "klass", "{]"), 'RecurringJob On(): Arg "spec" missing'),
        (("queue", "jid", "klass", "{]", "interval", "60", "0"), None),
        (
            ("queue", "jid", "klass", "false", "interval", "60", "0"),
            'RecurringJob On(): Arg "data" not JSON: false',
        ),
        (
            ("queue", "jid", "klass", "{}", "cron", "60", "0"),
            'Recur(): schedule type "cron" unknown',
        ),
        (("queue", "jid", "klass", "{}", "interval"), 'Recur(): Arg "interval" not a number: nil'),
        (
            ("queue", "jid", "klass", "{}", "interval", "foo", "0"),
            'Recur(): Arg "interval" not a number: foo',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "nan", "0"),
            'Recur(): Arg "interval" not a number: nan',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "60"),
            'Recur(): Arg "offset" not a number: nil',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "60", "foo"),
            'Recur(): Arg "offset" not a number: foo',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "60", "inf"),
            'Recur(): Arg "offset" not a number: inf',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "0", "foo"),
            'Recur(): Arg "offset" not a number: foo',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "0", "0"),
            'Recur(): Arg "interval" must be greater than 0',
        ),
        (
            ("queue", "jid", "klass", "{}", "interval", "-1", "0", "priority"),
            'Recur(): Arg "interval" must be greater than 0',
        ),
        ((*BASE, "priority"), "Odd number of additional args: "),
        ((*BASE, "priority", "1", "tags"), "Odd number of additional args: "),
        ((*BASE, "tags", "false"), 'Recur(): Arg "tags" must be JSON string array: false'),
        ((*BASE, "tags", "[}"), None),
        ((*BASE, "priority", "foo"), 'Recur(): Arg "priority" not a number: foo'),
        ((*BASE, "priority", "nan"), 'Recur(): Arg "priority" not a number: nan'),
        ((*BASE, "retries", "foo"), 'Recur(): Arg "retries" not a number: foo'),
        ((*BASE, "backlog", "foo"), 'Recur(): Arg "backlog" not a number: foo'),
        ((*BASE, "priority", "5", "backlog", "foo"), 'Recur(): Arg "backlog" not a number: foo'),
    ],
)
async def test_recur_malformed(lua: Lua, args: tuple[str, ...], text: str | None) -> None:
    await recur(lua, 0, "priority", 3, queue="old", interval=30)  # must stay as it is
    await refused(lua, text, "recur", 1, *args)


async def test_recur_creates_a_template(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        await recur(lua, 0)
    assert captured.messages == []
    stored = await redis.hgetall("ql:r:jid")
    stored.pop("throttles", None)  # decision 3: classic templates may carry it
    assert {k: v for k, v in stored.items() if k not in ("priority", "interval")} == {
        "jid": "jid",
        "klass": "klass",
        "data": "{}",
        "tags": "{}",
        "state": "recur",
        "queue": "queue",
        "type": "interval",
        "count": "0",
        "retries": "0",
        "backlog": "0",
    }
    assert float(stored["priority"]) == 0
    assert float(stored["interval"]) == 60
    assert await redis.zrange("ql:q:queue-recur", 0, -1, withscores=True) == [("jid", 0)]
    assert await redis.zrange("ql:queues", 0, -1, withscores=True) == [("queue", 0)]
    assert await redis.keys("ql:j:*") == []  # nothing is spawned by `recur` itself
    assert await lua.json("recur.get", 0, "jid") == template()


async def test_recur_with_options(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(
        lua,
        10,
        "priority",
        1,
        "retries",
        2,
        "tags",
        '["a", "b"]',
        "backlog",
        3,
        "unknown",
        "ignored",
        "priority",
        5,
        offset=30,
        interval=15,
    )
    assert await lua.json("recur.get", 10, "jid") == template(
        priority=5, retries=2, tags=["a", "b"], backlog=3, interval=15
    )
    assert await redis.zscore("ql:q:queue-recur", "jid") == 40  # now + offset
    assert await redis.zscore("ql:queues", "queue") == 10


async def test_recur_get_malformed_and_unknown(lua: Lua) -> None:
    await refused(lua, "Recurring(): no jid provided", "recur.get", 0)
    assert await lua("recur.get", 0, "nope") is None


# ---------------------------------------------------------------------------------------------
# spawning (CORE 5.5)


async def test_spawn_on_pop(lua: Lua) -> None:
    await recur(lua, 0)
    popped = await lua.json("pop", 0, "queue", "worker", 10)
    assert popped == [spawned("jid-1", 0)]
    assert await lua.json("pop", 59, "queue", "worker", 10) == {}
    popped = await lua.json("pop", 61, "queue", "worker", 10)
    assert popped == [spawned("jid-2", 60, popped=61)]
    assert (await lua.json("recur.get", 61, "jid"))["count"] == 2
    assert await lua.redis.zscore("ql:q:queue-recur", "jid") == 120


async def test_spawn_with_offset(lua: Lua) -> None:
    await recur(lua, 0, offset=10)
    assert await pop(lua, 9, 10) == []
    assert await pop(lua, 11, 10) == ["jid-1"]
    assert await pop(lua, 69, 10) == []
    assert await pop(lua, 71, 10) == ["jid-2"]


async def test_spawn_copies_the_template(lua: Lua, redis: aioredis.Redis) -> None:
    await lua(
        "recur", 0, "queue", "jid", "klass", "[]", "interval", 60, 0,
        "tags", '["foo"]', "retries", 2, "priority", 3,
    )  # fmt: skip
    popped = await lua.json("pop", 5, "queue", "worker", 10)
    assert popped == [spawned("jid-1", 0, popped=5, retries=2, tags=["foo"], priority=3, data="[]")]
    assert await redis.zrange("ql:t:foo", 0, -1, withscores=True) == [("jid-1", 5)]
    assert await redis.zscore("ql:tags", "foo") == 1
    assert await lua.json("tag", 5, "get", "foo") == {"total": 1, "jobs": ["jid-1"]}


async def test_spawned_priority_competes(lua: Lua) -> None:
    await put(lua, 0, "job")
    await recur(lua, 0, "priority", 10)
    assert await pop(lua, 0) == ["jid-1"]
    assert await pop(lua, 0) == ["job"]


async def test_spawn_catches_up_in_order(lua: Lua) -> None:
    await recur(lua, 0)
    popped = await lua.json("pop", 599, "queue", "worker", 10)
    assert [job["jid"] for job in popped] == [f"jid-{i}" for i in range(1, 11)]
    assert [job["history"][0]["when"] for job in popped] == list(range(0, 600, 60))
    assert await lua.redis.zscore("ql:q:queue-recur", "jid") == 600


async def test_spawn_is_limited_by_the_count(lua: Lua) -> None:
    await recur(lua, 0)
    assert await pop(lua, 599, 3) == ["jid-1", "jid-2", "jid-3"]
    assert await lua.redis.zscore("ql:q:queue-recur", "jid") == 180
    assert await pop(lua, 599, 10) == [f"jid-{i}" for i in range(4, 11)]


async def test_spawn_with_backlog(lua: Lua) -> None:
    await recur(lua, 0, "backlog", 1)
    popped = await lua.json("pop", 600, "queue", "worker", 10)
    assert [job["jid"] for job in popped] == ["jid-1", "jid-2"]
    assert [job["history"][0]["when"] for job in popped] == [540, 600]
    assert await lua.redis.zscore("ql:q:queue-recur", "jid") == 660


async def test_spawn_on_peek(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0, interval=10)
    peeked = await lua.json("peek", 99, "queue", 10)
    assert [job["jid"] for job in peeked] == [f"jid-{i}" for i in range(1, 11)]
    assert {job["state"] for job in peeked} == {"waiting"}
    assert await redis.zcard("ql:workers") == 0
    # a spawned child enters the work set at its spawn time
    assert await redis.zscore("ql:q:queue-work", "jid-2") == pytest.approx(-10 / 1e10)


async def test_no_spawn_from_a_paused_queue(lua: Lua) -> None:
    await recur(lua, 0)
    await lua("pause", 0, "queue")
    assert await lua.json("pop", 0, "queue", "worker", 10) == {}
    assert (await lua.json("recur.get", 0, "jid"))["count"] == 0


async def test_spawn_publishes_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    async with EventCapture(redis, "ql:*") as captured:
        await lua("peek", 120, "queue", 10)
    assert captured.messages == []


async def test_rerecur_keeps_count_and_updates(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await lua.json("pop", 0, "queue", "worker", 10) == [spawned("jid-1", 0)]
    reply = await lua(
        "recur", 60, "queue", "jid", "class", '{"foo": "bar"}', "interval", 60, 0,
        "priority", 10, "tags", '["foo"]', "retries", 5,
    )  # fmt: skip
    assert reply == "jid"
    expected = template(
        klass="class", data='{"foo": "bar"}', priority=10, tags=["foo"], retries=5, count=1
    )
    assert await lua.json("recur.get", 60, "jid") == expected
    assert await redis.zscore("ql:q:queue-recur", "jid") == 60
    child = spawned("jid-2", 60, retries=5, priority=10, tags=["foo"], data='{"foo": "bar"}')
    child["klass"] = "class"
    assert await lua.json("pop", 60, "queue", "worker", 10) == [child]
    assert (await lua.json("recur.get", 60, "jid"))["count"] == 2


async def test_rerecur_into_another_queue(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await pop(lua, 0, 10) == ["jid-1"]
    await recur(lua, 0, queue="other")
    assert await redis.zcard("ql:q:queue-recur") == 0
    assert await redis.zscore("ql:q:other-recur", "jid") == 0
    assert await pop(lua, 60, 10) == []
    assert await pop(lua, 60, 10, queue="other") == ["jid-2", "jid-3"]


# ---------------------------------------------------------------------------------------------
# classic `recur.update` (CORE 6.34)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Recurring(): no jid provided"),
        (("nope",), "Recur(): No recurring job nope"),
        (("nope", "priority", "1"), "Recur(): No recurring job nope"),
        (("jid", "priority"), "No value provided for priority"),
        (("jid", "interval"), "No value provided for interval"),
        (("jid", "retries"), "No value provided for retries"),
        (("jid", "data"), "No value provided for data"),
        (("jid", "klass"), "No value provided for klass"),
        (("jid", "queue"), "No value provided for queue"),
        (("jid", "backlog"), "No value provided for backlog"),
        (("jid", "priority", "foo"), 'Recur(): Arg "priority" must be a number: foo'),
        (("jid", "interval", "foo"), 'Recur(): Arg "interval" must be a number: foo'),
        (("jid", "interval", "nan"), 'Recur(): Arg "interval" must be a number: nan'),
        (("jid", "retries", "foo"), 'Recur(): Arg "retries" must be a number: foo'),
        (("jid", "data", "false"), 'Recur(): Arg "data" is not JSON-encoded: false'),
        (("jid", "data", "[}"), None),
        (("jid", "backlog", "foo"), 'Recur(): Arg "backlog" not a number: foo'),
        (("jid", "foo", "bar"), 'Recur(): Unrecognized option "foo"'),
        (("jid", "throttles", '["x"]'), 'Recur(): Unrecognized option "throttles"'),
        # decision 1: earlier options are not applied when a later one fails
        (("jid", "priority", "5", "retries", "foo"), 'Recur(): Arg "retries" must be a number'),
        (("jid", "queue", "other", "interval", "10", "foo", "bar"), "Unrecognized option"),
        (("jid", "klass", "other", "data", "[]", "backlog"), "No value provided for backlog"),
    ],
)
async def test_recur_update_malformed(lua: Lua, args: tuple[str, ...], text: str | None) -> None:
    await recur(lua, 0)
    await pop(lua, 0)
    await refused(lua, text, "recur.update", 1, *args)


async def test_recur_update_without_options(lua: Lua) -> None:
    await recur(lua, 0)
    assert await lua("recur.update", 0, "jid") == 1
    assert await lua.json("recur.get", 0, "jid") == template()


async def test_recur_update_interval_shifts_the_next_spawn(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await pop(lua, 0, 10) == ["jid-1"]  # next spawn at 60
    assert await lua("recur.update", 0, "jid", "interval", 10) == 1
    assert await redis.zscore("ql:q:queue-recur", "jid") == 10
    popped = await lua.json("pop", 60, "queue", "worker", 10)
    assert [job["history"][0]["when"] for job in popped] == [10, 20, 30, 40, 50, 60]
    assert (await lua.json("recur.get", 60, "jid"))["interval"] == 10


async def test_recur_update_fields_shape_the_next_child(lua: Lua) -> None:
    await recur(lua, 0)
    assert await pop(lua, 0, 10) == ["jid-1"]
    reply = await lua(
        "recur.update", 1, "jid", "priority", 3, "retries", 4, "data", '{"a": [] }',
        "klass", "other.Klass", "backlog", 2,
    )  # fmt: skip
    assert reply == 1
    assert await lua.json("recur.get", 1, "jid") == template(
        priority=3, retries=4, data='{"a": [] }', klass="other.Klass", backlog=2, count=1
    )
    child = spawned("jid-2", 60, priority=3, retries=4, data='{"a": [] }')
    child["klass"] = "other.Klass"
    assert await lua.json("pop", 60, "queue", "worker", 10) == [child]


async def test_recur_update_moves_the_template(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await pop(lua, 0, 10) == ["jid-1"]
    assert await lua("recur.update", 5, "jid", "queue", "other") == 1
    assert await redis.zcard("ql:q:queue-recur") == 0
    assert await redis.zscore("ql:q:other-recur", "jid") == 60  # the score moves along
    assert await redis.zscore("ql:queues", "other") == 5
    assert (await lua.json("recur.get", 5, "jid"))["queue"] == "other"
    assert await pop(lua, 60, 10) == []
    assert await pop(lua, 60, 10, queue="other") == ["jid-2"]


@pytest.mark.parametrize(
    ("name", "value", "refusal"),
    [
        ("interval", -100, 'Recur(): Arg "interval" must be greater than 0'),
        ("interval", 0, 'Recur(): Arg "interval" must be greater than 0'),
        ("backlog", -1, 'Recur(): Arg "backlog" must not be negative: -1'),
    ],
)
async def test_recur_update_refuses_an_interval_of_0_or_less_and_a_negative_backlog(
    lua: Lua, redis: aioredis.Redis, name: str, value: int, refusal: str
) -> None:
    # aqless's own check (the reference stored them: a spawn every -100 s never came, one
    # every 0 s spawned without end); other clients meet it, aqless's are refused before
    await recur(lua, 0, offset=10)
    await refused(lua, refusal, "recur.update", 0, "jid", "priority", 3, name, value)
    await refused(lua, refusal, "recurringJob.update", 0, "jid", name, value)
    assert await redis.zscore("ql:q:queue-recur", "jid") == 10


async def test_recur_refuses_a_negative_backlog(lua: Lua, redis: aioredis.Redis) -> None:
    refusal = 'Recur(): Arg "backlog" must not be negative: -1'
    args = ("queue", "jid", "K", "{}", 60, 0, "backlog", -1)
    await refused(lua, refusal, "queue.recurAtInterval", 0, *args)
    await refused(lua, refusal, "recur", 0, *args[:4], "interval", *args[4:])


async def test_spawn_does_not_register_the_queue(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    await lua("queue.forget", 0, "queue")
    assert await pop(lua, 0, 10) == ["jid-1"]
    assert await redis.zcard("ql:queues") == 0


async def test_recur_update_publishes_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    async with EventCapture(redis, "ql:*") as captured:
        await lua("recur.update", 0, "jid", "priority", 1, "queue", "other")
        await lua("recur.tag", 0, "jid", "foo")
        await lua("recur.untag", 0, "jid", "foo")
        await lua("unrecur", 0, "jid")
    assert captured.messages == []


# ---------------------------------------------------------------------------------------------
# classic `recur.tag` / `recur.untag` (CORE 6.35, 6.36)


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("recur.tag", (), "Recurring(): no jid provided"),
        ("recur.tag", ("nope", "foo"), "Tag(): Job nope does not exist"),
        ("recur.untag", (), "Recurring(): no jid provided"),
        ("recur.untag", ("nope", "foo"), "Untag(): Job nope does not exist"),
    ],
)
async def test_recur_tag_malformed(
    lua: Lua, command: str, args: tuple[str, ...], text: str
) -> None:
    await recur(lua, 0)
    await refused(lua, text, command, 0, *args)


async def test_recur_tag_and_untag(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await lua("recur.tag", 0, "jid") == "{}"
    assert await lua.json("recur.tag", 0, "jid", "foo") == ["foo"]
    assert await lua.json("recur.tag", 0, "jid", "foo", "bar") == ["foo", "bar"]
    # quirk: a new tag given twice in one call is appended twice
    assert await lua.json("recur.tag", 0, "jid", "baz", "baz") == ["foo", "bar", "baz", "baz"]
    assert await redis.keys("ql:t*") == []  # template tags register nothing
    assert await lua.json("recur.untag", 0, "jid", "baz", "nope") == ["foo", "bar"]
    assert (await lua.json("recur.get", 0, "jid"))["tags"] == ["foo", "bar"]
    popped = await lua.json("pop", 0, "queue", "worker", 1)
    assert popped[0]["tags"] == ["foo", "bar"]
    assert await lua("recur.untag", 0, "jid", "foo", "bar") == "{}"
    assert await redis.hget("ql:r:jid", "tags") == "{}"
    popped = await lua.json("pop", 60, "queue", "worker", 1)
    assert popped[0]["tags"] == {}


# ---------------------------------------------------------------------------------------------
# classic `unrecur` (CORE 6.37)


async def test_unrecur(lua: Lua, redis: aioredis.Redis) -> None:
    await recur(lua, 0)
    assert await pop(lua, 0, 10) == ["jid-1"]
    assert await lua("unrecur", 1, "jid") == 1
    assert await redis.exists("ql:r:jid", "ql:q:queue-recur") == 0
    assert await lua("recur.get", 1, "jid") is None
    assert (await lua.json("get", 1, "jid-1"))["state"] == "running"  # children stay
    assert await pop(lua, 600, 10) == []
    assert await lua("unrecur", 1, "nope") == 1
    # the numbering restarts with a new template of the same id
    await recur(lua, 600)
    assert await pop(lua, 600, 10) == ["jid-1"]
    assert await redis.hget("ql:j:jid-1", "worker") == "worker"


async def test_unrecur_malformed(lua: Lua) -> None:
    await recur(lua, 0)
    await refused(lua, "Recurring(): no jid provided", "unrecur", 0)


# ---------------------------------------------------------------------------------------------
# reqless `queue.recurAtInterval` (REQLESS 8.18)

RBASE = ("queue", "jid", "klass", "{}", "60", "0")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Queue(): no queue name provided"),
        (("queue",), 'Recur(): Arg "jid" missing'),
        (("queue", "jid"), 'Recur(): Arg "klass" missing'),
        (("queue", "jid", "klass"), None),
        (("queue", "jid", "klass", "{]", "60", "0"), None),
        (("queue", "jid", "klass", "false", "60", "0"), 'Recur(): Arg "data" not JSON: false'),
        (("queue", "jid", "klass", "{}"), 'Recur(): Arg "interval" not a number: nil'),
        (("queue", "jid", "klass", "{}", "foo", "0"), 'Recur(): Arg "interval" not a number: foo'),
        (("queue", "jid", "klass", "{}", "inf", "0"), 'Recur(): Arg "interval" not a number: inf'),
        (("queue", "jid", "klass", "{}", "60"), 'Recur(): Arg "offset" not a number: nil'),
        (("queue", "jid", "klass", "{}", "60", "foo"), 'Recur(): Arg "offset" not a number: foo'),
        (
            ("queue", "jid", "klass", "{}", "0", "0"),
            'Recur(): Arg "interval" must be greater than 0',
        ),
        ((*RBASE, "priority"), "Recur(): Odd number of additional args: "),
        ((*RBASE, "tags", "false"), 'Recur(): Arg "tags" must be JSON string array: false'),
        ((*RBASE, "tags", "[}"), None),
        ((*RBASE, "priority", "foo"), 'Recur(): Arg "priority" not a number: foo'),
        ((*RBASE, "retries", "foo"), 'Recur(): Arg "retries" not a number: foo'),
        ((*RBASE, "backlog", "foo"), 'Recur(): Arg "backlog" not a number: foo'),
        ((*RBASE, "throttles", "false"), 'Recur(): Arg "throttles" not JSON array: false'),
        ((*RBASE, "throttles", "[}"), None),
    ],
)
async def test_recur_at_interval_malformed(
    lua: Lua, args: tuple[str, ...], text: str | None
) -> None:
    await rrecur(lua, 0, "priority", 3, queue="old", interval=30)
    await refused(lua, text, "queue.recurAtInterval", 1, *args)


async def test_recur_at_interval_creates_a_template(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        await rrecur(lua, 0)
    assert captured.messages == []
    assert await lua.json("recurringJob.get", 0, "jid") == rtemplate()
    assert await redis.hget("ql:r:jid", "throttles") == '["ql:q:queue"]'
    assert await redis.zrange("ql:q:queue-recur", 0, -1, withscores=True) == [("jid", 0)]
    assert await redis.zrange("ql:queues", 0, -1, withscores=True) == [("queue", 0)]
    assert await redis.keys("ql:j:*") == []


async def test_recur_at_interval_with_options(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(
        lua, 10, "priority", 5, "retries", 2, "tags", '["a"]', "backlog", 3,
        "throttles", '["tid", "wid"]', offset=30, interval=15,
    )  # fmt: skip
    assert await lua.json("recurringJob.get", 10, "jid") == rtemplate(
        ["tid", "wid", "ql:q:queue"], priority=5, retries=2, tags=["a"], backlog=3, interval=15
    )
    assert await redis.zscore("ql:q:queue-recur", "jid") == 40


async def test_recurring_job_get_malformed_and_unknown(lua: Lua) -> None:
    await refused(lua, "Recurring(): no jid provided", "recurringJob.get", 0)
    assert await lua("recurringJob.get", 0, "nope") is None


async def test_reqless_spawn(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0, "throttles", '["tid"]', "tags", '["foo"]', "retries", 1)
    popped = await lua.json("queue.pop", 0, "queue", "worker", 10)
    assert popped == [
        reqless_job(
            "jid-1",
            state="running",
            worker="worker",
            expires=60,
            retries=1,
            tags=["foo"],
            spawned_from_jid="jid",
            throttles=["tid", "ql:q:queue"],
            history=[put_entry(0, reqless=True), popped_entry(0)],
        )
    ]
    assert await redis.hget("ql:j:jid-1", "throttles") == '["tid","ql:q:queue"]'
    assert await lua("queue.pop", 59, "queue", "worker", 10) == "[]"
    assert await rpop(lua, 61, 10) == ["jid-2"]
    assert await lua.json("queue.peek", 599, "queue", 0, 20) != []  # peek spawns too
    assert (await lua.json("recurringJob.get", 599, "jid"))["count"] == 10


async def test_reqless_spawn_with_offset_and_backlog(lua: Lua) -> None:
    await rrecur(lua, 0, "backlog", 1, offset=10)
    assert await rpop(lua, 9, 10) == []
    popped = await lua.json("queue.pop", 610, "queue", "worker", 10)
    assert [job["history"][0]["when"] for job in popped] == [550, 610]
    assert [job["jid"] for job in popped] == ["jid-1", "jid-2"]


async def test_history_vocabulary_of_spawned_jobs(lua: Lua) -> None:
    # decision 4: the put entry is shown in the reader's vocabulary
    await recur(lua, 0)
    await lua("peek", 0, "queue", 10)
    assert (await lua.json("job.get", 0, "jid-1"))["history"] == [put_entry(0, reqless=True)]
    assert (await lua.json("get", 0, "jid-1"))["history"] == [put_entry(0)]


async def test_reqless_rerecur_keeps_count_and_updates(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0)
    assert await rpop(lua, 0, 10) == ["jid-1"]
    reply = await lua(
        "queue.recurAtInterval", 60, "queue", "jid", "class", '{"foo": "bar"}', 60, 0,
        "priority", 10, "tags", '["foo"]', "retries", 5, "throttles", '["lala"]',
    )  # fmt: skip
    assert reply == "jid"
    assert await lua.json("recurringJob.get", 60, "jid") == rtemplate(
        ["lala", "ql:q:queue"],
        klass="class",
        data='{"foo": "bar"}',
        priority=10,
        tags=["foo"],
        retries=5,
        count=1,
    )
    popped = await lua.json("queue.pop", 60, "queue", "worker", 10)
    assert [job["jid"] for job in popped] == ["jid-2"]
    assert popped[0]["throttles"] == ["lala", "ql:q:queue"]
    assert popped[0]["klass"] == "class"
    assert await redis.zrange("ql:th:lala-locks", 0, -1) == ["jid-2"]


async def test_reqless_rerecur_throttle_list_quirks(lua: Lua) -> None:
    await rrecur(lua, 0, "throttles", '["ql:q:queue"]')
    assert (await lua.json("recurringJob.get", 0, "jid"))["throttles"] == [
        "ql:q:queue",
        "ql:q:queue",
    ]
    # re-recur removes entries equal to the bare name of the old queue
    await rrecur(lua, 0, "throttles", '["queue", "x", "ql:q:queue"]')
    assert (await lua.json("recurringJob.get", 0, "jid"))["throttles"] == [
        "x",
        "ql:q:queue",
        "ql:q:queue",
    ]


async def test_reqless_rerecur_into_another_queue(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0)
    assert await rpop(lua, 0, 10) == ["jid-1"]
    await rrecur(lua, 0, queue="other")
    assert await lua.json("recurringJob.get", 0, "jid") == rtemplate(queue="other", count=1)
    assert await redis.zcard("ql:q:queue-recur") == 0
    assert await rpop(lua, 60, 10) == []
    assert await rpop(lua, 60, 10, queue="other") == ["jid-2", "jid-3"]


# ---------------------------------------------------------------------------------------------
# reqless `recurringJob.update` (REQLESS 8.18)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Recurring(): no jid provided"),
        (("nope", "priority", "1"), "Recur(): No recurring job nope"),
        (("jid", "priority"), "No value provided for priority"),
        (("jid", "throttles"), "No value provided for throttles"),
        (("jid", "priority", "foo"), 'Recur(): Arg "priority" must be a number: foo'),
        (("jid", "interval", "foo"), 'Recur(): Arg "interval" must be a number: foo'),
        (("jid", "retries", "foo"), 'Recur(): Arg "retries" must be a number: foo'),
        (("jid", "data", "false"), 'Recur(): Arg "data" is not JSON-encoded: false'),
        (("jid", "backlog", "foo"), 'Recur(): Arg "backlog" not a number: foo'),
        (("jid", "throttles", "false"), 'Recur(): Arg "throttles" is not JSON-encoded: false'),
        (("jid", "throttles", "[}"), None),
        (("jid", "foo", "bar"), 'Recur(): Unrecognized option "foo"'),
        (("jid", "throttles", '["t"]', "queue", "other", "data", "[}"), None),
    ],
)
async def test_recurring_job_update_malformed(
    lua: Lua, args: tuple[str, ...], text: str | None
) -> None:
    await rrecur(lua, 0)
    await refused(lua, text, "recurringJob.update", 1, *args)


async def test_recurring_job_update(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0, "throttles", '["tid"]')
    assert await rpop(lua, 0, 10) == ["jid-1"]
    reply = await lua(
        "recurringJob.update", 1, "jid", "priority", 3, "retries", 4, "data", "[]",
        "klass", "other.Klass", "backlog", 2, "interval", 30,
    )  # fmt: skip
    assert reply == 1
    assert await lua.json("recurringJob.get", 1, "jid") == rtemplate(
        ["tid", "ql:q:queue"],
        priority=3,
        retries=4,
        data="[]",
        klass="other.Klass",
        backlog=2,
        interval=30,
        count=1,
    )
    assert await redis.zscore("ql:q:queue-recur", "jid") == 30
    popped = await lua.json("queue.pop", 30, "queue", "worker", 10)
    assert [(j["jid"], j["priority"], j["retries"], j["data"]) for j in popped] == [
        ("jid-2", 3, 4, "[]")
    ]


async def test_recurring_job_update_queue(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0, "throttles", '["tid"]')
    assert await rpop(lua, 0, 10) == ["jid-1"]
    assert await lua("recurringJob.update", 5, "jid", "queue", "other") == 1
    assert (await lua.json("recurringJob.get", 5, "jid"))["throttles"] == ["tid", "ql:q:other"]
    assert await redis.zscore("ql:q:other-recur", "jid") == 60
    assert await redis.zscore("ql:queues", "other") == 5
    assert await rpop(lua, 60, 10) == []
    popped = await lua.json("queue.pop", 60, "other", "worker", 10)
    assert [(job["jid"], job["throttles"]) for job in popped] == [("jid-2", ["tid", "ql:q:other"])]


async def test_recurring_job_update_throttles(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0)
    assert await lua("recurringJob.update", 0, "jid", "throttles", '[ "throttle" ]') == 1
    # replaced entirely (no queue throttle added) and re-encoded
    assert await redis.hget("ql:r:jid", "throttles") == '["throttle"]'
    popped = await lua.json("queue.pop", 0, "queue", "worker", 10)
    assert popped[0]["throttles"] == ["throttle"]
    await lua("recurringJob.update", 0, "jid", "throttles", "[]")
    assert await redis.hget("ql:r:jid", "throttles") == "{}"
    assert (await lua.json("recurringJob.get", 0, "jid"))["throttles"] == {}
    popped = await lua.json("queue.pop", 60, "queue", "worker", 10)
    assert popped[0]["throttles"] == {}


# ---------------------------------------------------------------------------------------------
# reqless `recurringJob.addTag`, `recurringJob.removeTag`, `recurringJob.cancel`


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("recurringJob.addTag", (), "Recurring(): no jid provided"),
        ("recurringJob.addTag", ("nope", "foo"), "Tag(): Job nope does not exist"),
        ("recurringJob.removeTag", (), "Recurring(): no jid provided"),
        ("recurringJob.removeTag", ("nope", "foo"), "Untag(): Job nope does not exist"),
        ("recurringJob.cancel", (), "Recurring(): no jid provided"),
    ],
)
async def test_recurring_job_tags_malformed(
    lua: Lua, command: str, args: tuple[str, ...], text: str
) -> None:
    await rrecur(lua, 0)
    await refused(lua, text, command, 0, *args)


async def test_recurring_job_add_and_remove_tags(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0)
    assert await lua("recurringJob.addTag", 0, "jid") == "[]"
    assert await lua.json("recurringJob.addTag", 0, "jid", "foo", "bar") == ["foo", "bar"]
    assert await lua.json("recurringJob.addTag", 0, "jid", "foo", "baz") == ["foo", "bar", "baz"]
    assert await redis.keys("ql:t*") == []
    popped = await lua.json("queue.pop", 0, "queue", "worker", 1)
    assert popped[0]["tags"] == ["foo", "bar", "baz"]
    assert await redis.zrange("ql:t:bar", 0, -1) == ["jid-1"]
    assert await lua.json("recurringJob.removeTag", 0, "jid", "bar", "nope") == ["foo", "baz"]
    assert await lua("recurringJob.removeTag", 0, "jid", "foo", "baz") == "{}"
    assert (await lua.json("recurringJob.get", 0, "jid"))["tags"] == {}
    popped = await lua.json("queue.pop", 60, "queue", "worker", 1)
    assert popped[0]["tags"] == {}


async def test_recurring_job_cancel(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 0)
    assert await rpop(lua, 0, 10) == ["jid-1"]
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("recurringJob.cancel", 1, "jid") == 1
    assert captured.messages == []
    assert await redis.exists("ql:r:jid", "ql:q:queue-recur") == 0
    assert await lua("recurringJob.get", 1, "jid") is None
    assert await lua.json("queue.jobsByState", 1, "recurring", "queue") == []
    assert (await lua.json("job.get", 1, "jid-1"))["state"] == "running"
    assert await rpop(lua, 600, 10) == []
    assert await lua("recurringJob.cancel", 1, "nope") == 1


# -- schedules' policies (aqless's own fields, CORE 16) -----------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("recurringJob.update", ("jid", "overlap", "sometimes"), 'Arg "overlap" must be one of'),
        ("recurringJob.update", ("jid", "catchup", "-1"), 'Arg "catchup" must be a number from'),
        ("recurringJob.update", ("jid", "jitter", "x"), 'Arg "jitter" must be a number from 0'),
        ("recurringJob.update", ("jid", "paused", "yes"), 'Arg "paused" must be 0 or 1: yes'),
        ("recurringJob.backfill", ("jid", "x"), 'Backfill(): Arg "time" not a number: x'),
        ("recurringJob.backfill", ("jid", "0", "999"), 'Arg "time" in the future: 999'),
        ("recurringJob.backfill", ("nope", "0"), "Recur(): No recurring job nope"),
        (
            "queue.recurAtInterval",
            ("queue", "jid", "klass", "{}", 60, 0, "pause_after", "-2"),
            'Arg "pause_after" must be a number from 0: -2',
        ),
    ],
)
async def test_a_bad_policy_or_backfill_is_refused_and_writes_nothing(
    lua: Lua, command: str, args: tuple[Any, ...], text: str
) -> None:
    await rrecur(lua, 0)
    await refused(lua, text, command, 100, *args)


async def test_a_template_without_a_policy_spawns_and_shows_as_the_classic_one(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await rrecur(lua, 0, "overlap", "skip", "jitter", "5")
    assert await lua("recurringJob.update", 0, "jid", "overlap", "allow_all", "jitter", "0") == 1
    # the defaults are the fields' absence: no trace of the policy is left
    assert await redis.hmget("ql:r:jid", ["overlap", "jitter"]) == [None, None]
    got = await lua.json("recurringJob.get", 0, "jid")
    assert not {"overlap", "catchup", "pause_after", "jitter", "paused"} & set(got)


async def test_a_policy_shows_in_the_object_and_skips_beside_a_live_run(lua: Lua) -> None:
    await rrecur(lua, 0, "overlap", "skip", "pause_after", "2")
    got = await lua.json("recurringJob.get", 0, "jid")
    assert (got["overlap"], got["pause_after"]) == ("skip", 2)
    popped = await lua.json("pop", 120, "queue", "worker", 10)  # 3 due, one live at once
    assert [job["jid"] for job in popped] == ["jid-1"]


async def test_a_backfill_makes_each_time_once(lua: Lua, redis: aioredis.Redis) -> None:
    await rrecur(lua, 1000)
    assert await lua("recurringJob.backfill", 500, "jid", "60", "120", "60") == 2
    assert await lua("recurringJob.backfill", 500, "jid", "120", "180") == 1
    assert await redis.zcard("ql:q:queue-work") == 3
    assert await redis.hget("ql:j:jid-1", "time") is not None
    assert await lua("recurringJob.cancel", 500, "jid") == 1
    assert await redis.exists("ql:rbackfill:jid") == 0
