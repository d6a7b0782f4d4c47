"""Issue 39, item 2: jobs drained through a slow, lossy network (tests.faults.netem: resets
lose pop replies, pushes and outcomes) never run without an attempt, and every completed
job's last fenced write (tests/worker/fenced_job.py) is by the attempt the server
completed. Before the take-back carried attempts, such a drain ran jobs with
``job.attempt`` None (22 of 300 runs in one measured drain) and completed them with their
fenced write refused."""

from __future__ import annotations

import contextlib
import random
import time

import anyio
import pytest

import aqless
from aqless.models import JobState
from tests.faults.harness import OwnServer, free_port
from tests.faults.netem import Conditions, NetemProxy
from tests.support.worker import make_worker, one, running
from tests.worker.fenced_job import KLASS, fenced_on, runs, writes

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

#: 30 ± 20 ms each way, 3% of chunks resetting their connection, a 2.5 s stall in 100.
LOSSY = Conditions(
    delay=0.03, jitter=0.02, reset_chance=0.03, stall_chance=0.01, stall_seconds=2.5, seed=5
)
JOBS = 200


async def test_a_lossy_drain_runs_every_job_with_its_attempt_and_fences_its_writes() -> None:
    server = OwnServer(port=free_port())
    server.start()
    try:
        async with aqless.Client(server.url) as direct:
            await direct.config.set("heartbeat", 2)
            await direct.config.set("grace-period", 0)
            pauses = random.Random(LOSSY.seed)  # noqa: S311
            requests = [
                aqless.PutRequest(KLASS, {"pauses": [round(pauses.uniform(0.05, 1.0), 2)]})
                for _ in range(JOBS)
            ]
            jids = await direct.queues["q"].put_many(requests)

            async def work(job: aqless.Job) -> None:  # its records go over the direct link
                await fenced_on(direct.redis, job)

            async with (
                NetemProxy("127.0.0.1", server.port, LOSSY) as proxy,
                contextlib.AsyncExitStack() as stack,
            ):
                for number in range(2):  # one worker prefetches, one does not
                    client = aqless.Client(proxy.url, worker_name=f"lossy-{number}")
                    await stack.enter_async_context(client)
                    worker = make_worker(
                        client, ["q"], one(work, KLASS), concurrency=20, prefetch=5 * number
                    )
                    await stack.enter_async_context(running(worker, timeout=30))
                deadline = time.monotonic() + 120
                while any(
                    job.state != JobState.COMPLETE for job in await direct.jobs.get_many(jids)
                ):
                    assert time.monotonic() < deadline, "the drain did not finish"
                    await anyio.sleep(0.5)
            assert proxy.tally.resets >= 5, "the network reset too few connections"
            every_run = [run for jid in jids for run in await runs(direct, jid)]
            assert [run for run in every_run if run.startswith("None")] == []
            unfenced = []
            for jid in jids:
                completed = await direct.redis.hget(f"ql:j:{jid}", "attempt")
                landed = await writes(direct, jid)
                if not landed or landed[-1] != completed:
                    unfenced.append((jid, completed, landed))
            assert unfenced == []
    finally:
        server.close()
