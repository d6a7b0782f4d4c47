"""Helpers of the job-lifecycle tests (test_put_pop.py, test_complete_fail_retry.py): the
command names and expected shapes of one vocabulary, and put/pop shortcuts. The expected
objects themselves are built in expect.py.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from aqless.scripts.loader import Argument
from tests.conftest import Lua
from tests.scripts.expect import JSONObject, job_object, refused, work_score

# moved to expect.py, still importable from here
from tests.scripts.expect import classic_job as classic_job
from tests.scripts.expect import hfield as hfield
from tests.scripts.expect import popped_entry as popped_entry
from tests.scripts.expect import put_entry as put_entry
from tests.scripts.expect import reqless_job as reqless_job
from tests.scripts.expect import snapshot as snapshot


async def assert_fails(
    lua: Lua, redis: aioredis.Redis, text: str | None, command: str, now: float, *args: Argument
) -> str:
    """`expect.refused` under its former name (``redis`` is the connection of ``lua``)."""
    assert redis is lua.redis
    return await refused(lua, text, command, now, *args)


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

    def job(self, jid: str = "jid", **fields: Any) -> JSONObject:
        """The job object this vocabulary shows (`throttles` is ignored in classic)."""
        return job_object(jid, reqless=self.reqless, **fields)

    def put_entry(self, when: int, queue: str = "queue") -> JSONObject:
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


async def put(
    lua: Lua,
    v: Vocabulary,
    now: float,
    jid: str = "jid",
    *options: Any,
    queue: str = "queue",
    delay: int = 0,
    data: str = "{}",
    worker: str = "worker",
) -> Any:
    """`put` / `queue.put` of a job of class `klass`; the raw reply."""
    return await lua(v.put, now, worker, queue, jid, "klass", data, delay, *options)


async def pop(
    lua: Lua,
    v: Vocabulary,
    now: float,
    count: int = 1,
    *,
    queue: str = "queue",
    worker: str = "worker",
) -> Any:
    """`pop` / `queue.pop`, decoded."""
    return await lua.json(v.pop, now, queue, worker, count)


def score(priority: float, t: float) -> Any:
    """The work-set score of CORE 2.3, compared precisely enough to see the time part."""
    return pytest.approx(work_score(priority, t), rel=0, abs=1e-12)
