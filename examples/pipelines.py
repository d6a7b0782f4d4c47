"""A pipeline, the qless way: one class with a method per queue, each step handing the job on
with ``job.complete(next_queue)``. The gnomes' plan: underpants -> unknown -> profit.

    python examples/pipelines.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()
STEPS = ("underpants", "unknown", "profit")


@handlers.register  # as `__main__.Plan`, the name put(Plan) gives its jobs
class Plan:
    """A job in queue ``underpants`` runs ``Plan.underpants(job)``, and so on."""

    @staticmethod
    async def underpants(job: aqless.Job) -> None:
        job.data["underpants"] = 3 * job.data["gnomes"]
        await job.complete("unknown")  # hand on: the job waits in `unknown` now

    @staticmethod
    async def unknown(job: aqless.Job) -> None:
        job.data["plan"] = "?"
        await job.complete("profit", delay=0)  # a delay or depends= may come with it

    @staticmethod
    async def profit(job: aqless.Job) -> None:
        job.data["profit"] = job.data["underpants"] * 10
        # returning completes the job for good


async def main() -> None:
    async with aqless.Client(namespace="example-pipelines") as client:
        jid = await client.queues["underpants"].put(Plan, {"gnomes": 4})
        worker = aqless.Worker(client, list(STEPS), handlers=handlers, burst=True, interval=0.1)
        counters = await worker.run()
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        queues = [entry.details.get("queue") for entry in job.history if entry.what == "put"]
        print(f"job {jid}: {job.state}, data {job.data}")
        print("went through:", " -> ".join(str(queue) for queue in queues))
        print(f"worker: {counters.completed} completed by the worker, {counters.started} runs")


if __name__ == "__main__":
    asyncio.run(main())
