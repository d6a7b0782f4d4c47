"""Slots shared by several workers of one process (a ShardedWorker's, one per shard), so
that one shard with all the work can use every slot.

Each member Worker keeps its own `RunningJobs` at the full budget (what its shard's server
sees it hold never exceeds that), and asks the budget before each pop: the slots left are
the total, less the jobs every member holds, less the slots pops on their way have
reserved. A pop reserves what it asks for when its round trip is sent and gives the
reservation back when its reply is in, just before its jobs are taken (with no await in
between), so two members popping at once never take the same slot. A member waiting for a
slot the budget lacks is woken when any member frees one.

A budget may also hold a number of jobs to take in all (a ShardedWorker's ``max_jobs``):
pops ask for no more than are left, each job taken counts, and the last one calls
`on_spent` (which makes every member finish).

Members take no pushed jobs: a server pushes to an offer without asking (aqless._worker.
pickup), and each shard's server would fill the whole budget.
"""

from __future__ import annotations

from collections.abc import Callable

from aqless._worker.running import RunningJobs

__all__ = ["SlotBudget"]


class SlotBudget:
    """`total` slots shared by the workers that `join` it; with `jobs`, that many jobs to
    take in all, then `on_spent()`."""

    def __init__(
        self,
        total: int,
        *,
        jobs: int | None = None,
        on_spent: Callable[[], None] | None = None,
    ) -> None:
        self.total = total
        #: the jobs left to take, or None for no limit
        self.jobs_left = jobs
        self._on_spent = on_spent
        self._members: list[RunningJobs] = []
        self._reserved = 0
        self._waiting: dict[int, Callable[[], None]] = {}

    def join(self, running: RunningJobs) -> None:
        self._members.append(running)

    def free(self) -> int:
        """The slots no member holds or has reserved (no more than the jobs left)."""
        holding = sum(member.concurrency - member.free() for member in self._members)
        free = self.total - holding
        if self.jobs_left is not None:
            free = min(free, self.jobs_left)
        return free - self._reserved

    def took(self) -> None:
        """A member took a job: one fewer left; the last calls `on_spent`."""
        if self.jobs_left is None:
            return
        self.jobs_left -= 1
        if self.jobs_left == 0 and self._on_spent is not None:
            self._on_spent()

    def reserve(self, count: int) -> None:
        self._reserved += count

    def give_back(self, count: int) -> None:
        """A pop's reply is in: its reservation ends, and the `count` slots that brought no
        job are free again for the members waiting for one (which found them reserved)."""
        self._reserved -= count
        if count > 0:
            self.freed()

    def wait(self, key: int, wake: Callable[[], None]) -> None:
        """Call `wake` (once) when a member frees a slot; `key` names the waiter."""
        self._waiting[key] = wake

    def stop_waiting(self, key: int) -> None:
        self._waiting.pop(key, None)

    def freed(self) -> None:
        """A member freed a slot: wake the members waiting for one."""
        waiting, self._waiting = self._waiting, {}
        for wake in waiting.values():
            wake()
