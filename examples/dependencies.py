"""Dependencies: a job waits (state ``depends``) until every job it depends on is complete.
The turkey waits for the stuffing; dinner waits for both the turkey and the pie.

    python examples/dependencies.py     (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()
done: list[str] = []


@handlers.register("kitchen.Cook")
async def cook(job: aqless.Job) -> None:
    done.append(job.data["dish"])


async def main() -> None:
    async with aqless.Client(namespace="example-dependencies") as client:
        kitchen = client.queues["kitchen"]
        stuffing = await kitchen.put("kitchen.Cook", {"dish": "stuffing"})
        turkey = await kitchen.put("kitchen.Cook", {"dish": "turkey"}, depends=[stuffing])
        pie = await kitchen.put("kitchen.Cook", {"dish": "pie"}, priority=-1)  # after the rest
        dinner = await kitchen.put("kitchen.Cook", {"dish": "dinner"}, depends=[turkey, pie])
        job = await client.jobs.get(dinner)
        assert isinstance(job, aqless.Job)
        print(f"dinner is {job.state}, waiting for {len(job.dependencies)} jobs")
        worker = aqless.Worker(client, ["kitchen"], handlers=handlers, burst=True, interval=0.1)
        await worker.run()
        print("cooked in order:", ", ".join(done))
        assert done.index("stuffing") < done.index("turkey") < done.index("dinner")
        assert done.index("pie") < done.index("dinner")


if __name__ == "__main__":
    asyncio.run(main())
