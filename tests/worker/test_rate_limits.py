"""Rate limits across workers: four workers share a queue's limit of 50 starts a second, and
idle workers sleep until the next free start instead of polling."""

from __future__ import annotations

import bisect
from contextlib import AsyncExitStack

import anyio

import aqless
from aqless import Job, PutRequest
from tests.support.deployments import Deployment
from tests.support.worker import all_complete, make_worker, one, running

SLOW_POLL = 30.0  # no poll comes during these tests: only the rate limit's wait explains a pop
HEARTBEAT = 60.0


class PopTimes:
    """Job code that records when the script popped each job (its lock's expiry, less the
    queue's heartbeat: the server-side `now` of the pop)."""

    def __init__(self) -> None:
        self.by_jid: dict[str, float] = {}

    @property
    def times(self) -> list[float]:
        return list(self.by_jid.values())

    async def __call__(self, job: Job) -> None:
        self.by_jid[job.jid] = job.expires_at - HEARTBEAT


def most_in_any_window(times: list[float], width: float) -> int:
    """The most `times` in any window [t, t + width); the times are known to 0.1 ms (a job
    object's numbers have 14 digits), so windows are that much shorter."""
    width -= 1e-4
    ordered = sorted(times)
    return max(
        (bisect.bisect_left(ordered, start + width) - i for i, start in enumerate(ordered)),
        default=0,
    )


async def test_four_workers_start_50_a_second_over_3_seconds(
    client: aqless.Client, deployment: Deployment
) -> None:
    queue = client.queues["q"]
    await queue.set_rate_limit(50, per=1.0)
    await queue.put_many([PutRequest("app.job") for _ in range(250)])  # more than 3.5 s take
    recorder = PopTimes()
    async with AsyncExitStack() as stack:
        for n in range(4):
            other = await stack.enter_async_context(
                deployment.open_client(worker_name=f"rated-{n}")
            )
            worker = make_worker(other, handlers=one(recorder), interval=SLOW_POLL, concurrency=8)
            await stack.enter_async_context(running(worker))
        # the test's span: 3 s of starts from the first (three windows, two of them whole;
        # the limit is per window, so more windows would only repeat the same check)
        await anyio.sleep(3.5)
    first = min(recorder.times)
    in_three_seconds = [t for t in recorder.times if t < first + 3]
    assert 140 <= len(in_three_seconds) <= 160
    assert most_in_any_window(recorder.times, 1.0) <= 50
    info = await queue.rate_limit.get()
    assert (info.limit, info.period) == (50, 1.0)


async def test_a_named_limiter_paces_the_jobs_that_name_it(client: aqless.Client) -> None:
    queue = client.queues["q"]
    await client.rate_limits["api"].set(2, per=0.5)
    limited = [await queue.put("app.job", rate_limits=["api"]) for _ in range(6)]
    free = [await queue.put("app.job") for _ in range(3)]
    recorder = PopTimes()
    worker = make_worker(client, handlers=one(recorder), interval=SLOW_POLL, concurrency=4)
    with anyio.fail_after(5):
        async with running(worker):
            await all_complete(client, limited + free, timeout=4)
    assert len(recorder.times) == 9
    starts = sorted(recorder.by_jid[jid] for jid in limited)
    assert most_in_any_window(starts, 0.5) <= 2
    assert starts[-1] - starts[0] >= 1.0  # three windows of two
    info = await client.rate_limits["api"].get()
    assert (info.limit, info.period) == (2, 0.5)
    assert info.used <= 2


async def test_a_groups_rate_limit_paces_its_jobs_and_wakes_the_idle_worker(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    await queue.set_group_rate_limit("paced", 2, per=0.5)
    limited = await queue.put_many([PutRequest("app.job", group="paced")] * 6)
    free = await queue.put_many([PutRequest("app.job", group="free")] * 3)
    recorder = PopTimes()
    worker = make_worker(client, handlers=one(recorder), interval=SLOW_POLL, concurrency=4)
    with anyio.fail_after(5):  # (the group's wait wakes the worker, not a poll)
        async with running(worker):
            await all_complete(client, limited + free, timeout=4)
    starts = sorted(recorder.by_jid[jid] for jid in limited)
    assert most_in_any_window(starts, 0.5) <= 2
    assert starts[-1] - starts[0] >= 1.0  # three windows of two
    (paced,) = [group for group in await queue.groups() if group.name == "paced"]
    assert (paced.rate_limit, paced.rate_period) == (2, 0.5)
