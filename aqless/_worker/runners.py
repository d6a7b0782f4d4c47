"""Tasks that run one job after another, so that a job does not cost a task of its own.

A worker starting a task per job pays for it on every job (anyio's task handle, cancel scope
and event: about a tenth of a no-op job's CPU). ``Runners`` keeps the tasks of finished jobs
waiting for the next one instead, up to `keep` of them, inside the worker's task group, so
cancelling that group still cancels every job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from anyio.abc import TaskGroup

__all__ = ["Runners"]

Item = TypeVar("Item")


class Runners(Generic[Item]):
    """Runs ``work(item)`` for every item given to ``start``, each in a task of the group,
    reusing the tasks of finished items; a task is named ``name(item)`` while it runs it."""

    def __init__(
        self, work: Callable[[Item], Awaitable[None]], name: Callable[[Item], str], *, keep: int
    ) -> None:
        self._work = work
        self._name = name
        self._keep = keep
        self._idle: list[asyncio.Future[Item | None]] = []
        self._closed = False

    def start(self, group: TaskGroup, item: Item) -> None:
        while self._idle:
            waiting = self._idle.pop()
            if not waiting.done():  # not cancelled with its task
                waiting.set_result(item)
                return
        group.start_soon(self._run, item, name=self._name(item))

    def close(self) -> None:
        """Let the idle tasks end, and the busy ones once their item is done."""
        self._closed = True
        idle, self._idle = self._idle, []
        for waiting in idle:
            if not waiting.done():
                waiting.set_result(None)

    async def _run(self, item: Item) -> None:
        task = asyncio.current_task()
        next_item: Item | None = item
        while next_item is not None:
            if task is not None:
                task.set_name(self._name(next_item))
            await self._work(next_item)
            if self._closed or len(self._idle) >= self._keep:
                return
            waiting: asyncio.Future[Item | None] = asyncio.get_running_loop().create_future()
            self._idle.append(waiting)
            next_item = await waiting
