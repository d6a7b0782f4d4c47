"""bullmq (the Python port): ``Queue.add`` one at a time and ``Queue.addBulk`` (one pipeline
for all the jobs). The worker is ``bullmq.Worker(concurrency=...)`` with its defaults
otherwise (it keeps every completed job: ``removeOnComplete`` is not set)."""

from __future__ import annotations

from typing import Any

from benchmarks.peers._common import QUEUE, AsyncRunner, Options, main, payload


class BullmqRunner(AsyncRunner):
    library = "bullmq"
    distribution = "bullmq"
    queue: Any = None

    async def open(self, options: Options) -> None:
        from bullmq import Queue

        self.url = options.url
        self.queue = Queue(QUEUE, {"connection": options.url})
        await self.queue.getJobCounts()

    async def close(self) -> None:
        await self.queue.close()

    async def put(self, i: int) -> None:
        await self.queue.add("noop", payload(i))

    async def put_many(self, total: int) -> None:
        await self.queue.addBulk([{"name": "noop", "data": payload(i)} for i in range(total)])

    async def work(self, options: Options) -> None:
        from bullmq import Worker

        job_code = self.job

        async def noop(job: Any, token: str) -> None:
            job_code(**job.data)

        options_ = {"connection": self.url, "concurrency": options.concurrency, "autorun": False}
        worker = Worker(QUEUE, noop, options_)
        await worker.run()


RUNNER = BullmqRunner()

if __name__ == "__main__":
    main(RUNNER)
