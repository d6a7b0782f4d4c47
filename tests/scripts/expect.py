"""What the script tests expect, shared by every test module of tests/scripts.

- ``snapshot`` of the whole database and ``refused``, the check that a command is turned down
  without a trace;
- ``hfield`` and ``zscores``, reads that must succeed;
- the expected job objects of CORE 4.1 (17 keys) and REQLESS 5.1 (18 keys, with
  ``throttles``) and their history entries. They are built from the documents, never from
  what the script returns, so that whole-object comparisons pin every key.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua

JSONObject = dict[str, Any]

# ---------------------------------------------------------------------------------------------
# the database


#: aqless's throughput hashes: their expiry is set relative to the server's clock, so two
#: runs of the same calls a moment apart leave them expiring a moment apart
THROUGHPUT_PREFIX = "ql:aqless:tp:"


async def snapshot(db: aioredis.Redis | Lua) -> dict[str, tuple[str, object, int]]:
    """Every key of the database (of ``db``, a connection or a `Lua` caller): its type, its
    content (sorted-set scores included) and its expiry time (PEXPIRETIME: absolute, so that
    it does not move while time passes; -1 for a key without one)."""
    redis = db.redis if isinstance(db, Lua) else db
    state: dict[str, tuple[str, object, int]] = {}
    for key in sorted(str(key) for key in await redis.keys("*")):  # decode_responses: str
        kind = str(await redis.type(key))
        value: object
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
        expires = await redis.pexpiretime(key)
        if key.startswith(THROUGHPUT_PREFIX) and expires > 0:
            expires = 1  # relative to the server's clock (stats.lua's Stats.tick): it expires
        state[key] = (kind, value, expires)
    return state


async def refused(lua: Lua, text: str | None, command: str, now: float, *args: Argument) -> str:
    """Call a command that must fail: with ``text`` in the error (any error when None), no Lua
    runtime error ("attempt to ..."), no publication and no change to the database (decision
    1: bad input never leaves partial state).

    Returns the error message for further checks.
    """
    before = await snapshot(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        with pytest.raises(ResponseError, match=None if text is None else re.escape(text)) as info:
            await lua(command, now, *args)
    message = str(info.value)
    assert "attempt to" not in message, message
    assert captured.messages == [], f"{command} {args} published {captured.messages}"
    assert await snapshot(lua) == before, f"{command} {args} changed the database"
    return message


async def hfield(redis: aioredis.Redis, key: str, name: str) -> str:
    """A hash field that must exist, as text."""
    value = await redis.hget(key, name)
    assert isinstance(value, str), f"{key} has no field {name}: {value!r}"
    return value


async def zscores(redis: aioredis.Redis, key: str) -> dict[str, float]:
    """Members of a sorted set with their scores."""
    pairs: Any = await redis.zrange(key, 0, -1, withscores=True)
    return {str(member): float(score) for member, score in pairs}


def work_score(priority: float, t: float) -> float:
    """The work-set score of CORE 2.3."""
    return priority - t / 1e10


# ---------------------------------------------------------------------------------------------
# job objects


def put_entry(when: int, queue: str = "queue", *, reqless: bool = False) -> JSONObject:
    """A presented `put` history entry (CORE 4.3; REQLESS 5.3 renames `q` to `queue`)."""
    return {"when": when, "what": "put", ("queue" if reqless else "q"): queue}


def popped_entry(when: int, worker: str = "worker") -> JSONObject:
    return {"when": when, "what": "popped", "worker": worker}


def throttle_list(queue: str, throttles: list[str] | None = None) -> object:
    """The `throttles` of a reqless job or recurring job: ``throttles`` as given, by default
    the throttle of its queue (REQLESS 5.1, 5.2)."""
    return [f"ql:q:{queue}"] if throttles is None else throttles or {}


def job_object(
    jid: str = "jid",
    *,
    reqless: bool,
    klass: str = "klass",
    state: str = "waiting",
    queue: str = "queue",
    worker: str = "",
    tracked: bool = False,
    priority: float = 0,
    expires: float = 0,
    retries: int = 5,
    remaining: int | None = None,
    data: str = "{}",
    tags: list[str] | None = None,
    history: list[JSONObject] | None = None,
    failure: JSONObject | None = None,
    spawned_from_jid: str | bool = False,
    dependents: list[str] | None = None,
    dependencies: list[str] | None = None,
    throttles: list[str] | None = None,
    put_queue: str | None = None,
) -> JSONObject:
    """The job object a reader of one vocabulary sees: the 17 classic keys (CORE 4.1), plus
    `throttles` in reqless (REQLESS 5.1; ignored for a classic reader, so that one call can
    serve both vocabularies).

    Defaults are those of a fresh job: `remaining` is `retries`, the history is the one
    `put` in ``queue`` at 0, and the throttles are the throttle of the queue the job was put
    in (``put_queue``, by default ``queue``). Empty lists are cjson's ``{}``.
    """
    job: JSONObject = {
        "jid": jid,
        "klass": klass,
        "state": state,
        "queue": queue,
        "worker": worker,
        "tracked": tracked,
        "priority": priority,
        "expires": expires,
        "retries": retries,
        "remaining": retries if remaining is None else remaining,
        "data": data,
        "tags": tags or {},
        "history": [put_entry(0, queue, reqless=reqless)] if history is None else history or {},
        "failure": failure or {},
        "spawned_from_jid": spawned_from_jid,
        "dependents": dependents or {},
        "dependencies": dependencies or {},
    }
    if reqless:
        job["throttles"] = throttle_list(queue if put_queue is None else put_queue, throttles)
    return job


def classic_job(jid: str = "jid", **fields: Any) -> JSONObject:
    """The 17-key classic job object (CORE 4.1); see `job_object`."""
    assert not {"throttles", "put_queue"} & set(fields), "not a classic job key"
    return job_object(jid, reqless=False, **fields)


def reqless_job(jid: str = "jid", **fields: Any) -> JSONObject:
    """The 18-key reqless job object (REQLESS 5.1); see `job_object`."""
    return job_object(jid, reqless=True, **fields)
