"""The worker's slots: the jobs it runs, the slot numbers they use, and how many more fit."""

from __future__ import annotations

from collections.abc import Sequence

from aqless._worker.slots import Slot
from aqless.job import Job
from aqless.scripts.loader import Call

__all__ = ["SlotTable"]

# the commands that report a running job's outcome -> where their arguments (`now` first)
# name the jid
_OUTCOME_JID = {
    "job.complete": 1,
    "job.completeAndRequeue": 1,
    "job.fail": 1,
    "job.retry": 1,
    "job.requeue": 3,
}


class SlotTable:
    """The running jobs of a worker, by jid (`running`, shared with the LockKeeper).

    A job *holds* its slot from its start until the slot is released, when its outcome is on
    its way to the server; it stays listed until the outcome is reported. `concurrency`
    limits the held slots.
    """

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.running: dict[str, Slot] = {}
        self._free_numbers = list(range(concurrency - 1, -1, -1))
        self._extra_numbers = 0
        self._holding = 0

    def free(self, ahead: Sequence[Call] | None = None) -> int:
        """How many more jobs fit now; with `ahead`, the calls a pop goes behind, how many
        the server will have let go of when it runs the pop: the jobs whose outcomes have
        landed, or go ahead of it."""
        if ahead is None:
            return self.concurrency - self._holding
        return self.concurrency - len(self.running) + self._outcomes_in(ahead)

    def _outcomes_in(self, calls: Sequence[Call]) -> int:
        """How many of `calls` report the outcome of a job running here."""
        count = 0
        for command, args in calls:
            index = _OUTCOME_JID.get(command)
            if index is not None and len(args) > index:
                slot = self.running.get(str(args[index]))
                if slot is not None and slot.released:
                    count += 1
        return count

    def take(self, job: Job, lock_seconds: float, renew_at: float) -> tuple[Slot, Slot | None]:
        """List `job` in a slot of its own; returns the slot and the one it replaces (the
        same job popped again after its lock expired), if any."""
        # taken-back jobs may exceed the slots for a while; their sandboxes get extra numbers
        if self._free_numbers:
            number = self._free_numbers.pop()
        else:
            self._extra_numbers += 1
            number = self.concurrency + self._extra_numbers
        slot = Slot(job, number, lock_seconds, renew_at=renew_at)
        stale = self.running.get(job.jid)
        self.running[job.jid] = slot
        self._holding += 1
        return slot, stale

    def release(self, slot: Slot) -> bool:
        """Let the slot take its next job; False if it was released already, or its code
        runs on in a thread (it is released once that returns)."""
        if slot.released or slot.overrun is not None:
            return False
        slot.released = True
        self._holding -= 1
        if slot.index < self.concurrency:
            self._free_numbers.append(slot.index)
            slot.index = self.concurrency  # given back once
        return True

    def hold_again(self, slot: Slot) -> None:
        """The slot's outcome did not reach the server: it counts as held until sent again."""
        if slot.released:
            slot.released = False
            self._holding += 1

    def remove(self, slot: Slot) -> None:
        """The job's outcome is reported: unlist it (unless a second pop replaced it)."""
        if self.running.get(slot.job.jid) is slot:
            del self.running[slot.job.jid]
