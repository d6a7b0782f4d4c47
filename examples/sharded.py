"""One queue spread over every primary of a Cluster: a sharded deployment of three shards.

Orders of 12 customers go into the queue ``orders``; each customer's orders carry the
customer as their routing key, so they land on one shard and keep their order there, while
the customers spread over the shards. A ShardedWorker with one slot per shard drains the
queue from every shard at once; the merged reads show each shard's share and the day's
statistics over every shard.

    AQLESS_CLUSTER_URL=redis+cluster://host:port[,host:port] python examples/sharded.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter, defaultdict

import aqless

handlers = aqless.Handlers()
seen: defaultdict[str, list[int]] = defaultdict(list)
CUSTOMERS = ("ann", "bob", "cid", "dee", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lou")


@handlers.register("shop.Ship")
async def ship(job: aqless.Job) -> None:
    seen[job.data["customer"]].append(job.data["order"])


async def main(url: str) -> None:
    async with aqless.ShardedClient(url, deployment="example-shop", shards=3) as client:
        orders = client.queues["orders"]
        for order in range(5):
            for customer in CUSTOMERS:
                data = {"customer": customer, "order": order}
                await orders.put("shop.Ship", data, route=customer)
        spread = Counter(client.shard_of(customer) for customer in CUSTOMERS)
        print("customers per shard:", ", ".join(f"{k}: {spread[k]}" for k in sorted(spread)))
        print(f"queued on every shard: {(await orders.counts()).waiting}")
        report = await client.shard_report()  # per shard: counts, lag, its primary's memory
        print("waiting per shard:", ", ".join(f"{s.id}: {s.waiting}" for s in report))
        worker = aqless.ShardedWorker(
            client, ["orders"], handlers=handlers, concurrency=3, burst=True
        )
        counters = await worker.run()
        in_order = all(seen[customer] == list(range(5)) for customer in CUSTOMERS)
        print(f"shipped {counters.completed}; each customer's orders in order: {in_order}")
        today = await orders.stats()  # every shard's day, merged
        print(f"popped today over every shard: {today.wait.count}")


if __name__ == "__main__":
    cluster = os.environ.get("AQLESS_CLUSTER_URL")
    if not cluster:
        sys.exit("set AQLESS_CLUSTER_URL to redis+cluster://host:port of your Cluster")
    asyncio.run(main(cluster))
