"""A worker drains a grouped queue fairly: its pops take the queue's groups in turn, so the
jobs of small groups put behind one group's backlog start among the first ones."""

from __future__ import annotations

import aqless
from aqless import Job, PutRequest
from tests.support.worker import make_worker, one, running, until


async def test_a_worker_starts_the_small_groups_jobs_among_the_first(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    await queue.put_many([PutRequest("app.job", {"g": "big"}, group="big")] * 300)
    small = [f"small-{n}" for n in range(3)]
    for group in small:
        await queue.put_many([PutRequest("app.job", {"g": group}, group=group)] * 10)
    started: list[str] = []

    async def record(job: Job) -> None:
        started.append(job.data["g"])

    worker = make_worker(client, handlers=one(record), concurrency=5)
    async with running(worker):
        await until(lambda: len(started) >= 330, timeout=30, what="the queue drained")
    # four groups in turn: the 30 small jobs among the first 40 starts, give or take a batch
    first = started[:50]
    assert all(first.count(group) == 10 for group in small)
    assert started.count("big") == 300
