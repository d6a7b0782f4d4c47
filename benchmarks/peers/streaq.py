"""streaq: ``await task.enqueue(...)`` one at a time and ``Worker.enqueue_many`` (one
pipeline). The worker is a second ``streaq.Worker`` (as in its own process) with
``concurrency=...`` and its defaults otherwise (pickle, results kept for a day)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from benchmarks.peers._common import QUEUE, AsyncRunner, Options, main, payload


class StreaqRunner(AsyncRunner):
    library = "streaq"
    distribution = "streaq"
    task: Any = None

    def _worker(self, options: Options, concurrency: int = 16) -> Any:
        from streaq import Worker

        worker = Worker(
            redis_url=options.url,
            queue_name=QUEUE,
            concurrency=concurrency,
            handle_signals=False,
        )
        job_code = self.job

        async def noop(n: int, pad: str) -> None:
            job_code(n, pad)

        noop.__qualname__ = noop.__name__  # the same task name in both workers
        return worker, worker.task(noop)

    async def open(self, options: Options) -> None:
        self.stack = AsyncExitStack()
        self.producer, self.task = self._worker(options)
        await self.stack.enter_async_context(self.producer)

    async def close(self) -> None:
        await self.stack.aclose()

    async def put(self, i: int) -> None:
        await self.task.enqueue(**payload(i))

    async def put_many(self, total: int) -> None:
        await self.producer.enqueue_many([self.task.enqueue(**payload(i)) for i in range(total)])

    async def work(self, options: Options) -> None:
        worker, _ = self._worker(options, options.concurrency)
        await worker.run_async()


RUNNER = StreaqRunner()

if __name__ == "__main__":
    main(RUNNER)
