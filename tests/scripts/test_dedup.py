"""aqless's deduplication (dedup.lua): `queue.putDeduplicated` in its three modes, and the
ends of a job (complete, fail, cancel, exhausted retries) letting its dedup id go."""

from __future__ import annotations

import json

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import rpop
from tests.scripts.expect import refused, snapshot

KEY = "ql:dedup:order-7"


async def dput(
    lua: Lua,
    now: float,
    mode: str,
    jid: str,
    *,
    ttl: float = 0,
    data: str = "{}",
    delay: float = 0,
    options: tuple[Argument, ...] = (),
) -> list[str]:
    reply = await lua(
        "queue.putDeduplicated", now, "order-7", mode, ttl,
        "worker", "queue", jid, "klass", data, delay, *options,
    )  # fmt: skip
    assert isinstance(reply, list)
    return reply


async def test_job_mode_holds_the_id_until_the_job_completes(lua: Lua) -> None:
    assert await dput(lua, 1, "job", "a") == ["a", "put"]
    assert await lua.redis.get(KEY) == "a"
    assert await lua.redis.hget("ql:j:a", "dedup") == "order-7"
    assert await dput(lua, 2, "job", "b") == ["a", "deduplicated"]
    assert not await lua.redis.exists("ql:j:b")
    assert await rpop(lua, 3) == ["a"]
    assert await dput(lua, 4, "job", "c") == ["a", "deduplicated"]  # running still holds it
    assert await lua("job.complete", 5, "a", "worker", "queue", "{}") == "complete"
    assert not await lua.redis.exists(KEY)
    assert await dput(lua, 6, "job", "d") == ["d", "put"]


async def test_job_mode_lets_go_when_the_job_fails_or_is_cancelled(lua: Lua) -> None:
    await dput(lua, 1, "job", "a")
    await rpop(lua, 2)
    await lua("job.fail", 3, "a", "worker", "group", "message")
    assert not await lua.redis.exists(KEY)
    assert await dput(lua, 4, "job", "b") == ["b", "put"]
    await lua("job.cancel", 5, "b")
    assert not await lua.redis.exists(KEY)
    assert await dput(lua, 6, "job", "c") == ["c", "put"]


async def test_job_mode_lets_go_when_retries_are_exhausted(lua: Lua) -> None:
    await dput(lua, 1, "job", "a", options=("retries", 0))
    await rpop(lua, 2)
    assert await lua("job.retry", 3, "a", "queue", "worker", 0) == -1
    assert await lua.redis.hget("ql:j:a", "state") == "failed"
    assert not await lua.redis.exists(KEY)


async def test_job_mode_lets_go_when_a_lost_lock_spends_the_last_retry(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await dput(lua, 1, "job", "a", options=("retries", 0))
    await rpop(lua, 2)
    assert await rpop(lua, 1000) == []  # the lock expired: no retry left, the job fails
    assert await lua.redis.hget("ql:j:a", "state") == "failed"
    assert not await lua.redis.exists(KEY)


async def test_a_stale_id_whose_job_ended_elsewhere_does_not_deduplicate(lua: Lua) -> None:
    # another qless client's script completes the job without letting the id go
    await dput(lua, 1, "job", "a")
    await lua.redis.hset("ql:j:a", "state", "complete")
    assert await dput(lua, 2, "job", "b") == ["b", "put"]
    await lua.redis.delete("ql:j:b")
    assert await dput(lua, 3, "job", "c") == ["c", "put"]


async def test_ttl_mode_holds_the_id_for_its_ttl_whatever_the_job_does(lua: Lua) -> None:
    assert await dput(lua, 1, "ttl", "a", ttl=60) == ["a", "put"]
    assert 59_000 < await lua.redis.pttl(KEY) <= 60_000
    await rpop(lua, 2)
    await lua("job.complete", 3, "a", "worker", "queue", "{}")
    assert await lua.redis.get(KEY) == "a"  # completing does not free a ttl's id
    assert await dput(lua, 4, "ttl", "b", ttl=60) == ["a", "deduplicated"]
    await lua.redis.delete(KEY)  # as its expiry does
    assert await dput(lua, 5, "ttl", "c", ttl=60) == ["c", "put"]


async def test_debounce_replaces_the_pending_jobs_data_and_delay(lua: Lua) -> None:
    assert await dput(lua, 1, "debounce", "a", ttl=30, data='{"v":1}', delay=10) == ["a", "put"]
    reply = await dput(lua, 5, "debounce", "b", ttl=30, data='{"v":2}', delay=10)
    assert reply == ["a", "debounced"]
    assert not await lua.redis.exists("ql:j:b")
    assert json.loads(await lua.redis.hget("ql:j:a", "data") or "") == {"v": 2}
    assert await lua.redis.zscore("ql:q:queue-scheduled", "a") == 15  # the delay starts again
    assert 29_000 < await lua.redis.pttl(KEY) <= 30_000


async def test_debounce_after_the_job_started_puts_a_new_job(lua: Lua) -> None:
    await dput(lua, 1, "debounce", "a", ttl=30, data='{"v":1}')
    assert await rpop(lua, 2) == ["a"]
    assert await dput(lua, 3, "debounce", "b", ttl=30, data='{"v":2}') == ["b", "put"]
    assert await lua.redis.get(KEY) == "b"
    assert json.loads(await lua.redis.hget("ql:j:a", "data") or "") == {"v": 1}
    assert await lua.redis.hget("ql:j:a", "state") == "running"


async def test_deduplicated_and_debounced_puts_publish_an_event(lua: Lua) -> None:
    await dput(lua, 1, "job", "a")
    async with EventCapture(lua.redis, "ql:log") as captured:
        await dput(lua, 2, "job", "b")
    assert [json.loads(p) for p in captured.on("ql:log")] == [
        {"jid": "a", "event": "deduplicated", "queue": "queue", "dedup": "order-7"}
    ]
    await lua.redis.flushall()
    await dput(lua, 1, "debounce", "a", ttl=5)
    async with EventCapture(lua.redis, "ql:log") as captured:
        await dput(lua, 2, "debounce", "b", ttl=5)
    assert [json.loads(p)["event"] for p in captured.on("ql:log")] == ["put", "debounced"]


async def test_bad_arguments_are_refused_without_a_write(lua: Lua) -> None:
    put = ("worker", "queue", "a", "klass", "{}", 0)
    command = "queue.putDeduplicated"
    await refused(lua, 'Dedup(): Arg "id" missing', command, 1, "", "job", 0, *put)
    await refused(lua, 'Arg "mode" must be job, ttl or debounce: x', command, 1, "i", "x", 0, *put)
    await refused(lua, 'Arg "ttl" not a positive number: 0', command, 1, "i", "ttl", 0, *put)
    await refused(lua, 'Put(): Arg "delay" not a number: x', command, 1, "i", "job", 0,
                  "worker", "queue", "a", "klass", "{}", "x")  # fmt: skip


async def test_job_dedup_answers_the_id_a_job_was_put_with(lua: Lua) -> None:
    await dput(lua, 1, "job", "a")
    await lua("queue.put", 1, "worker", "queue", "plain", "klass", "{}", 0)
    assert await lua("job.dedup", 2, "a") == "order-7"
    assert await lua("job.dedup", 2, "plain") is None
    assert await lua("job.dedup", 2, "missing") is None
    await refused(lua, "Job(): no jid provided", "job.dedup", 2)


# -- queue.putNew: a put that never replaces a job (the put to retry after a lost reply) -----


async def new_put(lua: Lua, now: float, jid: str, *options: Argument) -> list[str]:
    reply = await lua("queue.putNew", now, "worker", "queue", jid, "klass", "{}", 0, *options)
    assert isinstance(reply, list)
    return reply


async def test_a_new_put_makes_a_job_only_when_none_of_its_jid_exists(lua: Lua) -> None:
    assert await new_put(lua, 1, "a", "priority", 3) == ["a", "put"]
    assert await lua.redis.hget("ql:j:a", "priority") == "3"
    for state in ("waiting", "running", "complete"):
        if state == "running":
            await rpop(lua, 2)
        if state == "complete":
            assert await lua("job.complete", 3, "a", "worker", "queue", "{}") == "complete"
        before = await snapshot(lua)
        assert await new_put(lua, 4, "a", "priority", 9) == ["a", "existed"]
        assert await snapshot(lua) == before  # nothing written: the job is left as it was
        assert await lua.redis.hget("ql:j:a", "state") == state


async def test_a_new_put_checks_its_arguments_as_put_does_when_it_puts(lua: Lua) -> None:
    await refused(lua, 'Put(): Arg "jid" missing', "queue.putNew", 1, "worker", "queue")
    await refused(
        lua, 'Put(): Arg "delay" not a number: x',
        "queue.putNew", 1, "worker", "queue", "a", "klass", "{}", "x",
    )  # fmt: skip
    assert not await lua.redis.exists("ql:j:a")
