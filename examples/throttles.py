"""Throttles: at most N jobs holding a throttle run at once, across every worker. A queue has
its own throttle (``queue.set_throttle(n)``); named ones are shared by the jobs that list them
in ``throttles=[...]`` (here: one mail server for two queues).

    python examples/throttles.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import anyio

import aqless

handlers = aqless.Handlers()
running = 0
most = 0


@handlers.register("mail.Send")
async def send(job: aqless.Job) -> None:
    global running, most
    running += 1
    most = max(most, running)
    await anyio.sleep(0.05)
    running -= 1


async def main() -> None:
    async with aqless.Client(namespace="example-throttles") as client:
        await client.throttles["smtp"].set(2)  # two connections to the mail server
        for queue in ("newsletters", "receipts"):
            await client.queues[queue].put_many(
                aqless.PutRequest("mail.Send", {"n": n}, throttles=["smtp"]) for n in range(6)
            )
        print("smtp:", await client.throttles["smtp"].get())
        worker = aqless.Worker(
            client,
            ["newsletters", "receipts"],
            handlers=handlers,
            concurrency=10,  # room for 10, but the throttle lets 2 run
            burst=True,
            interval=0.1,
        )
        counters = await worker.run()
        print(f"{counters.completed} mails sent, at most {most} at once")
        assert counters.completed == 12
        assert most <= 2


if __name__ == "__main__":
    asyncio.run(main())
