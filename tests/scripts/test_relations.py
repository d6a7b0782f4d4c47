"""Relations between jobs and their bookkeeping, in both vocabularies.

Dependencies (CORE 5.8, 5.9, 6.1, 6.5, 6.11; REQLESS 8.4, 8.11), cancellation (CORE 6.10;
REQLESS 4.4, 8.10, 8.20), priority (CORE 6.12; REQLESS 8.9), log (CORE 6.15), tracking
(CORE 6.16), tags (CORE 5.10, 6.17; REQLESS 4.4, 8.12) and failures (CORE 6.18, 6.19;
REQLESS 8.13, 8.17). Events are checked in test_events.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import Lua
from tests.scripts._relations_helpers import VOCABULARIES, Vocab, make_vocab
from tests.scripts.expect import hfield, refused, work_score, zscores


@pytest.fixture(params=VOCABULARIES)
def vocab(request: pytest.FixtureRequest, lua: Lua) -> Vocab:
    return make_vocab(lua, request.param)


async def running(
    vocab: Vocab, jid: str, queue: str = "queue", worker: str = "worker", now: float = 0
) -> None:
    """Put ``jid`` alone into ``queue`` and pop it."""
    await vocab.put(now, jid, queue)
    popped = await vocab.pop(now, queue, worker)
    assert [job["jid"] for job in popped] == [jid]


async def completed(vocab: Vocab, jid: str, queue: str = "queue", now: float = 0) -> None:
    await running(vocab, jid, queue, now=now)
    assert await vocab.complete(now, jid, "worker", queue) == "complete"


async def failed(
    vocab: Vocab, jid: str, queue: str = "queue", group: str = "group", now: float = 0
) -> None:
    await running(vocab, jid, queue, now=now)
    assert await vocab.fail(now, jid, "worker", group, "message") == jid


# =============================================================================================
# Dependencies
# =============================================================================================


async def test_put_depends_registers_both_sides(vocab: Vocab, redis: aioredis.Redis) -> None:
    assert await vocab.put(0, "a") == "a"
    assert await vocab.put(1, "b", depends=["a"]) == "b"
    assert await vocab.get(2, "b") == vocab.job(
        "b", state="depends", dependencies=["a"], history=[vocab.put_entry("queue", 1)]
    )
    assert await vocab.get(2, "a") == vocab.job("a", dependents=["b"])
    assert await redis.zrange("ql:q:queue-depends", 0, -1, withscores=True) == [("b", 1.0)]
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["a"]
    assert await redis.smembers("ql:j:b-dependencies") == {"a"}
    assert await redis.smembers("ql:j:a-dependents") == {"b"}


async def test_put_depends_on_missing_or_complete_jobs_is_ignored(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await completed(vocab, "a")
    await vocab.put(1, "b", depends=["a", "missing"])
    job = await vocab.get(1, "b")
    assert job["state"] == "waiting"
    assert job["dependencies"] == {}
    assert (await vocab.get(1, "a"))["dependents"] == {}
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [
        ("b", pytest.approx(work_score(0, 1), rel=1e-9))
    ]
    assert await redis.zcard("ql:q:queue-depends") == 0
    for key in ("ql:j:b-dependencies", "ql:j:a-dependents", "ql:j:missing-dependents"):
        assert not await redis.exists(key)


async def test_put_with_delay_and_depends_waits_then_is_scheduled(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", delay=10, depends=["a"])
    assert (await vocab.get(0, "b"))["state"] == "depends"
    assert float(await hfield(redis, "ql:j:b", "scheduled")) == 10
    assert await redis.zrange("ql:q:queue-depends", 0, -1) == ["b"]
    assert await redis.zcard("ql:q:queue-scheduled") == 0
    popped = await vocab.pop(1)
    assert [job["jid"] for job in popped] == ["a"]
    assert await vocab.complete(5, "a") == "complete"
    # RELEASE (CORE 5.9): scheduled at the stored time, the field is deleted
    assert (await vocab.get(5, "b"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("b", 10.0)]
    assert not await redis.hexists("ql:j:b", "scheduled")
    assert await redis.zcard("ql:q:queue-depends") == 0
    assert await vocab.peek(9) == vocab.empty
    assert [job["state"] for job in await vocab.peek(10)] == ["waiting"]


async def test_put_with_delay_and_only_missing_dependencies_is_scheduled(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "b", delay=10, depends=["missing"])
    assert (await vocab.get(0, "b"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("b", 10.0)]
    assert await redis.zcard("ql:q:queue-depends") == 0


async def test_reput_with_new_depends_replaces_dependencies(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "c", "third")
    await vocab.put(0, "b", depends=["a"])
    await vocab.put(1, "b", depends=["c"])
    job = await vocab.get(1, "b")
    assert job["state"] == "depends"
    assert job["dependencies"] == ["c"]
    assert (await vocab.get(1, "a"))["dependents"] == {}
    assert (await vocab.get(1, "c"))["dependents"] == ["b"]
    assert not await redis.exists("ql:j:a-dependents")
    # completing the dropped dependency does not release b
    await vocab.pop(2, "other")
    assert await vocab.complete(2, "a", "worker", "other") == "complete"
    assert (await vocab.get(2, "b"))["state"] == "depends"
    await vocab.pop(3, "third")
    assert await vocab.complete(3, "c", "worker", "third") == "complete"
    assert (await vocab.get(3, "b"))["state"] == "waiting"


async def test_reput_without_depends_keeps_dependencies(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "b", depends=["a"])
    await vocab.put(1, "b", "queue")
    job = await vocab.get(1, "b")
    assert job["state"] == "depends"
    assert job["dependencies"] == ["a"]
    assert await redis.zrange("ql:q:queue-depends", 0, -1, withscores=True) == [("b", 1.0)]
    assert await redis.smembers("ql:j:a-dependents") == {"b"}


async def test_completion_releases_every_dependent(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "b", depends=["a"], priority=3)
    await vocab.put(0, "c", depends=["a"])
    await vocab.pop(1, "other")
    assert await vocab.complete(2, "a", "worker", "other") == "complete"
    for jid in ("b", "c"):
        job = await vocab.get(2, jid)
        assert job["state"] == "waiting"
        assert job["dependencies"] == {}
    assert (await vocab.get(2, "a"))["dependents"] == {}
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [
        ("c", pytest.approx(work_score(0, 2), rel=1e-9)),
        ("b", pytest.approx(work_score(3, 2), rel=1e-9)),
    ]
    assert await redis.zcard("ql:q:queue-depends") == 0
    for key in ("ql:j:a-dependents", "ql:j:b-dependencies", "ql:j:c-dependencies"):
        assert not await redis.exists(key)


async def test_dependent_waits_for_all_of_its_dependencies(vocab: Vocab) -> None:
    for jid in ("a", "b"):
        await vocab.put(0, jid, "other")
    await vocab.put(0, "c", depends=["a", "b"])
    assert sorted((await vocab.get(0, "c"))["dependencies"]) == ["a", "b"]
    popped = await vocab.pop(1, "other", count=2)
    assert sorted(job["jid"] for job in popped) == ["a", "b"]
    await vocab.complete(2, "a", "worker", "other")
    job = await vocab.get(2, "c")
    assert (job["state"], job["dependencies"]) == ("depends", ["b"])
    await vocab.complete(3, "b", "worker", "other")
    job = await vocab.get(3, "c")
    assert (job["state"], job["dependencies"]) == ("waiting", {})


async def test_chain_is_released_one_link_at_a_time(vocab: Vocab) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", depends=["a"])
    await vocab.put(0, "c", depends=["b"])
    for step, jid in enumerate(("a", "b", "c"), start=1):
        popped = await vocab.pop(step, count=10)
        assert [job["jid"] for job in popped] == [jid]
        assert await vocab.complete(step, jid) == "complete"
    assert await vocab.pop(10) == vocab.empty


async def test_depends_on_adds_dependencies(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "c", "other")
    await completed(vocab, "done", "third")
    await vocab.put(0, "b", depends=["a"])
    assert await vocab.depends(1, "b", "on", "c", "done", "missing") == 1
    job = await vocab.get(1, "b")
    assert job["state"] == "depends"
    assert sorted(job["dependencies"]) == ["a", "c"]
    assert await redis.smembers("ql:j:b-dependencies") == {"a", "c"}
    assert await redis.smembers("ql:j:c-dependents") == {"b"}
    assert not await redis.exists("ql:j:done-dependents")
    assert not await redis.exists("ql:j:missing-dependents")
    # the job stays where it was
    assert await redis.zrange("ql:q:queue-depends", 0, -1, withscores=True) == [("b", 0.0)]
    assert job["history"] == [vocab.put_entry("queue", 0)]


async def test_depends_off_one_at_a_time(vocab: Vocab, redis: aioredis.Redis) -> None:
    deps = [f"d{i}" for i in range(3)]
    for jid in deps:
        await vocab.put(0, jid, "other")
    await vocab.put(0, "b", depends=deps, priority=2)
    assert await vocab.depends(1, "b", "off", "d0") == 1
    job = await vocab.get(1, "b")
    assert job["state"] == "depends"
    assert sorted(job["dependencies"]) == ["d1", "d2"]
    assert not await redis.exists("ql:j:d0-dependents")
    assert await vocab.depends(2, "b", "off", "d1", "d2") == 1
    job = await vocab.get(2, "b")
    assert (job["state"], job["dependencies"]) == ("waiting", {})
    assert await redis.zcard("ql:q:queue-depends") == 0
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [
        ("b", pytest.approx(work_score(2, 2), rel=1e-9))
    ]
    for jid in deps:
        assert (await vocab.get(2, jid))["dependents"] == {}


async def test_depends_off_all(vocab: Vocab, redis: aioredis.Redis) -> None:
    for jid in ("a", "c"):
        await vocab.put(0, jid, "other")
    await vocab.put(0, "b", depends=["a", "c"])
    assert await vocab.depends(3, "b", "off", "all") == 1
    job = await vocab.get(3, "b")
    assert (job["state"], job["dependencies"]) == ("waiting", {})
    assert not await redis.exists("ql:j:b-dependencies")
    assert not await redis.exists("ql:j:a-dependents")
    assert not await redis.exists("ql:j:c-dependents")
    assert await redis.zrange("ql:q:queue-work", 0, -1, withscores=True) == [
        ("b", pytest.approx(work_score(0, 3), rel=1e-9))
    ]
    assert await redis.zcard("ql:q:queue-depends") == 0


async def test_depends_off_ignores_a_pending_delay(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "b", delay=10, depends=["a"])
    assert await vocab.depends(1, "b", "off", "a") == 1
    assert (await vocab.get(1, "b"))["state"] == "waiting"
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["b"]
    assert await redis.zcard("ql:q:queue-scheduled") == 0
    # the stale field stays (CORE 6.11)
    assert float(await hfield(redis, "ql:j:b", "scheduled")) == 10


async def _depends_fixture(vocab: Vocab) -> None:
    await vocab.put(0, "a")  # waiting
    await vocab.put(0, "b", depends=["a"])  # depends
    await vocab.put(0, "s", delay=10)  # scheduled
    await running(vocab, "r", "rq")  # running
    await failed(vocab, "f", "fq")  # failed


CLASSIC_DEPENDS_ERRORS: list[tuple[tuple[str, ...], str]] = [
    ((), "Job(): no jid provided"),
    (("b",), 'Depends(): Arg "command" missing'),
    (("a", "on", "s"), "Depends(): Job a not in the depends state: waiting"),
    (("a", "off", "all"), "Depends(): Job a not in the depends state: waiting"),
    (("s", "on", "a"), "Depends(): Job s not in the depends state: scheduled"),
    (("r", "off", "a"), "Depends(): Job r not in the depends state: running"),
    (("f", "on", "a"), "Depends(): Job f not in the depends state: failed"),
    (("nope", "on", "a"), "Depends(): Job nope not in the depends state: false"),
    # the state check comes before the command word
    (("a", "foo", "s"), "Depends(): Job a not in the depends state: waiting"),
    (("b", "foo", "s"), 'Depends(): Argument "command" must be "on" or "off"'),
]


@pytest.mark.parametrize(("args", "text"), CLASSIC_DEPENDS_ERRORS)
async def test_classic_depends_rejects(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await _depends_fixture(make_vocab(lua, "classic"))
    await refused(lua, text, "depends", 1, *args)


REQLESS_DEPENDS_ERRORS: list[tuple[str, tuple[str, ...], str]] = [
    ("job.addDependency", (), "Job(): no jid provided"),
    ("job.removeDependency", (), "Job(): no jid provided"),
    ("job.addDependency", ("a", "s"), "Depends(): Job a not in the depends state: waiting"),
    ("job.removeDependency", ("a", "all"), "Depends(): Job a not in the depends state: waiting"),
    ("job.addDependency", ("s", "a"), "Depends(): Job s not in the depends state: scheduled"),
    ("job.removeDependency", ("r", "a"), "Depends(): Job r not in the depends state: running"),
    ("job.addDependency", ("f", "a"), "Depends(): Job f not in the depends state: failed"),
    ("job.removeDependency", ("nope", "a"), "Depends(): Job nope not in the depends state: false"),
]


@pytest.mark.parametrize(("command", "args", "text"), REQLESS_DEPENDS_ERRORS)
async def test_reqless_dependency_commands_reject(
    lua: Lua,
    command: str,
    args: tuple[str, ...],
    text: str,
) -> None:
    await _depends_fixture(make_vocab(lua, "reqless"))
    await refused(lua, text, command, 1, *args)


async def test_put_rejects_depends_that_is_not_a_json_list(vocab: Vocab) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "jid", tags=["t"])
    command = "queue.put" if vocab.reqless else "put"
    base = ("worker", "queue", "jid", "klass", "{}", 0, "tags", '["u"]')
    # CORE 6.1 validation 11: decoding to false names the argument
    await refused(
        vocab.lua,
        'Put(): Arg "depends" not JSON: false',
        command,
        1,
        *base,
        "depends",
        "false",
    )
    await refused(vocab.lua, None, command, 1, *base, "depends", "[}")
    await refused(vocab.lua, None, command, 1, *base, "depends")


# ---- complete ... next ... depends / delay ---------------------------------------------------


async def test_advance_with_depends_and_delay(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", "other")
    await vocab.pop(1)
    assert await vocab.advance(3, "a", "foo", "depends", '["b"]', "delay", 10) == "depends"
    job = await vocab.get(3, "a")
    assert job == vocab.job(
        "a",
        queue="foo",
        state="depends",
        dependencies=["b"],
        put_queue="queue",
        history=[
            vocab.put_entry("queue", 0),
            {"when": 1, "what": "popped", "worker": "worker"},
            {"when": 3, "what": "done"},
            vocab.put_entry("foo", 3),
        ],
    )
    assert await redis.zrange("ql:q:foo-depends", 0, -1, withscores=True) == [("a", 3.0)]
    assert float(await hfield(redis, "ql:j:a", "scheduled")) == 13
    assert await redis.smembers("ql:j:b-dependents") == {"a"}
    await vocab.pop(4, "other")
    assert await vocab.complete(6, "b", "worker", "other") == "complete"
    # the delay counts from a's own completion (3 + 10), not from b's (6)
    assert (await vocab.get(6, "a"))["state"] == "scheduled"
    assert await redis.zrange("ql:q:foo-scheduled", 0, -1, withscores=True) == [("a", 13.0)]
    assert await vocab.peek(12, "foo") == vocab.empty
    assert [job["state"] for job in await vocab.peek(13, "foo")] == ["waiting"]


async def test_advance_with_satisfied_depends_ignores_the_delay(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await completed(vocab, "b", "other")
    await vocab.put(0, "a")
    await vocab.pop(1)
    assert (
        await vocab.advance(2, "a", "foo", "depends", '["b", "missing"]', "delay", 10) == "waiting"
    )
    job = await vocab.get(2, "a")
    assert (job["state"], job["queue"], job["dependencies"]) == ("waiting", "foo", {})
    assert await redis.zrange("ql:q:foo-work", 0, -1, withscores=True) == [
        ("a", pytest.approx(work_score(0, 2), rel=1e-9))
    ]
    assert await redis.zcard("ql:q:foo-scheduled") == 0
    assert await redis.zcard("ql:q:foo-depends") == 0


async def test_advance_with_delay_only_is_scheduled(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a")
    await vocab.pop(1)
    assert await vocab.advance(2, "a", "foo", "delay", 10) == "scheduled"
    assert await redis.zrange("ql:q:foo-scheduled", 0, -1, withscores=True) == [("a", 12.0)]
    # the reference's state field stays "waiting" (CORE 6.5 effect 11); aqless's is the state
    assert (await vocab.get(2, "a"))["state"] == "scheduled"
    assert await redis.zcard("ql:q:foo-work") == 0


async def test_advance_with_depends_into_the_same_queue(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", "other")
    await vocab.pop(1)
    assert await vocab.advance(2, "a", "queue", "depends", '["b"]') == "depends"
    assert await redis.zrange("ql:q:queue-depends", 0, -1) == ["a"]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert not await redis.hexists("ql:j:a", "scheduled")
    await vocab.pop(3, "other")
    await vocab.complete(4, "b", "worker", "other")
    assert [job["jid"] for job in await vocab.pop(5)] == ["a"]


async def test_classic_complete_rejects_dependency_options(lua: Lua) -> None:
    await running(make_vocab(lua, "classic"), "jid")
    base = ("jid", "worker", "queue", "{}")
    cases: list[tuple[str | None, tuple[Any, ...]]] = [
        ('Complete(): "depends" cannot be used without a "next".', ("depends", '["x"]')),
        ('Complete(): "depends" cannot be used without a "next".', ("depends", "[]")),
        ('Complete(): "delay" cannot be used without a "next".', ("delay", 5)),
        ('Complete(): "delay" cannot be used without a "next".', ("delay", 0)),
        ('Complete(): "delay" cannot be used without a "next".', ("depends", '["x"]', "delay", 5)),
        ('Complete(): Arg "depends" not JSON: false', ("next", "foo", "depends", "false")),
        (None, ("next", "foo", "depends", "[}")),
        ("assertion failed!", ("next", "foo", "delay", "foo")),
    ]
    for text, options in cases:
        await refused(lua, text, "complete", 1, *base, *options)


async def test_reqless_complete_and_requeue_rejects_dependency_options(lua: Lua) -> None:
    await running(make_vocab(lua, "reqless"), "jid")
    base = ("jid", "worker", "queue", "{}", "foo")
    await refused(lua, "assertion failed!", "job.completeAndRequeue", 1, *base, "delay", "foo")
    await refused(lua, None, "job.completeAndRequeue", 1, *base, "depends", "[}")
    await refused(
        lua,
        'Complete(): Arg "depends" not JSON: false',
        "job.completeAndRequeue",
        1,
        *base,
        "depends",
        "false",
    )


# =============================================================================================
# Cancellation
# =============================================================================================


async def test_cancel_waiting_job(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    assert await vocab.cancel(1, "jid") == ["jid"]
    assert await vocab.get(1, "jid") is None
    for key in ("ql:j:jid", "ql:j:jid-history", "ql:q:queue-work"):
        assert not await redis.exists(key)


async def test_cancel_scheduled_job(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid", delay=10)
    assert await vocab.cancel(1, "jid") == ["jid"]
    assert await vocab.get(1, "jid") is None
    assert not await redis.exists("ql:q:queue-scheduled")
    assert await vocab.peek(20) == vocab.empty


async def test_cancel_running_job(vocab: Vocab, redis: aioredis.Redis) -> None:
    await running(vocab, "jid")
    assert await redis.zrange("ql:w:worker:jobs", 0, -1) == ["jid"]
    assert await vocab.cancel(1, "jid") == ["jid"]
    assert await vocab.get(1, "jid") is None
    assert not await redis.exists("ql:w:worker:jobs")
    assert not await redis.exists("ql:q:queue-locks")
    text = (
        "Heartbeat(): Job does not exist"
        if vocab.reqless
        else "Heartbeat(): Job jid does not exist"
    )
    with pytest.raises(ResponseError, match=re.escape(text)):
        await vocab.heartbeat(2, "jid")


async def test_cancel_dependent_leaves_its_dependency(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", depends=["a"])
    assert await vocab.cancel(1, "b") == ["b"]
    assert await vocab.get(1, "b") is None
    a = await vocab.get(1, "a")
    assert a == vocab.job("a")
    for key in ("ql:j:a-dependents", "ql:j:b-dependencies", "ql:q:queue-depends"):
        assert not await redis.exists(key)


async def test_cancel_failed_job_cleans_the_failure_group(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await failed(vocab, "a")
    await failed(vocab, "b")
    assert await vocab.failed_counts(1) == {"group": 2}
    assert await vocab.cancel(1, "a") == ["a"]
    assert await redis.lrange("ql:f:group", 0, -1) == ["b"]
    assert await redis.smembers("ql:failures") == {"group"}
    assert await redis.hget("ql:s:stats:0:queue", "failed") == "1"
    assert await vocab.cancel(2, "b") == ["b"]
    assert not await redis.exists("ql:f:group")
    assert not await redis.exists("ql:failures")
    assert await vocab.failed_counts(2) == {}
    stats = await vocab.stats(3, "queue", 0)
    assert (stats["failed"], stats["failures"]) == (0, 2)


async def test_cancel_decrements_failed_in_the_bin_of_the_failure(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await failed(vocab, "jid", now=100)
    await vocab.cancel(86400 + 43200, "jid")
    assert await redis.hget("ql:s:stats:0:queue", "failed") == "0"
    assert await redis.hget("ql:s:stats:0:queue", "failures") == "1"
    assert not await redis.exists("ql:s:stats:86400:queue")


async def test_cancel_jobs_failed_by_retry_exhaustion_and_lock_loss(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.config_set(0, "grace-period", 0)
    await vocab.put(0, "r", retries=0)
    await vocab.pop(0)
    assert await vocab.retry(0, "r") == -1
    await vocab.put(0, "l", retries=0)
    await vocab.pop(0)
    assert await vocab.pop(61) == vocab.empty  # the lock is lost, retries are exhausted
    assert (await vocab.get(61, "l"))["state"] == "failed"
    assert await vocab.failed_counts(61) == {"failed-retries-queue": 2}
    assert await vocab.cancel(62, "r", "l") == ["r", "l"]
    assert await vocab.get(62, "r") is None
    assert await vocab.get(62, "l") is None
    assert not await redis.exists("ql:f:failed-retries-queue")
    assert await vocab.failed_counts(62) == {}


async def test_cancel_unknown_jid_changes_nothing(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    before = await redis.keys("*")
    assert await vocab.cancel(1, "nope") == ["nope"]
    assert sorted(await redis.keys("*")) == sorted(before)
    assert (await vocab.get(1, "jid"))["state"] == "waiting"


async def test_cancel_leaves_complete_jobs_alone(vocab: Vocab, redis: aioredis.Redis) -> None:
    await completed(vocab, "jid")
    assert await vocab.cancel(1, "jid") == ["jid"]
    assert (await vocab.get(1, "jid"))["state"] == "complete"
    assert await redis.zrange("ql:completed", 0, -1) == ["jid"]


async def test_cancel_without_jids(vocab: Vocab) -> None:
    assert await vocab.cancel(0) == []


async def test_cancel_reply_echoes_arguments_in_order(vocab: Vocab) -> None:
    await vocab.put(0, "a")
    await completed(vocab, "c", "other")
    assert await vocab.cancel(1, "nope", "a", "c") == ["nope", "a", "c"]
    assert await vocab.get(1, "a") is None


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
async def test_cancel_a_whole_chain_in_any_order(
    vocab: Vocab, redis: aioredis.Redis, order: tuple[str, str]
) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", depends=["a"])
    assert await vocab.cancel(1, *order) == list(order)
    assert await redis.keys("ql:j:*") == []
    assert await redis.zcard("ql:q:queue-depends") == 0
    assert await redis.zcard("ql:q:queue-work") == 0


async def test_cancel_rejects_a_dependency_whose_dependent_stays(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    command = "job.cancel" if vocab.reqless else "cancel"
    await vocab.put(0, "a")
    await vocab.put(0, "b", depends=["a"])
    await vocab.put(0, "c", depends=["b"])
    await vocab.put(0, "d", "other", depends=["a"])
    await vocab.put(0, "x", "other")
    await refused(
        vocab.lua,
        "Cancel(): b is a dependency of c but is not mentioned to be canceled",
        command,
        1,
        "x",
        "a",
        "b",
        "d",
    )
    await refused(
        vocab.lua,
        "Cancel(): a is a dependency of d but is not mentioned to be canceled",
        command,
        1,
        "x",
        "c",
        "b",
        "a",
    )
    assert await vocab.cancel(2, "d", "c", "b", "a") == ["d", "c", "b", "a"]
    assert sorted(await redis.keys("ql:j:*")) == ["ql:j:x", "ql:j:x-history"]


async def test_cancel_tagged_jobs_classic_keeps_the_counter(
    lua: Lua, redis: aioredis.Redis
) -> None:
    vocab = make_vocab(lua, "classic")
    await vocab.put(0, "a", tags=["t", "u"])
    await vocab.put(0, "b", tags=["t"])
    await vocab.cancel(1, "a")
    assert await redis.zrange("ql:t:t", 0, -1) == ["b"]
    assert not await redis.exists("ql:t:u")
    # CORE 5.10: classic tag off only decrements; the tag name stays in ql:tags
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("u", 0.0), ("t", 1.0)]
    await vocab.cancel(2, "b")
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("t", 0.0), ("u", 0.0)]
    assert await vocab.tagged(3, "t") == {"total": 0, "jobs": {}}


async def test_cancel_tagged_jobs_reqless_removes_unused_tags(
    lua: Lua, redis: aioredis.Redis
) -> None:
    vocab = make_vocab(lua, "reqless")
    await vocab.put(0, "a", tags=["t", "u"])
    await vocab.put(0, "b", tags=["t"])
    await vocab.cancel(1, "a")
    assert await redis.zrange("ql:t:t", 0, -1) == ["b"]
    # REQLESS 4.4: u has no carrier left and leaves ql:tags; t is decremented
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("t", 1.0)]
    await vocab.cancel(2, "b")
    assert await redis.zrange("ql:tags", 0, -1) == []
    assert await vocab.tagged(3, "t", 0, 0) == {"total": 0, "jobs": {}}


async def test_reput_moves_tag_bookkeeping(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid", tags=["a", "b"])
    await vocab.put(0, "other", tags=["b"])
    await vocab.put(1, "jid", tags=["c"])
    assert (await vocab.get(1, "jid"))["tags"] == ["c"]
    assert not await redis.exists("ql:t:a")
    assert await redis.zrange("ql:t:b", 0, -1) == ["other"]
    assert await redis.zrange("ql:t:c", 0, -1, withscores=True) == [("jid", 1.0)]
    counters = await zscores(redis, "ql:tags")
    if vocab.reqless:  # REQLESS 4.4: a tag without carriers leaves ql:tags
        assert counters == {"b": 1.0, "c": 1.0}
    else:  # CORE 5.10: decremented, kept
        assert counters == {"a": 0.0, "b": 1.0, "c": 1.0}
    # without the option the job keeps its tags: tagged again at the time of the re-put
    await vocab.put(2, "jid")
    assert (await vocab.get(2, "jid"))["tags"] == ["c"]
    assert await redis.zrange("ql:t:c", 0, -1, withscores=True) == [("jid", 2.0)]
    assert await redis.zscore("ql:tags", "c") == 1.0


async def test_retention_purge_cleans_tags(vocab: Vocab, redis: aioredis.Redis) -> None:
    await redis.hset("ql:config", "jobs-history", -1)  # stored unchecked (another client)
    await vocab.put(0, "jid", tags=["abc"])
    await vocab.pop(0)
    assert await vocab.complete(1, "jid") == "complete"
    assert await vocab.get(1, "jid") is None
    assert not await redis.exists("ql:t:abc")
    if vocab.reqless:  # REQLESS 8.20
        assert await vocab.tagged(1, "abc", 0, 0) == {"total": 0, "jobs": {}}
        assert await redis.zrange("ql:tags", 0, -1) == []
    else:  # CORE 5.7 purge: tag off
        assert await vocab.tagged(1, "abc") == {"total": 0, "jobs": {}}
        assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("abc", 0.0)]


async def test_cancel_keeps_tracking(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    await vocab.track(0, "jid")
    await vocab.cancel(1, "jid")
    assert await redis.zrange("ql:tracked", 0, -1) == ["jid"]
    assert await vocab.tracked(2) == {"jobs": {}, "expired": ["jid"]}


async def test_reqless_cancel_releases_throttles(lua: Lua, redis: aioredis.Redis) -> None:
    vocab = make_vocab(lua, "reqless")
    assert await lua("queue.throttle.set", 0, "queue", 1) is None
    await running(vocab, "a")
    await vocab.put(1, "b")  # parked: the queue throttle is full (REQLESS 8.1)
    await vocab.put(1, "c")
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["b", "c"]
    assert await redis.zrange("ql:th:ql:q:queue-pending", 0, -1) == ["b", "c"]
    # cancelling a parked job removes it from the pending and throttled sets, moves nothing
    assert await vocab.cancel(2, "b") == ["b"]
    assert await redis.zrange("ql:q:queue-throttled", 0, -1) == ["c"]
    assert await redis.zrange("ql:th:ql:q:queue-pending", 0, -1) == ["c"]
    assert await redis.zrange("ql:th:ql:q:queue-locks", 0, -1) == ["a"]
    # cancelling the holder frees the slot and moves the first pending job to the work set
    assert await vocab.cancel(3, "a") == ["a"]
    assert await redis.zcard("ql:th:ql:q:queue-locks") == 0
    assert await redis.zcard("ql:th:ql:q:queue-pending") == 0
    assert await redis.zcard("ql:q:queue-throttled") == 0
    assert await redis.zrange("ql:q:queue-work", 0, -1) == ["c"]


# =============================================================================================
# Priority
# =============================================================================================


async def test_priority_reorders_a_waiting_job(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", priority=1)
    assert [job["jid"] for job in await vocab.peek(0)] == ["b", "a"]
    assert await vocab.priority(1, "a", 2) == 2
    assert [job["jid"] for job in await vocab.peek(1)] == ["a", "b"]
    # CORE 2.3: the score becomes exactly the priority
    assert await redis.zscore("ql:q:queue-work", "a") == 2.0
    assert await vocab.get(1, "a") == vocab.job("a", priority=2)


async def test_priority_reply_is_truncated(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    assert await vocab.priority(1, "jid", "2.5") == 2
    assert (await vocab.get(1, "jid"))["priority"] == 2.5
    assert await redis.zscore("ql:q:queue-work", "jid") == 2.5
    assert await vocab.priority(1, "jid", "-1.5") == -1
    assert (await vocab.get(1, "jid"))["priority"] == -1.5


async def test_priority_of_a_scheduled_job_applies_on_promotion(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await vocab.put(0, "jid", delay=10)
    assert await vocab.priority(1, "jid", 5) == 5
    assert await redis.zrange("ql:q:queue-scheduled", 0, -1, withscores=True) == [("jid", 10.0)]
    assert await redis.zcard("ql:q:queue-work") == 0
    assert (await vocab.get(1, "jid"))["priority"] == 5
    await vocab.peek(10)
    assert await redis.zscore("ql:q:queue-work", "jid") == pytest.approx(
        work_score(5, 10), rel=1e-12
    )


async def test_priority_of_running_depending_and_complete_jobs(
    vocab: Vocab, redis: aioredis.Redis
) -> None:
    await running(vocab, "r")
    await vocab.put(0, "d", "other", depends=["r"])
    await completed(vocab, "c", "third")
    locks = await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True)
    for jid in ("r", "d", "c"):
        assert await vocab.priority(1, jid, 7) == 7
        assert (await vocab.get(1, jid))["priority"] == 7
    assert await redis.zrange("ql:q:queue-locks", 0, -1, withscores=True) == locks
    assert await redis.zrange("ql:q:other-depends", 0, -1, withscores=True) == [("d", 0.0)]
    assert await redis.zcard("ql:q:other-work") == 0
    assert (await vocab.get(1, "c"))["queue"] == ""
    # the new priority is used when the job is next inserted into a work set
    await vocab.complete(2, "r")
    assert await redis.zscore("ql:q:other-work", "d") == pytest.approx(work_score(7, 2), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Job(): no jid provided"),
        (("jid",), 'Priority(): Arg "priority" missing or not a number: nil'),
        (("jid", "foo"), 'Priority(): Arg "priority" missing or not a number: foo'),
        (("jid", ""), 'Priority(): Arg "priority" missing or not a number: '),
        (("jid", "nan"), 'Priority(): Arg "priority" missing or not a number: nan'),
        (("jid", "inf"), 'Priority(): Arg "priority" missing or not a number: inf'),
        (("jid", "-inf"), 'Priority(): Arg "priority" missing or not a number: -inf'),
        (("nope", "1"), None),
    ],
)
async def test_priority_rejects(
    vocab: Vocab,
    args: tuple[str, ...],
    text: str | None,
) -> None:
    await vocab.put(0, "jid")
    if text is None:  # nonexistent job: the texts differ (REQLESS 8.9)
        text = (
            "Queue(): no queue name provided"
            if vocab.reqless
            else "Priority(): Job nope does not exist"
        )
    command = "job.setPriority" if vocab.reqless else "priority"
    await refused(vocab.lua, text, command, 1, *args)


# =============================================================================================
# Log
# =============================================================================================


async def test_log_appends_a_history_entry(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    assert await vocab.log(1, "jid", "foo", '{"foo": "bar"}') is None
    assert await vocab.log(2.7, "jid", "plain") is None
    assert (await vocab.get(3, "jid"))["history"] == [
        vocab.put_entry("queue", 0),
        {"foo": "bar", "what": "foo", "when": 1},
        {"what": "plain", "when": 2},
    ]
    stored = [json.loads(entry) for entry in await redis.lrange("ql:j:jid-history", 1, -1)]
    assert stored == [[1, "foo", {"foo": "bar"}], [2, "plain"]]


async def test_log_item_when_and_what_are_shadowed(vocab: Vocab) -> None:
    await vocab.put(0, "jid")
    await vocab.log(5, "jid", "msg", '{"when": 99, "what": "x", "k": [1, "a/b"]}')
    assert (await vocab.get(5, "jid"))["history"][-1] == {"when": 5, "what": "msg", "k": [1, "a/b"]}


async def test_log_on_a_complete_job(vocab: Vocab) -> None:
    await completed(vocab, "jid")
    await vocab.log(1, "jid", "after")
    history = (await vocab.get(1, "jid"))["history"]
    assert [entry["what"] for entry in history] == ["put", "popped", "done", "after"]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Log(): Argument 'jid' missing"),
        (("jid",), "Log(): Argument 'message' missing"),
        (("jid", "msg", "false"), "Log(): Argument 'data' not cjson: false"),
        (("jid", "msg", "[}"), None),
        (("nope", "msg"), "Log(): Job nope does not exist"),
        (("nope", "msg", "{}"), "Log(): Job nope does not exist"),
    ],
)
async def test_log_rejects(
    vocab: Vocab,
    args: tuple[str, ...],
    text: str | None,
) -> None:
    await vocab.put(0, "jid")
    command = "job.log" if vocab.reqless else "log"
    await refused(vocab.lua, text, command, 1, *args)


# =============================================================================================
# Tracking
# =============================================================================================


async def test_track_and_untrack(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    assert await vocab.track(1, "jid") == "1"
    assert await redis.zscore("ql:tracked", "jid") == 1.0
    assert await vocab.track(2, "jid") == "0"
    assert await redis.zscore("ql:tracked", "jid") == 2.0  # re-set on each track
    assert (await vocab.get(2, "jid"))["tracked"] is True
    assert await vocab.untrack(3, "jid") == "1"
    assert not await redis.exists("ql:tracked")
    assert await vocab.untrack(4, "jid") == "0"
    assert await vocab.get(4, "jid") == vocab.job("jid")


async def test_classic_track_words_are_case_insensitive(lua: Lua, redis: aioredis.Redis) -> None:
    await make_vocab(lua, "classic").put(0, "jid")
    assert await lua("track", 1, "TRACK", "jid") == "1"
    assert await redis.zrange("ql:tracked", 0, -1) == ["jid"]
    assert await lua("track", 2, "UnTrack", "jid") == "1"
    assert await redis.zcard("ql:tracked") == 0


async def test_tracked_listing(vocab: Vocab) -> None:
    assert await vocab.tracked(0) == {"jobs": {}, "expired": {}}
    await vocab.put(0, "a")
    await vocab.put(0, "b")
    await vocab.put(0, "c")
    await vocab.track(1, "b")
    await vocab.track(2, "a")
    await vocab.track(3, "c")
    await vocab.cancel(4, "c")
    assert await vocab.tracked(5) == {
        "jobs": [vocab.job("b", tracked=True), vocab.job("a", tracked=True)],
        "expired": ["c"],
    }
    await vocab.track(6, "b")  # oldest tracking first: b moves behind a
    listing = await vocab.tracked(7)
    assert [job["jid"] for job in listing["jobs"]] == ["a", "b"]
    for jid in ("a", "b"):
        assert await vocab.untrack(8, jid) == "1"
    assert await vocab.tracked(9) == {"jobs": {}, "expired": ["c"]}


CLASSIC_TRACK_ERRORS: list[tuple[tuple[str, ...], str]] = [
    (("track",), 'Track(): Arg "jid" missing'),
    (("untrack",), 'Track(): Arg "jid" missing'),
    (("foo",), 'Track(): Arg "jid" missing'),
    (("track", "nope"), "Track(): Job does not exist"),
    (("untrack", "nope"), "Track(): Job does not exist"),
    (("foo", "nope"), "Track(): Job does not exist"),
    (("foo", "jid"), 'Track(): Unknown action "foo"'),
]


@pytest.mark.parametrize(("args", "text"), CLASSIC_TRACK_ERRORS)
async def test_classic_track_rejects(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await make_vocab(lua, "classic").put(0, "jid")
    await refused(lua, text, "track", 1, *args)


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("job.track", (), 'Track(): Arg "jid" missing'),
        ("job.untrack", (), 'Track(): Arg "jid" missing'),
        ("job.track", ("nope",), "Track(): Job does not exist"),
        ("job.untrack", ("nope",), "Track(): Job does not exist"),
    ],
)
async def test_reqless_track_rejects(
    lua: Lua,
    command: str,
    args: tuple[str, ...],
    text: str,
) -> None:
    await make_vocab(lua, "reqless").put(0, "jid")
    await refused(lua, text, command, 1, *args)


# =============================================================================================
# Tags
# =============================================================================================


async def test_tag_add(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid", tags=["a"])
    assert await vocab.tag_add(1, "jid", "b", "c", "b") == ["a", "b", "c"]
    assert await vocab.get(1, "jid") == vocab.job("jid", tags=["a", "b", "c"])
    assert json.loads(await hfield(redis, "ql:j:jid", "tags")) == ["a", "b", "c"]
    assert await redis.zrange("ql:t:b", 0, -1, withscores=True) == [("jid", 1.0)]
    # CORE 5.10: the counter is incremented per argument
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [
        ("a", 1.0),
        ("c", 1.0),
        ("b", 2.0),
    ]
    # adding a tag the job already has re-tags it now
    assert await vocab.tag_add(2, "jid", "a") == ["a", "b", "c"]
    assert await redis.zscore("ql:t:a", "jid") == 2.0
    assert await redis.zscore("ql:tags", "a") == 2.0


async def test_tag_add_same_tag_thrice(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid")
    assert await vocab.tag_add(0, "jid", "foo", "foo", "foo") == ["foo"]
    assert (await vocab.get(0, "jid"))["tags"] == ["foo"]
    assert await redis.zscore("ql:tags", "foo") == 3.0


async def test_tag_add_without_tags(vocab: Vocab) -> None:
    await vocab.put(0, "jid")
    assert await vocab.tag_add(0, "jid") == vocab.empty


async def test_tag_remove(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid", tags=["a", "b", "c"])
    await vocab.put(0, "other", tags=["b"])
    assert await vocab.tag_remove(1, "jid", "b") == ["a", "c"]
    assert await redis.zrange("ql:t:b", 0, -1) == ["other"]
    assert await redis.zscore("ql:tags", "b") == 1.0
    assert await vocab.tag_remove(1, "jid", "a", "c") == vocab.empty
    assert await redis.hget("ql:j:jid", "tags") == "{}"
    assert (await vocab.get(1, "jid"))["tags"] == {}
    assert not await redis.exists("ql:t:a")


async def test_tag_remove_classic_counters(lua: Lua, redis: aioredis.Redis) -> None:
    vocab = make_vocab(lua, "classic")
    await vocab.put(0, "jid", tags=["a", "b"])
    assert await vocab.tag_remove(1, "jid", "a", "ghost") == ["b"]
    # CORE 5.10: decremented per argument, never removed (ghost drifts to -1)
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [
        ("ghost", -1.0),
        ("a", 0.0),
        ("b", 1.0),
    ]


async def test_tag_remove_reqless_counters(lua: Lua, redis: aioredis.Redis) -> None:
    vocab = make_vocab(lua, "reqless")
    await vocab.put(0, "jid", tags=["a", "b"])
    await vocab.put(0, "x", tags=["shared"])
    await vocab.put(0, "y", tags=["shared"])
    assert await vocab.tag_remove(1, "jid", "a", "ghost", "shared") == ["b"]
    # REQLESS 4.4: a tag without carriers leaves ql:tags; a tag with carriers is decremented
    # even when this job did not carry it
    assert await redis.zrange("ql:tags", 0, -1, withscores=True) == [("b", 1.0), ("shared", 1.0)]
    assert await redis.zrange("ql:t:shared", 0, -1) == ["x", "y"]


async def test_tag_order_is_kept(vocab: Vocab) -> None:
    await vocab.put(0, "jid")
    letters = list("abcdefgh")
    for letter in letters:
        await vocab.tag_add(0, "jid", letter)
    assert (await vocab.get(0, "jid"))["tags"] == letters
    for letter in ("e", "a", "h", "c"):
        letters.remove(letter)
        assert await vocab.tag_remove(0, "jid", letter) == letters


async def test_tagged(vocab: Vocab) -> None:
    assert await vocab.tagged(0, "x") == {"total": 0, "jobs": {}}
    await vocab.put(0, "b", tags=["x"])
    await vocab.put(0, "a", tags=["x", "y"])
    await vocab.put(1, "c")
    await vocab.tag_add(1, "c", "x")
    # ascending by tagging time, ties by jid
    assert await vocab.tagged(2, "x") == {"total": 3, "jobs": ["a", "b", "c"]}
    assert await vocab.tagged(2, "x", 1, 1) == {"total": 3, "jobs": ["b"]}
    assert await vocab.tagged(2, "x", 1) == {"total": 3, "jobs": ["b", "c"]}
    assert await vocab.tagged(2, "x", 5, 5) == {"total": 3, "jobs": {}}
    assert await vocab.tagged(2, "y") == {"total": 1, "jobs": ["a"]}


async def test_reqless_tagged_limit_zero_returns_everything(lua: Lua) -> None:
    vocab = make_vocab(lua, "reqless")
    for i in range(30):
        await vocab.put(i, f"j{i:02}", tags=["t"])
    listing = await vocab.tagged(30, "t", 0, 0)
    assert listing == {"total": 30, "jobs": [f"j{i:02}" for i in range(30)]}


async def test_tags_top(vocab: Vocab) -> None:
    assert await vocab.tags_top(0) == vocab.empty
    for i in range(10):
        await vocab.put(0, f"j{i}", tags=[str(k) for k in range(i, 10)])
    # tag k is carried by k + 1 jobs; tags used once never appear
    assert await vocab.tags_top(0) == [str(k) for k in range(9, 0, -1)]
    assert await vocab.tags_top(0, 0, 5) == ["9", "8", "7", "6", "5"]
    assert await vocab.tags_top(0, 5, 5) == ["4", "3", "2", "1"]
    assert await vocab.tags_top(0, 9, 5) == vocab.empty


CLASSIC_TAG_ERRORS: list[tuple[tuple[str, ...], str]] = [
    ((), 'Tag(): Arg "command" must be "add", "remove", "get" or "top"'),
    (("add",), 'Tag(): Arg "jid" missing'),
    (("remove",), 'Tag(): Arg "jid" missing'),
    (("add", "nope", "x"), "Tag(): Job nope does not exist"),
    (("remove", "nope", "x"), "Tag(): Job nope does not exist"),
    (("get",), 'Tag(): Arg "tag" missing'),
    (("get", "x", "foo"), 'Tag(): Arg "offset" not a number: foo'),
    (("get", "x", "0", "foo"), 'Tag(): Arg "count" not a number: foo'),
    (("get", "x", "nan"), 'Tag(): Arg "offset" not a number: nan'),
    (("top", "foo"), 'Tag(): Arg "offset" not a number: foo'),
    (("top", "0", "foo"), 'Tag(): Arg "count" not a number: foo'),
    (("foo",), 'Tag(): First argument must be "add", "remove" or "get"'),
]


@pytest.mark.parametrize(("args", "text"), CLASSIC_TAG_ERRORS)
async def test_classic_tag_rejects(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await make_vocab(lua, "classic").put(0, "jid", tags=["x"])
    await refused(lua, text, "tag", 1, *args)


REQLESS_TAG_ERRORS: list[tuple[str, tuple[str, ...], str]] = [
    ("job.addTag", (), 'Tag(): Arg "jid" missing'),
    ("job.removeTag", (), 'Tag(): Arg "jid" missing'),
    ("job.addTag", ("nope", "x"), "Tag(): Job nope does not exist"),
    ("job.removeTag", ("nope", "x"), "Tag(): Job nope does not exist"),
    ("jobs.tagged", (), 'Tag(): Arg "tag" missing'),
    ("jobs.tagged", ("x", "foo"), 'Tag(): Arg "offset" not a number: foo'),
    ("jobs.tagged", ("x", "0", "foo"), 'Tag(): Arg "limit" not a number: foo'),
    ("tags.top", ("foo",), 'Tag(): Arg "offset" not a number: foo'),
    ("tags.top", ("0", "foo"), 'Tag(): Arg "limit" not a number: foo'),
    ("tags.top", ("0", "inf"), 'Tag(): Arg "limit" not a number: inf'),
]


@pytest.mark.parametrize(("command", "args", "text"), REQLESS_TAG_ERRORS)
async def test_reqless_tag_commands_reject(
    lua: Lua,
    command: str,
    args: tuple[str, ...],
    text: str,
) -> None:
    await make_vocab(lua, "reqless").put(0, "jid", tags=["x"])
    await refused(lua, text, command, 1, *args)


# =============================================================================================
# Failures
# =============================================================================================


async def test_failed_counts_and_groups(vocab: Vocab) -> None:
    assert await vocab.failed_counts(0) == {}
    for i in range(5):
        await failed(vocab, f"g{i}", group="group", now=i)
    await failed(vocab, "h", group="other", now=5)
    assert await vocab.failed_counts(6) == {"group": 5, "other": 1}
    # most recently failed first
    assert await vocab.failed_group(6, "group") == {
        "total": 5,
        "jobs": ["g4", "g3", "g2", "g1", "g0"],
    }
    assert await vocab.failed_group(6, "group", 0, 2) == {"total": 5, "jobs": ["g4", "g3"]}
    assert await vocab.failed_group(6, "group", 2, 2) == {"total": 5, "jobs": ["g2", "g1"]}
    assert await vocab.failed_group(6, "group", 3) == {"total": 5, "jobs": ["g1", "g0"]}
    assert await vocab.failed_group(6, "group", 10, 2) == {"total": 5, "jobs": {}}
    assert await vocab.failed_group(6, "nope") == {"total": 0, "jobs": {}}


async def test_failed_pagination_of_a_hundred(vocab: Vocab) -> None:
    for i in range(100):
        await failed(vocab, str(i), now=i)
    first = await vocab.failed_group(100, "group", 0, 50)
    second = await vocab.failed_group(100, "group", 50, 50)
    assert first == {"total": 100, "jobs": [str(i) for i in range(99, 49, -1)]}
    assert second == {"total": 100, "jobs": [str(i) for i in range(49, -1, -1)]}


async def test_reqless_failure_group_counts_ignore_paging(lua: Lua) -> None:
    vocab = make_vocab(lua, "reqless")
    await failed(vocab, "a", group="g1")
    await failed(vocab, "b", group="g2")
    assert await lua.json("failureGroups.counts", 1, 1, 1) == {"g1": 1, "g2": 1}
    # quirk (REQLESS 8.17): without a group, jobs.failedByGroup answers the counts
    assert await lua.json("jobs.failedByGroup", 1) == {"g1": 1, "g2": 1}


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("failed", ("group", "foo"), 'Failed(): Arg "start" is not a number: foo'),
        ("failed", ("group", "0", "foo"), 'Failed(): Arg "limit" is not a number: foo'),
        ("failed", ("group", "nan"), 'Failed(): Arg "start" is not a number: nan'),
        ("jobs.failedByGroup", ("group", "foo"), 'Failed(): Arg "start" is not a number: foo'),
        ("jobs.failedByGroup", ("group", "0", "foo"), 'Failed(): Arg "limit" is not a number: foo'),
        ("failureGroups.counts", ("foo",), 'Failed(): Arg "start" is not a number: foo'),
        ("failureGroups.counts", ("0", "foo"), 'Failed(): Arg "limit" is not a number: foo'),
    ],
)
async def test_failed_rejects(
    lua: Lua,
    command: str,
    args: tuple[str, ...],
    text: str,
) -> None:
    await failed(make_vocab(lua, "classic"), "jid")
    await refused(lua, text, command, 1, *args)


async def test_unfail_moves_the_oldest_failures(vocab: Vocab, redis: aioredis.Redis) -> None:
    for i in range(5):
        await failed(vocab, f"j{i}", now=i)
    assert await vocab.unfail(10, "queue", "group", 2) == 2
    # LRANGE -count -1: the two oldest failures
    assert await redis.lrange("ql:f:group", 0, -1) == ["j4", "j3", "j2"]
    assert await redis.smembers("ql:failures") == {"group"}
    assert sorted(await redis.zrange("ql:q:queue-work", 0, -1)) == ["j0", "j1"]
    for jid, score in (await zscores(redis, "ql:q:queue-work")).items():
        assert score == pytest.approx(work_score(0, 10), rel=1e-12), jid
    job = await vocab.get(10, "j0")
    assert job == vocab.job(
        "j0",
        failure={"group": "group", "message": "message", "when": 0, "worker": "worker"},
        history=[
            vocab.put_entry("queue", 0),
            {"when": 0, "what": "popped", "worker": "worker"},
            {"when": 0, "what": "failed", "worker": "worker", "group": "group"},
            vocab.put_entry("queue", 10),
        ],
    )
    # default count 25 takes the rest; the group disappears
    assert await vocab.unfail(11, "queue", "group") == 3
    assert not await redis.exists("ql:f:group")
    assert not await redis.exists("ql:failures")
    assert await vocab.failed_counts(11) == {}
    # the failed statistic is not decremented by unfail (CORE 2.5)
    stats = await vocab.stats(11, "queue", 0)
    assert (stats["failed"], stats["failures"]) == (5, 5)


async def test_unfail_into_another_queue(vocab: Vocab, redis: aioredis.Redis) -> None:
    await vocab.put(0, "jid", retries=2, priority=3)
    await vocab.pop(0)
    assert await vocab.retry(0, "jid") == 1
    await vocab.pop(1)
    await vocab.fail(2, "jid", "worker", "group", "message")
    queues = await redis.zrange("ql:queues", 0, -1)
    assert await vocab.unfail(3, "elsewhere", "group", 100) == 1
    job = await vocab.get(3, "jid")
    assert (job["state"], job["queue"], job["worker"], job["expires"]) == (
        "waiting",
        "elsewhere",
        "",
        0,
    )
    assert (job["retries"], job["remaining"], job["priority"]) == (2, 2, 3)
    assert job["history"][-1] == vocab.put_entry("elsewhere", 3)
    assert await redis.zscore("ql:q:elsewhere-work", "jid") == pytest.approx(
        work_score(3, 3), rel=1e-12
    )
    # the queue is not registered (CORE 6.19)
    assert await redis.zrange("ql:queues", 0, -1) == queues
    assert [j["jid"] for j in await vocab.pop(4, "elsewhere")] == ["jid"]


async def test_unfail_of_an_empty_group(vocab: Vocab, redis: aioredis.Redis) -> None:
    assert await vocab.unfail(0, "queue", "nope") == 0
    assert await redis.keys("*") == []


async def test_reqless_unfail_keeps_throttles(lua: Lua) -> None:
    vocab = make_vocab(lua, "reqless")
    await vocab.put(0, "jid", throttles=["tid"])
    await vocab.pop(0)
    await vocab.fail(1, "jid", "worker", "group", "message")
    assert await vocab.unfail(2, "other", "group") == 1
    assert (await vocab.get(2, "jid"))["throttles"] == ["tid", "ql:q:queue"]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Queue(): no queue name provided"),
        (("queue",), 'Unfail(): Arg "group" missing'),
        (("queue", "group", "foo"), 'Unfail(): Arg "count" not a number: foo'),
        (("queue", "group", "nan"), 'Unfail(): Arg "count" not a number: nan'),
    ],
)
async def test_classic_unfail_rejects(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await failed(make_vocab(lua, "classic"), "jid")
    await refused(lua, text, "unfail", 1, *args)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), 'queue.unfail(): Arg "queue" missing'),
        (("queue",), 'Unfail(): Arg "group" missing'),
        (("queue", "group", "foo"), 'Unfail(): Arg "count" not a number: foo'),
        (("queue", "group", "0"), 'Unfail(): Arg "count" must be greater than zero'),
        (("queue", "group", "-3"), 'Unfail(): Arg "count" must be greater than zero'),
    ],
)
async def test_reqless_unfail_rejects(lua: Lua, args: tuple[str, ...], text: str) -> None:
    await failed(make_vocab(lua, "reqless"), "jid")
    await refused(lua, text, "queue.unfail", 1, *args)
