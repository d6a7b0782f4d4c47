"""Helpers shared by test_queues, test_recurring, test_throttles and test_config_workers."""

from __future__ import annotations

from typing import Any

from aqless.scripts.loader import Argument
from tests.conftest import Lua
from tests.scripts import expect

# moved to expect.py, still importable from here
from tests.scripts.expect import JSONObject as JSONObject
from tests.scripts.expect import classic_job as classic_job
from tests.scripts.expect import popped_entry as popped_entry
from tests.scripts.expect import refused as refused
from tests.scripts.expect import reqless_job as reqless_job
from tests.scripts.expect import snapshot as snapshot


def put_entry(when: int, queue: str = "queue", *, key: str = "q") -> JSONObject:
    """`expect.put_entry` chosen by its queue key: `q` (classic) or `queue` (reqless)."""
    assert key in ("q", "queue"), key
    return expect.put_entry(when, queue, reqless=key == "queue")


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
    reqless: bool = False,
) -> None:
    """Classic `put` (reqless `queue.put`) of a job of class `klass` with data `{}`."""
    command = "queue.put" if reqless else "put"
    assert await lua(command, now, worker, queue, jid, "klass", "{}", delay, *options) == jid


async def rput(lua: Lua, now: float, jid: str, *options: Argument, **where: Any) -> None:
    """Reqless `queue.put`: `put` with the same options."""
    await put(lua, now, jid, *options, reqless=True, **where)


async def pop(
    lua: Lua,
    now: float,
    count: int = 1,
    *,
    queue: str = "queue",
    worker: str = "worker",
    reqless: bool = False,
) -> list[str]:
    """Classic `pop` (reqless `queue.pop`); returns the jids (a classic `{}` reads as no job,
    a reqless reply must be a list)."""
    reply = await lua.json("queue.pop" if reqless else "pop", now, queue, worker, count)
    if reqless:
        assert isinstance(reply, list)
    return [job["jid"] for job in reply]


async def rpop(lua: Lua, now: float, count: int = 1, **where: Any) -> list[str]:
    """Reqless `queue.pop`: `pop` with the same options."""
    return await pop(lua, now, count, reqless=True, **where)
