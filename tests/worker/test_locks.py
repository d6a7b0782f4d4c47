"""The LockKeeper against a real server: what it does when the server refuses a renewal."""

from __future__ import annotations

import anyio

import aqless
from aqless._worker.locks import LockKeeper
from aqless._worker.running import RunningJobs
from tests.support.worker import WORKER


async def test_a_refused_renewal_of_a_job_being_reported_is_not_sent_again_at_once(
    client: aqless.Client,
) -> None:
    """The job's outcome is on its way (its complete already landed, its reply did not):
    the server refuses the heartbeat, and the keeper waits before asking again instead of
    asking in a loop until the outcome's reply comes."""
    jid = await client.queues["q"].put("app.A")
    job = await client.queues["q"].pop()
    assert job is not None
    await client.protocol.call("job.complete", jid, WORKER, "q", "{}")  # settled elsewhere
    running_jobs = RunningJobs(1)
    running, _ = running_jobs.take(job, lock_seconds=60, renew_at=0.0)
    running.reporting = True
    keeper = LockKeeper(client, WORKER, running_jobs.by_jid)
    with anyio.move_on_after(0.5):
        await keeper.keep()
    assert keeper.refusals == 1
    assert running.lost is None  # a job being reported is not lost by a refusal
