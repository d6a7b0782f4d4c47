"""Job results: a handler's return value is kept with the job, and the caller awaits it
with ``job.result(timeout=...)`` (or ``client.result(jid)``), which returns it or raises
the job's failure as a typed error.

    python examples/results.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()


@handlers.register("quotes.Price")
async def price(job: aqless.Job) -> dict[str, float]:
    items = job.data["items"]
    if not items:
        raise ValueError("nothing to price")
    return {"total": round(sum(item["price"] * item["n"] for item in items), 2)}


async def main() -> None:
    async with aqless.Client(namespace="example-results") as client:
        queue = client.queues["quotes"]
        worker = aqless.Worker(client, ["quotes"], handlers=handlers, interval=0.1)
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(worker.run())
            items = [{"price": 2.5, "n": 4}, {"price": 0.99, "n": 1}]
            jid = await queue.put("quotes.Price", {"items": items})
            print(f"quote {jid}: {await client.result(jid, timeout=10)}")
            empty = await queue.put("quotes.Price", {"items": []}, retries=0)
            try:
                await client.result(empty, timeout=10)
            except aqless.JobFailedError as failed:
                print(f"empty quote failed in {failed.group}: {failed.message.splitlines()[-1]}")
            stored = await client.jobs.stored_result(jid)
            assert stored is not None
            print(f"kept with the job: {stored.text}")
            worker.stop()


if __name__ == "__main__":
    asyncio.run(main())
