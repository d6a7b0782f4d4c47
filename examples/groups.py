"""Fair groups: one tenant's backlog does not hold back another tenant's few jobs. The
worker's pops take the queue's groups in turn, a weight gives a group more turns, and a
rate limit caps how fast its jobs start.

    python examples/groups.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()
started: list[str] = []


@handlers.register("reports.Build")
async def build(job: aqless.Job) -> None:
    started.append(job.data["tenant"])


async def main() -> None:
    async with aqless.Client(namespace="example-groups") as client:
        queue = client.queues["reports"]
        # a big tenant's backlog first, then three small tenants' jobs behind it
        await queue.put_many(
            aqless.PutRequest("reports.Build", {"tenant": "acme"}, group="acme") for _ in range(200)
        )
        for tenant in ("bolt", "cask", "dune"):
            await queue.put_many(
                aqless.PutRequest("reports.Build", {"tenant": tenant}, group=tenant)
                for _ in range(5)
            )
        await queue.set_group_weight("acme", 2)  # the paying tenant: two turns to one
        await queue.set_group_rate_limit("acme", 1000, per=60)  # its API takes 1,000 a minute
        for group in await queue.groups():
            limit = f"{group.rate_limit} per {group.rate_period:g}s" if group.rate_limit else "none"
            print(f"{group.name}: {group.waiting} waiting, weight {group.weight:g}, limit {limit}")
        worker = aqless.Worker(
            client, ["reports"], handlers=handlers, concurrency=5, burst=True, interval=0.1
        )
        await worker.run()
        last_small = max(i for i, tenant in enumerate(started) if tenant != "acme") + 1
        print(
            f"{len(started)} reports built; the small tenants' 15 were done by start {last_small}"
        )
        assert last_small <= 40


if __name__ == "__main__":
    asyncio.run(main())
