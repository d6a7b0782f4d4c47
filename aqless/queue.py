"""Queue: put jobs in, take them out, and look at what a queue holds."""

from __future__ import annotations

import asyncio
import datetime
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, overload

import anyio

from aqless import rules
from aqless._connection.protocol import DATA_APART, decoded_apart, encode_json
from aqless.codecs.threads import SPLIT_BYTES, SPLIT_FROM, Groups, map_split, splits
from aqless.contracts.derived import QueueScripted
from aqless.errors import (
    AqlessError,
    ConfigurationError,
    JobNotFoundError,
    LockLostError,
)
from aqless.job import Job
from aqless.models import GroupCounts, JobState, Overlap, QueueStats, listed
from aqless.puts import (
    ENCODED,
    Durability,
    Durable,
    JobClass,
    PreparedPut,
    PutOptions,
    PutRequest,
    PutResult,
    PutSender,
    checked_group,
    checked_queue,
    class_name,
    durability,
    encode_later,
    inside_hooks,
    new_jid,
    prepare_put,
    put_bytes,
    refuse_dedup_on_requeue,
    stored_data,
    trip_end,
)
from aqless.scaling.estimate import QueueScaling, read_scaling
from aqless.schedules import Planned, cron_schedule, policy_options, set_schedule
from aqless.typed import put_payload

if TYPE_CHECKING:
    from aqless.contracts import RateLimit as AnyRateLimit
    from aqless.contracts import ScriptClient as Client

#: The data type a typed handler declares (see aqless.typed).
Data = TypeVar("Data")


#: Wraps every put: ``async def hook(queue, requests, send) -> jids`` may look at or replace
#: the requests (e.g. add a trace context to their data) before ``await send(requests)``.
#: Registered in ``client.put_hooks``; the first hook is outermost.
PutHook: TypeAlias = Callable[["Queue", list[PutRequest], PutSender], Awaitable[list[str]]]


def checked_name(name: str) -> str:
    """A queue's `name`, refused when empty (every queue has a name; InvalidValueError).
    Any other name is taken, to read the queues other clients made: the verbs that put a
    job into a queue keep its name to the whole rule (`aqless.puts.checked_queue`)."""
    if not name:
        rules.check("queue", name, "queue")  # the rule refuses it
    return name


#: The command a recurring job's inputs are refused for.
RECUR = "queue.recurAtInterval"

#: Round trips of a put_many sent before the first one's replies are read: the client packs
#: and sends the next while the server runs this one's puts (benchmarks/HISTORY.md,
#: "put_many: the next round trip beside the server's work").
AHEAD_TRIPS = 1
#: Bytes of encoded data in a group that put_many's encoding threads take at a time (its
#: first put's size tells how many puts make it).
GROUP_BYTES = 128 * 1024


def recurring_jid(name: str | None, jid: str | None) -> str | None:
    """The id of a template registered by `name` (the name itself, checked), or None for
    an unnamed one."""
    if name is None:
        return None
    if jid is not None:
        raise ConfigurationError("give a recurring job either name= or jid=, not both")
    checked: str = rules.check_recurring(RECUR, {"name": name})["name"]
    return checked


class Queue(QueueScripted):
    """A named queue. Making one does no I/O: `client.queues["emails"]`.

    Raises:
        InvalidValueError: an empty `name`.

    Examples:
        ```python
        emails = client.queues["emails"]
        await emails.put(send_email, {"to": "ada@example.com"})
        job = await emails.pop()
        ```
    """

    def __init__(self, client: Client, name: str) -> None:
        self._client = client
        self.name = checked_name(name)

    def __repr__(self) -> str:
        return f"<Queue {self.name}>"

    # -- putting ------------------------------------------------------------------------------

    def _prepared(
        self, klass: JobClass, data: Any, options: PutOptions, requeue: bool, later: bool = False
    ) -> PreparedPut:
        return prepare_put(
            klass,
            data,
            options,
            worker=self._client.worker_name,
            queue=self.name,
            clock=self._client.clock,
            requeue=requeue,
            codec=self._client.codec,
            later=later,
        )

    @overload
    async def put(
        self,
        klass: Callable[[Job, Data], Any],
        data: Data | Mapping[str, Any],
        *,
        requeue: bool = False,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> str: ...

    @overload
    async def put(
        self,
        klass: type | Callable[[Job], Any] | str,
        data: Any = None,
        *,
        requeue: bool = False,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> str: ...

    async def put(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        requeue: bool = False,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> str:
        """Put a job into this queue; returns its jid.

        Args:
            klass: the job's class or function, or its dotted name (stored as
                ``module.qualname``). A class's ``default_job_options(data)`` supplies
                options not given here.
            data: the payload; anything JSON can encode. For a handler that declares its
                data's type (see aqless.typed), an instance of it or its JSON form,
                checked before anything is sent (JobDataError if it does not fit).
            requeue: refuse (JobNotFoundError) if the job does not exist already.
            durable: return only once the put is fsynced to the server's append-only file
                (True), or as a `Durability` says (replicas, timeout); NotDurableError
                if the server does not confirm it (the job was put all the same).
            options: jid, priority, delay, at, tags, retries, depends, throttles, dedup,
                rate_limits, group, replace: see `aqless.PutOptions`.

        Returns:
            The job's jid (the one given as ``jid=``, else a new one).

        Raises:
            InvalidValueError: an option outside its rule (`aqless.rules`); nothing sent.
            InvalidArgumentError: an empty class name, a bad ``at`` or ``replace``;
                nothing sent.
            ConfigurationError: options that contradict each other (``delay`` and ``at``,
                ``dedup`` and ``replace=False``, ``dedup`` with `requeue`), or `durable`
                on a server without WAITAOF; nothing sent.
            JobDataError: `data` does not fit the handler's declared type; nothing sent.
            JobNotFoundError: with `requeue`, no such job.
            NotDurableError: the server did not confirm `durable` (the job was put).

        Examples:
            ```python
            emails = client.queues["emails"]
            jid = await emails.put(send_email, {"to": "ada@example.com"})
            await emails.put("app.jobs.Report", {"day": "2026-12-07"}, delay=60, tags=["daily"])
            ```
        """
        wait = await self._durability(durable) if durable else None
        if (
            options.get("dedup") is None
            and options.get("replace") is not False
            and not self._client.put_hooks
            and wait is None
        ):
            put = self._prepared(klass, data, options, requeue)  # the common case
            return await self._client.protocol.text(
                put.command,
                *put.arguments,
                priority=put.order,
                releases=_released(put.jid, requeue),
            )
        return (await self._put_one(PutRequest(klass, data, **options), requeue, wait)).jid

    async def put_result(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> PutResult:
        """`put` (with the same options, `requeue` aside), telling what it did: the jid, and
        whether the put was deduplicated (no new job made) or debounced.

        Raises:
            InvalidValueError: an option outside its rule; nothing sent.
            ConfigurationError: options that contradict each other, or `durable` on a
                server without WAITAOF; nothing sent.
            NotDurableError: the server did not confirm `durable` (the job was put).

        Examples:
            ```python
            result = await queue.put_result(send_email, data, dedup="welcome:ada")
            if result.deduplicated:
                print("already queued as", result.jid)
            ```
        """
        request = PutRequest(klass, data, **options)
        return await self._put_one(request, False, await self._durability(durable))

    async def _put_one(
        self, request: PutRequest, requeue: bool, wait: Durability | None
    ) -> PutResult:
        """One put, inside the client's put hooks."""
        refuse_dedup_on_requeue(requeue, request.dedup)  # before any hook runs
        results: list[PutResult] = []

        async def send(requests: list[PutRequest]) -> list[str]:
            if wait is not None:  # the put with its WAITAOF right behind it
                return await self._put_many(requests, 1, wait, requeue, results)
            (request,) = requests
            put = self._prepared(request.klass, request.data, request.options(), requeue)
            reply = await self._client.protocol.call(
                put.command,
                *put.arguments,
                priority=put.order,
                releases=_released(put.jid, requeue),
            )
            results.append(PutResult.from_reply(put.command, reply))
            return [results[-1].jid]

        (jid,) = await self._hooked(send, [request])
        return results[0] if results else PutResult(jid)

    async def _durability(self, durable: Durable) -> Durability | None:
        """What a put waits for; ConfigurationError before anything is put on a server
        without WAITAOF."""
        wait = durability(durable)
        if wait is not None and not await self._client.protocol.knows("WAITAOF"):
            raise ConfigurationError(
                "durable puts need WAITAOF (Redis 7.2+ or Valkey 8+); this server has none"
            )
        return wait

    async def _hooked(self, send: PutSender, requests: list[PutRequest]) -> list[str]:
        """`send(requests)` inside the client's put hooks."""
        return await inside_hooks(self._client.put_hooks, self, send)(requests)

    async def put_many(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[str]:
        """Put many jobs, pipelined: one round trip per `batch` jobs, the next one sent while
        the server runs the one before, and the server running up to 100 plain puts in one
        script call. Every request is checked, and every payload that could fail to encode
        (PayloadError) is encoded, before anything is sent; with a codec that only
        compresses, big payloads of JSON's own types are compressed while the round trips
        of those done are sent (a compression that fails, out of memory, raises there: the
        round trips before it were put). Not a transaction: if the server refuses one job,
        the others are still put, and the first refusal is raised afterwards. With
        `durable` (as `put`'s), each batch is confirmed in its round trip before the next is
        sent; the first batch that is not raises NotDurableError (naming every job put so
        far) and the rest are not put.
        A deduplicated request's jid is that of the job holding its dedup id.

        Args:
            requests: the jobs, as `aqless.PutRequest` (class, data and `put`'s options).
            batch: jobs per round trip (default 1000); a round trip also carries at most
                4 MiB of payloads (`aqless.puts.ROUND_TRIP_BYTES`), past its first job.
            durable: as `put`'s (default False).

        Returns:
            The jids, in the order of `requests` (a refused request has none).

        Raises:
            InvalidValueError: a request's option outside its rule; nothing sent.
            ConfigurationError: a request's contradicting options, or `durable` on a
                server without WAITAOF; nothing sent.
            AqlessError: the first refusal by the server (the other jobs were put).
            NotDurableError: a batch the server did not confirm; the rest not put.

        Examples:
            ```python
            from aqless import PutRequest

            jids = await queue.put_many(
                PutRequest(send_email, {"to": to}, tags=["welcome"]) for to in addresses
            )
            ```
        """
        return [
            result.jid
            for result in await self.put_many_results(requests, batch=batch, durable=durable)
        ]

    async def put_many_results(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[PutResult]:
        """`put_many`, telling what each put did (as `put_result`).

        Raises:
            InvalidValueError: a request's option outside its rule; nothing sent.
            ConfigurationError: `durable` on a server without WAITAOF; nothing sent.
            AqlessError: the first refusal by the server (the other jobs were put).
            NotDurableError: a batch the server did not confirm; the rest not put.

        Examples:
            ```python
            results = await queue.put_many_results(requests)
            new = [r.jid for r in results if not r.deduplicated]
            ```
        """
        wait = await self._durability(durable)
        results: list[PutResult] = []

        async def send(requests: list[PutRequest]) -> list[str]:
            return await self._put_many(requests, batch, wait, results=results)

        jids = await self._hooked(send, list(requests))
        if len(results) != len(jids):  # a hook answered without sending
            return [PutResult(jid) for jid in jids]
        return results

    async def _put_many(
        self,
        requests: list[PutRequest],
        batch: int,
        wait: Durability | None,
        requeue: bool = False,
        results: list[PutResult] | None = None,
    ) -> list[str]:
        def prepared_one(request: PutRequest, later: bool = False) -> PreparedPut:
            options = request.options()
            return self._prepared(request.klass, request.data, options, requeue, later)

        codec = self._client.codec and self._client.codec.for_queue(self.name)
        encode = partial(encode_later, codec=self._client.codec)
        groups: Groups[PreparedPut] | None = None
        if wait is None and len(requests) >= SPLIT_FROM and splits(codec):
            # every request checked before anything is sent (its JSON made where it could
            # fail); data that cannot fail encoded in groups beside the sending, when the
            # first request's is big enough and the second's is such data
            head = [prepared_one(requests[0]), prepared_one(requests[1], later=True)]
            size = put_bytes(head[0])
            if size >= SPLIT_BYTES and head[1].unencoded is not ENCODED:
                prepared = head + [prepared_one(request, later=True) for request in requests[2:]]
                groups = Groups(prepared, encode, max(1, GROUP_BYTES // size))
            else:
                encode(head[1])
                prepared = head + map_split(prepared_one, requests[2:], put_bytes, codec)
        else:
            prepared = map_split(prepared_one, requests, put_bytes, codec)  # two threads, or one
        try:
            return await self._send_many(prepared, groups, batch, wait, requeue, results)
        finally:
            if groups is not None:
                groups.stop()

    async def _send_many(
        self,
        prepared: list[PreparedPut],
        groups: Groups[PreparedPut] | None,
        batch: int,
        wait: Durability | None,
        requeue: bool,
        results: list[PutResult] | None,
    ) -> list[str]:
        """`_put_many`'s round trips, `AHEAD_TRIPS` ahead of the replies read (none with
        `wait`); with `groups`, the puts encoded by then, this thread encoding groups too."""
        command = "job.requeue" if requeue else "queue.put"
        jids: list[str] = []
        refusal: Exception | None = None
        ahead = 0 if wait is not None else AHEAD_TRIPS
        sent: deque[tuple[list[PreparedPut], asyncio.Future[list[Any]]]] = deque()
        start = 0
        try:
            while start < len(prepared) or sent:
                ready = len(prepared) if groups is None else groups.ready()
                if start < ready and len(sent) <= ahead:
                    while start < ready and len(sent) <= ahead:
                        stop = trip_end(prepared, start, ready, batch)
                        chunk, start = prepared[start:stop], stop
                        going = asyncio.ensure_future(self._trip(command, chunk, wait))
                        sent.append((chunk, going))
                    await asyncio.sleep(0)  # they are written before this thread encodes more
                elif sent and (groups is None or sent[0][1].done()):
                    chunk, trip = sent.popleft()
                    refusal = self._took(chunk, await trip, wait, jids, results) or refusal
                elif groups is not None and groups.take():
                    continue
                else:  # the helper's next group, or the first round trip's replies
                    await _first(groups, sent[0][1] if sent else None)
        finally:
            for _, left in sent:  # the put_many failed or was cancelled
                left.cancel()
                left.add_done_callback(_retrieved)
        if refusal is not None:
            raise refusal
        return jids

    @staticmethod
    def _took(
        chunk: list[PreparedPut],
        replies: list[Any],
        wait: Durability | None,
        jids: list[str],
        results: list[PutResult] | None,
    ) -> Exception | None:
        """A round trip's replies noted (jids, results); its first refusal."""
        refusal: Exception | None = None
        copies = None if wait is None else replies.pop()  # WAITAOF's reply comes last
        for put, reply in zip(chunk, replies, strict=True):
            if isinstance(reply, AqlessError):
                refusal = refusal or reply
            else:
                result = PutResult.from_reply(put.command, reply)
                jids.append(result.jid)
                if results is not None:
                    results.append(result)
        if wait is not None:
            wait.confirm(copies, list(jids))
        return refusal

    def _trip(
        self, command: str, chunk: list[PreparedPut], wait: Durability | None
    ) -> Awaitable[list[Any]]:
        """One round trip of `_put_many`: its puts, then `wait`'s command when given."""
        return self._client.protocol.many(
            command,
            [put.arguments for put in chunk],
            [put.order for put in chunk],
            then=() if wait is None else wait.command(),
            commands=[put.command for put in chunk],
        )

    async def recur(
        self,
        klass: JobClass,
        data: Any = None,
        interval: float | None = None,
        *,
        name: str | None = None,
        jid: str | None = None,
        offset: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        backlog: int | None = None,
        throttles: Sequence[str] | None = None,
        cron: str | None = None,
        tz: str = "UTC",
        overlap: Overlap | None = None,
        catchup: float | None = None,
        pause_after: int | None = None,
        jitter: float | None = None,
    ) -> str:
        """Spawn a job every `interval` seconds (default 60), the first after `offset`
        seconds, or at the times of a `cron` expression in time zone `tz`; returns the
        recurring job's id. `backlog` caps how many missed spawns are caught up (0: all).
        InvalidValueError, before anything is sent, for a value outside its rule
        (`aqless.rules`: `interval` positive, `offset` from 0, `retries` and `backlog`
        whole numbers from 0).

        With `name`, the template is registered under that name, which is its id: calling
        `recur` again with the same name (as a service does at every start) updates that
        template, in one atomic call, rather than adding another; its next spawn time is
        kept unless the schedule changed (another interval, cron or tz), and `offset` only
        applies when it did. Without a name each call adds a template, and `jid=` makes
        the template of that id again, its schedule started over.

        Args:
            klass: the spawned jobs' class or function, or its dotted name.
            data: the payload each spawned job gets (default None).
            interval: seconds between spawns (default None: 60; ignored with `cron`).
            name: register the template under this name (default None: a new template).
            jid: the template's id when unnamed (default None: a new one).
            offset: seconds before the first spawn (default 0).
            priority: the spawned jobs' priority (default None: 0).
            tags: the spawned jobs' tags (default None: none).
            retries: the spawned jobs' retries (default None: the server's default).
            backlog: missed spawns caught up at most (default None: the server's; 0: all).
            throttles: the spawned jobs' throttles (default None: none).
            cron: a cron expression instead of `interval` (default None).
            tz: the time zone `cron` is read in (default ``"UTC"``).
            overlap: what a due run does while the last run is still live (waiting,
                scheduled or running): ``"skip"`` it, ``"buffer_one"`` (run it when the
                live one ends; one at most), ``"buffer_all"`` (as many as `backlog`, 0: all),
                ``"cancel_other"`` (cancel the live one and run), ``"allow_all"`` (default
                None: allow_all, run beside it).
            catchup: seconds a missed run may be late and still run; older ones are
                dropped (default None: no limit).
            pause_after: failed runs in a row that pause the template (default None:
                never); `RecurringJob.resume` resumes it.
            jitter: seconds each run may start after its time, the same offset for the
                same template and time (default None: none).

        Returns:
            The recurring job's id.

        Raises:
            InvalidValueError: a value outside its rule; nothing sent.
            InvalidArgumentError: a bad `cron` expression or an unknown `tz`; nothing sent.
            ConfigurationError: both `name` and `jid`, `cron` with `interval` or
                `offset`, or `tz` without `cron`; nothing sent.

        Examples:
            ```python
            reports = client.queues["reports"]
            await reports.recur(nightly_report, name="nightly", cron="0 3 * * *", tz="Europe/Paris")
            await reports.recur(ping, interval=30, name="ping")
            ```
        """
        inputs: dict[str, object] = {"queue": self.name, "name": name, "interval": interval}
        inputs |= {"offset": offset, "priority": priority, "retries": retries}
        inputs |= {"backlog": backlog, "tags": tags, "throttles": throttles}
        inputs |= {"overlap": overlap, "catchup": catchup, "pause_after": pause_after}
        checked = rules.check_recurring(RECUR, inputs | {"jitter": jitter})
        interval, offset, priority = checked["interval"], checked["offset"], checked["priority"]
        retries, backlog = checked["retries"], checked["backlog"]
        tags, throttles = checked["tags"], checked["throttles"]
        schedule = cron_schedule(cron, tz, interval, offset)
        named = recurring_jid(name, jid)
        template = named or jid or new_jid()
        # a named template takes its cron schedule in the same call
        planned = Planned.of(schedule, self._client.clock()) if schedule and named else None
        data = put_payload(klass, self.name, data)
        args: list[str | bytes | float] = [
            self.name,
            template,
            class_name(klass),
            stored_data(data, self.name, template, self._client.codec),
            planned.interval if planned else (60 if interval is None else interval),
            offset,
        ]
        for option, number in (("priority", priority), ("retries", retries), ("backlog", backlog)):
            if number is not None:
                args += [option, number]
        for option, values in (("tags", tags), ("throttles", throttles)):
            if values is not None:
                args += [option, encode_json(list(values), option)]
        args += policy_options(checked)
        if named is not None:
            return await self._client.protocol.text(
                "queue.upsertRecurring", *args, *(planned.options() if planned else ())
            )
        rjid = await self._client.protocol.text("queue.recurAtInterval", *args)
        if schedule is not None:
            await set_schedule(self._client, rjid, schedule)
        return rjid

    # -- taking -------------------------------------------------------------------------------

    async def pop_many(self, count: int, *, worker: str | None = None) -> list[Job]:
        """Take up to `count` jobs to work on; they are locked for this worker (each job's
        `attempt` tells which pop of it this is).

        Args:
            count: the most jobs to take, a whole number from 1.
            worker: the worker they are locked for (default None: the client's
                ``worker_name``).

        Returns:
            The jobs taken, possibly fewer than `count` (none when nothing waits or the
            queue is paused).

        Raises:
            InvalidValueError: a `count` that is not a whole number from 1; nothing sent.

        Examples:
            ```python
            for job in await client.queues["emails"].pop_many(10):
                await job.complete()
            ```
        """
        count = rules.check("pop.count", count, "queue.pop")
        worker = worker or self._client.worker_name
        # aqless's own pop (the worker's): the same pop, its jobs with their attempts
        reply = await self._client.protocol.call(
            "rateLimit.pop", self.name, worker, count, DATA_APART
        )
        popped = decoded_apart("rateLimit.pop", reply)["jobs"]
        return [Job(self._client, fields) for fields in popped or []]

    async def pop(self, *, worker: str | None = None) -> Job | None:
        """Take the next job, or None when there is none.

        Args:
            worker: the worker it is locked for (default None: the client's ``worker_name``).

        Examples:
            ```python
            job = await client.queues["emails"].pop()
            if job is not None:
                await job.complete()
            ```
        """
        jobs = await self.pop_many(1, worker=worker)
        return jobs[0] if jobs else None

    async def peek(self, count: int = 1, *, offset: int = 0) -> list[Job]:
        """The jobs a pop would take next, without taking them.

        Args:
            count: how many to look at (default 1).
            offset: how many to skip first (default 0).

        Raises:
            InvalidValueError: a negative `offset` or a `count` outside its rule; nothing
                sent.

        Examples:
            ```python
            upcoming = await client.queues["emails"].peek(5)
            print([job.jid for job in upcoming])
            ```
        """
        offset, count = rules.checked_listing(offset, count, "queue.peek")
        peeked = await self._client.protocol.json("queue.peek", self.name, offset, count)
        return [Job(self._client, fields) for fields in peeked or []]

    # -- looking ------------------------------------------------------------------------------

    async def pause(self, *, stopjobs: bool = False) -> list[str]:
        """Stop handing out jobs (put and peek still work). With `stopjobs`, also time out
        the jobs of the queue that are running (as ``job.timeout()`` does: their workers
        lose them, and they wait at the head of the queue for ``unpause``). Returns the
        jids timed out (none without `stopjobs`).

        Args:
            stopjobs: also time out the running jobs (default False).

        Examples:
            ```python
            queue = client.queues["emails"]
            stopped = await queue.pause(stopjobs=True)
            ...  # e.g. deploy
            await queue.unpause()
            ```
        """
        await self._client.protocol.call("queue.pause", self.name)
        if not stopjobs:
            return []
        jids = [*await self._all_jobs(JobState.RUNNING), *await self._all_jobs(JobState.STALLED)]
        timed_out: set[str] = set()

        async def stop(jid: str) -> None:
            # a job that ended since it was listed is no longer running: nothing to stop
            with suppress(LockLostError, JobNotFoundError):
                await self._client.protocol.call("job.timeout", jid)
                timed_out.add(jid)

        async with anyio.create_task_group() as tasks:  # one round trip for all of them
            for jid in jids:
                tasks.start_soon(stop, jid)
        return [jid for jid in jids if jid in timed_out]

    async def _all_jobs(self, state: JobState, page: int = 1000) -> list[str]:
        jids: list[str] = []
        while True:
            found = await self.jobs(state, offset=len(jids), count=page)
            jids += found
            if len(found) < page:
                return jids

    async def stats(self, date: datetime.date | float | None = None) -> QueueStats:
        """Wait and run times and failure counts for the day of `date`.

        Args:
            date: a day, or a Unix time inside it (default None: today, UTC).

        Examples:
            ```python
            import datetime

            stats = await client.queues["emails"].stats(datetime.date(2026, 12, 7))
            print(stats.failed)
            ```
        """
        if date is None:
            when = self._client.clock()
        elif isinstance(date, datetime.date):
            moment = datetime.datetime(date.year, date.month, date.day, tzinfo=datetime.UTC)
            when = moment.timestamp()
        else:
            when = float(date)
        return QueueStats.from_json(
            await self._client.protocol.json("queue.stats", self.name, when)
        )

    async def scaling(
        self, target_p95: float, *, previous: QueueScaling | None = None
    ) -> QueueScaling:
        """This queue's scaling signals: waiting jobs, the oldest wait, today's wait
        percentiles and mean run time, the throughput, and the worker slots that would keep
        the p95 wait under `target_p95` seconds (an M/M/c model; see the observability
        guide). The throughput covers the time since `previous` (an earlier reading of
        this queue, today), else the day so far.

        Args:
            target_p95: the 95th-percentile wait to keep under, in seconds.
            previous: an earlier reading of this queue, today (default None).

        Examples:
            ```python
            reading = await client.queues["emails"].scaling(30.0)
            later = await client.queues["emails"].scaling(30.0, previous=reading)
            ```
        """
        return await read_scaling(self, self._client.clock(), target_p95, previous)

    async def jobs(self, state: JobState | str, *, offset: int = 0, count: int = 25) -> list[str]:
        """Jids in a state: every `JobState` (waiting: in the order pops take them, without
        taking them; failed: this queue's failed jobs, group by group in name order, most
        recent first in each; complete: every queue's completed jobs), or recurring (this
        queue's recurring jobs' ids).

        Args:
            state: a `JobState` or ``"recurring"``.
            offset: how many to skip first (default 0).
            count: how many at most (default 25).

        Raises:
            InvalidValueError: a negative `offset` or a `count` outside its rule; nothing
                sent.

        Examples:
            ```python
            from aqless import JobState

            failed = await client.queues["emails"].jobs(JobState.FAILED, count=100)
            ```
        """
        offset, count = rules.checked_listing(offset, count, "queue.jobsByState")
        if str(state) == JobState.WAITING:
            return await self._waiting(offset, count)
        if str(state) == JobState.FAILED:
            return await self._failed(offset, count)
        if str(state) == JobState.COMPLETE:
            # `complete` takes no queue name: the completed set is every queue's
            reply = await self._client.protocol.json("queue.jobsByState", "complete", offset, count)
        else:
            reply = await self._client.protocol.json(
                "queue.jobsByState", str(state), self.name, offset, count
            )
        return listed(reply)

    async def _waiting(self, offset: int, count: int) -> list[str]:
        # a peek lists the stalled jobs (expired locks) first, then the work set: skip those
        stalled = (await self.counts()).stalled
        peeked = await self.peek(count, offset=stalled + offset)
        return [job.jid for job in peeked]

    async def _failed(self, offset: int, count: int, budget: int = 500) -> list[str]:
        # failed jobs are kept by failure group, not by queue: the server walks the groups
        # and keeps ours, reading at most `budget` jobs a call and saying where to resume
        found: list[str] = []
        group, start = "", 0
        while len(found) < count:
            reply = await self._client.protocol.json(
                "queue.failedJobs", self.name, offset, count - len(found), group, start, budget
            )
            found += listed(reply["jids"])
            offset -= int(reply["skipped"])
            if reply["group"] is None:
                break
            group, start = str(reply["group"]), int(reply["start"])
        return found

    async def heartbeat(self) -> float:
        """Seconds a lock lasts in this queue (its own setting, else the global one; 60
        when neither is set).

        Examples:
            ```python
            seconds = await client.queues["emails"].heartbeat()
            ```
        """
        own = await self._client.config.get(f"{self.name}-heartbeat")
        value = own if own is not None else await self._client.config.get("heartbeat")
        return float(value if value is not None else 60)

    async def set_heartbeat(self, seconds: float | None) -> None:
        """Set this queue's lock duration; None goes back to the global one.

        Args:
            seconds: how long a lock lasts, in seconds, or None.

        Examples:
            ```python
            await client.queues["video"].set_heartbeat(300)
            ```
        """
        if seconds is None:
            await self._client.config.unset(f"{self.name}-heartbeat")
        else:
            await self._client.config.set(f"{self.name}-heartbeat", seconds)

    @property
    def rate_limit(self) -> AnyRateLimit:
        """This queue's own rate limit (no I/O): ``await queue.rate_limit.get()``."""
        return self._client.rate_limits.of_queue(self.name)

    async def set_rate_limit(
        self, limit: int | None, *, per: float = 1.0, smooth: bool = False
    ) -> None:
        """Start at most `limit` of this queue's jobs in any `per` seconds, across every
        worker, in bursts or, `smooth`, spread evenly (`RateLimit.set`); None lifts the
        limit.

        Args:
            limit: jobs started at most per window, or None.
            per: the window, in seconds (default 1.0).
            smooth: spread the starts evenly over the window (default False: bursts).

        Raises:
            InvalidValueError: a `limit` or `per` outside its rule; nothing sent.

        Examples:
            ```python
            await client.queues["sms"].set_rate_limit(10, per=60)  # 10 a minute
            await client.queues["sms"].set_rate_limit(None)
            ```
        """
        if limit is None:
            await self.rate_limit.delete()
        else:
            await self.rate_limit.set(limit, per=per, smooth=smooth)

    async def unfail(self, group: str, count: int = 25) -> int:
        """Move the oldest `count` failed jobs of `group` into this queue; returns how many.

        Args:
            group: the failure group (see `Jobs.failure_groups`).
            count: how many at most (default 25).

        Raises:
            InvalidValueError: a bad queue name or a `count` outside its rule; nothing sent.

        Examples:
            ```python
            moved = await client.queues["emails"].unfail("emails-SMTPError", count=100)
            ```
        """
        checked_queue(self.name, "queue.unfail")
        count = rules.check("count", count, "queue.unfail")
        return await self._client.protocol.integer("queue.unfail", self.name, group, count)

    # -- fairness groups ----------------------------------------------------------------------

    async def groups(self) -> list[GroupCounts]:
        """This queue's fairness groups (jobs put with ``group=``), in name order: each one's
        jobs waiting and running, weight and concurrency cap. The jobs put without a group
        are the group named None. Empty for a queue that has never had a group.

        Examples:
            ```python
            for group in await client.queues["emails"].groups():
                print(group.name, group.waiting, group.running)
            ```
        """
        reply = await self._client.protocol.json("group.counts", self.name)
        return [GroupCounts.from_json(value) for value in reply or []]

    async def set_group_weight(self, group: str | None, weight: float) -> None:
        """Give `group` (None: the jobs put without one) `weight` turns of the pops for each
        turn of a group of weight 1 (the default).

        Args:
            group: the group's name, or None.
            weight: a positive number.

        Raises:
            InvalidValueError: a bad `group` or a `weight` that is not a positive number;
                nothing sent.

        Examples:
            ```python
            await client.queues["emails"].set_group_weight("tenant-42", 3)
            ```
        """
        weight = rules.check("weight", weight, "group.set")
        await self._client.protocol.call(
            "group.set", self.name, _group_name(group), "weight", weight
        )

    async def set_group_concurrency(self, group: str | None, maximum: int) -> None:
        """Let aqless's pops hand out at most `maximum` jobs of `group` (None: the jobs put
        without one) to run at once; 0 lifts the cap.

        Args:
            group: the group's name, or None.
            maximum: jobs running at once at most, a whole number from 0.

        Raises:
            InvalidValueError: a bad `group` or a `maximum` that is not a whole number from
                0; nothing sent.

        Examples:
            ```python
            await client.queues["emails"].set_group_concurrency("tenant-42", 5)
            ```
        """
        maximum = rules.check("concurrency", maximum, "group.set")
        await self._client.protocol.call(
            "group.set", self.name, _group_name(group), "concurrency", maximum
        )

    async def set_group_rate_limit(
        self, group: str | None, limit: int | None, *, per: float = 1.0
    ) -> None:
        """Let aqless's pops start at most `limit` jobs of `group` (None: the jobs put
        without one) in any window of `per` seconds; None lifts the limit. A group at its
        limit is passed over (its jobs wait; the other groups keep their turns).
        Args:
            group: the group's name, or None.
            limit: jobs started at most per window, a whole number from 1, or None.
            per: the window, in seconds (default 1.0).

        Raises:
            InvalidValueError: a bad `group`, a `limit` that is not a whole number of at
                least 1 (or None) or a `per` that is not a positive number; nothing sent.

        Examples:
            ```python
            await client.queues["emails"].set_group_rate_limit("tenant-42", 100, per=60)
            ```
        """
        name = _group_name(group)
        if limit is None:
            await self._client.protocol.call("group.set", self.name, name, "rate", 0)
            return
        limit, per = rules.check("limit", limit, "group.set"), rules.check("per", per, "group.set")
        await self._client.protocol.call("group.set", self.name, name, "rate", limit, "per", per)


def _group_name(group: str | None) -> str:
    """A group as the script names it ('' for the jobs put without one)."""
    return "" if group is None else checked_group(group, "group.set")


#: What a put hook is given as its queue: a `Queue`, or a sharded deployment's queue.
async def _first(groups: Groups[PreparedPut] | None, trip: asyncio.Future[Any] | None) -> None:
    """Waits for the helper's next group or `trip`'s replies, whichever comes first."""
    waits: list[asyncio.Future[Any]] = [] if trip is None else [trip]
    helped = groups is not None and groups.helping  # (a helper stopped: the trip alone)
    changed = asyncio.ensure_future(groups.changed()) if groups is not None and helped else None
    if changed is not None:
        waits.append(changed)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if changed is not None:
            changed.cancel()


def _retrieved(future: asyncio.Future[Any]) -> None:
    """A round trip left behind by a put_many that failed: its own error is not raised
    (the put_many's is), and not reported as never retrieved."""
    if not future.cancelled():
        future.exception()


def _released(jid: str, requeue: bool) -> str | None:
    """The running job a put ends its worker's hold on: a requeue's (``Job.move``), which
    may be running here (see aqless._worker.pops)."""
    return jid if requeue else None
