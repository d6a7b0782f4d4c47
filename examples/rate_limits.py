"""Rate limits: at most N job starts in any window of T seconds, across every worker. A queue
has its own (``queue.set_rate_limit(n, per=t)``); named ones pace the jobs that list them in
``rate_limits=[...]`` (here: an API that takes 5 calls a second, whichever queue calls it).
Idle workers sleep until the next free start: they do not poll.

    python examples/rate_limits.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
import time

import aqless

handlers = aqless.Handlers()


@handlers.register("api.Call")
async def call(job: aqless.Job) -> None:
    pass  # the call to the API


async def main() -> None:
    async with aqless.Client(namespace="example-rate-limits") as client:
        await client.rate_limits["api"].set(5, per=1.0)  # the API's quota
        await client.queues["reports"].set_rate_limit(100, per=60)  # and this queue's own
        for queue in ("reports", "alerts"):
            await client.queues[queue].put_many(
                aqless.PutRequest("api.Call", {"n": n}, rate_limits=["api"]) for n in range(6)
            )
        worker = aqless.Worker(
            client, ["reports", "alerts"], handlers=handlers, concurrency=10, burst=True
        )
        begun = time.monotonic()
        counters = await worker.run()
        took = time.monotonic() - begun
        # 5 calls at once, 5 a second later, the last 2 a second after that: 2 s at least
        # (more on a busy machine)
        print(f"{counters.completed} calls, 5 a second: {'at least 2 s' if took >= 1.9 else took}")
        info = await client.queues["reports"].rate_limit.get()
        print(f"reports: {info.used} of {info.limit} starts used in the last {info.period:g} s")
        assert counters.completed == 12
        assert took >= 1.9
        await client.rate_limits["api"].delete()
        await client.queues["reports"].set_rate_limit(None)


if __name__ == "__main__":
    asyncio.run(main())
