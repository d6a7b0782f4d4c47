"""The long fault run (``nox -s faults_long``, marker ``faults_long``; never in the default
run): 100,000 jobs drain while a random worker is SIGKILLed every 2 s and the server is
restarted twice (once SIGKILLed, once SHUTDOWN), AOF everysec. It prints the figures: lost
(must be 0), duplicates, and the time to recover after each fault. ``AQLESS_FAULTS_JOBS``
changes the number of jobs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

import aqless
from tests.faults.harness import (
    Killer,
    OwnServer,
    account,
    completed,
    drained,
    own_server,
    prepare,
    put_jobs,
    safely,
    workers,
)
from tests.faults.test_faults import WORKER, check

pytestmark = [pytest.mark.faults_long, pytest.mark.timeout(3600)]

JOBS = int(os.environ.get("AQLESS_FAULTS_JOBS", "100000"))


async def test_100000_jobs_with_kills_every_2_s_and_two_server_restarts(tmp_path: Path) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client)
            jids = await put_jobs(client, JOBS, sleep=0.01)
            killer = Killer(spawn, client, WORKER)
            killer.start(3)
            restarts = {JOBS // 3: "kill", 2 * JOBS // 3: "shutdown"}
            server_recoveries: list[float] = []
            started = time.monotonic()
            next_kill = started + 2.0
            async with anyio.create_task_group() as group:
                while (done := await safely(completed(client), 0)) < JOBS * 0.95:
                    for mark, how in list(restarts.items()):
                        if done >= mark:
                            del restarts[mark]
                            server_recoveries.append(await restart(server, client, how))
                    if time.monotonic() >= next_kill:
                        next_kill += 2.0
                        await killer.kill_one(group)
                    await anyio.sleep(0.1)
                await drained(client, JOBS, timeout=1800)
            elapsed = time.monotonic() - started
            report = await account(client, server.url, jids)
            report.faults = killer.kills + 2
            report.recoveries = killer.recoveries
            print(  # noqa: T201
                f"\ndrained in {elapsed:.0f} s; {killer.kills} worker kills (recovery: the "
                f"killed worker's jobs complete elsewhere, max "
                f"{max(killer.recoveries, default=0):.1f} s, mean "
                f"{sum(killer.recoveries) / max(len(killer.recoveries), 1):.1f} s); server "
                f"restarts (kill, shutdown): progress again after "
                f"{', '.join(f'{s:.1f}' for s in server_recoveries)} s"
            )
            assert not restarts, "the server restarts did not all happen"
            check(report, duplicates_at_most=10 * report.faults)


async def restart(server: OwnServer, client: aqless.Client, how: str) -> float:
    """Restart the server; seconds from the fault until jobs complete again."""

    before = await safely(completed(client), 0)
    fault = time.monotonic()
    server.kill() if how == "kill" else server.shutdown()
    await anyio.sleep(0.5)
    server.start()
    while await safely(completed(client), 0) <= before:  # noqa: ASYNC110  # polls the server
        await anyio.sleep(0.05)
    return time.monotonic() - fault
