"""The worker's hold on its jobs: heartbeats, and the news that a job was taken away.

While a job's code runs, its lock is renewed when a third of it has passed, whatever the code
does; all renewals due together go in one pipelined round trip. A refused renewal, or an event
on ``ql:w:<worker>`` (the job was cancelled, timed out, moved, or its lock expired and it went
to another worker), cancels the job's code at once; nothing is reported for it.

A renewal that gets no reply while half the time left on its soonest lock passes gives up the
connection (a server gone without closing it, a network that drops everything) and tries again
on a new one, before the lock runs out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

import anyio
from anyio.abc import TaskStatus

from aqless._concurrency.backoff import HEARTBEAT
from aqless._concurrency.wakeup import Wakeup
from aqless._worker.outage import ServerOutage
from aqless._worker.running import RunningJob
from aqless.client import CONTROL_EVENT, Client
from aqless.errors import ConnectionLostError, ScriptError, ServerUnavailableError
from aqless.events import RECONNECTED, EventStream

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Heartbeats:
    """A worker's lock renewals since it started (`Worker.heartbeats`): how many the server
    took, and how many it refused (the job was no longer the worker's).

    Examples:
        ```python
        beats = worker.heartbeats
        print(f"{beats.renewals} renewed, {beats.refusals} refused")
        ```
    """

    renewals: int = 0
    refusals: int = 0


#: The longest sleep between two looks at the running jobs.
_TICK = 1.0
#: The event on a worker's channel that means a job is gone for good.
_CANCELED = "canceled"
#: The event that means a job may not be its own any more: its lock expired (the server
#: warns first and reclaims only after a grace period), or it was timed out or moved.
_LOCK_LOST = "lock_lost"


class LockKeeper:
    """Heartbeats the running jobs of one worker and listens on its channel.

    Args:
        client: the worker's client.
        worker: the worker's name.
        running: the running jobs by jid (shared with the worker, which adds and removes).
        on_lost: called with every running job taken away.
        outage: told when a renewal finds no server, and when one finds it again.
        on_control: called when an operator's request waits for the worker (an
            ``aqless:control`` event; see aqless._worker.control).
    """

    def __init__(
        self,
        client: Client,
        worker: str,
        running: MutableMapping[str, RunningJob],
        on_lost: Callable[[RunningJob], None] = lambda job: None,
        outage: ServerOutage | None = None,
        on_control: Callable[[], None] = lambda: None,
    ) -> None:
        self._client = client
        self._on_control = on_control
        self._outage = outage if outage is not None else ServerOutage(worker)
        self._worker = worker
        self._running = running
        self._on_lost = on_lost
        self._renew_now = Wakeup()
        self._wakes_at = 0.0  # when keep() looks at the running jobs next (client clock)
        self.renewals = 0
        self.refusals = 0

    def renew_soon(self) -> None:
        """Renew every lock now (after a gap in the events, or for a new job's sake)."""
        for running in self._running.values():
            running.renew_at = 0.0
        self._renew_now.fire()

    def lose(self, running: RunningJob, reason: str) -> None:
        if running.lost is None and not running.reporting and not running.settled:
            logger.warning("job %s lost: %s; its code is cancelled", running.job.jid, reason)
            running.lose(reason)
            self._on_lost(running)

    async def keep(self) -> None:
        """Renew locks as they come due, for ever (cancel to stop)."""
        failures = 0
        while True:
            wake = self._renew_now.event
            now = self._client.clock()
            # locks coming due within a thirtieth of their length go along: jobs popped in
            # several groups moments apart share their renewals' round trips
            due = [
                s
                for s in self._running.values()
                if s.renew_at - s.lock_seconds / 30 <= now and s.held
            ]
            if due:
                patience = max(min(running.job.expires_at for running in due) - now, 2.0) / 2
                try:
                    with anyio.fail_after(patience):
                        await self._renew(due, now)
                    failures = 0
                    self._outage.answered()
                except (TimeoutError, ConnectionLostError) as failure:
                    reason = str(failure)
                    if isinstance(failure, TimeoutError):
                        reason = f"no reply within {patience:.1f} s: a new connection"
                        self._client.protocol.abandon_connection(f"heartbeat: {reason}")
                    failures += 1
                    delay = HEARTBEAT.after(failures)
                    logger.debug("heartbeat failed (%s); again in %.1f s", reason, delay)
                    self._outage.failed(reason if isinstance(failure, TimeoutError) else failure)
                    for running in due:
                        running.renew_at = now + delay
            # a job no longer held (its code runs on, or settled it) renews nothing
            soonest = min(
                (running.renew_at for running in self._running.values() if running.held),
                default=now + _TICK,
            )
            self._wakes_at = min(soonest, self._client.clock() + _TICK)
            with anyio.move_on_after(max(0.0, self._wakes_at - self._client.clock())):
                await wake.wait()

    def watch(self, running: RunningJob) -> None:
        """A job started: make sure the keeper wakes in time for its first renewal."""
        if running.renew_at < self._wakes_at:
            self._renew_now.fire()

    async def _renew(self, due: list[RunningJob], now: float) -> None:
        calls = [_heartbeat_arguments(running, self._worker) for running in due]
        replies = await self._client.protocol.many("job.heartbeat", calls)
        unavailable = next((r for r in replies if isinstance(r, ConnectionLostError)), None)
        if unavailable is not None:  # the server renewed none, or not all: try them again
            raise unavailable
        self.renewals += len(due)
        for running, reply in zip(due, replies, strict=True):
            if isinstance(reply, ScriptError):
                self.refusals += 1
                if not running.reporting:  # a job being completed right now is no longer held
                    self.lose(running, f"heartbeat refused: {reply.detail}")
                # its outcome is on its way (or its code is being cancelled): not again at once
                running.renew_at = now + running.lock_seconds / 3
                continue
            running.job.expires_at = now + running.lock_seconds
            running.renew_at = now + running.lock_seconds / 3

    async def listen(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Read ``ql:w:<worker>`` for ever; started once subscribed. A connection lost while
        subscribing (a reset, not a server refusing) is tried again a few times first."""
        events = await self._subscribed()
        try:
            task_status.started()
            async for event in events:
                if event.kind == RECONNECTED:
                    self.renew_soon()  # events may have been lost: ask the server
                    continue
                if event.kind == CONTROL_EVENT:
                    self._on_control()
                    continue
                running = self._running.get(event.jid or "")
                if running is None or running.settled:
                    continue
                if event.kind == _CANCELED:
                    self.lose(running, "canceled event")
                elif event.kind == _LOCK_LOST:
                    # a warning may leave the job ours: renew now; a refusal cancels it
                    running.renew_at = 0.0
                    self._renew_now.fire()
                else:
                    logger.debug("event %s for running job %s", event.kind, event.jid)
        finally:
            await events.aclose()

    async def _subscribed(self) -> EventStream:
        """The worker's channel, subscribed: `SUBSCRIBE_TRIES` tries, a lost connection
        between them waiting twice as long each time from 0.05 s; the last one's error
        raised. A refusal (an ACL, a server's condition) is raised at once."""
        for attempt in range(SUBSCRIBE_TRIES):
            events = self._client.events(f"w:{self._worker}")
            try:
                await events.__aenter__()  # closed again by listen's end
            except ServerUnavailableError:
                raise
            except ConnectionLostError as error:
                if attempt + 1 == SUBSCRIBE_TRIES:
                    raise
                logger.warning("subscribing to the worker's channel: %s; trying again", error)
                await anyio.sleep(0.05 * 2**attempt)
                continue
            return events
        raise AssertionError("unreachable")


#: How many times the worker's channel is subscribed to before a lost connection is fatal.
SUBSCRIBE_TRIES = 5


def _heartbeat_arguments(running: RunningJob, worker: str) -> tuple[str | int, ...]:
    """A renewal's arguments: the job's attempt too when known (no data: ''), so that the
    server refuses to renew an attempt it has since handed out again."""
    attempt = running.job.attempt
    if attempt is None:
        return (running.job.jid, worker)
    return (running.job.jid, worker, "", attempt)
