"""Helpers of the job-lifecycle tests (test_put_pop.py, test_complete_fail_retry.py).

Expected job objects are built from the documents (CORE 4.1, REQLESS 5.1), never from what
the script returns, so that whole-object comparisons pin every key.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tests.conftest import Lua


def put_entry(when: int, queue: str = "queue", *, reqless: bool = False) -> dict[str, Any]:
    """A presented `put` history entry (CORE 4.3; REQLESS 5.3 renames `q` to `queue`)."""
    return {"when": when, "what": "put", ("queue" if reqless else "q"): queue}


def popped_entry(when: int, worker: str = "worker") -> dict[str, Any]:
    return {"when": when, "what": "popped", "worker": worker}


def classic_job(jid: str = "jid", **fields: Any) -> dict[str, Any]:
    """The 17-key classic job object (CORE 4.1) of a fresh job, overridden by ``fields``."""
    job: dict[str, Any] = {
        "jid": jid,
        "klass": "klass",
        "state": "waiting",
        "queue": "queue",
        "worker": "",
        "tracked": False,
        "priority": 0,
        "expires": 0,
        "retries": 5,
        "remaining": 5,
        "data": "{}",
        "tags": {},
        "history": [put_entry(0)],
        "failure": {},
        "spawned_from_jid": False,
        "dependents": {},
        "dependencies": {},
    }
    unknown = set(fields) - set(job)
    assert not unknown, f"not a classic job key: {unknown}"
    job.update(fields)
    return job


def reqless_job(jid: str = "jid", **fields: Any) -> dict[str, Any]:
    """The 18-key reqless job object (REQLESS 5.1): classic keys plus `throttles`."""
    throttles = fields.pop("throttles", None)
    history = fields.pop("history", [put_entry(0, fields.get("queue", "queue"), reqless=True)])
    job = classic_job(jid, history=history, **fields)
    job["throttles"] = throttles if throttles is not None else [f"ql:q:{job['queue']}"]
    return job


async def snapshot(redis: aioredis.Redis) -> dict[str, Any]:
    """Every key of the database with its type, content (and scores) and TTL."""
    state: dict[str, Any] = {}
    keys = [str(key) for key in await redis.keys("*")]  # decode_responses: already str
    for key in sorted(keys):
        kind = await redis.type(key)
        value: Any
        if kind == "string":
            value = await redis.get(key)
        elif kind == "hash":
            value = await redis.hgetall(key)
        elif kind == "list":
            value = await redis.lrange(key, 0, -1)
        elif kind == "set":
            value = sorted(await redis.smembers(key))
        elif kind == "zset":
            value = await redis.zrange(key, 0, -1, withscores=True)
        else:  # pragma: no cover - the protocol uses no other type
            value = kind
        state[key] = (kind, value, await redis.ttl(key))
    return state


async def hfield(redis: aioredis.Redis, key: str, name: str) -> str:
    """A hash field that must exist, as text."""
    value = await redis.hget(key, name)
    assert isinstance(value, str), f"{key} {name}: {value!r}"
    return value


async def assert_fails(
    lua: Lua,
    redis: aioredis.Redis,
    text: str | None,
    command: str,
    now: float,
    *args: str | int | float,
) -> str:
    """The call raises an error containing ``text`` (any error when None) and changes nothing.

    Returns the error message for further checks.
    """
    before = await snapshot(redis)
    with pytest.raises(ResponseError, match=None if text is None else re.escape(text)) as info:
        await lua(command, now, *args)
    assert await snapshot(redis) == before, f"{command} {args} changed the database"
    message = str(info.value)
    assert "attempt to" not in message, message
    return message


async def stats(lua: Lua, command: str = "stats", queue: str = "queue", date: int = 0) -> Any:
    return await lua.json(command, 0, queue, date)


def histogram(**counts: int) -> list[int]:
    """A 148-entry histogram (CORE 6.26): s0..s59, m1..m59, h1..h23, d1..d6."""
    names = (
        [f"s{i}" for i in range(60)]
        + [f"m{i}" for i in range(1, 60)]
        + [f"h{i}" for i in range(1, 24)]
        + [f"d{i}" for i in range(1, 7)]
    )
    assert set(counts) <= set(names)
    return [counts.get(name, 0) for name in names]


class Vocabulary:
    """The names one vocabulary gives to the lifecycle commands, and its expected shapes."""

    def __init__(self, reqless: bool) -> None:
        self.reqless = reqless
        self.name = "reqless" if reqless else "classic"
        self.put = "queue.put" if reqless else "put"
        self.requeue = "job.requeue" if reqless else "requeue"
        self.pop = "queue.pop" if reqless else "pop"
        self.peek = "queue.peek" if reqless else "peek"
        self.get = "job.get" if reqless else "get"
        self.multiget = "job.getMulti" if reqless else "multiget"
        self.fail = "job.fail" if reqless else "fail"
        self.retry = "job.retry" if reqless else "retry"
        self.heartbeat = "job.heartbeat" if reqless else "heartbeat"
        self.timeout = "job.timeout" if reqless else "timeout"
        self.stats = "queue.stats" if reqless else "stats"
        # REQLESS 11.2: top-level empty lists of pop/peek/getMulti are [] in reqless
        self.empty = "[]" if reqless else "{}"

    def __repr__(self) -> str:
        return self.name

    def job(self, jid: str = "jid", **fields: Any) -> dict[str, Any]:
        if self.reqless:
            return reqless_job(jid, **fields)
        fields.pop("throttles", None)
        return classic_job(jid, **fields)

    def put_entry(self, when: int, queue: str = "queue") -> dict[str, Any]:
        return put_entry(when, queue, reqless=self.reqless)

    def peek_args(self, count: int) -> tuple[int, ...]:
        return (0, count) if self.reqless else (count,)

    async def track(self, lua: Lua, now: float, jid: str = "jid") -> Any:
        if self.reqless:
            return await lua("job.track", now, jid)
        return await lua("track", now, "track", jid)

    async def complete(
        self,
        lua: Lua,
        now: float,
        jid: str = "jid",
        worker: str = "worker",
        queue: str = "queue",
        data: str = "{}",
    ) -> Any:
        return await lua(
            "job.complete" if self.reqless else "complete", now, jid, worker, queue, data
        )


CLASSIC = Vocabulary(reqless=False)
REQLESS = Vocabulary(reqless=True)
BOTH = pytest.mark.parametrize("v", [CLASSIC, REQLESS], ids=["classic", "reqless"])


def score(priority: float, t: float) -> Any:
    """The work-set score of CORE 2.3, compared precisely enough to see the time part."""
    return pytest.approx(priority - t / 1e10, rel=0, abs=1e-12)
