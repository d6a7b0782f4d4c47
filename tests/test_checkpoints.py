"""Checkpoints through the client: `job.checkpoint(state)` stores a JSON state with a
heartbeat; the next attempt's Job (after a retry, a lost lock or a hand-back) starts with it in
`checkpointed`; `client.jobs.checkpoints` reads it; completion and a new put clear it."""

from __future__ import annotations

import pytest

import aqless
from aqless import JobNotFoundError, JobState, LockLostError, PayloadError, StaleAttemptError
from aqless.job import CHECKPOINT_LIMIT
from tests.support.clients import ManualClock, get_job, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_a_checkpoint_renews_the_lock_and_reaches_the_next_attempt(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    first = await pop_one(queue)
    started_with = first.checkpointed
    assert started_with is None
    clock.advance(30)
    expires = await first.checkpoint({"offset": 500, "file": "rows.csv"})
    assert expires == first.expires_at == pytest.approx(clock() + 60, abs=1)
    assert first.checkpointed == {"offset": 500, "file": "rows.csv"}
    assert await timed_client.jobs.checkpoints("j", "missing") == {
        "j": {"offset": 500, "file": "rows.csv"}
    }
    assert (await get_job(timed_client, "j")).checkpointed is None  # not in the job object
    await first.retry()
    again = await pop_one(queue)
    assert (again.attempt, again.checkpointed) == (2, {"offset": 500, "file": "rows.csv"})


async def test_after_a_lost_lock_the_next_attempt_resumes_and_the_old_is_refused(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    await timed_client.config.set("grace-period", 0)
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    first = await pop_one(queue)
    await first.checkpoint(1000)
    clock.advance(61)  # the lock expired
    second = await pop_one(queue)
    assert second.checkpointed == 1000
    with pytest.raises(StaleAttemptError):
        await first.checkpoint(2000)  # the first attempt, late, may not overwrite it
    assert await timed_client.jobs.checkpoints("j") == {"j": 1000}


async def test_a_hand_back_keeps_it_completion_clears_it(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    await job.checkpoint([1, 2, 3])
    await job.hand_back("worker stopping")
    again = await pop_one(queue)
    assert again.checkpointed == [1, 2, 3]
    assert await again.complete() is JobState.COMPLETE
    assert await timed_client.jobs.checkpoints("j") == {}
    assert await timed_client.jobs.checkpoints() == {}


async def test_a_new_put_starts_from_no_checkpoint(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    await job.checkpoint("half")
    await job.fail("boom", "it broke")
    assert await timed_client.jobs.checkpoints("j") == {"j": "half"}
    await queue.put("app.Job", jid="j")
    assert (await pop_one(queue)).checkpointed is None


async def test_a_bad_state_is_refused_before_anything_is_sent(
    timed_client: aqless.Client,
) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    with pytest.raises(PayloadError, match="not JSON-serializable"):
        await job.checkpoint({"when": object()})
    with pytest.raises(PayloadError, match="over the 65536 allowed"):
        await job.checkpoint("x" * CHECKPOINT_LIMIT)
    await job.checkpoint("x" * (CHECKPOINT_LIMIT - 2))  # the limit itself (quoted) is taken
    assert await timed_client.jobs.checkpoints("j") == {"j": "x" * (CHECKPOINT_LIMIT - 2)}


async def test_a_job_no_longer_held_refuses_a_checkpoint(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    stalled = await get_job(timed_client, "j")
    await stalled.timeout()
    with pytest.raises(LockLostError, match="not currently running: stalled"):
        await job.checkpoint(1)
    await timed_client.jobs.cancel("j")
    with pytest.raises(JobNotFoundError):
        await job.checkpoint(1)


def test_a_built_job_takes_a_checkpoint_for_tests_of_job_code() -> None:
    job = aqless.Job.build("app.Job", {"rows": 10}, checkpoint={"offset": 4})
    assert job.checkpointed == {"offset": 4}
