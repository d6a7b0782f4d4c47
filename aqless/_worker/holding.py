"""The default prefetch: hold jobs beyond the slot while the runs are short (`HoldRule`).

A worker left at ``prefetch=None`` (the default) with at most `AUTO_SLOTS` slots decides
for itself whether to pop a job ahead and hold it for a slot (see aqless._worker.running).
Every `HoldRule.tick` seconds (half of `HOLD_BOUND`) it looks at the jobs it took since the
last look:

- it holds `HOLD` jobs while each slot took at least `SHORT_RUNS` jobs in that time (the
  runs average at most a fifth of a tick) and the last pop came back full (the queue has
  more jobs than the worker's slots); the worker then pops two jobs a call
  (aqless._worker.popping), with the outcomes of the two before, while the jobs left in
  hand run;
- it holds none otherwise, and a pop that comes back short stops it at once (the worker
  then waits for puts, and an idle worker elsewhere may take the next job);
- every job found held at two looks in a row (it has waited at least a tick) is handed
  back to its queue, spending no retry, so no job is held longer than `HOLD_BOUND` before
  any worker may take it.

A held job is locked to the worker and its lock renewed like a running job's; one that the
worker loses meanwhile is dropped and never starts (aqless.worker).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

import anyio

from aqless._worker.running import RunningJob, RunningJobs

__all__ = ["AUTO_SLOTS", "HOLD", "HOLD_BOUND", "SHORT_RUNS", "HoldRule", "holds"]

#: The most slots of a worker whose default prefetch is decided by `HoldRule`; a worker of
#: more holds none (its slots alone keep the server busy).
AUTO_SLOTS: Final = 1
#: The jobs held beyond the slot while runs are short. The worker pops two a call once two
#: have freed, and has two left to run while that pop is on its way. Against one held job
#: and pops of one (no-op drains, benchmarks/HISTORY.md): with three, the worker's CPU per
#: job fell by about a quarter, the server's by about a seventh, and the pace rose; with two
#: (one job left to run during the pop), the CPU fell but the pace did not rise.
HOLD: Final = 3
#: The longest a job is held for a slot by the default prefetch, in seconds, before it is
#: handed back to its queue.
HOLD_BOUND: Final = 0.05
#: The jobs each slot must take in a tick for the runs to count as short.
SHORT_RUNS: Final = 5


def holds(taken: int, slots: int, more: bool) -> int:
    """How many jobs to hold beyond the slots, after a tick in which the worker took
    `taken` jobs; `more`: the last pop came back full."""
    return HOLD if more and taken >= SHORT_RUNS * slots else 0


class HoldRule:
    """Decides, every `tick` seconds while jobs run, how many jobs the worker holds for a
    slot (``running.prefetch``: 0 or `HOLD`), and hands back the jobs held too long.

    Args:
        running: the worker's jobs; its ``prefetch`` is what the rule sets.
        taken: how many jobs the worker has taken so far.
        more: whether the last pop came back full.
        hand_back: gives a held job back to its queue (it has waited a tick at least).
        wake: called when the rule starts holding (the worker may pop now).
        bound: the longest a job is held (`HOLD_BOUND`).
    """

    def __init__(
        self,
        running: RunningJobs,
        *,
        taken: Callable[[], int],
        more: Callable[[], bool],
        hand_back: Callable[[RunningJob], None],
        wake: Callable[[], None],
        bound: float = HOLD_BOUND,
    ) -> None:
        self.bound = bound
        #: seconds between two looks: a job held at two looks in a row waited a tick at least
        self.tick = bound / 2
        self._running = running
        self._taken = taken
        self._more = more
        self._hand_back = hand_back
        self._wake = wake
        self._last_taken = 0
        self._seen: frozenset[RunningJob] = frozenset()  # the held jobs at the last look
        self._asleep = False
        self._busy = asyncio.Event()
        running.prefetch = 0  # until runs are seen to be short

    def busy(self) -> None:
        """A job was taken: look again every tick, if the rule was asleep (no job ran)."""
        if self._asleep:
            self._asleep = False
            self._busy.set()

    def stop_holding(self) -> None:
        """A pop came back short: hold no more jobs until runs are seen short again."""
        self._running.prefetch = 0

    def look(self) -> None:
        """One look: hand back the jobs held since the last look, and decide how many to
        hold from the jobs taken since it."""
        running = self._running
        for held in [held for held in running.waiting if held in self._seen]:
            self._hand_back(held)
        self._seen = frozenset(running.waiting)
        taken = self._taken()
        count, self._last_taken = taken - self._last_taken, taken
        wanted = holds(count, running.concurrency, self._more())
        if wanted and not running.prefetch:
            running.prefetch = wanted
            self._wake()
        else:
            running.prefetch = wanted

    async def run(self) -> None:
        """Look every tick while the worker has jobs, for ever (cancel to stop)."""
        while True:
            if not self._running.by_jid:
                self._running.prefetch = 0
                self._asleep = True
                self._busy = asyncio.Event()
                await self._busy.wait()
                self._last_taken = self._taken()
                self._seen = frozenset()
            await anyio.sleep(self.tick)
            self.look()
