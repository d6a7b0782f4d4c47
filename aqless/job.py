"""Job and RecurringJob: handles on a job (or template) the server holds, with coroutine verbs.

A handle's attributes are plain values: what was last read of the job, or what one of the
handle's own verbs changed, as the server's reply to it says. Reading an attribute never
reads the server; only the coroutines do, and another client's changes show only after
`Job.refresh` (which returns a new handle).
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from aqless import rules
from aqless._connection.job_data import StoredData
from aqless._connection.protocol import encode_json
from aqless.codecs import PayloadCodec, decoded_text, decoded_value
from aqless.errors import (
    ConfigurationError,
    InvalidArgumentError,
    JobNotFoundError,
    PayloadError,
)
from aqless.flows.results import ChildrenResults
from aqless.models import (
    Failure,
    HistoryEntry,
    JobState,
    Overlap,
    RecurringChanges,
    When,
    listed,
)
from aqless.progress import Coalescer, checked_report
from aqless.puts import JobClass, checked_queue, class_name, stored_data
from aqless.results import result_options
from aqless.schedules import CronSchedule, backfill, next_runs, policy_options, set_schedule

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from aqless.contracts import ScriptClient as Client

T = TypeVar("T")

#: The largest checkpoint state `Job.checkpoint` takes, in bytes of its JSON text (UTF-8);
#: the server refuses a larger one as well.
CHECKPOINT_LIMIT = 65536


def _decoded_data(text: Any, codec: PayloadCodec | None = None) -> Any:
    """A job's data as read: stored JSON text decoded (an envelope opened by `codec`, or
    `aqless.codecs.Sealed` when it cannot be), or a value already decoded."""
    if not isinstance(text, str):
        return decoded_value(codec, text)
    return decoded_text(codec, text)


_STATES: dict[str, JobState] = {state.value: state for state in JobState}


def job_state(text: str) -> JobState | str:
    """The JobState named `text`; an unknown name (another client's) stays a string."""
    return _STATES.get(text, text)


def _strings(value: Any) -> tuple[str, ...]:
    """``tuple(listed(value))``: a list the script encodes as JSON (`{}` when empty)."""
    return tuple(map(str, value)) if isinstance(value, list) else ()


def _history(value: Any) -> tuple[HistoryEntry, ...]:
    return tuple(
        HistoryEntry.from_json(entry)
        for entry in (value if isinstance(value, list) else [])
        if isinstance(entry, Mapping)
    )


async def _edit_tags(
    client: Client, command: str, jid: str, tags: Sequence[str]
) -> tuple[str, ...]:
    """Adds or removes tags of a job or recurring job; returns its tags afterwards. A tag
    added keeps the rule `tag` (InvalidValueError, nothing sent)."""
    if command.endswith("addTag"):
        for tag in tags:
            rules.check("tag", tag, command)
    return tuple(listed(await client.protocol.json(command, jid, *tags)))


class Job:
    """A handle on a job the server holds: its attributes as last read, kept up by its verbs.

    A handle is made from a read of the job (a pop, a push, ``client.jobs.get``...). Each of
    its verbs changes the attributes the server's reply tells, and nothing else:
    `complete` the state (from the reply), queue, worker, lock expiry, failure and retries
    left; `fail` and `hand_back` the state, worker and expiry; `retry` the retries left (the
    reply) and the state they mean; `heartbeat` and `checkpoint` the expiry (the reply);
    `tag`, `untag` and `set_priority` the tags and priority (the reply); `track`, `untrack`
    and `timeout` what the server records for them; `cancel` the worker and expiry (the job
    is gone); `move` every attribute, read again once the server put the job (it may be
    running already, pushed to a worker). While a verb is on its way no attribute changes,
    but `released`. Another client's changes show in the new handle `refresh` returns.

    Attributes:
        jid: the job's id.
        klass_name: the name of the class or function that processes it.
        queue_name: the queue it is in (``""`` once complete).
        data: its payload, decoded from JSON.
        priority: higher runs earlier.
        tags: its tags, in the order they were added.
        state: waiting, scheduled, depends, throttled, running, stalled, complete, failed.
        worker_name: the worker holding it (``""`` when none).
        expires_at: when its lock expires (epoch seconds; 0 when not running).
        history: what happened to it, oldest first.
        dependencies: jids it waits for; dependents: jids waiting for it.
        original_retries: its retry budget; retries_left: what is left of it.
        failure: why it last failed, or None.
        tracked: whether its events go to the tracking channels.
        throttles: the throttles it must hold to run.
        spawned_from_jid: the recurring job that spawned it, or None.
        sandbox: a clean directory for the job's files while a worker with a workdir runs
            it (removed afterwards); None otherwise.
        progress_reports: while a worker runs the job's code, what coalesces its
            `progress` reports (aqless.progress.Coalescer); None otherwise.
        attempt: which pop of the job this is (1 for the first, rising with every pop, by
            any worker), for a job that aqless's worker popped, was pushed or took back (a
            take-back is a new attempt too); None for a job read otherwise. The owner's
            verbs send it, and the server refuses those of an earlier attempt
            (StaleAttemptError); job code may fence its own writes with it.
        checkpointed: the last state the job's code stored with `checkpoint` (decoded
            JSON), for a job that aqless's worker popped (or took back, as after
            ``aqless-run --resume``): an attempt after a retry, a lost lock, a hand-back or
            a take-back starts with the previous attempts' last one, and resumes from it.
            None when there is none (the first attempt, a job put again, a job read
            otherwise than by a pop). `checkpoint` updates it.
        released: whether one of this handle's verbs that end a worker's hold on the job
            (complete, fail, retry, hand_back, move, cancel) was sent: True from when it is
            on its way, False again if it failed. A worker running the job neither renews
            its lock nor takes the server's news of it (a ``canceled`` event, a refused
            heartbeat) for a loss once the job's code released it.

    Examples:
        ```python
        handlers = aqless.Handlers()

        @handlers.register
        async def send_email(job: aqless.Job) -> dict[str, bool]:
            await job.progress(0.5, "rendered")
            await smtp.send(job.data["to"], job.data["body"])
            return {"sent": True}  # the worker completes the job with this result

        job = await client.jobs.get(jid)  # a handle read by anyone
        if job is not None:
            print(job.state, job.queue_name, job.retries_left)
        ```
    """

    __slots__ = (
        "_client",
        "_history",
        "_history_fields",
        "_stored",
        "attempt",
        "checkpointed",
        "data",
        "dependencies",
        "dependents",
        "expires_at",
        "failure",
        "jid",
        "klass_name",
        "original_retries",
        "priority",
        "progress_reports",
        "queue_name",
        "released",
        "retries_left",
        "sandbox",
        "spawned_from_jid",
        "state",
        "tags",
        "throttles",
        "tracked",
        "worker_name",
    )

    def __init__(self, client: Client | None, fields: Mapping[str, Any]) -> None:
        get = fields.get
        self._client = client
        self.jid: str = str(fields["jid"])
        self.klass_name: str = str(get("klass", ""))
        self.queue_name: str = str(get("queue", ""))
        text = get("data", "{}")
        codec = None if client is None else client.codec
        self.data: Any = _decoded_data(text, codec)
        # what `complete` tells an unchanged `data` by (the server then keeps its own)
        self._stored = StoredData(
            text if isinstance(text, str) else None,
            self.data,
            None if codec is None else codec.for_queue(self.queue_name),
        )
        self.priority: float = float(get("priority", 0))
        self.tags: tuple[str, ...] = _strings(get("tags"))
        self.state: JobState | str = job_state(str(get("state", "")))
        self.worker_name: str = str(get("worker", ""))
        self.expires_at: float = float(get("expires", 0) or 0)
        # decoded when first read: a worker seldom reads it
        self._history: tuple[HistoryEntry, ...] | None = None
        self._history_fields: Any = get("history")
        self.dependencies: tuple[str, ...] = _strings(get("dependencies"))
        self.dependents: tuple[str, ...] = _strings(get("dependents"))
        self.original_retries: int = int(get("retries", 0))
        self.retries_left: int = int(get("remaining", 0))
        self.failure: Failure | None = Failure.from_json(get("failure"))
        self.tracked: bool = bool(get("tracked", False))
        self.throttles: tuple[str, ...] = _strings(get("throttles"))
        spawned = get("spawned_from_jid")
        self.spawned_from_jid: str | None = spawned if isinstance(spawned, str) else None
        self.sandbox: Path | None = None
        self.progress_reports: Coalescer | None = None
        attempt = get("attempt")
        self.attempt: int | None = int(attempt) if attempt is not None else None
        self.checkpointed: Any = decoded_value(codec, get("checkpoint"))
        self.released = False

    def _read(self, fields: Mapping[str, Any]) -> None:
        """Take the server's fields of a new read of the job; what this process keeps of it
        (its attempt, checkpoint, sandbox, progress reports, `released`) stays."""
        kept = (self.attempt, self.checkpointed, self.sandbox, self.progress_reports)
        released = self.released
        Job.__init__(self, self._client, fields)
        self.attempt, self.checkpointed, self.sandbox, self.progress_reports = kept
        self.released = released

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        """What happened to the job, oldest first. A job a worker runs comes without it (the
        worker's pop leaves it out, sparing the server a read per job): empty there until
        ``(await job.refresh()).history`` reads it."""
        history = self._history
        if history is None:
            history = self._history = _history(self._history_fields)
            self._history_fields = None
        return history

    @history.setter
    def history(self, entries: tuple[HistoryEntry, ...]) -> None:
        self._history = entries
        self._history_fields = None

    @classmethod
    def build(
        cls,
        klass: JobClass,
        data: Any = None,
        *,
        jid: str = "jid",
        queue: str = "queue",
        state: JobState | str = JobState.RUNNING,
        worker: str = "worker",
        priority: float = 0,
        tags: Sequence[str] = (),
        retries: int = 5,
        **fields: Any,
    ) -> Job:
        """A Job made without a server, for unit tests of job code. `klass` is a class, a
        function or a dotted name, stored as ``put`` stores it. Its verbs need a client and
        raise ConfigurationError; everything else behaves as for a fetched job.

        Raises:
            PayloadError: `data` is not JSON.

        Examples:
            ```python
            job = aqless.Job.build("app.jobs.welcome", {"user": 42}, queue="emails")
            assert job.data == {"user": 42} and job.queue_name == "emails"
            ```
        """
        values: dict[str, Any] = {
            "jid": jid,
            "klass": class_name(klass),
            "queue": queue,
            "data": encode_json({} if data is None else data, "job data"),
            "state": str(state),
            "worker": worker,
            "priority": priority,
            "tags": list(tags),
            "retries": retries,
            "remaining": retries,
            **fields,
        }
        return cls(None, values)

    def __repr__(self) -> str:
        return f"<Job {self.jid} {self.klass_name} {self.state} in {self.queue_name!r}>"

    @property
    def ttl(self) -> float:
        """Seconds until the lock expires, by this machine's clock (negative: expired)."""
        clock = self._client.clock if self._client is not None else time.time
        return self.expires_at - clock()

    @property
    def client(self) -> Client:
        """The client the job was fetched with (ConfigurationError for a built one)."""
        if self._client is None:
            raise ConfigurationError(f"job {self.jid} was built without a client")
        return self._client

    # -- the owner's verbs: only the worker holding the job may call them ---------------------

    def _fence(self, *optional: str) -> tuple[str | int, ...]:
        """The arguments that carry the job's attempt to a verb whose protocol arguments end
        in optional ones: those it does not use as '' (none), then the attempt. Nothing when
        the attempt is not known (the verb is then checked by worker name alone)."""
        if self.attempt is None:
            return ()
        return (*optional, self.attempt)

    def _fence_option(self) -> tuple[str | int, ...]:
        return () if self.attempt is None else ("attempt", self.attempt)

    async def _release(self, reply: Awaitable[T]) -> T:
        """Await the reply of a verb that ends the worker's hold, `released` meanwhile (and
        after); `released` as it was if the verb fails. `reply` is a coroutine not yet
        started: its call is made once `released` is set."""
        was, self.released = self.released, True
        try:
            return await reply
        except BaseException:
            self.released = was
            raise

    async def complete(
        self,
        next_queue: str | None = None,
        *,
        delay: float | None = None,
        depends: Sequence[str] | None = None,
        result: Any = None,
    ) -> JobState:
        """Finish the job, keeping `result` for `Job.result`, or (with `next_queue`) move it
        on to that queue. A worker calls it when the handler returns; call it yourself for
        a job you popped.

        Args:
            next_queue: a queue to move the job on to instead of finishing it (default
                None: it completes).
            delay: with `next_queue`, seconds before it may run there (default None: now).
            depends: with `next_queue`, jids that must complete first (default None).
            result: a JSON-serializable value kept with the completed job (default None:
                nothing kept); one larger than the server's ``result-max-bytes`` is dropped.

        Returns:
            The job's new state: ``complete``, or ``waiting``/``scheduled``/``depends``
                in `next_queue`.

        Raises:
            InvalidValueError: a bad `next_queue`, `delay` or `depends`; nothing sent.
            InvalidArgumentError: `delay` or `depends` without `next_queue`, or a `result`
                with one; nothing sent.
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            job = await client.queues["emails"].pop()
            if job is not None and not job.data.get("followup"):
                await job.complete(result={"sent": True})
            elif job is not None:  # or hand it on to the next stage in 60 s
                await job.complete("emails-followup", delay=60)
            ```
        """
        command = "job.complete" if next_queue is None else "job.completeAndRequeue"
        if next_queue is not None:
            checked_queue(next_queue, command)
        delay = rules.check_optional("delay", delay, command)
        depends = rules.check_optional("depends", depends, command)
        protocol = self.client.protocol
        data, keep = self._stored.complete_argument(self.data, self.jid)
        if next_queue is None:
            if delay is not None or depends is not None:
                raise InvalidArgumentError("job.complete", "delay and depends need a next_queue")
            kept = result_options(self.jid, result, self._codec())
            state = await self._release(
                protocol.text(
                    "job.complete",
                    self.jid,
                    self.worker_name,
                    self.queue_name,
                    data,
                    *kept,
                    *keep,
                    *self._fence_option(),
                    releases=self.jid,
                )
            )
        elif result is not None:
            raise InvalidArgumentError("job.complete", "a result needs the job to finish")
        else:
            base = (self.jid, self.worker_name, self.queue_name, data)
            options: list[str | float] = [*keep, *self._fence_option()]
            if delay is not None:
                options += ["delay", delay]
            if depends is not None:
                options += ["depends", encode_json(list(depends), "depends")]
            state = await self._release(
                protocol.text(
                    "job.completeAndRequeue", *base, next_queue, *options, releases=self.jid
                )
            )
        self.state = _STATES.get(state) or JobState(state)
        if not keep:
            self._stored = StoredData(data, self.data, self._codec())
        self.queue_name = "" if next_queue is None else next_queue
        self.worker_name = ""
        self.expires_at = 0.0
        self.failure = None  # the server clears both, and restores the retry budget
        self.retries_left = self.original_retries
        return self.state

    async def fail(self, group: str, message: str) -> None:
        """Fail the job into `group` (a kind of failure) with a message (e.g. a traceback).
        It stays failed until ``unfail`` or a put with its jid.

        Args:
            group: the failure group, a short kind of failure (``"emails-SMTPError"``).
            message: what happened, e.g. a traceback.

        Raises:
            InvalidValueError: an empty `group` or a `message` that is not text; nothing
                sent.
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            try:
                await send(job.data)
            except SMTPError as error:
                await job.fail("emails-SMTPError", repr(error))
            ```
        """
        rules.check("failure_group", group, "job.fail")
        rules.check("message", message, "job.fail")
        arguments = (self.jid, self.worker_name, group, message, *self._fence(""))
        await self._release(self.client.protocol.call("job.fail", *arguments, releases=self.jid))
        self.state = JobState.FAILED
        self.worker_name = ""
        self.expires_at = 0.0

    def _codec(self) -> PayloadCodec | None:
        """The chain what this handle writes goes through (aqless.codecs)."""
        codec = self.client.codec
        return None if codec is None else codec.for_queue(self.queue_name)

    async def heartbeat(self) -> float:
        """Renew the lock for another ``heartbeat`` seconds (the server's option, default
        60). A worker does it for its running jobs; call it yourself for a job you popped.

        Returns:
            The new expiry time, seconds since the epoch (also in `expires_at`).

        Raises:
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            for chunk in chunks:
                await process(chunk)
                await job.heartbeat()
            ```
        """
        expires = await self.client.protocol.integer(
            "job.heartbeat", self.jid, self.worker_name, *self._fence("")
        )
        self.expires_at = float(expires)
        return self.expires_at

    async def checkpoint(self, state: Any) -> float:
        """Store `state` (JSON, at most ``CHECKPOINT_LIMIT`` bytes encoded) for the job's next
        attempt to resume from, and renew the lock as `heartbeat` does, in one call of the
        script; returns the new expiry time. The state replaces the previous one and stays
        until the job completes or is put again (see `checkpointed`).

        Raises:
            PayloadError: `state` is not JSON or is too large; nothing sent.
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            start = (job.checkpointed or {}).get("row", 0)
            for row in range(start, total):
                await import_row(row)
                if row % 1000 == 0:
                    await job.checkpoint({"row": row + 1})
            ```
        """
        plain = encode_json(state, "checkpoint state")
        codec = self._codec()
        text = plain if codec is None else codec.encode_text(plain, self.jid)
        size = len(text.encode("utf-8") if isinstance(text, str) else text)
        if size > CHECKPOINT_LIMIT:
            raise PayloadError(
                f"checkpoint state is {size} bytes of JSON, over the {CHECKPOINT_LIMIT} allowed"
            )
        expires = await self.client.protocol.integer(
            "job.checkpoint", self.jid, self.worker_name, text, *self._fence()
        )
        self.expires_at = float(expires)
        self.checkpointed = json.loads(plain)
        return self.expires_at

    async def progress(self, fraction: float, message: str = "") -> None:
        """Report how far the job's code got: `fraction` from 0 to 1, and a message (at most
        1024 bytes). In a worker, it returns at once and reports made while one is on its
        way are coalesced (the last lands before the outcome); elsewhere it is sent now.

        Raises:
            InvalidArgumentError: a `fraction` outside 0 to 1 or a `message` over 1024
                bytes.
            LockLostError: the job is no longer this worker's (when sent now).

        Examples:
            ```python
            await job.progress(0.5, "halfway")
            ```
        """
        fraction, message = checked_report(fraction, message)
        if self.progress_reports is not None:
            self.progress_reports.report(fraction, message)
            return
        await self.send_progress(fraction, message)

    async def send_progress(self, fraction: float, message: str) -> None:
        """`progress` without coalescing, the value unchecked: one call of the script.

        Raises:
            LockLostError: the job is no longer this worker's.

        Examples:
            ```python
            await job.send_progress(1.0, "done")
            ```
        """
        await self.client.protocol.call(
            "job.progress", self.jid, self.worker_name, fraction, message, *self._fence()
        )

    async def retry(
        self, delay: float = 0, group: str | None = None, message: str | None = None
    ) -> int:
        """Give the job back to its queue (after `delay` seconds), spending one retry; with
        none left it fails (into `group`, or ``failed-retries-<queue>``). In a handler,
        raising `aqless.Retry` does the same.

        Args:
            delay: seconds before it may run again (default 0: at once).
            group: the failure group if it fails for want of retries (default None:
                ``failed-retries-<queue>``).
            message: the message recorded with it (default None).

        Returns:
            The retries left; -1 when none was left and the job failed.

        Raises:
            InvalidValueError: a negative `delay`, an empty `group` or a `message` that is
                not text; nothing sent.
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            left = await job.retry(delay=30)
            if left < 0:
                print("out of retries: failed")
            ```
        """
        delay = rules.check("delay", delay, "job.retry")
        rules.check_optional("failure_group", group, "job.retry")
        rules.check_optional("message", message, "job.retry")
        args: list[str | float] = [delay]
        if self.attempt is not None:
            args += [group or "", message or "" if group is not None else "", self.attempt]
        elif group is not None:
            args.append(group)
            if message is not None:
                args.append(message)
        arguments = (self.jid, self.queue_name, self.worker_name, *args)
        protocol = self.client.protocol
        left = await self._release(protocol.integer("job.retry", *arguments, releases=self.jid))
        self.retries_left = left
        if left < 0:  # no retry left: failed, as `fail` leaves it
            self.state = JobState.FAILED
            self.worker_name = ""
            self.expires_at = 0.0
        else:  # the server keeps the worker's name and the expiry of a retried job
            self.state = JobState.SCHEDULED if delay > 0 else JobState.WAITING
        return left

    async def hand_back(self, reason: str) -> None:
        """Give the job back to its queue at once, spending no retry, with `reason` in its
        history (a ``handed-back`` entry): the worker was told to stop, the code did not
        fail.

        Raises:
            InvalidValueError: an empty `reason`; nothing sent.
            LockLostError: the job is no longer this worker's (its lock expired and another
                worker took it, or it was cancelled, moved or ended meanwhile); nothing
                changed.
            StaleAttemptError: (a LockLostError) the verb came from an earlier attempt of
                the job, which was popped again since.

        Examples:
            ```python
            await job.hand_back("shutting down")
            ```
        """
        rules.check("reason", reason, "job.handBack")
        arguments = (self.jid, self.worker_name, reason, *self._fence())
        protocol = self.client.protocol
        state = await self._release(protocol.text("job.handBack", *arguments, releases=self.jid))
        self.state = job_state(state)
        self.worker_name = ""
        self.expires_at = 0.0

    # -- anyone's verbs ---------------------------------------------------------------------

    async def cancel(self) -> None:
        """Delete the job: a job of a flow takes the jobs below it along and leaves its
        parent (see `Jobs.cancel`).

        Raises:
            JobDependedOnError: other jobs depend on it; nothing deleted.
            FlowRunningError: a job of its flow below it is running; nothing deleted.

        Examples:
            ```python
            job = await client.jobs.get(jid)
            if job is not None:
                await job.cancel()
            ```
        """
        await self._release(self.client.protocol.call("job.cancel", self.jid))
        self.worker_name = ""
        self.expires_at = 0.0

    async def move(
        self,
        queue: str,
        *,
        delay: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        depends: Sequence[str] | None = None,
        throttles: Sequence[str] | None = None,
    ) -> None:
        """Put the job into `queue` again (it must still exist), keeping its data. The
        handle then reads the job again: where the put left it (waiting, scheduled,
        depends, throttled, or running, pushed to a worker), as the server holds it.
        ``requeue`` is the same verb.

        Args:
            queue: the queue to put it into.
            delay: seconds before it may run (default 0: now).
            priority: higher runs earlier (default None: 0, as a put's).
            tags: its tags (default None: none).
            retries: its retries (default None: the put's default, 5).
            depends: jids it waits for (default None: none).
            throttles: throttles it must hold (default None: none).

        Raises:
            InvalidValueError: an option or the queue outside its rule; nothing sent.

        Examples:
            ```python
            await job.move("emails-slow", delay=60, priority=-1)
            ```
        """
        await self._release(self._move(queue, delay, priority, tags, retries, depends, throttles))
        fields = await self.client.protocol.json("job.get", self.jid)
        if fields is None:  # gone already (cancelled, or finished and purged)
            self.worker_name = ""
            self.expires_at = 0.0
        else:
            self._read(fields)

    async def _move(
        self,
        queue: str,
        delay: float,
        priority: float | None,
        tags: Sequence[str] | None,
        retries: int | None,
        depends: Sequence[str] | None,
        throttles: Sequence[str] | None,
    ) -> None:
        await self.client.queues[queue].put(
            self.klass_name,
            self.data,
            jid=self.jid,
            delay=delay,
            priority=priority,
            tags=tags,
            retries=retries,
            depends=depends,
            throttles=throttles,
            requeue=True,
        )

    requeue = move

    async def tag(self, *tags: str) -> tuple[str, ...]:
        """Add tags; returns all of the job's tags.

        Raises:
            InvalidValueError: a tag outside its rule; nothing sent.
            JobNotFoundError: the job does not exist.

        Examples:
            ```python
            tags = await job.tag("vip", "eu")
            ```
        """
        self.tags = await _edit_tags(self.client, "job.addTag", self.jid, tags)
        return self.tags

    async def untag(self, *tags: str) -> tuple[str, ...]:
        """Remove tags; returns the tags left.

        Raises:
            JobNotFoundError: the job does not exist.

        Examples:
            ```python
            await job.untag("vip")
            ```
        """
        self.tags = await _edit_tags(self.client, "job.removeTag", self.jid, tags)
        return self.tags

    async def track(self) -> bool:
        """Send this job's events to the tracking channels too; False if it already was.

        Examples:
            ```python
            await job.track()  # its put, popped, completed... events reach ql:<event>
            ```
        """
        added = bool(await self.client.protocol.json("job.track", self.jid) == 1)
        self.tracked = True
        return added

    async def untrack(self) -> bool:
        """Stop tracking; False if it was not tracked.

        Examples:
            ```python
            await job.untrack()
            ```
        """
        removed = bool(await self.client.protocol.json("job.untrack", self.jid) == 1)
        self.tracked = False
        return removed

    async def set_priority(self, priority: float) -> None:
        """Change the job's priority (higher runs earlier; any finite number).

        Raises:
            InvalidValueError: a priority that is not a finite number; nothing sent.
            JobNotFoundError: the job does not exist.

        Examples:
            ```python
            await job.set_priority(10)
            ```
        """
        priority = rules.check("priority", priority, "job.setPriority")
        await self.client.protocol.call("job.setPriority", self.jid, priority)
        self.priority = priority

    async def depend(self, *jids: str) -> None:
        """Wait for more jobs too (only while the job is in the depends state).

        Raises:
            InvalidValueError: a jid outside its rule; nothing sent.
            ScriptError: the job is not in the depends state.

        Examples:
            ```python
            await job.depend(upload_jid, scan_jid)
            ```
        """
        rules.check("depends", list(jids), "job.addDependency")
        await self.client.protocol.call("job.addDependency", self.jid, *jids)

    async def undepend(self, *jids: str, all: bool = False) -> None:
        """Stop waiting for some jobs (or `all=True`); with none left it becomes waiting.

        Raises:
            ScriptError: the job is not in the depends state.

        Examples:
            ```python
            await job.undepend(all=True)  # run it now
            ```
        """
        if all:
            jids = ("all",)
        await self.client.protocol.call("job.removeDependency", self.jid, *jids)

    async def log(self, message: str, **data: Any) -> None:
        """Add an entry to the job's history: `message` with `data` as its details.

        Raises:
            PayloadError: `data` is not JSON.
            JobNotFoundError: the job does not exist.

        Examples:
            ```python
            await job.log("charged", amount=42, currency="EUR")
            ```
        """
        args: list[str] = [message]
        if data:
            args.append(encode_json(data, "log data"))
        await self.client.protocol.call("job.log", self.jid, *args)

    async def timeout(self) -> None:
        """Take the job away from its worker now, as if its lock had expired: it is stalled,
        first in line to be popped again.

        Raises:
            JobNotFoundError: the job does not exist.
            LockLostError: the job is not running.

        Examples:
            ```python
            await job.timeout()  # e.g. from an operator's tool for a hung job
            ```
        """
        await self.client.protocol.call("job.timeout", self.jid)
        self.state = JobState.STALLED
        self.worker_name = ""
        self.expires_at = 0.0

    async def wait(self, timeout: float | None = None) -> JobState | None:
        """Wait until the job completes or fails; None if it was cancelled.

        Args:
            timeout: seconds to wait at most (default None: for ever).

        Raises:
            TimeoutError: the job did not finish within `timeout`.

        Examples:
            ```python
            state = await job.wait(timeout=30)
            ```
        """
        return await self.client.wait(self.jid, timeout=timeout)

    async def result(self, timeout: float | None = None) -> Any:
        """Wait until the job finishes and return its handler's return value, or raise
        why there is none (see `Client.result`).

        Args:
            timeout: seconds to wait at most (default None: for ever).

        Raises:
            JobFailedError: the job failed (``group``, ``message``).
            JobGoneError: it was cancelled, expired, or never existed.
            ResultDroppedError: it completed, but its return value was not kept.
            ResultTimeoutError: it did not finish within `timeout` (a TimeoutError).

        Examples:
            ```python
            jid = await client.queues["reports"].put("app.jobs.report", {"month": 5})
            job = await client.jobs.get(jid)
            summary = await job.result(timeout=60)
            ```
        """
        return await self.client.result(self.jid, timeout=timeout)

    async def children_results(self) -> ChildrenResults:
        """A flow parent's children (``client.flows``), each with its state and result,
        read in one call: ``results["name"]`` or ``results[jid]`` is a child's return value
        (see `aqless.flows.ChildrenResults`). A job of no flow has none.

        Raises:
            JobNotFoundError: the job does not exist.

        Examples:
            ```python
            results = await job.children_results()
            small, large = results["small"], results["large"]
            ```
        """
        reply = await self.client.protocol.json("flow.children", self.jid)
        if reply is None:
            raise JobNotFoundError("flow.children", f"Job {self.jid} does not exist")
        return ChildrenResults.from_json(reply, self.client.codec)

    async def refresh(self) -> Job:
        """A new handle on the job, read as the server holds it now (this one is left as
        it is).

        Raises:
            JobNotFoundError: the job no longer exists.

        Examples:
            ```python
            job = await job.refresh()
            ```
        """
        job = await self.client.jobs.get(self.jid)
        if not isinstance(job, Job):
            raise JobNotFoundError("job.get", f"Job {self.jid} does not exist")
        return job


class RecurringJob:
    """A recurring job: a template the server spawns a job from every `interval` seconds
    (or on its `cron` schedule), as ``queue.recur`` made it.

    Examples:
        ```python
        recurring = await client.jobs.get(name)
        if isinstance(recurring, aqless.RecurringJob):
            print(recurring.interval, await recurring.next_runs(3))
        ```
    """

    __slots__ = (
        "_client",
        "backlog",
        "buffered",
        "catchup",
        "count",
        "cron",
        "data",
        "failures",
        "interval",
        "jid",
        "jitter",
        "klass_name",
        "overlap",
        "pause_after",
        "paused",
        "priority",
        "queue_name",
        "retries",
        "tags",
        "throttles",
        "tz",
    )

    def __init__(self, client: Client, fields: Mapping[str, Any]) -> None:
        self._client = client
        self.jid: str = str(fields["jid"])
        self.klass_name: str = str(fields.get("klass", ""))
        self.queue_name: str = str(fields.get("queue", ""))
        self.data: Any = _decoded_data(fields.get("data", "{}"), client.codec)
        self.priority: float = float(fields.get("priority", 0))
        self.interval: float = float(fields.get("interval", 0))
        self.retries: int = int(fields.get("retries", 0))
        self.count: int = int(fields.get("count", 0))
        self.backlog: int = int(fields.get("backlog", 0))
        self.tags: tuple[str, ...] = tuple(listed(fields.get("tags")))
        self.throttles: tuple[str, ...] = tuple(listed(fields.get("throttles")))
        #: the cron expression it spawns on (None: every `interval` seconds), and its zone
        self.cron: str | None = fields.get("cron") or None
        self.tz: str = str(fields.get("tz") or "UTC")
        #: its policy (aqless's own, `Queue.recur`): what a due run does while the last is
        #: live, how late a missed run may be (0: any), the failures in a row that pause it
        #: (0: never), how late a run may start
        self.overlap: Overlap = fields.get("overlap") or "allow_all"
        self.catchup: float = float(fields.get("catchup") or 0)
        self.pause_after: int = int(fields.get("pause_after") or 0)
        self.jitter: float = float(fields.get("jitter") or 0)
        #: whether it is paused (`pause`, or `pause_after` failures in a row), its runs'
        #: failures in a row, and the runs waiting for the live one to end
        self.paused: bool = bool(fields.get("paused"))
        self.failures: int = int(fields.get("failures") or 0)
        self.buffered: int = int(fields.get("buffered") or 0)

    def __repr__(self) -> str:
        every = f"on {self.cron!r} {self.tz}" if self.cron else f"every {self.interval}s"
        return f"<RecurringJob {self.jid} {self.klass_name} {every}>"

    async def next_runs(self, count: int = 5) -> list[datetime.datetime]:
        """When it spawns next (the next `count` times, default 5), in its time zone.

        Examples:
            ```python
            for when in await recurring.next_runs(3):
                print(when.isoformat())
            ```
        """
        return await next_runs(self._client, self.jid, count, self.tz)

    async def update(self, **changes: Unpack[RecurringChanges]) -> None:
        """Change the template (`interval`, `priority`, `retries`, `data`, `klass`,
        `queue`, `backlog`, `throttles`, `cron`, `tz`, and its policy: `overlap`,
        `catchup`, `pause_after`, `jitter`, as `Queue.recur` takes them); jobs it spawns from
        now on follow the change. A new `cron` or `tz` recomputes its schedule; a cron job's
        `interval` can't be changed.

        Raises:
            InvalidValueError: a value outside its rule (`interval` positive, `retries` and
                `backlog` whole numbers from 0, `overlap` one of its five); nothing sent.
            ConfigurationError: `tz` without a cron schedule, or an `interval` for a cron
                job.

        Examples:
            ```python
            await recurring.update(interval=3600, priority=5)
            await recurring.update(cron="0 9 * * MON-FRI", tz="Europe/Paris")
            await recurring.update(overlap="skip", pause_after=3)
            ```
        """
        checked = rules.check_recurring("recurringJob.update", changes)
        interval, cron, tz = checked.get("interval"), changes.get("cron"), changes.get("tz")
        data, throttles = changes.get("data"), checked.get("throttles")
        schedule = None
        if cron is None and tz is not None and not self.cron:
            raise ConfigurationError("tz= applies to a cron schedule: give cron= too")
        if cron is not None or tz is not None:
            schedule = CronSchedule.of(cron or self.cron or "", tz or self.tz)
        if interval is not None and (self.cron or schedule):
            raise ConfigurationError("a cron job has no interval to change: recur it anew")
        options: list[str | bytes | float] = []
        given = {**checked, "klass": changes.get("klass")}
        for name in ("interval", "priority", "retries", "backlog", "klass", "queue"):
            if given.get(name) is not None:
                options += [name, given[name]]
        options += policy_options(checked)
        if data is not None:
            queue = str(given.get("queue") or self.queue_name)
            options += ["data", stored_data(data, queue, self.jid, self._client.codec)]
        if throttles is not None:
            options += ["throttles", encode_json(list(throttles), "throttles")]
        if options:
            await self._client.protocol.call("recurringJob.update", self.jid, *options)
        if schedule is not None:
            await set_schedule(self._client, self.jid, schedule)
        await self._reread()

    async def _reread(self) -> None:
        fresh = await self._client.jobs.get(self.jid)
        if isinstance(fresh, RecurringJob):
            for name in RecurringJob.__slots__[1:]:
                setattr(self, name, getattr(fresh, name))

    async def backfill(self, start: When, end: When) -> int:
        """Make the runs it would have made from `start` up to (not including) `end`, a
        range of the past (a naive datetime is read in its `tz`): one job for each of its
        fire times there (every `interval` seconds in step with its schedule), each time
        once however often it is backfilled. The runs go into its queue at once, oldest
        first, whatever its `overlap`; returns how many it made (0: all made before).

        Raises:
            InvalidValueError: `start` or `end` outside its rule; nothing sent.
            ConfigurationError: `end` not after `start`, `end` after now, or a range of
                more than 100,000 runs; nothing sent.
            JobNotFoundError: the template is gone.

        Examples:
            ```python
            day = datetime.datetime(2026, 3, 2, tzinfo=datetime.UTC)
            made = await recurring.backfill(day, day + datetime.timedelta(days=1))
            ```
        """
        schedule = CronSchedule.of(self.cron, self.tz) if self.cron else None
        made = await backfill(self._client, self.jid, schedule, self.interval, start, end)
        await self._reread()
        return made

    async def pause(self) -> None:
        """Stop making runs until `resume` (its due runs are dropped meanwhile); the runs
        already made are left alone.

        Raises:
            JobNotFoundError: the template is gone.

        Examples:
            ```python
            await recurring.pause()
            ```
        """
        await self._client.protocol.call("recurringJob.update", self.jid, "paused", 1)
        self.paused = True

    async def resume(self) -> None:
        """Make runs again after `pause`, or after `pause_after` failed runs in a row (their
        count starts over); the runs due while it was paused are not made.

        Raises:
            JobNotFoundError: the template is gone.

        Examples:
            ```python
            await recurring.resume()
            ```
        """
        await self._client.protocol.call("recurringJob.update", self.jid, "paused", 0)
        self.paused, self.failures = False, 0

    async def tag(self, *tags: str) -> tuple[str, ...]:
        """Add tags for the jobs it spawns from now on; returns all of them.

        Raises:
            InvalidValueError: a tag outside its rule; nothing sent.

        Examples:
            ```python
            await recurring.tag("nightly")
            ```
        """
        self.tags = await _edit_tags(self._client, "recurringJob.addTag", self.jid, tags)
        return self.tags

    async def untag(self, *tags: str) -> tuple[str, ...]:
        """Remove tags; returns the tags left.

        Examples:
            ```python
            await recurring.untag("nightly")
            ```
        """
        self.tags = await _edit_tags(self._client, "recurringJob.removeTag", self.jid, tags)
        return self.tags

    async def cancel(self) -> None:
        """Stop spawning (jobs already spawned are left alone).

        Examples:
            ```python
            await recurring.cancel()
            ```
        """
        await self._client.protocol.call("recurringJob.cancel", self.jid)
