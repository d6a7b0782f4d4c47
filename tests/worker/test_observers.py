"""The worker's supported hooks: observers told of every job, the running jobs' jids and the
heartbeat counts; and the outcome verbs' typed `releases`, which the pop count reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

import aqless
from aqless import Job, JobState
from aqless._connection.batching import Batcher
from aqless._worker.outcomes import Decision
from aqless._worker.running import RunningJobs
from tests.support.worker import make_worker, one, running, until, until_state


class Recorder(aqless.WorkerObserver):
    def __init__(self) -> None:
        self.finished: list[tuple[str, str, str]] = []
        self.failed: list[tuple[str, str, str]] = []

    def job_finished(self, job: Job, queue: str, outcome: str, seconds: float) -> None:
        assert seconds >= 0
        self.finished.append((job.jid, queue, outcome))

    def job_failed(self, job: Job, error: BaseException, decision: Decision) -> None:
        self.failed.append((job.jid, type(error).__name__, decision.verb))


class Broken(aqless.WorkerObserver):
    def job_finished(self, job: Job, queue: str, outcome: str, seconds: float) -> None:
        raise RuntimeError("an observer's bug")


async def test_observers_are_told_what_became_of_each_job(client: aqless.Client) -> None:
    async def code(job: Job) -> None:
        if job.data["fail"]:
            raise KeyError("boom")

    queue = client.queues["q"]
    ok = await queue.put("app.job", {"fail": False})
    bad = await queue.put("app.job", {"fail": True})
    recorder = Recorder()
    worker = make_worker(client, ["q"], one(code), burst=True, observers=[Broken()])
    worker.observers.append(recorder)  # added after construction: told as well
    counters = await worker.run()
    assert (counters.completed, counters.failed) == (1, 1)  # the broken observer cost nothing
    assert sorted(recorder.finished) == sorted([(ok, "q", "completed"), (bad, "q", "failed")])
    assert recorder.failed == [(bad, "KeyError", "fail")]


async def test_running_and_heartbeats_are_readable_while_jobs_run(client: aqless.Client) -> None:
    await client.config.set("heartbeat", 2)
    release = anyio.Event()

    async def code(job: Job) -> None:
        await release.wait()

    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(code))
    assert worker.heartbeats == aqless.Heartbeats(0, 0)
    async with running(worker):
        await until(lambda: jid in worker.running)
        assert list(worker.running) == [jid]
        await until(lambda: worker.heartbeats.renewals >= 1, timeout=3)
        with pytest.raises(AttributeError):
            worker.heartbeats.renewals = 0  # type: ignore[misc]
        release.set()
        await until_state(client, jid, JobState.COMPLETE)
        await until(lambda: not worker.running)
    assert worker.heartbeats.refusals == 0


Verb = Callable[[Job], Awaitable[Any]]
VERBS: dict[str, Verb] = {
    "complete": lambda job: job.complete(),
    "complete into another queue": lambda job: job.complete("next"),
    "fail": lambda job: job.fail("group", "message"),
    "retry": lambda job: job.retry(),
    "move": lambda job: job.move("q"),
}


@pytest.mark.parametrize("verb", VERBS.values(), ids=VERBS.keys())
async def test_an_outcome_verb_names_the_jid_it_releases(
    client: aqless.Client, verb: Verb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's pop counts the outcomes that go ahead of it by this field alone."""
    jid = await client.queues["q"].put("app.job", {})
    job = await client.queues["q"].pop()
    assert job is not None
    releases: list[str | None] = []
    submit = Batcher.submit

    async def recording(self: Batcher, call: Any, releases_: str | None = None) -> Any:
        releases.append(releases_)
        return await submit(self, call, releases_)

    monkeypatch.setattr(Batcher, "submit", recording)
    async with client.protocol.batching():
        await verb(job)
    assert releases[0] == jid  # then only reads (move reads the job again), releasing none
    assert releases[1:] == [None] * (len(releases) - 1)


def test_a_pop_counts_the_released_jobs_whose_outcomes_go_ahead_of_it() -> None:
    table = RunningJobs(concurrency=3)
    first, _ = table.take(Job.build("app.job", jid="a"), 60, renew_at=20)
    table.take(Job.build("app.job", jid="b"), 60, renew_at=20)
    assert table.free() == 1
    assert table.release(first)
    assert table.free() == 2  # a's outcome is on its way
    # a pop behind a's outcome may ask for a's slot; behind unknown or held jids, not
    assert table.free(released=["a", "b", "elsewhere"]) == 2
    assert table.free(released=[]) == 1  # a's outcome may not have landed yet
    table.hold_again(first)  # it did not reach the server
    assert table.free(released=["a"]) == 1
    table.release(first)
    table.remove(first)
    assert table.free(released=[]) == 2
