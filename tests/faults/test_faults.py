"""Issue 7's fault suite, CI-sized (marker ``faults``): real ``aqless-run`` processes drain jobs
while workers are SIGKILLed, the server restarts, connections are killed, and jobs hang,
leak, crash their process or block the loop. Nothing may be lost; duplicates are counted,
printed, and allowed only where a fault makes them possible. The long version is
``test_faults_long.py`` (``nox -s faults_long``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
import redis.asyncio as aioredis

import aqless
from tests.faults.harness import (
    QUEUE,
    Killer,
    OwnServer,
    Report,
    account,
    all_complete,
    drained,
    own_server,
    prepare,
    put_jobs,
    safely,
    workers,
)
from tests.support.worker_processes import Spawner, WorkerProcess, eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

#: A worker of the suite: 10 jobs at once, polling every second, failing jobs retried.
WORKER = ("-i", "faultjobs", "-c", "10", "--interval", "1", "--backoff", "0.2", QUEUE)


def check(report: Report, *, duplicates_at_most: int) -> None:
    print(f"\n{report}")  # noqa: T201  # the suite's figures, shown with -s or on failure
    assert report.lost == [], f"{len(report.lost)} jobs lost: {report.lost[:10]}"
    assert report.violations == []
    assert report.strangers == 0
    assert report.duplicates <= duplicates_at_most, report


KILLS = 8  # the workers the random-kill test kills, one each tenth of the jobs


async def test_sigkill_random_workers_while_1500_jobs_drain(tmp_path: Path) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client)
            # a job's lock lost to a kill spends one of its retries, and a job can be held by
            # every worker killed in turn (re-popped by the next one to die): retries past
            # the most kills keep the jobs, which are what this test counts
            jids = await put_jobs(client, 1_500, sleep=0.2, retries=KILLS + 1)  # ~150/s: ~10 s
            killer = Killer(spawn, client, WORKER)
            killer.start(3)
            async with anyio.create_task_group() as group:
                await killer.kill_during(group, len(jids), KILLS)
                assert await completed_count(client) < len(jids), "drained before the kills"
                await drained(client, len(jids), timeout=60, jids=jids, spawned=spawn.started)
            report = await account(client, server.url, jids)
            report.faults, report.recoveries = killer.kills, killer.recoveries
            # only the jobs running in a killed worker (10 slots) may have run twice
            check(report, duplicates_at_most=10 * killer.kills)
            assert max(report.recoveries) < 15


async def completed_count(client: aqless.Client) -> int:
    return int(await client.redis.zcard("ql:completed"))


RESTARTS = [
    pytest.param("everysec", "kill", id="everysec-SIGKILL"),
    pytest.param("always", "kill", id="always-SIGKILL"),
    pytest.param("everysec", "shutdown", id="everysec-SHUTDOWN"),
]


@pytest.mark.parametrize(("appendfsync", "how"), RESTARTS)
async def test_the_server_restarted_mid_drain_loses_nothing_acknowledged(
    tmp_path: Path, appendfsync: str, how: str
) -> None:
    with own_server(appendfsync) as server, workers(server.url, tmp_path) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client, heartbeat=10)
            # 300 complete before the restart, 500 after: the drain after it is not the point
            jids = await put_jobs(client, 800, sleep=0.02)
            for _ in range(2):
                spawn(*WORKER)
            await eventually(lambda: _at_least(client, 300), 30, "300 jobs complete")
            acknowledged = await completed_count(client)
            # the completions counted are in memory; under `everysec` the last second of
            # them may not be on disk yet. A write of ours made after the count and fsynced
            # (WAITAOF) puts every earlier write on disk too: the AOF is synced in order.
            await client.redis.set("faults:counted", acknowledged)
            await client.redis.execute_command("WAITAOF", 1, 0, 10_000)
            restart(server, how)
            back = time.monotonic()
            # every completion the server acknowledged before it went down is still there
            assert await count_when_back(client) >= acknowledged
            await eventually(lambda: _at_least(client, acknowledged + 50), 30, "progress")
            recovery = time.monotonic() - back
            await drained(client, len(jids), timeout=60)
            report = await account(client, server.url, jids)
            report.faults, report.recoveries = 1, [recovery]
            # a side effect whose reply was lost with the connection may be written twice
            check(report, duplicates_at_most=2 * 10)
            assert recovery < 10


async def count_when_back(client: aqless.Client) -> int:
    """The completed count, once the client has reconnected."""
    while (count := await safely(completed_count(client), -1)) < 0:  # noqa: ASYNC110
        await anyio.sleep(0.05)
    return count


def restart(server: OwnServer, how: str) -> None:
    server.kill() if how == "kill" else server.shutdown()
    time.sleep(0.5)  # the workers find the server gone
    server.start()


async def _at_least(client: aqless.Client, count: int) -> bool:
    return await safely(completed_count(client), -1) >= count


async def test_client_kill_storms_lose_nothing_and_event_streams_come_back(
    tmp_path: Path,
) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        killer = aioredis.Redis.from_url(server.url, decode_responses=True)
        async with aqless.Client(server.url) as client:
            await prepare(client)
            jids = await put_jobs(client, 2_000, sleep=0.1)  # ~7 s: outlasts the storm
            for _ in range(3):
                spawn(*WORKER)
            kills = 0
            async with client.events("log") as events:
                for storm in range(24):  # ~6 s: connections of both kinds, every 0.25 s
                    kind = "pubsub" if storm % 2 else "normal"
                    kills += int(await killer.client_kill_filter(_type=kind, skipme=True))
                    await anyio.sleep(0.25)
                kinds: list[str] = []
                with anyio.move_on_after(10):
                    async for event in events:
                        kinds.append(event.kind)
                        if (
                            "reconnected" in kinds
                            and "completed" in kinds[kinds.index("reconnected") :]
                        ):
                            break
            assert "reconnected" in kinds, "the test's own stream was killed too"
            await drained(client, len(jids), timeout=60)
            report = await account(client, server.url, jids)
            report.faults = kills
            # a killed connection may lose the reply of a side effect redis-py then resends
            check(report, duplicates_at_most=kills)
            assert kills >= 24 * 2
        await killer.aclose()


async def test_a_hanging_job_times_out_and_the_others_go_on(tmp_path: Path) -> None:
    async with pathological(tmp_path) as scene:
        hang = await scene.client.queues[QUEUE].put("faultjobs.hang", {}, retries=0)
        scene.start(*WORKER)
        await scene.finish(duplicates_at_most=0)
        await eventually(lambda: failed(scene.client, hang), 10, "the hanging job failed")
        hung = await job(scene.client, hang)
        assert hung.failure is not None
        # timed out after 1 s, then (the suite's workers back off) retried with none left
        assert hung.failure.group == f"failed-retries-{QUEUE}"
        assert "past its timeout of 1 s" in hung.failure.message


async def test_a_leaking_worker_is_recycled_and_loses_nothing(tmp_path: Path) -> None:
    async with pathological(tmp_path) as scene:
        for _ in range(6):
            scene.jids.append(await scene.client.queues[QUEUE].put("faultjobs.leak", {"mb": 40}))
        supervisor = scene.start(*WORKER[:-1], "--max-memory", "100", QUEUE)
        await scene.finish(duplicates_at_most=0)
        # a worker over its memory limit, replaced (slow on a busy machine: be patient)
        await supervisor.logged("recycled", timeout=60)
        assert supervisor.running()


async def test_a_job_that_exits_its_process_fails_after_its_retries_and_loses_nothing(
    tmp_path: Path,
) -> None:
    async with pathological(tmp_path) as scene:
        crash = await scene.client.queues[QUEUE].put("faultjobs.crash", {}, retries=1)
        supervisor = scene.start(*WORKER[:-1], "-p", "2", QUEUE)
        # each crash takes down the jobs running beside it: their side effects may repeat
        await scene.finish(duplicates_at_most=2 * 10)
        await eventually(lambda: failed(scene.client, crash), 30, "the crashing job failed")
        crashed = await job(scene.client, crash)
        assert crashed.failure is not None
        assert crashed.failure.group == f"failed-retries-{QUEUE}"  # its lock expired twice
        assert await scene.client.redis.llen("fault:crashes") == 2  # its try and its retry
        assert "exited with 3" in supervisor.log()  # and the supervisor replaced the process
        assert supervisor.running()


async def test_a_job_blocking_the_loop_loses_nothing(tmp_path: Path) -> None:
    """Sync code in an async job blocks the loop: no heartbeat runs, so the locks of every
    job of that worker expire (2 s) and another worker takes them over. When the loop runs
    again, the blocked worker learns the jobs are not its own (lock_lost event, refused
    heartbeat) and cancels their code; one that reaches its side effect first does it a
    second time, and its complete is refused. At least once, visibly, and nothing lost."""
    async with pathological(tmp_path) as scene:
        block = await scene.client.queues[QUEUE].put("faultjobs.block", {"block": 4})
        scene.jids.append(block)
        started = time.monotonic()
        scene.start(*WORKER)
        scene.start(*WORKER)
        await eventually(lambda: time.monotonic() - started > 5, 10)  # the block is over
        await scene.finish(duplicates_at_most=10 + 1)
        blocked = await job(scene.client, block)
        attempts = int(await scene.client.redis.get("fault:attempts:" + block) or 0)
        history = [entry.what for entry in blocked.history]
        print(history, "attempts:", attempts)  # noqa: T201
        if "timed-out" in history:  # taken over by the other worker: it ran twice
            assert attempts == 2
            # the blocked run is usually cancelled at its first await after the block (its
            # lock is gone); if its side effect got in first, it shows as a duplicate
            assert await scene.client.redis.lrem("fault:done", 0, block) in (1, 2)
        else:
            assert attempts == 1


@dataclass
class Scene:
    """A server with 200 plain jobs (`jids`), and the test's workers."""

    client: aqless.Client
    url: str
    spawn: Spawner
    jids: list[str]

    def start(self, *arguments: str) -> WorkerProcess:
        return self.spawn(*arguments)

    async def finish(self, *, duplicates_at_most: int) -> None:
        """Every job of `jids` complete with its side effect, duplicates bounded."""
        await eventually(lambda: all_complete(self.client, self.jids), 60, "all complete")
        check(
            await account(self.client, self.url, self.jids), duplicates_at_most=duplicates_at_most
        )


@asynccontextmanager
async def pathological(folder: Path) -> AsyncIterator[Scene]:
    with own_server() as server, workers(server.url, folder) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client)
            yield Scene(client, server.url, spawn, await put_jobs(client, 200, sleep=0.05))


async def job(client: aqless.Client, jid: str) -> aqless.Job:
    found = await client.jobs.get(jid)
    assert isinstance(found, aqless.Job)
    return found


async def failed(client: aqless.Client, jid: str) -> bool:
    return str((await job(client, jid)).state) == "failed"
