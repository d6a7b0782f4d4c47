"""Running one job's code in its slot and reporting how it ended (see aqless._worker.outcomes)."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from aqless._concurrency.backoff import OUTCOME
from aqless._worker import joblog
from aqless._worker.children import ChildPool
from aqless._worker.handler import Handler, Resolver, calls_coroutine
from aqless._worker.middleware import Middleware, Perform, Wrapper, as_wrapper, wrapped
from aqless._worker.outage import ServerOutage
from aqless._worker.outcomes import Decision, JobTimeoutError, decide, failure_group
from aqless._worker.policies import RequeuePolicy, RetryPolicy, attempt
from aqless._worker.running import RunningJob
from aqless._worker.threads import ThreadCall
from aqless.errors import (
    ConnectionLostError,
    JobDataError,
    PayloadError,
    ScriptError,
    StaleAttemptError,
    UnknownJobClassError,
)
from aqless.job import Job
from aqless.models import HANDED_OUT, JobState
from aqless.progress import Coalescer
from aqless.typed import with_data
from aqless.workflows.record import parked

if TYPE_CHECKING:
    from aqless._worker.counters import WorkerCounters
    from aqless._worker.observers import WorkerObserver
    from aqless._worker.settings import WorkerSettings
    from aqless.client import Client

logger = logging.getLogger(__name__)

Verb = Callable[[], Awaitable[Any]]
#: Called with a running job: its slot is released, or held again (see aqless._worker.running).
SlotChange = Callable[[RunningJob], None]


class Performer:
    """Runs jobs' code for a worker: handler, middleware, timeout, and a thread or a child
    process (`isolate`) for sync code; then reports the outcome.

    Args:
        client: the worker's client (its ``worker_name`` is the worker's).
        handlers: the job code.
        counters: the worker's counters, which the performer counts the outcomes in.
        observers: told of every job (the worker's list: it may grow while jobs run).
        release: called as an outcome is about to be sent: the job's slot may take the next.
        hold_again: called when a sent outcome did not reach the server.
        stopping: whether the worker is stopping (an outcome whose lock expired is then
            given up).
        settings: the worker's settings: `concurrency` threads at most for plain code,
            `workdir`, `job_timeout`, `isolate` and `isolate_max_jobs`.
        retry: how failing jobs are retried, unless their handler says (None: they fail).
        requeue: which exceptions put jobs back without spending a retry.
        middleware: around_perform hooks, outermost first.
        outage: told when an outcome finds no server, and when one lands again.
    """

    def __init__(
        self,
        client: Client,
        handlers: Resolver,
        counters: WorkerCounters,
        observers: list[WorkerObserver],
        settings: WorkerSettings,
        *,
        release: SlotChange,
        hold_again: SlotChange,
        stopping: Callable[[], bool],
        retry: RetryPolicy | None,
        requeue: Sequence[RequeuePolicy],
        middleware: Sequence[Middleware],
        outage: ServerOutage | None = None,
    ) -> None:
        self._client = client
        self._outage = outage if outage is not None else ServerOutage(client.worker_name)
        self._handlers = handlers
        self._counters = counters
        self._observers = observers
        self._release = release
        self._hold_again = hold_again
        self._stopping = stopping
        self._workdir = settings.workdir
        self.job_timeout = settings.job_timeout
        self.retry = retry
        self.requeue = tuple(requeue)
        self._middleware: tuple[Wrapper, ...] = tuple(as_wrapper(hook) for hook in middleware)
        self._chains: dict[str, tuple[Wrapper, ...]] = {}
        self._threads = anyio.CapacityLimiter(settings.concurrency)
        self.isolate = settings.isolate
        self.children = ChildPool(max_jobs_per_child=settings.isolate_max_jobs)

    async def aclose(self) -> None:
        """Stop the child processes of isolated code (the worker's jobs have ended)."""
        await self.children.aclose()

    async def perform(self, running: RunningJob) -> None:
        job = running.job
        joblog.started(job)
        queue = job.queue_name
        if not self._observers and not joblog.wanted():  # no clock reads: they are a few
            await self._perform(running)  # percent of a no-op job
            if running.failure is not None:
                joblog.finished(job, queue, "failed", None, running.raised, running.failure)
            return
        started = anyio.current_time()
        try:
            await self._perform(running)
        finally:
            seconds = anyio.current_time() - started
            outcome = outcome_of(running, queue)
            joblog.finished(job, queue, outcome, seconds, running.raised, running.failure)
            for observer in self._observers:
                try:
                    observer.job_finished(running.job, queue, outcome, seconds)
                except Exception:
                    logger.exception("worker observer %r failed", observer)

    async def _perform(self, running: RunningJob) -> None:
        job = running.job
        try:
            handler = self._handlers.resolve(job.klass_name)
            function = with_data(handler.function_for(job.queue_name), job.data, job.klass_name)
        except (UnknownJobClassError, JobDataError) as error:
            running.raised = type(error).__name__
            group = failure_group(job.queue_name, error)
            decision = Decision("fail", group, str(error), attempt=attempt(job))
            if await self._send(running, decision):
                self._sent(running, error, decision)
            return
        except Exception as error:  # the class could not be made: its outcome, like the code's
            await self._conclude(running, error)
            return
        if self._workdir is not None:
            job.sandbox = running.sandbox = self._workdir / f"slot-{running.slot}"
            await anyio.to_thread.run_sync(_fresh_directory, running.sandbox)
        try:
            raised = await self._run(running, handler, function)
            await progress_reported(running)
        finally:
            if running.sandbox is not None and running.overrun is None:
                await _remove_sandbox(running)
        await self._conclude(running, raised)
        if running.overrun is not None:
            try:
                await self._outlast(running, running.overrun)
            finally:
                await _remove_sandbox(running)

    async def _run(
        self, running: RunningJob, handler: Handler, function: Callable[[Job], Any]
    ) -> BaseException | None:
        """Runs the code; returns what it raised (None: it returned)."""
        job = running.job
        if calls_coroutine(function):
            perform: Perform = partial(function, job)
        elif self.isolate if handler.isolate is None else handler.isolate:
            perform = partial(self.children.run, function, job)
        else:
            perform = partial(self._in_thread, running, function)
        if not isinstance(perform, partial) or perform.func != self.children.run:
            # isolated code has no client to report with
            job.progress_reports = Coalescer(job.jid, job.send_progress)
        timeout = handler.timeout if handler.timeout is not None else self.job_timeout
        deadline = float("inf") if timeout is None else anyio.current_time() + timeout
        # one scope for all three ways to stop the code: lost, handed back, or timed out
        with anyio.CancelScope(deadline=deadline) as running.scope:
            if running.lost is not None or running.handing_back is not None:
                running.scope.cancel()
            try:
                running.returned = await wrapped(self._chain(handler), job, perform)()
            except (Exception, SystemExit) as error:
                return error
        if running.scope.cancelled_caught and running.lost is None and running.handing_back is None:
            return JobTimeoutError(f"job {job.jid} ran past its timeout of {timeout:g} s")
        return None

    async def _in_thread(self, running: RunningJob, function: Callable[[Job], Any]) -> Any:
        call = ThreadCall()
        try:
            return await anyio.to_thread.run_sync(
                call, function, running.job, abandon_on_cancel=True, limiter=self._threads
            )
        except anyio.get_cancelled_exc_class():
            if call.cut_off():
                running.overrun = call
            raise

    async def _outlast(self, running: RunningJob, overrun: ThreadCall) -> None:
        """Keep the job's slot taken until the thread of its cut-off code returns."""
        jid = running.job.jid
        if running.lost is not None:
            why = "taken away"
        else:
            why = "handed back" if running.handing_back is not None else "timed out"
        logger.warning(
            "job %s was %s, but its code runs on in its thread (threads cannot be stopped; "
            "see isolate=True): its slot stays taken until it returns",
            jid,
            why,
        )
        try:
            await overrun.returned()
        finally:
            running.overrun = None
        logger.warning(
            "job %s: its code returned %.1f s after the job was %s",
            jid,
            time.monotonic() - overrun.cut_off_at,
            why,
        )

    def _chain(self, handler: Handler) -> tuple[Wrapper, ...]:
        chain = self._chains.get(handler.klass)
        if chain is None:
            chain = self._middleware + tuple(as_wrapper(hook) for hook in handler.middleware)
            self._chains[handler.klass] = chain
        return chain

    async def _conclude(self, running: RunningJob, error: BaseException | None) -> None:
        job, counters = running.job, self._counters
        if running.lost is not None:
            return
        if running.settled:  # the code completed, failed, retried, moved or cancelled it
            if error is not None:
                logger.warning("job %s raised after settling itself: %r", job.jid, error)
            return
        if running.handing_back is not None:
            if await self._hand_back(running):
                counters.handed_back += 1
            return
        if error is None:
            try:
                complete = job.complete
                if running.returned is not None:
                    complete = partial(job.complete, result=running.returned)
                if await self._report(running, complete, "complete"):
                    counters.completed += 1
                return
            except PayloadError as unsendable:  # the code put something in the data that
                error = unsendable  # JSON cannot encode: raised before anything was sent
        running.raised = type(error).__name__
        logger.debug("job %s (%s) raised %s", job.jid, job.klass_name, running.raised)
        handler = self._handlers.resolve(job.klass_name)
        retry = self.retry if handler.retry is None else handler.retry
        decision = decide(job, error, retry=retry, requeue=(*handler.requeue, *self.requeue))
        await decision.notify(job, error)
        if await self._send(running, decision):
            self._sent(running, error, decision)

    async def _send(self, running: RunningJob, decision: Decision) -> bool:
        """Send what was decided, unless the policy's callback settled the job itself;
        returns whether the server took it."""
        job, counters = running.job, self._counters
        if running.settled:
            return False
        if decision.verb == "fail":
            return await self._fail(running, decision.group, decision.message)
        if decision.verb == "retry":
            retry = partial(job.retry, decision.delay, decision.group, decision.message)
            if sent := await self._report(running, retry, "retry"):
                counters.retried += 1
            return sent
        requeue = partial(job.requeue, job.queue_name, delay=decision.delay)
        if sent := await self._report(running, requeue, "requeue"):
            counters.requeued += 1
        return sent

    def _sent(self, running: RunningJob, error: BaseException, decision: Decision) -> None:
        """The server took what was decided: note a failure for the log, tell observers."""
        job = running.job
        if decision.verb == "fail":
            running.failure = (decision.group, joblog.failure(error))
        for observer in self._observers:
            try:
                observer.job_failed(job, error, decision)
            except Exception:
                logger.exception("worker observer %r failed", observer)

    async def _hand_back(self, running: RunningJob) -> bool:
        """Give an interrupted job back to its queue at once, spending no retry (its code
        did not fail), with why in its history; a stopping worker never fails a job."""
        reason = running.handing_back or "worker stopping"
        return await self._report(running, partial(running.job.hand_back, reason), "hand back")

    async def give_back_unstarted(self, running: RunningJob, reason: str) -> None:
        """Give a job held for a slot, whose code never started, back to its queue at its
        priority, spending no retry (a ``handed-back`` history entry gives `reason`)."""
        running.handing_back = reason
        job = running.job
        if await self._report(running, partial(job.hand_back, reason), "hand back"):
            self._counters.handed_back += 1

    async def _fail(self, running: RunningJob, group: str, message: str) -> bool:
        """Fail the job into `group`, counting it once the server took it."""
        if await self._report(running, partial(running.job.fail, group, message), "fail"):
            self._counters.failed += 1
            return True
        return False

    async def _report(self, running: RunningJob, verb: Verb, what: str) -> bool:
        """Send the outcome until it lands or the server refuses it (the job is no longer
        ours): a dropped connection, or a server that cannot run it now (restarting,
        loading its data, full), is retried, heartbeats going on meanwhile. Only a stopping
        worker whose lock on the job has expired gives up. Returns whether the server took
        it."""
        running.reporting = True
        failures = 0
        while True:
            self._release(running)  # the verb's call is queued before the next pop
            try:
                await verb()
            except StaleAttemptError as error:  # a later attempt holds the job: never ours
                logger.warning("could not %s job %s: %s", what, running.job.jid, error.detail)
                running.lose(f"{what} refused: {error.detail}")  # its outcome: lost
                return False
            except ScriptError as error:
                self._outage.answered()
                if await self._took_effect(running, what):
                    return True
                logger.warning("could not %s job %s: %s", what, running.job.jid, error.detail)
                return False
            except ConnectionLostError as error:
                self._hold_again(running)
                expired = self._client.clock() >= running.job.expires_at
                if expired and self._stopping():
                    logger.error("gave up %s of job %s: %s", what, running.job.jid, error)
                    return False
                failures += 1
                delay = OUTCOME.after(failures)
                logger.debug(
                    "%s of job %s: %s; again in %.2f s", what, running.job.jid, error, delay
                )
                self._outage.failed(error)
                await anyio.sleep(delay)
            else:
                self._outage.answered()
                return True

    async def _took_effect(self, running: RunningJob, what: str) -> bool:
        """Whether a refused verb had already been done by this worker: a connection dropped
        after the script ran but before its reply came hides that it ran, and redis-py
        sends the command again, which the server refuses. Reads the job to tell."""
        try:
            job = await self._client.jobs.get(running.job.jid)
        except (ConnectionLostError, ScriptError):
            return False
        if not isinstance(job, Job):
            return False
        popped = [i for i, entry in enumerate(job.history) if entry.what in HANDED_OUT]
        if not popped or job.history[popped[-1]].details.get("worker") != self._client.worker_name:
            return False
        since = [entry.what for entry in job.history[popped[-1] + 1 :]]
        if "timed-out" in since:
            return False
        ours = job.failure is not None and job.failure.worker == self._client.worker_name
        if what == "complete":
            return "done" in since
        if what == "fail":
            return job.state == JobState.FAILED and ours
        if what == "hand back":
            return "handed-back" in since
        return job.state in (JobState.WAITING, JobState.SCHEDULED) and ours


def outcome_of(running: RunningJob, queue: str) -> str:
    """What became of a job popped from `queue`: ``completed``, ``failed``, ``retried``,
    ``advanced`` (moved on to another queue), ``handed_back`` (the worker stopped),
    ``parked`` (a workflow asleep or waiting: aqless.workflows), ``canceled``, ``lost`` (taken
    away while running) or ``unreported`` (the outcome could not be sent: the job is still
    running, its lock will expire)."""
    job = running.job
    if running.lost is not None:
        return "lost"
    if job.state == JobState.COMPLETE:
        return "completed"
    if job.state == JobState.FAILED:
        return "failed"
    if job.state == JobState.RUNNING and not job.released:
        return "unreported"
    if job.queue_name != queue:
        return "advanced"
    if parked(job.state, job.data) is not None:
        return "parked"
    if job.state == JobState.RUNNING and not job.worker_name:
        return "canceled"  # the handle of a cancelled job keeps its last state
    return "handed_back" if running.handing_back is not None else "retried"


async def progress_reported(running: RunningJob) -> None:
    """Wait for the job's last progress report to land before its outcome is sent (dropped
    when the job was taken away: the server would refuse it)."""
    reports = running.job.progress_reports
    if reports is None:
        return
    running.job.progress_reports = None  # what the code reports from now on is sent at once
    if running.lost is not None:
        reports.discard()
    else:
        await reports.flushed()


async def _remove_sandbox(running: RunningJob) -> None:
    if running.sandbox is not None:
        await anyio.to_thread.run_sync(partial(shutil.rmtree, running.sandbox, True))


def _fresh_directory(path: Any) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
