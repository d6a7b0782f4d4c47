"""Deduplication: a put that names a dedup id makes no new job while a job holds the id.
Three modes: until the job ends, for a TTL, and debounce (the last data wins).

    python examples/deduplication.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()
indexed: list[str] = []


@handlers.register("search.Index")
async def index(job: aqless.Job) -> None:
    indexed.append(job.data["q"])


async def main() -> None:
    async with aqless.Client(namespace="example-dedup") as client:
        orders = client.queues["orders"]
        # until the job ends: a double-clicked "pay" button makes one job
        results = await asyncio.gather(
            *(orders.put_result("orders.Charge", {"order": 7}, dedup="charge:7") for _ in range(5))
        )
        made = sum(not result.deduplicated for result in results)
        print(f"5 puts of charge:7 made {made} job, {await orders.length()} waiting")

        # for a TTL: one welcome mail per user and day, whatever becomes of the job
        mails = client.queues["mail"]
        day = aqless.Dedup("welcome:ann", ttl=86_400)
        first = await mails.put("mail.Welcome", {"to": "ann"}, dedup=day)
        again = await mails.put_result("mail.Welcome", {"to": "ann"}, dedup=day)
        print(f"second welcome deduplicated: {again.deduplicated} (same job: {again.jid == first})")

        # debounce: keystrokes within 2 s replace the pending job; it runs with the last data
        search = client.queues["search"]
        typing = aqless.Dedup("index:ann", ttl=2, debounce=True)
        for text in ("a", "an", "ann"):
            result = await search.put("search.Index", {"q": text}, delay=0.2, dedup=typing)
        print(f"3 keystrokes left {await search.length()} job")
        worker = aqless.Worker(client, ["search"], handlers=handlers, burst=True, interval=0.1)
        await asyncio.sleep(0.3)  # the debounce delay
        await worker.run()
        print(f"indexed: {indexed}")
        assert made == 1
        assert indexed == ["ann"]
        await client.jobs.cancel(first, result, *{r.jid for r in results})


if __name__ == "__main__":
    asyncio.run(main())
