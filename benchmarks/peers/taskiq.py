"""taskiq with taskiq-redis's ``RedisStreamBroker`` (acknowledged delivery, like the others;
``ListQueueBroker`` loses jobs whose worker dies): ``task.kiq`` one at a time; taskiq has no
batch call, so "fastest" is 100 calls in flight. The worker is taskiq's ``Receiver`` (what
``taskiq worker`` runs) in this process, ``max_async_tasks=concurrency``, defaults otherwise
(no result backend)."""

from __future__ import annotations

from typing import Any

from benchmarks.peers._common import QUEUE, AsyncRunner, Options, main, payload


class TaskiqRunner(AsyncRunner):
    library = "taskiq"
    distribution = "taskiq"
    broker: Any = None

    def version(self) -> str:
        from importlib.metadata import version

        return f"{version('taskiq')} + taskiq-redis {version('taskiq-redis')}"

    async def open(self, options: Options) -> None:
        from taskiq_redis import RedisStreamBroker

        self.broker = RedisStreamBroker(options.url, queue_name=QUEUE)
        job_code = self.job

        async def noop(n: int, pad: str) -> None:
            job_code(n, pad)

        self.task = self.broker.register_task(noop, task_name="noop")
        await self.broker.startup()  # creates the stream's consumer group

    async def close(self) -> None:
        await self.broker.shutdown()

    async def put(self, i: int) -> None:
        await self.task.kiq(**payload(i))

    async def work(self, options: Options) -> None:
        import asyncio

        from taskiq.receiver import Receiver

        self.broker.is_worker_process = True
        receiver = Receiver(self.broker, max_async_tasks=options.concurrency, run_startup=False)
        await receiver.listen(asyncio.Event())


RUNNER = TaskiqRunner()

if __name__ == "__main__":
    main(RUNNER)
