"""Prefetch: a worker pops jobs beyond its free slots and holds them, locked to it and
heartbeated, until a slot frees; a stop hands them back; it never holds more than
concurrency + prefetch jobs, pushed ones included."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

import aqless
from aqless import ConfigurationError, Job, JobState
from aqless.puts import PutRequest
from aqless.scripts.loader import Call
from aqless.worker import SlotBudget
from tests.support.worker import (
    WORKER,
    Gate,
    Recorder,
    all_complete,
    get_job,
    history_of,
    make_worker,
    one,
    running,
    until,
    until_state,
)
from tests.support.worker_processes import WORKER as PROCESS_OPTIONS
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    listed,
    spawn_fixture,  # noqa: F401
)

# Holding, starting and handing back are the worker's own steps, the same on every kind;
# heartbeats of held jobs ride the running jobs' (tested on every kind in test_running).


async def locked_to_worker(client: aqless.Client) -> set[str]:
    return set((await client.workers.jobs(WORKER)).jobs)


async def test_a_held_job_is_heartbeated_past_its_lock_and_starts_when_the_slot_frees(
    client: aqless.Client,
) -> None:
    await client.config.set("q-heartbeat", 1)
    gate = Gate()
    first, second, third = [await client.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(client, ["q"], one(gate), concurrency=1, prefetch=1)
    async with running(worker):
        await until(lambda: gate.entered == [first] and worker.held == [second])
        assert await locked_to_worker(client) == {first, second}
        await anyio.sleep(2.5)  # more than two lock lengths: only heartbeats keep it
        held = await get_job(client, second)
        assert held.state == JobState.RUNNING
        assert held.worker_name == WORKER
        assert worker.held == [second]
        assert (await get_job(client, third)).state == JobState.WAITING
        assert worker.counters.lost == 0
        assert worker.heartbeats.refusals == 0
        gate.open.set()
        await all_complete(client, [first, second, third])
    assert gate.entered == [first, second, third]
    assert gate.most == 1
    assert history_of(await get_job(client, second)) == ["put", "popped", "done"]


async def test_a_stop_hands_the_held_jobs_back_at_once_and_another_worker_takes_them(
    client: aqless.Client, other: aqless.Client
) -> None:
    gate = Gate()
    first, *held = [await client.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(client, ["q"], one(gate), concurrency=1, prefetch=2, grace=30)
    async with running(worker) as run:
        await until(lambda: gate.entered == [first] and worker.held == held)
        worker.stop()
        for jid in held:  # within the running job's grace: the held ones need none
            job = await until_state(client, jid, JobState.WAITING)
            assert job.retries_left == job.original_retries  # it never ran: no retry spent
            assert job.failure is None
            assert job.history[-1].what == "handed-back"
            assert job.history[-1].details["reason"] == "held, never started"
        assert worker.state == "stopping"
        assert await locked_to_worker(client) == {first}
        taken = await other.queues["q"].pop_many(10)
        assert sorted(job.jid for job in taken) == sorted(held)
        gate.open.set()
        counters = await run.stopped()
    assert gate.entered == [first]
    assert (counters.completed, counters.handed_back, counters.started) == (1, 2, 3)


async def test_never_more_jobs_locked_than_concurrency_and_prefetch_pushes_included(
    client: aqless.Client,
) -> None:
    gate = Gate(seconds=0.05)
    worker = make_worker(client, ["q"], one(gate), concurrency=2, prefetch=1)
    most = 0
    jids: list[str] = []

    async def watch() -> None:
        nonlocal most
        while True:
            most = max(most, len(await locked_to_worker(client)))
            await anyio.sleep(0.005)

    async with running(worker), anyio.create_task_group() as watching:
        watching.start_soon(watch)
        await until(lambda: worker.listening)  # idle: its offer stands, puts are pushed
        for _ in range(3):
            for _ in range(4):
                jids.append(await client.queues["q"].put("app.job"))
            await all_complete(client, jids)
            await until(lambda: worker.listening)
        jids += [await client.queues["q"].put("app.job") for _ in range(20)]
        await all_complete(client, jids)
        watching.cancel_scope.cancel()
    # never over (sampled every 5 ms: a loaded machine may miss the moments at three)
    assert 2 <= most <= 3, most
    assert gate.most <= 2
    assert worker.counters.started == len(jids)


async def test_one_slot_drains_with_two_pops_on_their_way_never_past_its_locks(
    client: aqless.Client,
) -> None:
    """A slot that frees while the worker's pop is on its way sends the next pop with its
    outcome at once (two pops on their way, each joined with an outcome), yet the server
    never sees the worker hold more than concurrency + prefetch jobs."""
    recorder = Recorder()
    jids = await client.queues["q"].put_many(PutRequest("app.job") for _ in range(300))
    worker = make_worker(client, ["q"], one(recorder), concurrency=1, prefetch=1, burst=True)
    flying = most_flying = pops = joined = 0
    send = client.protocol._send

    async def counting_send(calls: Sequence[Call]) -> list[Any]:  # the worker's round trips
        nonlocal flying, most_flying, pops, joined
        popping = any(command in ("rateLimit.pop", "queue.popAfter") for command, _ in calls)
        pops += popping
        joined += sum(command == "queue.popAfter" for command, _ in calls)
        flying += popping
        most_flying = max(most_flying, flying)
        try:
            return await send(calls)
        finally:
            flying -= popping

    client.protocol._send = counting_send  # type: ignore[method-assign]
    most = 0

    async def watch() -> None:  # as often as the server answers
        nonlocal most
        while True:
            most = max(most, len(await locked_to_worker(client)))

    async with anyio.create_task_group() as watching:
        watching.start_soon(watch)
        with anyio.fail_after(60):
            counters = await worker.run()
        watching.cancel_scope.cancel()
    assert most_flying == 2
    assert most <= 2, most
    assert sorted(recorder.jids) == sorted(jids)
    assert (counters.started, counters.completed) == (300, 300)
    assert joined >= 250  # nearly every outcome went with a pop, even with two on their way
    assert pops <= 330  # and nearly every pop brought a job: no pops for nothing


async def test_a_paused_worker_keeps_its_held_jobs_and_runs_them(client: aqless.Client) -> None:
    gate = Gate()
    first, second, third = [await client.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(client, ["q"], one(gate), concurrency=1, prefetch=1)
    async with running(worker):
        await until(lambda: worker.held == [second])
        worker.pause()
        gate.open.set()
        await all_complete(client, [first, second])
        await anyio.sleep(0.3)  # past a poll: the paused worker pops nothing more
        assert (await get_job(client, third)).state == JobState.WAITING
        worker.resume_popping()
        await all_complete(client, [third])


async def test_max_jobs_counts_the_held_jobs_and_runs_them(client: aqless.Client) -> None:
    gate = Gate()
    first, second, third = [await client.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(client, ["q"], one(gate), concurrency=1, prefetch=1, max_jobs=2)
    async with running(worker) as run:
        await until(lambda: worker.held == [second])
        gate.open.set()
        counters = await run.stopped()
    assert (counters.started, counters.completed) == (2, 2)
    assert worker.limit_reached == "max_jobs"
    await all_complete(client, [first, second])
    assert (await get_job(client, third)).state == JobState.WAITING


async def test_max_jobs_taken_by_a_pop_ahead_finishes_the_worker(client: aqless.Client) -> None:
    """Short jobs at two slots: the pop sent ahead of the loop's, as a slot frees, may
    bring the last of `max_jobs`; the loop, whose slots count as taken, finishes then
    rather than wait for a slot for ever."""

    async def fine(job: Job) -> None:
        pass

    jids = [await client.queues["q"].put("app.job") for _ in range(5)]
    worker = make_worker(client, ["q"], one(fine), concurrency=2, prefetch=1, max_jobs=3)
    async with running(worker) as run:
        with anyio.fail_after(20):
            counters = await run.stopped()
    assert (counters.started, counters.completed) == (3, 3)
    assert worker.limit_reached == "max_jobs"
    counts = await client.queues["q"].counts()
    assert (counts.waiting, counts.running, len(jids)) == (2, 0, 5)


async def test_burst_runs_every_job_held_or_not(client: aqless.Client) -> None:
    jids = [await client.queues["q"].put("app.job") for _ in range(7)]
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.jid)

    worker = make_worker(client, ["q"], one(record), concurrency=1, prefetch=2, burst=True)
    counters = await worker.run()
    assert seen == jids
    assert (counters.started, counters.completed) == (7, 7)


async def test_a_held_job_taken_away_is_dropped_and_never_started(client: aqless.Client) -> None:
    gate = Gate()
    first, second = [await client.queues["q"].put("app.job") for _ in range(2)]
    worker = make_worker(client, ["q"], one(gate), concurrency=1, prefetch=1)
    async with running(worker):
        await until(lambda: worker.held == [second])
        await (await get_job(client, second)).cancel()
        await until(lambda: not worker.held and second not in worker.running)
        assert worker.counters.lost == 1
        gate.open.set()
        await all_complete(client, [first])
    assert gate.entered == [first]


@pytest.mark.deployments("valkey9", reason="argument checks: no server call")
async def test_bad_prefetch_is_refused_by_its_rule(client: aqless.Client) -> None:
    for prefetch in (-1, 1.5):
        with pytest.raises(
            aqless.InvalidValueError, match="prefetch must be a whole number from 0"
        ):
            make_worker(client, ["q"], prefetch=prefetch)
    with pytest.raises(ConfigurationError, match="budget"):
        make_worker(client, ["q"], prefetch=1, budget=SlotBudget(4))


@pytest.mark.timeout(60)
@pytest.mark.deployments("valkey9", reason="the command line: the same whatever the server")
@pytest.mark.parametrize("how", ["option", "environment"])
async def test_aqless_run_prefetch_holds_the_next_job_while_one_runs(
    aq: aqless.Client, spawn: Spawner, how: str
) -> None:
    await aq.redis.set("sleep", 2.5)  # the sleepers' seconds, read as each starts
    jids = [await aq.queues["q"].put("aqjobs.sleeper") for _ in range(3)]
    options = ["--prefetch", "1"] if how == "option" else []
    environment = {"AQLESS_PREFETCH": "1"} if how == "environment" else {}
    worker = spawn(*PROCESS_OPTIONS, "-n", "pf", "-c", "1", *options, "q", env=environment)
    await worker.logged("with 1 slots, prefetch 1")
    await count_reaches(aq, "started", 1)

    async def two_locked() -> bool:
        return set((await aq.workers.jobs("pf")).jobs) == set(jids[:2])

    await eventually(two_locked, 5, "the next job held")
    await anyio.sleep(1.5)  # past the 1 s lock: the held job's lock is renewed
    assert await two_locked()
    assert await listed(aq, "started") == jids[:1]
    await aq.redis.set("sleep", 0)
    await count_reaches(aq, "done", 3)
    assert await listed(aq, "started") == jids
    assert "lost" not in worker.log()


async def drain_started(aq: aqless.Client, spawn: Spawner, name: str) -> list[str]:
    """A one-slot worker with prefetch 1 draining 200 short sleepers, a fifth of them run."""
    await aq.redis.set("sleep", 0.002)
    requests = [PutRequest("aqjobs.sleeper") for _ in range(200)]
    jids = await aq.queues["q"].put_many(requests)
    spawn(*PROCESS_OPTIONS, "-n", name, "-c", "1", "--prefetch", "1", "--grace", "5", "q")
    await count_reaches(aq, "done", 40)
    return jids


async def drained_by_another(aq: aqless.Client, spawn: Spawner, jids: list[str]) -> None:
    """Another worker runs what is left: every job completes, and none is lost."""
    await aq.redis.set("sleep", 0)
    spawn(*PROCESS_OPTIONS, "-n", "other", "-c", "10", "q")
    await eventually(lambda: _states_are(aq, jids, {"complete": len(jids)}), 30, "all complete")
    assert set(await listed(aq, "done")) == set(jids)


async def _states_are(aq: aqless.Client, jids: list[str], expected: dict[str, int]) -> bool:
    found = await aq.jobs.get_many(jids)
    return Counter(str(job.state) for job in found) == expected


@pytest.mark.timeout(90)
@pytest.mark.deployments("valkey9", reason="worker processes: the same whatever the server")
async def test_sigterm_in_the_middle_of_a_pipelined_drain_hands_back_and_loses_none(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jids = await drain_started(aq, spawn, "pf")
    worker = spawn.started[0]
    worker.send(signal.SIGTERM)
    assert await worker.exited(timeout=10) == 0
    assert (await aq.workers.jobs("pf")).jobs == ()  # the held and the popped: handed back
    found = await aq.jobs.get_many(jids)
    assert {str(job.state) for job in found} <= {"complete", "waiting"}
    done = Counter(await listed(aq, "done"))
    assert max(done.values()) == 1  # nothing ran twice
    for job in found:
        if str(job.state) == "waiting":  # never run, or handed back: no retry spent
            assert job.retries_left == job.original_retries
            assert "timed-out" not in [entry.what for entry in job.history]
    await drained_by_another(aq, spawn, jids)
    assert max(Counter(await listed(aq, "done")).values()) == 1


@pytest.mark.timeout(90)
@pytest.mark.deployments("valkey9", reason="worker processes: the same whatever the server")
async def test_sigkill_in_the_middle_of_a_pipelined_drain_leaves_two_locks_at_most(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jids = await drain_started(aq, spawn, "pf")
    worker = spawn.started[0]
    worker.send(signal.SIGKILL)
    assert await worker.exited() == -signal.SIGKILL
    # what the dead worker held: its running job and the one popped ahead, whose locks expire
    assert len((await aq.workers.jobs("pf")).jobs) <= 2
    await drained_by_another(aq, spawn, jids)
    done = Counter(await listed(aq, "done"))
    assert sum(done.values()) - len(done) <= 1  # only the job running when it was killed
