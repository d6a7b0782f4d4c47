"""A workflow's children: child jobs started once (``ctx.child``, their jids made from the
workflow's and the child's name: aqless.workflows.children), and the waits for them: all
their results (``ctx.gather``) or the first to end (``ctx.first``, a race), the job parked in
``depends`` until then."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Unpack

from aqless import rules
from aqless._worker.workflow_replay import Replay, kept
from aqless.errors import ChildFailedError, StepNameTakenError, WorkflowError
from aqless.flows.results import ChildrenResults, ChildResult
from aqless.puts import PutOptions
from aqless.queue import Queue
from aqless.sharding.members import is_shard
from aqless.workflows.children import Child, child_jid

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["ChildJobs"]


class ChildJobs(Replay):
    """A workflow context's child jobs (`WorkflowContext`)."""

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


def _result_of(child: Child, outcome: ChildResult) -> Any:
    """`child`'s result from its `outcome`: ChildFailedError when it failed for good."""
    if outcome.failed:
        failure = outcome.failure
        group, message = (failure.group, failure.message) if failure else ("", "")
        raise ChildFailedError(child.name, child.jid, group, message)
    return outcome.value()
