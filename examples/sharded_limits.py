"""A rate limit and a put hook on a sharded deployment of three shards.

A partner's API takes at most 3 calls a minute. The named rate limit ``partner-api`` lives
on the one shard keeping its name, and every job naming it is put there, so the limit holds
over the whole deployment. A put hook stamps every job with where it came from, once per
put (not once per shard), before the job is placed. A ShardedWorker then runs the 3 calls
the minute allows; the other 3 wait, scheduled, for the next minute.

    AQLESS_CLUSTER_URL=redis+cluster://host:port[,host:port] python examples/sharded_limits.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from typing import Any

import aqless
from aqless.puts import PutRequest, PutSender

handlers = aqless.Handlers()
called: list[dict[str, Any]] = []


@handlers.register("partner.Call")
async def call(job: aqless.Job) -> None:
    called.append(job.data)


async def stamped(queue: Any, requests: list[PutRequest], send: PutSender) -> list[str]:
    """A put hook: every job says which queue and which service put it."""
    return await send([replace(r, data={**r.data, "from": "billing"}) for r in requests])


async def main(url: str) -> None:
    async with aqless.ShardedClient(url, deployment="example-partner", shards=3) as client:
        client.put_hooks.append(stamped)
        await client.rate_limits["partner-api"].set(3, per=60)
        print("the limit lives on shard", client.keeper_of("partner-api"))
        calls = client.queues["partner"]
        for n in range(6):
            await calls.put("partner.Call", {"n": n}, rate_limits=["partner-api"])
        worker = aqless.ShardedWorker(  # the 3 starts the minute allows, then it finishes
            client, ["partner"], handlers=handlers, concurrency=3, max_jobs=3
        )
        await worker.run()
        print(f"called {len(called)} of 6 this minute, each from {called[0]['from']}")
        limit = await client.rate_limits["partner-api"].get()
        print(f"used {limit.used} of {limit.limit}; next start in {limit.wait:.0f} s")
        print("a pop now gets", len(await calls.pop_many(3)), "(the limit holds)")
        counts = await calls.counts()
        print("not started yet:", counts.waiting + counts.scheduled)


if __name__ == "__main__":
    cluster = os.environ.get("AQLESS_CLUSTER_URL")
    if not cluster:
        sys.exit("set AQLESS_CLUSTER_URL to redis+cluster://host:port of your Cluster")
    asyncio.run(main(cluster))
