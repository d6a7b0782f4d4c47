"""Slots shared by several workers of one process (a ShardedWorker's, one per shard), so
that one shard with all the work can use every slot.

Each member Worker keeps its own `RunningJobs` at the full budget (what its shard's server
sees it hold never exceeds that), and asks the budget before each pop: the slots left are
the total, less what every member counts for, less the slots pops on their way have
reserved. A pop reserves what it asks for when its round trip is sent and gives the
reservation back when its reply is in, just before its jobs are taken (with no await in
between), so two members popping at once never take the same slot. A member waiting for a
slot the budget lacks is woken when any member frees one.

A member also takes pushed jobs (aqless._worker.pickup): its server pops for it on a put,
without asking the budget, up to the *ceiling* its offer names (the offer's slots: the
server pushes while the member's unexpired locks there are fewer). So the budget learns
each ceiling before the offer is sent (`Member.offer`), and while one stands the member
counts for its ceiling, plus the jobs it popped since the ceiling was set (a pop takes
jobs whatever the offer, so jobs pushed before it may still be on their way), or for the
jobs it holds if more. A member offers only slots the budget has free, a bounded `share`
of them, and one free slot is always left for pops (the one after each offer, for a job
put just before it, would otherwise take the offers back). A ceiling is lowered only once
no push made under it can still arrive: after the reply of the offer that replaced it (or
of the withdrawal), a PING on the member's push connection, whose PONG follows every
message published to it before (`Member.settle`). A member that waits for a slot the
budget lacks asks the members with offered, unheld slots to give them back
(`wait(..., short=True)`); pops never use offered slots, not even the member's own (a
push may be on its way to them, and the pop would take jobs on top): it gives them back
first. Free slots make the members without an offer offer again (`may_offer`), unless
one is short of a slot.

A budget may also hold a number of jobs to take in all (a ShardedWorker's ``max_jobs``):
pops ask for no more than are left, each job taken counts, and the last one calls
`on_spent` (which makes every member finish). Its members take no pushed jobs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aqless._worker.running import RunningJobs

__all__ = ["Ceiling", "Member", "SlotBudget"]

logger = logging.getLogger(__name__)


class Ceiling:
    """One offer's slots, and the jids popped (not pushed) since the budget learnt them."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.popped: set[str] = set()

    def counted(self, running: RunningJobs) -> int:
        """The slots, plus the jobs popped since that the member still holds."""
        by_jid = running.by_jid
        held = {jid for jid in self.popped if jid in by_jid and not by_jid[jid].released}
        self.popped = held
        return self.slots + len(held)


class Member:
    """A worker of the budget: its jobs, and the ceilings of its offers that stand."""

    def __init__(self, budget: SlotBudget, running: RunningJobs) -> None:
        self.budget = budget
        self.running = running
        self.ceilings: list[Ceiling] = []
        #: called when another member lacks a slot and this one has some offered, unheld
        self.give_back: Callable[[], None] | None = None
        #: called when slots were freed and no member lacks one: offer them, if spare
        self.may_offer: Callable[[], None] | None = None

    @property
    def held(self) -> int:
        # not the jobs a pop on its way asked for: the pop reserves them in the budget
        return self.running.concurrency - self.running.free() - self.running.coming

    def counted(self) -> int:
        """The slots the member counts for in the budget."""
        most = self.held
        for ceiling in self.ceilings:
            most = max(most, ceiling.counted(self.running))
        return most

    def offered(self) -> int:
        """The slots counted for pushes the member has not (yet) been given."""
        return self.counted() - self.held

    def ceiling_to_offer(self) -> int:
        """The slots to offer now: those held, its offered ones and the budget's free ones
        but one, kept for the members' pops (the one after an offer, for a job put just
        before it, among them), no more than its share; 0 when none are spare."""
        spare = min(self.offered() + max(0, self.budget.free() - 1), self.budget.share)
        return self.held + spare if spare > 0 else 0

    def offer(self, slots: int) -> Ceiling:
        """An offer of `slots` is about to be sent: count for it from now on."""
        ceiling = Ceiling(slots)
        self.ceilings.append(ceiling)
        return ceiling

    def popped(self, jid: str) -> None:
        """The member took a job it popped (or took back), not one pushed to it."""
        for ceiling in self.ceilings:
            ceiling.popped.add(jid)

    def settle(self, keep: Ceiling | None = None) -> None:
        """No push made under the ceilings but `keep` can still arrive: drop them (and wake
        the members waiting for a slot, if that freed some)."""
        before = self.counted()
        self.ceilings = [keep] if keep is not None and keep in self.ceilings else []
        if self.counted() < before:
            self.budget.freed()


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
        self._members: list[Member] = []
        self._reserved = 0
        self._waiting: dict[int, Callable[[], None]] = {}
        self._short: set[int] = set()  # waiters for want of a slot
        #: jobs taken while the members held more than the total (a bug if ever > 0)
        self.overdrawn = 0

    def join(self, running: RunningJobs) -> Member:
        member = Member(self, running)
        self._members.append(member)
        return member

    @property
    def share(self) -> int:
        """The most slots an idle member offers for pushes: an even share (at least one),
        so every idle shard can be pushed a job while the others can too."""
        return max(1, self.total // max(1, len(self._members)))

    @property
    def pushes(self) -> bool:
        """Whether the members may take pushed jobs (not with a number of jobs to take)."""
        return self.jobs_left is None

    def free(self) -> int:
        """The slots no member counts for or has reserved (no more than the jobs left)."""
        free = self.total - sum(member.counted() for member in self._members)
        if self.jobs_left is not None:
            free = min(free, self.jobs_left)
        return free - self._reserved

    def took(self) -> None:
        """A member took a job: one fewer left; the last calls `on_spent`. Logs loudly if
        the members now hold more jobs than the total (the job runs: its lock is held)."""
        holding = sum(member.held for member in self._members)
        if holding > self.total:
            self.overdrawn += 1
            logger.error("the workers hold %d jobs, over their %d slots", holding, self.total)
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

    def wait(self, key: int, wake: Callable[[], None], *, short: bool = False) -> None:
        """Call `wake` (once) when a member frees a slot; `key` names the waiter. `short`:
        it waits for want of a slot, so the members with offered, unheld slots give them
        back (unless a pop on its way holds slots: it is woken when the pop's reply is in,
        to look again)."""
        self._waiting[key] = wake
        if short:
            self._short.add(key)
        if short and self._reserved <= 0:
            for member in self._members:
                if member.give_back is not None and member.offered() > 0:
                    member.give_back()

    def stop_waiting(self, key: int) -> None:
        self._waiting.pop(key, None)
        self._short.discard(key)

    def freed(self) -> None:
        """A member freed a slot: wake the members waiting for one; when none lacks one,
        the members without an offer may make one."""
        waiting, self._waiting = self._waiting, {}
        short = bool(self._short)
        self._short.clear()
        for wake in waiting.values():
            wake()
        if not short:
            for member in self._members:
                if member.may_offer is not None:
                    member.may_offer()
