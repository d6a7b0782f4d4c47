"""Failure policies with real workers: RetryPolicy (strategies, max_attempts, callbacks,
worker default and handler override) and RequeuePolicy (qless's requeue_on)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import aqless
from aqless import ConfigurationError, Handlers, Job, JobState, RequeuePolicy, RetryPolicy
from aqless._worker.outcomes import Backoff
from aqless._worker.policies import attempt
from tests.support.worker import get_job, make_worker, one, process, running, until, until_state

# Retry and requeue policies are the worker's arithmetic and the script's retry: the same on
# every kind, so on the two unix kinds only (what differs by kind is tested on every kind in
# test_running, test_pushes, test_pickup, test_ears and test_lost_replies).

NOW = RetryPolicy(strategy="fixed", delay=0)  # retries at once: tests need no waiting


def group_of(job: Job) -> str | None:
    return None if job.failure is None else job.failure.group


def always(value: float) -> Any:
    return lambda: value


@pytest.mark.parametrize(
    ("policy", "delays"),
    [
        (RetryPolicy(strategy="fixed", delay=5), [5, 5, 5, 5]),
        (RetryPolicy(strategy="linear", delay=5, cap=18), [5, 10, 15, 18]),
        (RetryPolicy(delay=1, factor=3), [1, 3, 9, 27]),
        (RetryPolicy(delay=4, jitter=0.5, random=always(1.0)), [2, 4, 8, 16]),
    ],
)
def test_strategies(policy: RetryPolicy, delays: list[float]) -> None:
    assert [policy.delay_after(spent) for spent in range(4)] == delays


def test_backoff_is_an_exponential_policy() -> None:
    backoff = Backoff(base=2, factor=3, cap=50, jitter=0.5, random=always(0.5))
    assert [backoff.delay(n) for n in range(4)] == [1.5, 4.5, 13.5, 37.5]
    assert backoff.as_policy().strategy == "exponential"


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "cubic"},
        {"delay": -1},
        {"jitter": 2},
        {"max_attempts": 0},
        {"on": ValueError},
        {"on": ("ValueError",)},
    ],
)
def test_bad_retry_policies(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        RetryPolicy(**options)


@pytest.mark.parametrize(
    "options",
    [{"delay": (5, 1)}, {"delay": (-1, 1)}, {"max_requeues": -1}, {"on": ()}],
)
def test_bad_requeue_policies(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        RequeuePolicy(**{"on": (OSError,), "max_requeues": 1, **options})


def test_retry_and_backoff_together_are_refused(client: aqless.Client) -> None:
    with pytest.raises(ConfigurationError, match="retry or backoff"):
        aqless.Worker(client, ["q"], retry=NOW, backoff=Backoff())


class Flaky:
    """Job code that raises `error` until it ran `failures` times, recording each run."""

    def __init__(self, error: BaseException, failures: int = 1000) -> None:
        self.error = error
        self.failures = failures
        self.attempts: list[int] = []

    async def __call__(self, job: Job) -> None:
        self.attempts.append(attempt(job))
        if len(self.attempts) <= self.failures:
            raise self.error


async def test_max_attempts_then_the_job_fails_normally(client: aqless.Client) -> None:
    flaky = Flaky(ConnectionError("down"))
    handlers = one(flaky, retry=RetryPolicy(strategy="fixed", delay=0, max_attempts=3))
    jid = await client.queues["q"].put("app.job", {}, retries=5)
    worker = make_worker(client, ["q"], handlers, interval=0.02)
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED)
    assert flaky.attempts == [1, 2, 3]
    assert job.failure is not None
    assert job.failure.group == "q-ConnectionError"  # not failed-retries-q: retries were left
    assert job.retries_left == 3
    assert (worker.counters.retried, worker.counters.failed) == (2, 1)


async def test_a_job_out_of_retries_fails_into_failed_retries(client: aqless.Client) -> None:
    flaky = Flaky(ConnectionError("down"))
    jid = await client.queues["q"].put("app.job", {}, retries=1)
    worker = make_worker(client, ["q"], one(flaky), retry=NOW, interval=0.02)
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED)
    assert flaky.attempts == [1, 2]
    assert group_of(job) == "failed-retries-q"


async def test_the_handler_policy_replaces_the_worker_default(client: aqless.Client) -> None:
    handlers = Handlers()
    handlers.register("app.once", retry=RetryPolicy(max_attempts=1))(Flaky(ValueError("x")))
    handlers.register("app.covered", retry=RetryPolicy(on=(KeyError,)))(Flaky(ValueError("x")))
    handlers.register("app.default")(Flaky(ValueError("x")))
    queue = client.queues["q"]
    once, covered, default = [
        await queue.put(f"app.{k}", {}) for k in ("once", "covered", "default")
    ]
    worker = make_worker(client, ["q"], handlers, retry=RetryPolicy(delay=60))
    async with running(worker):
        failed = await until_state(client, once, JobState.FAILED)
        not_covered = await until_state(client, covered, JobState.FAILED)
        scheduled = await until_state(client, default, JobState.SCHEDULED)
    assert group_of(failed) == "q-ValueError"
    assert group_of(not_covered) == "q-ValueError"
    assert scheduled.retries_left == scheduled.original_retries - 1


async def test_callbacks_are_told_of_retries_and_the_give_up(client: aqless.Client) -> None:
    told: list[tuple[str, str, int]] = []

    async def on_retry(job: Job, error: BaseException) -> None:
        told.append(("retry", type(error).__name__, attempt(job)))

    def on_give_up(job: Job, error: BaseException) -> None:
        told.append(("give up", type(error).__name__, attempt(job)))

    policy = RetryPolicy(
        strategy="fixed", delay=0, max_attempts=3, on_retry=on_retry, on_give_up=on_give_up
    )
    job = await process(client, one(Flaky(TimeoutError())), "app.job", retry=policy, interval=0.02)
    assert job.state == JobState.FAILED
    assert told == [
        ("retry", "TimeoutError", 1),
        ("retry", "TimeoutError", 2),
        ("give up", "TimeoutError", 3),
    ]


async def test_a_give_up_callback_may_settle_the_job(client: aqless.Client) -> None:
    async def dead_letter(job: Job, error: BaseException) -> None:
        await job.move("dead")

    policy = RetryPolicy(max_attempts=1, on_give_up=dead_letter)
    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(Flaky(ValueError())), retry=policy)
    async with running(worker):

        async def moved() -> bool:
            return (await get_job(client, jid)).queue_name == "dead"

        await until(moved, what="the job moved to the dead queue")
        job = await get_job(client, jid)
    assert job.state == JobState.WAITING
    assert worker.counters.failed == 0
    assert job.failure is None


async def test_a_failing_callback_is_logged_and_the_job_still_fails(
    client: aqless.Client, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(job: Job, error: BaseException) -> None:
        raise RuntimeError("the callback is broken")

    policy = RetryPolicy(max_attempts=1, on_give_up=broken)
    job = await process(client, one(Flaky(ValueError())), "app.job", retry=policy)
    assert job.state == JobState.FAILED
    logged = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    assert any("callback" in r.getMessage() for r in logged)


# -- requeues ---------------------------------------------------------------------------------


async def test_requeues_spend_no_retries_then_the_job_fails(client: aqless.Client) -> None:
    flaky = Flaky(ConnectionRefusedError("refused"))
    requeued: list[str] = []
    policy = RequeuePolicy(
        on=(ConnectionError,), max_requeues=2, on_requeue=lambda job, _: requeued.append(job.jid)
    )
    jid = await client.queues["q"].put("app.job", {"user": 1}, retries=1)
    worker = make_worker(client, ["q"], one(flaky, requeue=[policy]), interval=0.02)
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED)
    assert flaky.attempts == [1, 1, 1]  # no retry spent
    assert requeued == [jid, jid]
    assert job.data == {"user": 1, "requeues_by_exception": {"ConnectionError": 2}}
    assert group_of(job) == "q-ConnectionRefusedError"
    assert job.retries_left == 1
    assert [e.what for e in job.history].count("put") == 3
    assert (worker.counters.requeued, worker.counters.retried, worker.counters.failed) == (2, 0, 1)


async def test_a_requeue_waits_a_delay_from_its_range(client: aqless.Client) -> None:
    policy = RequeuePolicy(on=(OSError,), max_requeues=1, delay=(30, 60), random=always(0.5))
    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(Flaky(OSError()), requeue=[policy]))
    async with running(worker):
        job = await until_state(client, jid, JobState.SCHEDULED)
        due = await client.redis.zscore(f"{client.prefix}q:q-scheduled", jid)
    assert due is not None
    assert 44 < due - client.clock() <= 45
    assert job.retries_left == job.original_retries


async def test_counts_kept_by_another_client_are_honoured(client: aqless.Client) -> None:
    data = {"requeues_by_exception": {"ConnectionError": 3}}
    jid = await client.queues["q"].put("app.job", data)
    policy = RequeuePolicy(on=(ConnectionError,), max_requeues=3)
    worker = make_worker(client, ["q"], one(Flaky(ConnectionError()), requeue=[policy]))
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED)
    assert job.data == data
    assert worker.counters.requeued == 0


async def test_after_its_requeues_the_retry_policy_applies(client: aqless.Client) -> None:
    flaky = Flaky(ConnectionError())
    requeue = RequeuePolicy(on=(ConnectionError,), max_requeues=1)
    retry = RetryPolicy(strategy="fixed", delay=0, max_attempts=2)
    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(flaky), retry=retry, requeue=[requeue], interval=0.02)
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED)
    assert flaky.attempts == [1, 1, 2]  # requeued, then retried once, then failed
    assert group_of(job) == "q-ConnectionError"
    assert (worker.counters.requeued, worker.counters.retried) == (1, 1)


async def test_the_handler_requeue_policies_come_first(client: aqless.Client) -> None:
    mine = RequeuePolicy(on=(ConnectionError,), max_requeues=0)
    workers = RequeuePolicy(on=(OSError,), max_requeues=5)
    handlers = one(Flaky(ConnectionError()), requeue=[mine])
    job = await process(client, handlers, "app.job", {}, requeue=[workers])
    assert job.state == JobState.FAILED  # the handler's policy decided: no requeues left
    assert "requeues_by_exception" not in job.data


async def test_data_that_is_not_an_object_is_not_requeued(client: aqless.Client) -> None:
    policy = RequeuePolicy(on=(ConnectionError,), max_requeues=5)
    handlers = one(Flaky(ConnectionError()), requeue=[policy])
    job = await process(client, handlers, "app.job", [1, 2])
    assert job.state == JobState.FAILED
    assert job.data == [1, 2]


async def test_a_registered_backoff_still_retries(client: aqless.Client) -> None:
    handlers = one(Flaky(ConnectionError()), retry=Backoff(base=60))
    job = await process(client, handlers, "app.job", states=[JobState.SCHEDULED])
    assert job.retries_left == job.original_retries - 1
    assert (await get_job(client, job.jid)).queue_name == "q"
