"""Following the server's events: ``client.events()`` as an async iterator (its own
connection, resubscribed after a drop, unsubscribed when the block ends), and
``job.track()`` for a job's events on the tracking channels.

    python examples/events_consumer.py  (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import anyio

import aqless

handlers = aqless.Handlers()


@handlers.register("shop.Ship")
async def ship(job: aqless.Job) -> None:
    if job.data["order"] == 2:
        raise RuntimeError("no such address")


async def main() -> None:
    async with aqless.Client(namespace="example-events") as client:
        orders = client.queues["orders"]
        worker = aqless.Worker(client, ["orders"], handlers=handlers, interval=0.1)
        async with (
            client.events("log") as events,  # subscribed once this returns: nothing missed
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(worker.run)
            jids = {await orders.put("shop.Ship", {"order": n}): n for n in (1, 2, 3)}
            finished = 0
            with anyio.fail_after(10):
                async for event in events:
                    if event.jid not in jids:
                        continue
                    order = jids[event.jid]
                    if event.kind == "failed":
                        print(f"order {order}: failed ({event.group})")
                    else:
                        print(f"order {order}: {event.kind}")
                    finished += event.kind in ("completed", "failed")
                    if finished == len(jids):
                        break
            worker.stop()
        # a single job: wait for its end without writing the loop
        jid = await orders.put("shop.Ship", {"order": 4})
        async with anyio.create_task_group() as tasks:
            worker = aqless.Worker(client, ["orders"], handlers=handlers, burst=True)
            tasks.start_soon(worker.run)
            print("order 4:", await client.wait(jid, timeout=10))


if __name__ == "__main__":
    asyncio.run(main())
