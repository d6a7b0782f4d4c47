"""aqless: ``Queue.put`` one at a time, ``Queue.put_many`` (pipelined, 1,000 per round trip),
and ``aqless.Worker`` in this process."""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from benchmarks.peers._aqless_features import Features
from benchmarks.peers._common import (
    QUEUE,
    AsyncRunner,
    Meter,
    Options,
    Result,
    ServerSample,
    flushall,
    main,
    payload,
    run_async,
)

KLASS = "bench.Noop"
PROBE = 2000  # puts and pops measured one at a time by the scale workload


class AqlessRunner(AsyncRunner):
    library = "aqless"
    distribution = "aqless"
    client: Any = None

    async def open(self, options: Options) -> None:
        import aqless

        self.features = Features(options.features)
        self.client = aqless.Client(options.url, codec=self.features.codec)
        self.features.client(self.client)
        self.queue = self.client.queues[QUEUE]
        await self.queue.length()  # connect and load the script outside the measure
        # aqless imports its worker when first named (aqless/__init__.py, PEP 562): named
        # here, as the other runners' libraries import theirs with their client, so that a
        # drain measures the worker's run and not the import of its code (~25 ms, which a
        # drain of 300 jobs would count as ~80 us of CPU a job)
        self.worker_class, self.handlers_class = aqless.Worker, aqless.Handlers

    async def close(self) -> None:
        await self.client.close()

    async def put(self, i: int) -> None:
        await self.queue.put(KLASS, payload(i))

    async def put_many(self, total: int) -> None:
        import aqless

        requests = [aqless.PutRequest(KLASS, payload(i)) for i in range(total)]
        batch = os.environ.get("AQLESS_PUT_BATCH", "")  # to compare batches; unset: the default
        await self.queue.put_many(requests, **({"batch": int(batch)} if batch else {}))

    async def work(self, options: Options) -> None:
        import aqless

        handlers = aqless.Handlers()
        job_code = self.job

        @handlers.register(KLASS)
        async def noop(job: aqless.Job) -> None:
            job_code(**job.data)

        worker = aqless.Worker(
            self.client,
            [QUEUE],
            handlers=handlers,
            concurrency=options.concurrency,
            middleware=self.features.middleware(),
            # as aqless-run reads it: to compare a drain with and without prefetch
            prefetch=_prefetch(),
        )
        self.features.worker(worker)
        await worker.run()

    def scale(self, options: Options) -> Result:
        return run_async(self._scale(options))

    async def _scale(self, options: Options) -> Result:
        """Put and pop one at a time on an empty queue, then with `jobs` waiting; the
        memory each waiting job takes; the time of ``client.queues.counts()``."""
        import aqless

        await self.open(options)
        extra: dict[str, float] = {}

        async def probe(label: str) -> None:
            meter = Meter(options.url)
            with meter.measuring():
                for i in range(PROBE):
                    await self.queue.put(KLASS, payload(i), jid=f"probe-{label}-{i}")
            extra[f"put_{label}_us"] = meter.wall / PROBE * 1e6
            extra[f"put_{label}_server_us"] = meter.server_cpu / PROBE * 1e6
            # pops take the oldest waiting jobs first: on the full queue, the filler's
            with meter.measuring():
                for _ in range(PROBE):
                    await self.queue.pop()
            extra[f"pop_{label}_us"] = meter.wall / PROBE * 1e6
            extra[f"pop_{label}_server_us"] = meter.server_cpu / PROBE * 1e6
            timings = []
            for _ in range(20):
                started = time.perf_counter()
                await self.client.queues.counts()
                timings.append(time.perf_counter() - started)
            extra[f"counts_{label}_ms"] = statistics.median(timings) * 1e3

        await probe("empty")
        flushall(options.url)  # the empty probe's jobs out of the memory figure
        before = ServerSample.take(options.url).memory
        chunk = 10000
        for start in range(0, options.jobs, chunk):
            stop = min(start + chunk, options.jobs)
            await self.queue.put_many(
                [aqless.PutRequest(KLASS, payload(i)) for i in range(start, stop)]
            )
        after = ServerSample.take(options.url).memory
        extra["memory_per_job_bytes"] = (after - before) / max(options.jobs, 1)
        await probe("full")
        await self.close()
        result = self.result("scale", options)
        result.extra = extra
        return result


def _prefetch() -> int | None:
    """The worker's prefetch from AQLESS_PREFETCH, or its default (None: decided by the worker)."""
    from aqless._worker import defaults

    value = os.environ.get("AQLESS_PREFETCH", "")
    return int(value) if value else defaults.PREFETCH


RUNNER = AqlessRunner()

if __name__ == "__main__":
    main(RUNNER)
