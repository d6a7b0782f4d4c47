"""The context a workflow's code is given (``ctx``), and the job function that runs it.

A workflow is an async function of a `WorkflowContext`, registered with
``@handlers.workflow``. Every attempt runs it from the top; what the record in the job's data
(aqless.workflows.record) holds is replayed instead of done again:

- ``await ctx.step(name, fn, *args)``: runs ``fn`` and stores its result with the job (one
  call of the script, which renews the lock too) before returning it; a later attempt gets
  the stored result and ``fn`` does not run. A step that raised is retried by its own
  `RetryPolicy` (a durable sleep, spending no job retry), else the exception ends the run.
- ``await ctx.sleep(seconds)``, ``await ctx.sleep_until(when)``: the job is parked as
  scheduled until then, spending no retry and holding no worker slot.
- ``await ctx.wait_for(signal, timeout=)``: takes a signal sent to the job (before or after
  the wait is reached), else parks the job until one comes or the timeout passes
  (SignalTimeoutError).
- ``ctx.now()``, ``ctx.uuid()``, ``ctx.random()``: recorded on the first run, replayed after;
  ``ctx.version(change_id)``: which code a workflow started under takes at a change.
- ``await ctx.child(klass, data, queue=)``, ``await ctx.gather(*children)``: starts child
  jobs (each once, its jid made from the workflow's and the child's name) and parks the job
  in ``depends`` until they are done, then returns their results (ChildFailedError for one
  that failed for good).
- ``ctx.step(..., undo=fn)``: a run that raises after such steps runs their undos, newest
  first, each once, and fails the job for good (a saga).
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from aqless import rules
from aqless._worker.workflow_replay import Parked, Replay, kept
from aqless._worker.workflow_steps import Steps
from aqless._worker.workflow_waits import Waits
from aqless.errors import (
    ChildFailedError,
    ConnectionLostError,
    LockLostError,
    StepNameTakenError,
    WorkflowError,
)
from aqless.flows.results import ChildrenResults, ChildResult
from aqless.puts import PutOptions
from aqless.queue import Queue
from aqless.sharding.members import is_shard
from aqless.workflows.children import Child, child_jid

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["Parked", "WorkflowContext", "WorkflowFunction", "run_workflow"]

T = TypeVar("T")

#: A workflow's code: an async function of its context.
WorkflowFunction = Callable[["WorkflowContext"], Awaitable[Any]]


class WorkflowContext(Waits, Steps, Replay):
    """What a workflow's code is given (``ctx``): one per run of the job, made by the
    worker, never by the workflow's code.

    Attributes:
        job: the job (its `attempt` fences every write of the record).
        data: the job's data without the workflow's record.

    Raises:
        WorkflowError: the job's data is not a JSON object (the run ends; the job's
            policies decide, as for any exception).

    Examples:
        ```python
        @handlers.workflow("shop.Order")
        async def order(ctx: aqless.WorkflowContext) -> str:
            receipt = await ctx.step("charge", charge, ctx.data["amount"])
            approval = await ctx.wait_for("approval", timeout=3600)
            return f"{receipt} approved by {approval['by']}"
        ```
    """

    def __init__(self, job: Job) -> None:
        if not isinstance(job.data, dict):
            raise WorkflowError(f"job {job.jid}: a workflow's data must be a JSON object")
        super().__init__(job)

    # -- children -------------------------------------------------------------------------

    async def child(
        self,
        klass: type | Callable[[Job], Any] | str,
        data: Any = None,
        *,
        queue: str,
        name: str | None = None,
        **options: Unpack[PutOptions],
    ) -> Child:
        """Start a child job: put into `queue` as ``queue.put(klass, data, **options)`` puts
        (the client's codec and put hooks apply), once: its jid is made from the workflow's
        jid and `name`, and a later run (after a crash too) finds it started and puts
        nothing. It runs as any job; `gather` waits for its result. It lives on the
        workflow's server (on a sharded deployment, the workflow's shard, whatever its
        queue's pin: it waits there as the workflow's dependency).

        Args:
            klass: the child's class, as `Queue.put` takes it.
            data: its data (default None).
            queue: the queue it is put into.
            name: its name in the workflow's record, unique within a run (default: its
                number among this run's children, ``"1"``, ``"2"``...).
            **options: put's options (`aqless.PutOptions`) but ``jid``, ``replace`` and
                ``dedup``, which the workflow decides.

        Returns:
            The `Child` (its name and jid), for `gather`.

        Raises:
            StepNameTakenError: `name` was a child's already in this run (nothing put).
            WorkflowError: ``jid``, ``replace`` or ``dedup`` among `options` (nothing put).
            InvalidValueError: `name` is not a valid name, or the put refused, as
                `Queue.put` refuses (nothing put).

        Examples:
            ```python
            a = await ctx.child("shop.Pack", {"item": 1}, queue="packing")
            b = await ctx.child("shop.Pack", {"item": 2}, queue="packing", priority=5)
            boxes = await ctx.gather(a, b)
            ```
        """
        command = "workflow.child"
        taken = {"jid", "replace", "dedup"} & set(options)
        if taken:
            raise WorkflowError(f"a workflow's child takes no {', '.join(sorted(taken))}")
        self._children += 1
        name = str(self._children) if name is None else name
        rules.check("step", name, command)
        if name in self._named:
            raise StepNameTakenError(f"child {name!r} was started already in this run")
        self._named.add(name)
        started: dict[str, Any] = self._record.setdefault("children", {})
        kept = started.get(name)
        if isinstance(kept, dict) and "jid" in kept:  # stored: its put had landed before
            self._occur(f"child:{name}")
            return Child(name, str(kept["jid"]))
        self._forward()
        jid = child_jid(self.job.jid, name, sharded=is_shard(self.job.client))
        # replace=False: a replay after a crash finds the job (running, or done) and
        # leaves it as it is
        once: PutOptions = {**options, "jid": jid, "replace": False}
        await Queue(self.job.client, queue).put(klass, data, **once)
        started[name] = {"jid": jid, "queue": queue}  # stored with the next write
        self._occur(f"child:{name}")
        return Child(name, jid)

    async def gather(self, *children: Child) -> list[Any]:
        """The children's results, in the order given: at once when they are all done,
        else the job parks (in ``depends``, holding no worker slot) until they are, and a
        later run returns them. Recorded: a replay returns the same results.

        Args:
            *children: what `child` returned (at least one).

        Raises:
            ChildFailedError: a child failed for good (the first in the order given); the
                run ends unless the code catches it, and a saga compensates its steps.
            JobGoneError: a child no longer exists (cancelled, or expired unread).
            ResultDroppedError: a child's result was not kept.
            WorkflowError: no child given, or one given twice.

        Examples:
            ```python
            parts = [
                await ctx.child("shop.Price", {"item": item}, queue="pricing", name=f"item-{item}")
                for item in ctx.data["items"]
            ]
            total = sum(await ctx.gather(*parts))
            ```
        """
        key, jids, gathered, done = self._children_awaited("gather", children, "results")
        if done is not None:
            return list(done["results"])
        marker = {"kind": "children", "until": None, "children": jids}
        reply = await self._awaiting("job.awaitChildren", marker, json.dumps(jids))
        outcomes = ChildrenResults.from_json(json.loads(reply), self.job.client.codec)
        by_jid = {outcome.jid: outcome for outcome in outcomes}  # earlier gathers' too
        results = [_result_of(child, by_jid[child.jid]) for child in children]
        kept(results, f"the results of gather {key}", "workflow.gather")
        gathered[key] = {"jids": jids, "results": results}  # stored with the next write
        return results

    async def first(self, *children: Child, cancel: bool = False) -> tuple[Child, Any]:
        """The first of the children to end, and its result (a race): at once when one has
        ended (the first such in the order given), else the job parks (in ``depends``,
        holding no worker slot) until one does. The winner is kept, by the server at the
        moment it ends and in the record: a replay returns the same winner and result,
        whatever the others did since.

        The losers are left running (default): they stay the workflow's children, a later
        `gather` or `first` reads them, and a cancel of the workflow removes them. With
        `cancel`, each loser that has yet to end is cancelled when the race is decided (one
        that runs is stopped as a cancelled job is); one whose cancel would be refused
        (another job depends on it, or it started children of its own that run) is left.

        Args:
            *children: what `child` returned (at least one).
            cancel: cancel the losers (default False: leave them running).

        Returns:
            The winner and its result.

        Raises:
            ChildFailedError: the winner failed for good (the first to end did, by failing);
                its losers are cancelled all the same with `cancel`.
            JobGoneError: the winner no longer exists (cancelled, or expired unread).
            ResultDroppedError: the winner's result was not kept.
            InvalidValueError: the winner's result is over ``rules.STEP_RESULT_MAX`` bytes
                of JSON (``workflow.result_bytes``).
            WorkflowError: no child given, or one given twice.

        Examples:
            ```python
            fast = await ctx.child("quotes.Ask", {"to": "acme"}, queue="quotes", name="acme")
            slow = await ctx.child("quotes.Ask", {"to": "bolt"}, queue="quotes", name="bolt")
            winner, quote = await ctx.first(fast, slow, cancel=True)
            ```
        """
        key, jids, raced, done = self._children_awaited("first", children, "winner")
        if done is not None:
            winner = next(child for child in children if child.jid == done["winner"])
            if "failure" in done:
                failure = done["failure"]
                raise ChildFailedError(
                    winner.name, winner.jid, failure["group"], failure["message"]
                )
            return winner, done["result"]
        marker = {"kind": "children", "until": None, "children": jids, "first": True}
        losers = "cancel" if cancel else ""
        reply = await self._awaiting("job.awaitFirst", marker, key, json.dumps(jids), losers)
        [outcome] = ChildrenResults.from_json(json.loads(reply), self.job.client.codec)
        winner = next(child for child in children if child.jid == outcome.jid)
        try:
            result = _result_of(winner, outcome)
        except ChildFailedError as failed:  # kept too: a replay raises it without a call
            failure = {"group": failed.group, "message": failed.message}
            raced[key] = {"jids": jids, "winner": winner.jid, "failure": failure}
            raise
        kept(result, f"the result of first {key}", "workflow.first")
        raced[key] = {"jids": jids, "winner": winner.jid, "result": result}  # with the next write
        return winner, result

    def _children_awaited(
        self, verb: str, children: tuple[Child, ...], decided: str
    ) -> tuple[str, list[str], dict[str, Any], dict[str, Any] | None]:
        """The key of this run's next `verb` (gather, first) of `children`, their jids, the
        record's entries of that verb, and the one of that key when it is kept and holds
        `decided` (else None: the run goes forward to it)."""
        jids = [child.jid for child in children]
        if not jids or len(set(jids)) != len(jids):
            raise WorkflowError(f"{verb} takes one or more children, each once")
        key = str(self._awaited.setdefault(verb, 0) + 1)
        self._awaited[verb] += 1
        entries: dict[str, Any] = self._record.setdefault(f"{verb}s", {})
        done = entries.get(key)
        if isinstance(done, dict) and done.get("jids") == jids and decided in done:
            self._occur(f"{verb}:{key}")
            return key, jids, entries, done
        self._forward()
        self._occur(f"{verb}:{key}")
        return key, jids, entries, None

    # -- deterministic values -------------------------------------------------------------

    def now(self) -> float:
        """The time (epoch seconds, the server's clock) as the first run read it here.

        Examples:
            ```python
            started = ctx.now()  # the same on every run of this workflow
            ```
        """
        return float(self._value("now", self._clock))

    def uuid(self) -> str:
        """A random UUID (32 hex digits), the same on every run.

        Examples:
            ```python
            key = ctx.uuid()  # an idempotency key for a step's call, stable over retries
            await ctx.step("charge", charge, ctx.data["amount"], key)
            ```
        """
        return str(self._value("uuid", lambda: uuid.uuid4().hex))

    def random(self) -> float:
        """A random number in [0, 1), the same on every run (not for secrets).

        Examples:
            ```python
            if ctx.random() < 0.1:  # one order in ten, decided once
                await ctx.step("audit", audit, ctx.data["order"])
            ```
        """
        return float(self._value("random", random.random))  # not for secrets

    def version(self, change_id: str, *, latest: int = 1) -> int:
        """Which side of a code change a workflow takes: `latest` for a workflow that reached
        this point under the new code (new ones), 0 for one whose earlier runs went past this
        point before the change (it goes on the old way). Recorded: stable over its runs.

        Args:
            change_id: the change's name, the same in every version of the code.
            latest: the newest version at this point (default 1, at least 1).

        Raises:
            InvalidValueError: `change_id` is not a valid name, or `latest` is not a whole
                number from 1.

        Examples:
            ```python
            if ctx.version("fraud-check") >= 1:  # workflows started under the new code
                await ctx.step("fraud", check_fraud, ctx.data["order"])
            ```
        """
        rules.check("change_id", change_id, "workflow.version")
        rules.check("workflow.latest", latest, "workflow.version")
        versions: dict[str, Any] = self._record.setdefault("versions", {})
        if change_id not in versions:
            versions[change_id] = 0 if self._position < self._recorded else latest
        return int(versions[change_id])

    def _value(self, kind: str, make: Callable[[], Any]) -> Any:
        values: list[Any] = self._record.setdefault("values", {}).setdefault(kind, [])
        index = self._used[kind] = self._used.get(kind, 0) + 1
        if index > len(values):
            values.append(make())  # stored with the next write, before anything it decides
        return values[index - 1]


def _result_of(child: Child, outcome: ChildResult) -> Any:
    """`child`'s result from its `outcome`: ChildFailedError when it failed for good."""
    if outcome.failed:
        failure = outcome.failure
        group, message = (failure.group, failure.message) if failure else ("", "")
        raise ChildFailedError(child.name, child.jid, group, message)
    return outcome.value()


def run_workflow(function: WorkflowFunction) -> Callable[[Job], Awaitable[Any]]:
    """The job function of the workflow `function`: runs it with a fresh context; its
    return value is the job's result. A run that parked returns with the job no longer the
    worker's (the worker sends nothing). A run that raised after steps with an `undo`
    compensates them and fails the job for good (a saga); without one, or for a lost
    connection or lock, the exception is the job's outcome, as any job's."""

    async def run(job: Job) -> Any:
        ctx = WorkflowContext(job)
        try:
            return await function(ctx)
        except Parked:
            return None
        except Exception as error:
            if not ctx.compensable or isinstance(error, ConnectionLostError | LockLostError):
                raise  # a lost connection or lock is no failure of the workflow's
            await ctx.compensate(error)  # the undos have no retry policy: they never park
            return None

    run.__name__, run.__qualname__ = function.__name__, function.__qualname__
    run.__module__ = function.__module__
    return run
