"""saq: ``Queue.enqueue``; ``map`` and ``batch`` wait for results, so "fastest" is 100
calls in flight (saq runs at most ``max_concurrent_ops=20`` of them at once).

The worker is ``saq.Worker(queue, concurrency=...)`` with its defaults otherwise."""

from __future__ import annotations

from typing import Any

from benchmarks.peers._common import QUEUE, AsyncRunner, Options, main, payload


class SaqRunner(AsyncRunner):
    library = "saq"
    distribution = "saq"
    queue: Any = None

    async def open(self, options: Options) -> None:
        from saq import Queue

        self.queue = Queue.from_url(options.url, name=QUEUE)
        await self.queue.connect()
        await self.queue.count("queued")

    async def close(self) -> None:
        await self.queue.disconnect()

    async def put(self, i: int) -> None:
        await self.queue.enqueue("noop", **payload(i))

    async def work(self, options: Options) -> None:
        from saq import Worker

        job_code = self.job

        async def noop(ctx: dict[str, Any], *, n: int, pad: str) -> None:
            job_code(n, pad)

        worker = Worker(self.queue, functions=[("noop", noop)], concurrency=options.concurrency)
        await worker.start()


RUNNER = SaqRunner()

if __name__ == "__main__":
    main(RUNNER)
