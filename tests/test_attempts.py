"""Fenced attempts: every pop of a job is a new attempt (`Job.attempt`), and the owner's verbs
of an earlier attempt are refused (StaleAttemptError, a LockLostError) even under the same
worker name; calls without an attempt (other clients) behave as before. Also `hand_back`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

import aqless
from aqless import JobState, LockLostError, StaleAttemptError
from tests.support.clients import WORKER, ManualClock, get_job, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def popped_again_by_the_same_worker(
    client: aqless.Client, clock: ManualClock
) -> tuple[aqless.Job, aqless.Job]:
    """The job `j` popped by WORKER, paused past its lock (grace period 0), and popped again
    by WORKER: the two attempts' Jobs."""
    await client.config.set("grace-period", 0)
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", retries=5)
    first = await pop_one(queue)
    clock.advance(61)  # the first attempt's code paused past its lock
    second = await pop_one(queue)
    assert (first.worker_name, second.worker_name) == (WORKER, WORKER)
    assert (first.attempt, second.attempt) == (1, 2)
    return first, second


async def test_only_the_second_attempts_complete_is_kept(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    first, second = await popped_again_by_the_same_worker(timed_client, clock)
    with pytest.raises(StaleAttemptError, match="attempt 1 is stale: the job is on attempt 2"):
        await first.complete(result="first")
    assert first.worker_name == WORKER  # refused: the Job is as it was
    assert await second.complete(result="second") is JobState.COMPLETE
    assert await timed_client.result("j") == "second"


async def test_every_verb_of_the_first_attempt_is_refused_as_a_lost_lock(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    first, second = await popped_again_by_the_same_worker(timed_client, clock)
    verbs: list[Callable[[], Awaitable[object]]] = [
        first.heartbeat,
        lambda: first.fail("boom", "late"),
        first.retry,
        lambda: first.complete("next"),
        lambda: first.send_progress(0.5, "half"),
        lambda: first.hand_back("operator"),
    ]
    for verb in verbs:
        with pytest.raises(LockLostError) as raised:  # existing handlers still catch it
            await verb()
        assert isinstance(raised.value, StaleAttemptError)
    assert await second.heartbeat() > 0
    assert (await get_job(timed_client, "j")).state == JobState.RUNNING


async def test_a_call_without_an_attempt_still_works(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """What another qless client sends (no attempt) is checked by worker name alone."""
    first, _ = await popped_again_by_the_same_worker(timed_client, clock)
    protocol = timed_client.protocol
    assert await protocol.integer("job.heartbeat", "j", WORKER) > 0
    assert await protocol.text("job.complete", "j", WORKER, "q", "{}") == "complete"
    first.attempt = None  # a Job read otherwise (no attempt known) sends none either
    with pytest.raises(LockLostError) as raised:
        await first.complete()
    assert not isinstance(raised.value, StaleAttemptError)


async def test_a_job_read_with_get_has_no_attempt(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    popped = await pop_one(queue)
    assert popped.attempt == 1
    assert (await get_job(timed_client, "j")).attempt is None
    assert await popped.heartbeat() > 0  # the attempt it sends is the current one


async def test_hand_back_spends_no_retry_and_says_why(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j", retries=2)
    job = await pop_one(queue)
    await job.hand_back("operator")
    assert (job.state, job.worker_name) == (JobState.WAITING, "")
    stored = await get_job(timed_client, "j")
    assert (stored.state, stored.retries_left, stored.failure) == (JobState.WAITING, 2, None)
    assert stored.history[-1].what == "handed-back"
    assert dict(stored.history[-1].details) == {"reason": "operator", "worker": WORKER}
    again = await pop_one(queue)
    assert (again.attempt, again.retries_left) == (2, 2)
