"""arq: ``ArqRedis.enqueue_job``; it has no batch call, so "fastest" is 100 calls in flight.

The worker is ``arq.Worker(max_jobs=concurrency)`` with its defaults otherwise: it polls
every 0.5 s when idle and keeps each result for an hour."""

from __future__ import annotations

from typing import Any

from benchmarks.peers._common import QUEUE, AsyncRunner, Options, main, payload


class ArqRunner(AsyncRunner):
    library = "arq"
    distribution = "arq"
    redis: Any = None

    async def open(self, options: Options) -> None:
        from arq import create_pool
        from arq.connections import RedisSettings

        self.settings = RedisSettings.from_dsn(options.url)
        self.redis = await create_pool(self.settings, default_queue_name=QUEUE)
        await self.redis.ping()

    async def close(self) -> None:
        await self.redis.aclose()

    async def put(self, i: int) -> None:
        await self.redis.enqueue_job("noop", **payload(i))

    async def work(self, options: Options) -> None:
        from arq import Worker, func

        job_code = self.job

        async def noop(ctx: dict[str, Any], n: int, pad: str) -> None:
            job_code(n, pad)

        worker = Worker(
            functions=[func(noop, name="noop")],
            queue_name=QUEUE,
            redis_settings=self.settings,
            max_jobs=options.concurrency,
            handle_signals=False,
        )
        await worker.async_run()


RUNNER = ArqRunner()

if __name__ == "__main__":
    main(RUNNER)
