"""Configuration, workers and queue patterns.

- config: `config.get`, `config.set`, `config.unset` (CORE 6.29-6.31, 8; project decision 5)
  and reqless `config.getAll` (REQLESS 9), with their `ql:log` events (CORE 7.2);
- workers: classic `workers`, `worker.deregister` (CORE 6.27, 6.28) and reqless `worker.jobs`,
  `workers.counts`, `worker.forget` (REQLESS 8.19);
- queue patterns: `queueIdentifierPatterns.*`, `queuePriorityPatterns.*` (REQLESS 7).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from aqless import rules
from aqless.scripts.options import describe
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import pop, put, rpop, rput
from tests.scripts.expect import refused

CLASSIC_DEFAULTS: dict[str, Any] = {
    "application": "qless",
    "heartbeat": 60,
    "grace-period": 10,
    "stats-history": 30,
    "histogram-history": 7,
    "jobs-history-count": 50000,
    "jobs-history": 604800,
}

REQLESS_DEFAULTS = {
    "application": "reqless",
    "grace-period": "10",
    "heartbeat": "60",
    "jobs-history": "604800",
    "jobs-history-count": "50000",
    "max-job-history": "100",
    "max-pop-retry": "1",
    "max-worker-age": "86400",
}

# ---------------------------------------------------------------------------------------------
# config.get / config.getAll


async def test_config_get_listing_is_the_classic_defaults(lua: Lua) -> None:
    assert await lua.json("config.get", 0) == CLASSIC_DEFAULTS


async def test_config_get_listing_overlays_stored_options(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 30)
    await lua("config.set", 0, "foo", "bar")
    assert await lua.json("config.get", 0) == {**CLASSIC_DEFAULTS, "heartbeat": "30", "foo": "bar"}


@pytest.mark.parametrize(
    ("option", "value"),
    [
        # classic defaults: integer replies for numbers, `qless` for the application
        ("application", "qless"),
        ("heartbeat", 60),
        ("grace-period", 10),
        ("stats-history", 30),
        ("histogram-history", 7),
        ("jobs-history-count", 50000),
        ("jobs-history", 604800),
        # reqless-only defaults: reqless strings (decision 5)
        ("max-job-history", "100"),
        ("max-pop-retry", "1"),
        ("max-worker-age", "86400"),
        # no default at all
        ("foo", None),
        ("queue-heartbeat", None),
        ("queue-max-pop-retry", None),
    ],
)
async def test_config_get_one_option(lua: Lua, option: str, value: object) -> None:
    assert await lua("config.get", 0, option) == value


async def test_config_get_each_default_matches_the_listing(lua: Lua) -> None:
    for option, value in (await lua.json("config.get", 0)).items():
        assert await lua("config.get", 0, option) == value


async def test_config_get_all_defaults(lua: Lua) -> None:
    assert await lua.json("config.getAll", 0) == REQLESS_DEFAULTS


async def test_config_get_all_overlays_stored_options(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 30)
    await lua("config.set", 0, "application", "mine")
    await lua("config.set", 0, "foo", "bar")
    everything = await lua.json("config.getAll", 0)
    assert everything == {
        **REQLESS_DEFAULTS,
        "heartbeat": "30",
        "application": "mine",
        "foo": "bar",
    }


async def test_config_get_all_values_match_config_get(lua: Lua) -> None:
    await lua("config.set", 0, "foo", "bar")
    for option, value in (await lua.json("config.getAll", 0)).items():
        if option == "application":
            continue  # `config.get application` answers the classic `qless`
        assert str(await lua("config.get", 0, option)) == value


# ---------------------------------------------------------------------------------------------
# config.set / config.unset


async def test_config_set_and_unset(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("config.set", 0, "foo", "bar") is None
    assert captured.messages == [("ql:log", '{"option":"foo","event":"config_set","value":"bar"}')]
    assert await redis.hgetall("ql:config") == {"foo": "bar"}
    assert await lua("config.get", 0, "foo") == "bar"
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("config.unset", 0, "foo") is None
    assert captured.messages == [("ql:log", '{"event":"config_unset","option":"foo"}')]
    assert await redis.exists("ql:config") == 0
    assert await lua("config.get", 0, "foo") is None


async def test_config_override_and_restore_a_default(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 100)
    assert await lua("config.get", 0, "heartbeat") == "100"  # the stored string
    assert (await lua.json("config.getAll", 0))["heartbeat"] == "100"
    await lua("config.unset", 0, "heartbeat")
    assert await lua("config.get", 0, "heartbeat") == 60
    assert (await lua.json("config.getAll", 0))["heartbeat"] == "60"


async def test_config_event_payload_escaping(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        await lua("config.set", 0, "a/b", 'say "hi"\\')
        await lua("config.unset", 0, "a/b")
    assert captured.on("ql:log") == [
        '{"option":"a\\/b","event":"config_set","value":"say \\"hi\\"\\\\"}',
        '{"event":"config_unset","option":"a\\/b"}',
    ]


async def test_config_unset_of_an_unknown_option_still_publishes(
    lua: Lua, redis: aioredis.Redis
) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("config.unset", 0, "nope") is None
    assert captured.messages == [("ql:log", '{"event":"config_unset","option":"nope"}')]


async def test_config_set_is_used(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 30)
    await lua("config.set", 0, "other-heartbeat", 5)
    await put(lua, 0, "a")
    await put(lua, 0, "b", queue="other")
    assert (await lua.json("pop", 0, "queue", "worker", 1))[0]["expires"] == 30
    assert (await lua.json("pop", 0, "other", "worker", 1))[0]["expires"] == 5


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("config.set", (), 'config.set(): Arg "option" missing'),
        ("config.set", ("foo",), 'config.set(): Arg "value" missing'),
        ("config.unset", (), 'config.unset(): Arg "option" missing'),
    ],
)
async def test_config_malformed(lua: Lua, command: str, args: tuple[str, ...], text: str) -> None:
    await lua("config.set", 0, "foo", "bar")
    await refused(lua, text, command, 0, *args)


async def test_config_reads_publish_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        await lua("config.get", 0)
        await lua("config.get", 0, "heartbeat")
        await lua("config.getAll", 0)
    assert captured.messages == []


# ---------------------------------------------------------------------------------------------
# classic workers (CORE 6.27, 6.28)


async def test_workers_empty(lua: Lua) -> None:
    assert await lua.json("workers", 0) == {}
    assert await lua.json("workers", 0, "nobody") == {"jobs": {}, "stalled": {}}


async def test_workers_after_pop(lua: Lua) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0)
    assert await lua.json("workers", 1, "worker") == {"jobs": ["jid"], "stalled": {}}
    assert await lua.json("workers", 1) == [{"name": "worker", "jobs": 1, "stalled": 0}]


async def test_workers_lists_jobs_by_descending_expiry(lua: Lua) -> None:
    await put(lua, 0, "a")
    await put(lua, 0, "b")
    await put(lua, 0, "c")
    assert await pop(lua, 0) == ["c"]  # equal scores pop in reverse jid order
    assert await pop(lua, 10) == ["b"]
    assert await pop(lua, 20) == ["a"]
    assert await lua.json("workers", 20, "worker") == {"jobs": ["a", "b", "c"], "stalled": {}}
    # at 75: c (60) and b (70) expired, a (80) not
    assert await lua.json("workers", 75, "worker") == {"jobs": ["a"], "stalled": ["b", "c"]}
    assert await lua.json("workers", 75) == [{"name": "worker", "jobs": 1, "stalled": 2}]


async def test_workers_by_descending_activity(lua: Lua) -> None:
    await pop(lua, 0, worker="w1")  # an empty pop registers the worker too
    await pop(lua, 2, worker="w3")
    await pop(lua, 1, worker="w2")
    assert await lua.json("workers", 3) == [
        {"name": "w3", "jobs": 0, "stalled": 0},
        {"name": "w2", "jobs": 0, "stalled": 0},
        {"name": "w1", "jobs": 0, "stalled": 0},
    ]


async def test_workers_after_lock_expiry_and_reclaim(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await put(lua, 0, "jid")
    await pop(lua, 0)
    assert await lua.json("peek", 61, "queue", 10) != {}  # peek reclaims nothing
    assert await lua.json("workers", 61, "worker") == {"jobs": {}, "stalled": ["jid"]}
    assert await lua.json("workers", 61) == [{"name": "worker", "jobs": 0, "stalled": 1}]
    assert await pop(lua, 62, worker="another") == ["jid"]
    assert await lua.json("workers", 62, "worker") == {"jobs": {}, "stalled": {}}
    assert await lua.json("workers", 62, "another") == {"jobs": ["jid"], "stalled": {}}
    assert await lua.json("workers", 62) == [
        {"name": "another", "jobs": 1, "stalled": 0},
        {"name": "worker", "jobs": 0, "stalled": 0},
    ]


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("complete", ("jid", "worker", "queue", "{}")),
        ("fail", ("jid", "worker", "group", "message")),
        ("retry", ("jid", "queue", "worker")),
        ("cancel", ("jid",)),
        ("put", ("other", "queue", "jid", "klass", "{}", "0")),
    ],
)
async def test_workers_forget_finished_jobs(lua: Lua, command: str, args: tuple[str, ...]) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0)
    await lua(command, 1, *args)
    assert await lua.json("workers", 1, "worker") == {"jobs": {}, "stalled": {}}
    assert await lua.json("workers", 1) == [{"name": "worker", "jobs": 0, "stalled": 0}]


async def test_workers_expire_after_max_worker_age(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("config.set", 0, "max-worker-age", 10)
    await put(lua, 0, "jid")
    await pop(lua, 1)
    assert await lua.json("workers", 10) == [{"name": "worker", "jobs": 1, "stalled": 0}]
    assert await redis.exists("ql:w:worker:jobs") == 1
    # a worker whose last activity is at or before now - age is forgotten, with its job set
    assert await lua.json("workers", 11) == {}
    assert await redis.zcard("ql:workers") == 0
    assert await redis.exists("ql:w:worker:jobs") == 0


async def test_workers_cleanup_also_runs_for_one_worker(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("config.set", 0, "max-worker-age", 10)
    await put(lua, 0, "jid")
    await pop(lua, 1)
    assert await lua.json("workers", 15, "worker") == {"jobs": {}, "stalled": {}}
    assert await redis.exists("ql:w:worker:jobs") == 0
    assert await redis.zcard("ql:workers") == 0


async def test_workers_heartbeat_keeps_a_worker(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("config.set", 0, "max-worker-age", 10)
    await put(lua, 0, "jid")
    await pop(lua, 1)
    assert await lua("heartbeat", 10, "jid", "worker") == 70
    assert await redis.zscore("ql:workers", "worker") == 10
    assert await lua.json("workers", 15) == [{"name": "worker", "jobs": 1, "stalled": 0}]
    assert await lua.json("workers", 20) == {}


async def test_workers_default_max_age(lua: Lua) -> None:
    await pop(lua, 0)
    assert await lua.json("workers", 86399) == [{"name": "worker", "jobs": 0, "stalled": 0}]
    assert await lua.json("workers", 86400) == {}


async def test_workers_max_age_3600(lua: Lua) -> None:
    await lua("config.set", 0, "max-worker-age", 3600)
    await put(lua, 0, "jid")
    await pop(lua, 0)
    assert await lua.json("workers", 3600) == {}


async def test_worker_deregister(lua: Lua, redis: aioredis.Redis) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0, worker="w1")
    await pop(lua, 0, worker="w2")
    await pop(lua, 0, worker="w3")
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("worker.deregister", 1, "w1", "w3", "unknown") is None
    assert captured.messages == []
    assert await lua.json("workers", 1) == [{"name": "w2", "jobs": 0, "stalled": 0}]
    assert await redis.zrange("ql:w:w1:jobs", 0, -1) == ["jid"]  # the job set is kept


@pytest.mark.parametrize("command", ["worker.deregister", "worker.forget"])
async def test_worker_forget_without_names(lua: Lua, command: str) -> None:
    await pop(lua, 0)
    await refused(lua, None, command, 0)


async def test_workers_publishes_nothing(lua: Lua, redis: aioredis.Redis) -> None:
    await put(lua, 0, "jid")
    await pop(lua, 0)
    async with EventCapture(redis, "ql:*") as captured:
        await lua("workers", 100000)
        await lua("workers", 100000, "worker")
    assert captured.messages == []


# ---------------------------------------------------------------------------------------------
# reqless workers (REQLESS 8.19)


async def test_reqless_workers_empty(lua: Lua) -> None:
    assert await lua("workers.counts", 0) == "[]"
    assert await lua.json("worker.jobs", 0, "nobody") == {"jobs": {}, "stalled": {}}
    assert await lua.json("worker.jobs", 0) == {}  # the list form, plain cjson


async def test_reqless_workers_after_pop_and_expiry(lua: Lua) -> None:
    await rput(lua, 0, "jid")
    await rpop(lua, 0)
    assert await lua.json("worker.jobs", 1, "worker") == {"jobs": ["jid"], "stalled": {}}
    assert await lua.json("workers.counts", 1) == [{"name": "worker", "jobs": 1, "stalled": 0}]
    assert await lua.json("worker.jobs", 1) == [{"name": "worker", "jobs": 1, "stalled": 0}]
    assert await lua.json("worker.jobs", 61, "worker") == {"jobs": {}, "stalled": ["jid"]}
    assert await lua.json("workers.counts", 61) == [{"name": "worker", "jobs": 0, "stalled": 1}]


async def test_reqless_workers_after_reclaim(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await rput(lua, 0, "jid")
    await rpop(lua, 0)
    assert await rpop(lua, 62, worker="another") == ["jid"]
    assert await lua.json("worker.jobs", 62, "worker") == {"jobs": {}, "stalled": {}}
    assert await lua.json("workers.counts", 62) == [
        {"name": "another", "jobs": 1, "stalled": 0},
        {"name": "worker", "jobs": 0, "stalled": 0},
    ]


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("job.complete", ("jid", "worker", "queue", "{}")),
        ("job.fail", ("jid", "worker", "group", "message")),
        ("job.retry", ("jid", "queue", "worker")),
        ("job.cancel", ("jid",)),
        ("queue.put", ("other", "queue", "jid", "klass", "{}", "0")),
    ],
)
async def test_reqless_workers_forget_finished_jobs(
    lua: Lua, command: str, args: tuple[str, ...]
) -> None:
    await rput(lua, 0, "jid")
    await rpop(lua, 0)
    await lua(command, 1, *args)
    assert await lua.json("worker.jobs", 1, "worker") == {"jobs": {}, "stalled": {}}
    assert await lua.json("workers.counts", 1) == [{"name": "worker", "jobs": 0, "stalled": 0}]


async def test_reqless_heartbeat_does_not_refresh_the_worker(
    lua: Lua, redis: aioredis.Redis
) -> None:
    await lua("config.set", 0, "max-worker-age", 10)
    await rput(lua, 0, "jid")
    await rpop(lua, 1)
    assert await lua("job.heartbeat", 10, "jid", "worker") == 70
    assert await redis.zscore("ql:workers", "worker") == 1
    assert await lua("workers.counts", 15) == "[]"
    assert await redis.exists("ql:w:worker:jobs") == 0


async def test_reqless_workers_expire(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("config.set", 0, "max-worker-age", 3600)
    await rput(lua, 0, "jid")
    await rpop(lua, 0)
    assert await lua.json("workers.counts", 3599) == [{"name": "worker", "jobs": 0, "stalled": 1}]
    assert await lua("workers.counts", 3600) == "[]"
    assert await redis.exists("ql:w:worker:jobs") == 0


async def test_worker_forget(lua: Lua, redis: aioredis.Redis) -> None:
    await rput(lua, 0, "jid")
    await rpop(lua, 0, worker="w1")
    await rpop(lua, 0, worker="w2")
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("worker.forget", 1, "w1", "unknown") is None
    assert captured.messages == []
    assert await lua.json("workers.counts", 1) == [{"name": "w2", "jobs": 0, "stalled": 0}]
    assert await redis.zrange("ql:w:w1:jobs", 0, -1) == ["jid"]


# ---------------------------------------------------------------------------------------------
# queue identifier patterns (REQLESS 7.1)


async def test_identifier_patterns_default(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == {"default": '["*"]'}
    assert await redis.keys("*") == []  # reading stores nothing


async def test_identifier_patterns_set_all(lua: Lua, redis: aioredis.Redis) -> None:
    async with EventCapture(redis, "ql:*") as captured:
        reply = await lua(
            "queueIdentifierPatterns.setAll",
            0,
            "one",
            '["a", "b"]',
            "junk",
            "[]",
            "two",
            '["c"]',
        )
    assert reply is None
    assert captured.messages == []
    expected = {"one": '["a", "b"]', "two": '["c"]', "default": '["*"]'}
    assert await redis.hgetall("ql:qp:identifiers") == expected
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == expected


async def test_identifier_patterns_custom_default(lua: Lua, redis: aioredis.Redis) -> None:
    text = '["un", "deux", "trois", "quatre"]'
    await lua("queueIdentifierPatterns.setAll", 0, "default", text)
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == {"default": text}
    # an empty default is dropped, so the built-in one comes back
    await lua("queueIdentifierPatterns.setAll", 0, "default", "[]")
    assert await redis.hgetall("ql:qp:identifiers") == {"default": '["*"]'}


async def test_identifier_patterns_length_rule(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("queueIdentifierPatterns.setAll", 0, "object", '{"a": ["b"]}', "text", '"abc"')
    # objects have length 0 and are dropped; a JSON string counts its characters
    assert await redis.hgetall("ql:qp:identifiers") == {"text": '"abc"', "default": '["*"]'}


async def test_identifier_patterns_reset(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("queueIdentifierPatterns.setAll", 0, "one", '["a"]')
    await redis.hset("qmore:dynamic", "legacy", '["x"]')
    assert await lua("queueIdentifierPatterns.setAll", 0) is None
    assert await redis.hgetall("ql:qp:identifiers") == {"default": '["*"]'}
    assert await redis.exists("qmore:dynamic") == 0
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == {"default": '["*"]'}


async def test_identifier_patterns_legacy_key(lua: Lua, redis: aioredis.Redis) -> None:
    await redis.hset("qmore:dynamic", mapping={"legacy": '["x"]', "other": '["y"]'})
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == {
        "default": '["*"]',
        "legacy": '["x"]',
        "other": '["y"]',
    }
    await redis.hset("qmore:dynamic", "default", '["z"]')  # a stored default wins
    assert (await lua.json("queueIdentifierPatterns.getAll", 0))["default"] == '["z"]'
    # once the new key has content, the legacy key is not read (no merging)
    await redis.hset("ql:qp:identifiers", "new", '["n"]')
    assert await lua.json("queueIdentifierPatterns.getAll", 0) == {
        "default": '["*"]',
        "new": '["n"]',
    }
    await lua("queueIdentifierPatterns.setAll", 0, "one", '["a"]')
    assert await redis.exists("qmore:dynamic") == 0
    assert await redis.hgetall("ql:qp:identifiers") == {"one": '["a"]', "default": '["*"]'}


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("one",), "Odd number of identifier patterns: "),
        (("one", '["a"]', "two"), "Odd number of identifier patterns: "),
        (("one", '["a"]', "two", "[}"), None),
        (("one", "5"), None),
        (("one", '["a"]', "two", "true"), None),
        (("one", "null"), None),
    ],
)
async def test_identifier_patterns_malformed(
    lua: Lua, redis: aioredis.Redis, args: tuple[str, ...], text: str | None
) -> None:
    await lua("queueIdentifierPatterns.setAll", 0, "keep", '["k"]')
    await redis.hset("qmore:dynamic", "legacy", '["x"]')
    await refused(lua, text, "queueIdentifierPatterns.setAll", 0, *args)


# ---------------------------------------------------------------------------------------------
# queue priority patterns (REQLESS 7.2)

DEFAULT_PRIORITY = '{"fairly": false, "pattern": ["default"]}'


async def test_priority_patterns_default(lua: Lua, redis: aioredis.Redis) -> None:
    assert await lua("queuePriorityPatterns.getAll", 0) == json.dumps([DEFAULT_PRIORITY])
    assert await redis.keys("*") == []


async def test_priority_patterns_set_all_appends_the_default(
    lua: Lua, redis: aioredis.Redis
) -> None:
    first = '{"fairly": true, "pattern": ["mail-*", "sms"]}'
    second = '{"fairly": false, "pattern": ["default", "other"]}'  # not a default entry
    async with EventCapture(redis, "ql:*") as captured:
        assert await lua("queuePriorityPatterns.setAll", 0, first, second) is None
    assert captured.messages == []
    expected = [first, second, DEFAULT_PRIORITY]
    assert await redis.lrange("ql:qp:priorities", 0, -1) == expected
    assert await lua.json("queuePriorityPatterns.getAll", 0) == expected


async def test_priority_patterns_with_a_default_entry(lua: Lua, redis: aioredis.Redis) -> None:
    custom = '{"fairly": true, "pattern": ["default"]}'
    await lua("queuePriorityPatterns.setAll", 0, custom)
    assert await lua.json("queuePriorityPatterns.getAll", 0) == [custom]
    first = '{"fairly": false, "pattern": ["a"]}'
    last = '{"fairly": false, "pattern": ["b"]}'
    await lua("queuePriorityPatterns.setAll", 0, first, custom, last)
    assert await redis.lrange("ql:qp:priorities", 0, -1) == [first, custom, last]


async def test_priority_patterns_reset(lua: Lua, redis: aioredis.Redis) -> None:
    await lua("queuePriorityPatterns.setAll", 0, '{"fairly": false, "pattern": ["a"]}')
    await redis.rpush("qmore:priority", '{"fairly": false, "pattern": ["x"]}')
    assert await lua("queuePriorityPatterns.setAll", 0) is None
    assert await redis.exists("ql:qp:priorities", "qmore:priority") == 0
    assert await lua.json("queuePriorityPatterns.getAll", 0) == [DEFAULT_PRIORITY]


async def test_priority_patterns_legacy_key(lua: Lua, redis: aioredis.Redis) -> None:
    legacy = '{"fairly": false, "pattern": ["x"]}'
    await redis.rpush("qmore:priority", legacy)
    assert await lua.json("queuePriorityPatterns.getAll", 0) == [legacy]
    new = '{"fairly": true, "pattern": ["n"]}'
    await redis.rpush("ql:qp:priorities", new)
    assert await lua.json("queuePriorityPatterns.getAll", 0) == [new]
    await lua("queuePriorityPatterns.setAll", 0, new)
    assert await redis.exists("qmore:priority") == 0
    assert await redis.lrange("ql:qp:priorities", 0, -1) == [new, DEFAULT_PRIORITY]


@pytest.mark.parametrize(
    "args",
    [
        ("[}",),
        ('{"fairly": false, "pattern": ["a"]}', "{]"),
        ('{"fairly": false}',),
        ('{"fairly": false, "pattern": ["a"]}', '{"fairly": true}'),
    ],
)
async def test_priority_patterns_malformed(
    lua: Lua, redis: aioredis.Redis, args: tuple[str, ...]
) -> None:
    # decision 1: validated before anything is deleted
    await lua("queuePriorityPatterns.setAll", 0, '{"fairly": false, "pattern": ["keep"]}')
    await redis.rpush("qmore:priority", '{"fairly": false, "pattern": ["legacy"]}')
    await refused(lua, None, "queuePriorityPatterns.setAll", 0, *args)


#: Options no script reads (kept for user interfaces and other clients).
UNREAD = ("application", "stats-history", "histogram-history", "aqless-pubsub")
#: The options the script reads, as stored for a queue where they are a queue's own.
READ_BY_THE_SCRIPT = [
    *(name for name in rules.CONFIG if not name.startswith("<") and name not in UNREAD),
    "emails-heartbeat",
    "emails-max-concurrency",
    "emails-max-pop-retry",
]


@pytest.mark.parametrize("option", READ_BY_THE_SCRIPT)
async def test_config_set_refuses_a_value_below_what_the_client_rules_allow(
    lua: Lua, redis: aioredis.Redis, option: str
) -> None:
    # the script's last line for the clients that do not check: the same least value as
    # aqless.rules' (aqless's own clients refuse before sending)
    rule = describe(option)
    assert rule is not None
    assert rule.minimum is not None
    least = int(rule.minimum)
    below, lowest = (least, least + 1) if rule.above else (least - 1, least)
    await refused(lua, f"of {option} must be ", "config.set", 0, option, below)
    await refused(lua, f"not a number for {option}: soon", "config.set", 0, option, "soon")
    assert await lua("config.set", 0, option, lowest) is None
    assert await redis.hget("ql:config", option) == str(lowest)


async def test_config_set_takes_any_value_of_an_option_the_script_does_not_read(
    lua: Lua, redis: aioredis.Redis
) -> None:
    for option in (*UNREAD, "another-clients-option"):
        assert await lua("config.set", 0, option, -1) is None
    assert await redis.hget("ql:config", "another-clients-option") == "-1"
