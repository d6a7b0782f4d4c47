"""Helpers for test_relations.py and test_events.py: one job API in both vocabularies.

``Vocab`` speaks either the classic qless-core commands (CORE.md) or the reqless-core ones
(REQLESS.md) so that a behaviour shared by both can be tested once per vocabulary; the
differences (reply shapes, history ``q``/``queue`` keys, the 18th job key ``throttles``) are
kept here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from tests.conftest import EventCapture, Lua
from tests.scripts.expect import JSONObject, job_object, put_entry, refused

# moved to expect.py, still importable from here
from tests.scripts.expect import hfield as hfield
from tests.scripts.expect import snapshot as snapshot
from tests.scripts.expect import work_score as work_score
from tests.scripts.expect import zscores as zscores

EventsFactory = Callable[..., EventCapture]


class Vocab:
    """The commands of one vocabulary, with the classic argument meaning."""

    def __init__(self, lua: Lua, reqless: bool) -> None:
        self.lua = lua
        self.reqless = reqless

    @property
    def name(self) -> str:
        return "reqless" if self.reqless else "classic"

    # ---- shapes ------------------------------------------------------------------------

    @property
    def empty(self) -> Any:
        """A top-level empty list in replies that reqless prints as ``[]`` (REQLESS 11.2)."""
        return [] if self.reqless else {}

    def put_entry(self, queue: str, when: int) -> JSONObject:
        """A presented ``put`` history entry (decision 4: the reader's vocabulary)."""
        return put_entry(when, queue, reqless=self.reqless)

    def job(self, jid: str = "jid", **fields: Any) -> JSONObject:
        """The expected job object (CORE 4.1; REQLESS 5.1 adds ``throttles``)."""
        return job_object(jid, reqless=self.reqless, **fields)

    # ---- job life cycle ----------------------------------------------------------------

    async def put(
        self,
        now: float,
        jid: str,
        queue: str = "queue",
        *,
        worker: str = "worker",
        klass: str = "klass",
        data: str = "{}",
        delay: float = 0,
        **options: Any,
    ) -> Any:
        args: list[Any] = [worker, queue, jid, klass, data, delay]
        for name, value in options.items():
            args += [name, value if isinstance(value, str | int | float) else json.dumps(value)]
        return await self.lua("queue.put" if self.reqless else "put", now, *args)

    async def pop(
        self, now: float, queue: str = "queue", worker: str = "worker", count: int = 1
    ) -> Any:
        command = "queue.pop" if self.reqless else "pop"
        return await self.lua.json(command, now, queue, worker, count)

    async def peek(self, now: float, queue: str = "queue", count: int = 10) -> Any:
        if self.reqless:
            return await self.lua.json("queue.peek", now, queue, 0, count)
        return await self.lua.json("peek", now, queue, count)

    async def complete(
        self, now: float, jid: str, worker: str = "worker", queue: str = "queue", data: str = "{}"
    ) -> Any:
        return await self.lua(
            "job.complete" if self.reqless else "complete", now, jid, worker, queue, data
        )

    async def advance(
        self,
        now: float,
        jid: str,
        to: str,
        *options: Any,
        worker: str = "worker",
        queue: str = "queue",
        data: str = "{}",
    ) -> Any:
        """``complete ... next <to> [options]`` / ``job.completeAndRequeue ... <to> [options]``."""
        if self.reqless:
            return await self.lua(
                "job.completeAndRequeue", now, jid, worker, queue, data, to, *options
            )
        return await self.lua("complete", now, jid, worker, queue, data, "next", to, *options)

    async def fail(
        self,
        now: float,
        jid: str,
        worker: str = "worker",
        group: str = "group",
        message: str = "message",
    ) -> Any:
        return await self.lua(
            "job.fail" if self.reqless else "fail", now, jid, worker, group, message
        )

    async def retry(
        self, now: float, jid: str, queue: str = "queue", worker: str = "worker", *rest: Any
    ) -> Any:
        return await self.lua(
            "job.retry" if self.reqless else "retry", now, jid, queue, worker, *rest
        )

    async def heartbeat(self, now: float, jid: str, worker: str = "worker") -> Any:
        return await self.lua("job.heartbeat" if self.reqless else "heartbeat", now, jid, worker)

    async def timeout(self, now: float, *jids: str) -> Any:
        return await self.lua("job.timeout" if self.reqless else "timeout", now, *jids)

    async def get(self, now: float, jid: str) -> Any:
        reply = await self.lua("job.get" if self.reqless else "get", now, jid)
        return None if reply is None else json.loads(reply)

    async def stats(self, now: float, queue: str, date: float) -> Any:
        return await self.lua.json("queue.stats" if self.reqless else "stats", now, queue, date)

    async def config_set(self, now: float, option: str, value: Any) -> Any:
        return await self.lua("config.set", now, option, value)

    # ---- relations ----------------------------------------------------------------------

    async def cancel(self, now: float, *jids: str) -> Any:
        return await self.lua("job.cancel" if self.reqless else "cancel", now, *jids)

    async def depends(self, now: float, jid: str, word: str, *jids: str) -> Any:
        if self.reqless:
            command = "job.addDependency" if word == "on" else "job.removeDependency"
            return await self.lua(command, now, jid, *jids)
        return await self.lua("depends", now, jid, word, *jids)

    async def priority(self, now: float, jid: str, priority: Any) -> Any:
        return await self.lua("job.setPriority" if self.reqless else "priority", now, jid, priority)

    async def log(self, now: float, jid: str, message: str, *data: str) -> Any:
        return await self.lua("job.log" if self.reqless else "log", now, jid, message, *data)

    async def track(self, now: float, jid: str) -> Any:
        if self.reqless:
            return await self.lua("job.track", now, jid)
        return await self.lua("track", now, "track", jid)

    async def untrack(self, now: float, jid: str) -> Any:
        if self.reqless:
            return await self.lua("job.untrack", now, jid)
        return await self.lua("track", now, "untrack", jid)

    async def tracked(self, now: float) -> Any:
        return await self.lua.json("jobs.tracked" if self.reqless else "track", now)

    async def tag_add(self, now: float, jid: str, *tags: str) -> Any:
        if self.reqless:
            return await self.lua.json("job.addTag", now, jid, *tags)
        return await self.lua.json("tag", now, "add", jid, *tags)

    async def tag_remove(self, now: float, jid: str, *tags: str) -> Any:
        if self.reqless:
            return await self.lua.json("job.removeTag", now, jid, *tags)
        return await self.lua.json("tag", now, "remove", jid, *tags)

    async def tagged(self, now: float, tag: str, *paging: Any) -> Any:
        if self.reqless:
            return await self.lua.json("jobs.tagged", now, tag, *paging)
        return await self.lua.json("tag", now, "get", tag, *paging)

    async def tags_top(self, now: float, *paging: Any) -> Any:
        if self.reqless:
            return await self.lua.json("tags.top", now, *paging)
        return await self.lua.json("tag", now, "top", *paging)

    async def failed_counts(self, now: float) -> Any:
        return await self.lua.json("failureGroups.counts" if self.reqless else "failed", now)

    async def failed_group(self, now: float, group: str, *paging: Any) -> Any:
        return await self.lua.json(
            "jobs.failedByGroup" if self.reqless else "failed", now, group, *paging
        )

    async def unfail(self, now: float, queue: str, group: str, *count: Any) -> Any:
        return await self.lua(
            "queue.unfail" if self.reqless else "unfail", now, queue, group, *count
        )


VOCABULARIES = ["classic", "reqless"]


def make_vocab(lua: Lua, name: str) -> Vocab:
    return Vocab(lua, name == "reqless")


async def assert_rejected(
    lua: Lua,
    redis: aioredis.Redis,
    events: EventsFactory,
    text: str | None,
    command: str,
    now: float,
    *args: Any,
) -> str:
    """`expect.refused` under its former name (``redis`` is the connection of ``lua``, and
    ``events`` captures its publications)."""
    assert redis is lua.redis
    return await refused(lua, text, command, now, *args)
