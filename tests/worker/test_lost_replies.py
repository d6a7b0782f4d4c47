"""A pop whose reply a dropped connection lost: the jobs it took are found and run."""

from __future__ import annotations

import aqless
from aqless.models import JobState
from tests.worker.helpers import Recorder, all_complete, make_worker, one, running, until


async def test_jobs_held_but_unknown_are_taken_back_after_a_failed_pop(
    client: aqless.Client,
) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    jids = [await queue.put("app.job", {"n": n}) for n in range(3)]
    # as if a pop ran on the server but its reply never arrived: held by this worker's name
    taken = await queue.pop_many(2, worker=client.worker_name)
    assert {job.state for job in taken} == {JobState.RUNNING}
    worker = make_worker(client, handlers=one(recorder), concurrency=1)
    worker._pop_lost_replies = True  # what a ConnectionLostError in a pop leaves behind
    async with running(worker):
        await all_complete(client, jids, timeout=5)
        await until(lambda: worker.counters.completed == 3)
    assert sorted(recorder.jids) == sorted(jids)
