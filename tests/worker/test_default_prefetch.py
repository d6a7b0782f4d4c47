"""The default prefetch (aqless._worker.holding): a one-slot worker left at ``prefetch=None``
holds jobs while its runs are short and its queue has more, popping two a call, holds none
once they are long, and hands back every job held past its bound. The rule's looks are
driven by the tests (its own tick is set out of reach), so what is asserted is the worker's
decisions, not timings."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

import aqless
from aqless import Job, JobState
from aqless._worker.holding import AUTO_SLOTS, HOLD, SHORT_RUNS, HoldRule, holds
from aqless._worker.popping import PAIR
from aqless.puts import PutRequest
from aqless.scripts.loader import Call
from aqless.worker import SlotBudget, Worker
from tests.support.worker import (
    WORKER,
    Gate,
    Recorder,
    all_complete,
    get_job,
    make_worker,
    one,
    running,
    until,
    until_state,
)

NEVER = 3600.0  # the rule's own tick, out of reach: the tests make its looks
POPS = ("rateLimit.pop", "queue.popAfter", "jobs.outcomes")  # the worker's calls that pop


class GateAt:
    """Job code that returns at once, but for the job number `at` (from 1), which waits
    until the test opens the gate."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.entered: list[str] = []
        self.attempts: list[tuple[str, int | None]] = []
        self.open = anyio.Event()

    async def __call__(self, job: Job) -> None:
        self.entered.append(job.jid)
        self.attempts.append((job.jid, job.attempt))
        if len(self.entered) == self.at:
            await self.open.wait()


def driven(worker: Worker) -> HoldRule:
    rule = worker.hold_rule
    assert rule is not None
    rule.tick = NEVER
    return rule


@pytest.mark.deployments("valkey9", reason="the decision alone: no server call")
async def test_the_decision_holds_only_for_short_runs_and_a_full_queue() -> None:
    assert holds(SHORT_RUNS, 1, more=True) == HOLD == 3
    assert holds(SHORT_RUNS - 1, 1, more=True) == 0  # runs longer than a fifth of a tick
    assert holds(100, 1, more=False) == 0  # the last pop came back short
    assert holds(0, 1, more=True) == 0


@pytest.mark.deployments("valkey9", reason="construction only: no server call")
async def test_only_a_worker_of_few_own_slots_left_at_the_default_decides(
    client: aqless.Client,
) -> None:
    assert make_worker(client, ["q"], concurrency=AUTO_SLOTS).hold_rule is not None
    assert make_worker(client, ["q"], concurrency=AUTO_SLOTS).prefetching == 0  # until seen
    assert make_worker(client, ["q"], concurrency=AUTO_SLOTS + 1).hold_rule is None
    assert make_worker(client, ["q"], concurrency=AUTO_SLOTS + 1).prefetch == 0
    assert make_worker(client, ["q"], concurrency=1, prefetch=0).hold_rule is None
    assert make_worker(client, ["q"], concurrency=1, prefetch=0).prefetching == 0
    assert make_worker(client, ["q"], concurrency=1, prefetch=2).hold_rule is None
    assert make_worker(client, ["q"], concurrency=1, prefetch=2).prefetching == 2
    shared = make_worker(client, ["q"], concurrency=1, budget=SlotBudget(4))  # no error
    assert shared.hold_rule is None
    assert shared.prefetch == 0


@dataclass
class Holding:
    """A default one-slot worker running the job that waits at the gate, after `SHORT_RUNS`
    and more short ones: `jids` the jobs put, `held` the ones it holds (one pop's)."""

    worker: Worker
    rule: HoldRule
    gate: GateAt
    jids: list[str]

    @property
    def held(self) -> list[str]:
        first = len(self.gate.entered)
        return self.jids[first : first + PAIR]


@asynccontextmanager
async def holding(client: aqless.Client, after: int) -> AsyncIterator[Holding]:
    """`Holding`, once the worker's first look decided to hold a job and it holds it; `after`
    jobs are put behind the held one."""
    at = SHORT_RUNS + 5
    jids = [await client.queues["q"].put("app.job") for _ in range(at + 1 + after)]
    gate = GateAt(at)
    worker = make_worker(client, ["q"], one(gate), concurrency=1)
    rule = driven(worker)
    async with running(worker):
        await until(lambda: len(gate.entered) == at)  # the long run: the gate's job
        assert worker.prefetching == 0  # nothing seen yet
        assert worker.held == []
        rule.look()  # short runs since the rule woke, and the pops came back full
        assert worker.prefetching == HOLD
        state = Holding(worker, rule, gate, jids)
        # one pop of two, the slot busy: no pop of one follows while jobs are in hand
        await until(lambda: worker.held == state.held)
        yield state


async def test_the_default_holds_jobs_while_runs_are_short_and_hands_each_back_when_long(
    client: aqless.Client,
) -> None:
    async with holding(client, after=9) as state:
        worker, rule, held = state.worker, state.rule, state.held
        assert set(held) <= set((await client.workers.jobs(WORKER)).jobs)  # locked to it
        await anyio.sleep(0.05)
        assert worker.held == held  # one pop of two: the slot is busy, no pop follows
        rule.look()  # two jobs taken since (the held ones): runs are long now
        assert worker.prefetching == 0
        assert worker.held == held  # held for one look
        rule.look()  # held at two looks in a row: each has waited a tick, each goes back
        assert worker.held == []
        for jid in held:
            job = await until_state(client, jid, JobState.WAITING)
            assert job.history[-1].what == "handed-back"
            assert job.history[-1].details["reason"] == "held too long, never started"
            assert job.retries_left == job.original_retries
        assert worker.counters.handed_back == len(held) == PAIR
        state.gate.open.set()
        await all_complete(client, state.jids)
    assert sorted(state.gate.entered) == sorted(state.jids)  # the handed-back one ran later
    assert len(state.gate.entered) == len(state.jids)


async def test_a_pop_that_comes_back_short_stops_the_holding(client: aqless.Client) -> None:
    async with holding(client, after=0) as state:
        state.gate.open.set()
        await all_complete(client, state.jids)
        await until(lambda: state.worker.listening)  # no job left: its pop came back short
        assert state.worker.prefetching == 0


async def test_a_held_job_whose_lock_is_lost_never_runs(client: aqless.Client) -> None:
    async with holding(client, after=0) as state:
        held = state.held[0]
        lost_attempt = (await get_job(client, held)).attempt
        await (await get_job(client, held)).timeout()  # its lock lapses: any worker may pop it
        await until(lambda: state.worker.counters.lost == 1)  # dropped (may be popped again)
        state.gate.open.set()
        await all_complete(client, state.jids)  # popped again, as a new attempt
    assert (held, lost_attempt) not in state.gate.attempts
    assert [jid for jid, _ in state.gate.attempts].count(held) == 1


async def test_a_default_one_slot_drain_pops_two_jobs_a_call_within_its_locks(
    client: aqless.Client,
) -> None:
    """While its runs are short the worker pops two jobs a call, each call carrying the
    outcomes of the jobs before, yet the server never sees it hold more than its slot and
    `HOLD` jobs."""
    recorder = Recorder()
    jids = await client.queues["q"].put_many(PutRequest("app.job") for _ in range(400))
    worker = make_worker(client, ["q"], one(recorder), concurrency=1, burst=True)
    asked: Counter[int] = Counter()  # the worker's pops, by the jobs each asked for
    send = client.protocol._send

    async def counting_send(calls: Sequence[Call]) -> list[Any]:
        for command, arguments in calls:
            # (jobs.outcomes without a pop has no queue)
            if command in POPS and arguments[1] != "":
                asked[int(arguments[3])] += 1
        return await send(calls)

    client.protocol._send = counting_send  # type: ignore[method-assign]
    most = 0

    async def watch() -> None:  # as often as the server answers
        nonlocal most
        while True:
            most = max(most, len((await client.workers.jobs(WORKER)).jobs))

    async with anyio.create_task_group() as watching:
        watching.start_soon(watch)
        with anyio.fail_after(60):
            counters = await worker.run()
        watching.cancel_scope.cancel()
    assert sorted(recorder.jids) == sorted(jids)
    assert (counters.started, counters.completed) == (400, 400)
    assert most <= 1 + HOLD, most
    assert PAIR * asked[PAIR] >= 300, asked  # most jobs came two a call


async def test_a_worker_of_many_slots_pops_whatever_is_free_not_pairs(
    client: aqless.Client,
) -> None:
    """Only the default one-slot worker waits for two free places before it pops: a worker
    of eight slots (a pop asks for two at most) with one slot free pops one job at once."""
    gate, recorder = Gate(), Recorder()
    handlers = aqless.Handlers()
    handlers.register("app.gated")(gate)
    handlers.register("app.quick")(recorder)
    worker = make_worker(client, ["q"], handlers, concurrency=8, burst=True)
    gated = [await client.queues["q"].put("app.gated") for _ in range(7)]
    async with running(worker):
        await until(lambda: len(gate.entered) == 7)  # seven slots busy, one free
        quick = await client.queues["q"].put("app.quick")
        await until(lambda: recorder.jids == [quick])  # ran while the seven wait
        assert gate.inside == 7
        gate.open.set()
        await all_complete(client, [*gated, quick])
