"""Helpers shared by test_queues, test_recurring, test_throttles and test_config_workers."""

from __future__ import annotations

import re
from typing import Any

import pytest
from redis.exceptions import ResponseError

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua

JSONObject = dict[str, Any]


async def snapshot(lua: Lua) -> dict[str, tuple[str, object, bool]]:
    """Every key of the database: (type, value, has a TTL)."""
    redis = lua.redis
    state: dict[str, tuple[str, object, bool]] = {}
    for key in sorted(await redis.keys("*")):
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
        state[str(key)] = (kind, value, await redis.ttl(key) != -1)
    return state


async def refused(lua: Lua, text: str | None, command: str, now: float, *args: Argument) -> str:
    """Call a command that must fail: with `text` in the error (any error when None), no Lua
    runtime error ("attempt to ..."), no publication and no change to the database."""
    before = await snapshot(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        with pytest.raises(ResponseError, match=re.escape(text) if text else None) as info:
            await lua(command, now, *args)
    message = str(info.value)
    assert "attempt to" not in message, message
    assert captured.messages == []
    assert await snapshot(lua) == before
    return message


# ---------------------------------------------------------------------------------------------
# job objects


def classic_job(
    jid: str,
    *,
    history: list[JSONObject],
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
    failure: JSONObject | None = None,
    spawned_from_jid: str | bool = False,
    dependents: list[str] | None = None,
    dependencies: list[str] | None = None,
) -> JSONObject:
    """The 17-key classic job object (CORE 4.1); empty lists are cjson's `{}`."""
    return {
        "jid": jid,
        "klass": "klass",
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
        "history": history or {},
        "failure": failure or {},
        "spawned_from_jid": spawned_from_jid,
        "dependents": dependents or {},
        "dependencies": dependencies or {},
    }


def reqless_job(jid: str, *, throttles: list[str] | None = None, **fields: Any) -> JSONObject:
    """The 18-key reqless job object (REQLESS 5.1)."""
    job = classic_job(jid, **fields)
    job["throttles"] = [f"ql:q:{job['queue']}"] if throttles is None else throttles or {}
    return job


def put_entry(when: int, queue: str = "queue", *, key: str = "q") -> JSONObject:
    return {"when": when, "what": "put", key: queue}


def popped_entry(when: int, worker: str = "worker") -> JSONObject:
    return {"when": when, "what": "popped", "worker": worker}


# ---------------------------------------------------------------------------------------------
# shortcuts


async def put(
    lua: Lua,
    now: float,
    jid: str,
    *options: Argument,
    queue: str = "queue",
    delay: float = 0,
    worker: str = "worker",
) -> None:
    """Classic `put` of a job of class `klass` with data `{}`."""
    assert await lua("put", now, worker, queue, jid, "klass", "{}", delay, *options) == jid


async def rput(
    lua: Lua,
    now: float,
    jid: str,
    *options: Argument,
    queue: str = "queue",
    delay: float = 0,
    worker: str = "worker",
) -> None:
    """Reqless `queue.put` of a job of class `klass` with data `{}`."""
    reply = await lua("queue.put", now, worker, queue, jid, "klass", "{}", delay, *options)
    assert reply == jid


async def pop(
    lua: Lua, now: float, count: int = 1, *, queue: str = "queue", worker: str = "worker"
) -> list[str]:
    """Classic `pop`; returns the jids ( `{}` reads as no job)."""
    reply = await lua.json("pop", now, queue, worker, count)
    return [job["jid"] for job in reply]


async def rpop(
    lua: Lua, now: float, count: int = 1, *, queue: str = "queue", worker: str = "worker"
) -> list[str]:
    """Reqless `queue.pop`; returns the jids."""
    reply = await lua.json("queue.pop", now, queue, worker, count)
    assert isinstance(reply, list)
    return [job["jid"] for job in reply]
