"""Durable workflows: an order that is charged once, waits for a manager's approval (a
signal), sleeps, then ships; each step's result is kept with the job.

``order`` is a workflow: an async function of its context ``ctx``. ``ctx.step`` runs a
function once and keeps its result in the job's data; a later run of the job (after a crash,
a sleep or a wait) gets the kept result instead of running the function again.
``ctx.wait_for`` parks the job until the signal comes (``client.signal``), and
``ctx.sleep`` parks it for a while: parked, the job is scheduled and holds no worker slot.

``steps`` is a longer workflow the tests kill workers under: ``count`` steps, ``pause``
seconds apart, each counting its runs in a Redis hash (step ``slow_step`` lingers ``slow``
seconds after its effect, before its result is kept).

``packing`` fans out: one child job per parcel (``ctx.child``), then ``ctx.gather`` parks
the workflow (in ``depends``, holding no slot) until every child is done, and sums their
results. A child is put once: a run after a crash finds the children it started. (It
lingers ``pause`` seconds between starting its children and gathering them: the tests kill
its worker there.)

``quote`` races two carriers (``ctx.first``): the first child to answer wins and the other
is cancelled (``cancel=True``), still running. A run after a crash gets the same winner.

Here the order is put, the approval is sent while it waits, and the worker finishes it. The
same workflows run under ``aqless-run --handlers workflow:handlers orders``.

    python examples/workflow.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio

import aqless
from aqless.workflows.record import KEY, Parked, parked

handlers = aqless.Handlers()


def runs_key(jid: str) -> str:
    """A Redis hash counting, by step name, how many times each step's function ran."""
    return f"workflow:{jid}:runs"


@handlers.workflow("workflow.order")
async def order(ctx: aqless.WorkflowContext) -> dict[str, Any]:
    redis = ctx.job.client.redis

    async def charge(amount: int) -> dict[str, Any]:
        await redis.hincrby(runs_key(ctx.job.jid), "charge", 1)
        return {"amount": amount, "receipt": ctx.uuid()}

    async def ship(address: str) -> str:
        await redis.hincrby(runs_key(ctx.job.jid), "ship", 1)
        return f"shipped to {address}"

    charged = await ctx.step("charge", charge, ctx.data["amount"])
    approval = await ctx.wait_for("approval", timeout=3600)
    await ctx.sleep(0.5)  # e.g. a cooling-off period
    shipped = await ctx.step("ship", ship, ctx.data["address"])
    return {"charged": charged, "approved by": approval["by"], "shipped": shipped}


@handlers.workflow("workflow.steps")
async def steps(ctx: aqless.WorkflowContext) -> int:
    redis = ctx.job.client.redis
    slow = int(ctx.data.get("slow_step", -1))  # this step takes `slow` seconds after it ran
    total = 0
    for n in range(int(ctx.data["count"])):

        async def step(n: int = n) -> int:
            await redis.hincrby(runs_key(ctx.job.jid), f"step-{n}", 1)
            if n == slow:
                await anyio.sleep(float(ctx.data["slow"]))
            return n

        total += await ctx.step(f"step-{n}", step)
        await anyio.sleep(float(ctx.data.get("pause", 0)))
    return total


@handlers.workflow("workflow.packing")
async def packing(ctx: aqless.WorkflowContext) -> int:
    parcels = [
        await ctx.child("workflow.parcel", {"weight": weight}, queue="parcels", name=f"p{n}")
        for n, weight in enumerate(ctx.data["weights"])
    ]
    await anyio.sleep(float(ctx.data.get("pause", 0)))
    return sum(await ctx.gather(*parcels))


@handlers.register("workflow.parcel")
async def parcel(job: aqless.Job) -> int:
    """A child of ``packing``: counts its runs by its jid, returns its postage."""
    await job.client.redis.hincrby("workflow:parcels:runs", job.jid, 1)
    return 5 + 2 * int(job.data["weight"])


@handlers.workflow("workflow.quote")
async def quote(ctx: aqless.WorkflowContext) -> str:
    asks = [
        await ctx.child("workflow.carrier", {"seconds": seconds}, queue="carriers", name=name)
        for name, seconds in (("slowboat", 30.0), ("swiftly", 0.05))
    ]
    winner, price = await ctx.first(*asks, cancel=True)
    return f"{winner.name}: {price}"


@handlers.register("workflow.carrier")
async def carrier(job: aqless.Job) -> int:
    await anyio.sleep(float(job.data["seconds"]))
    return 5 if float(job.data["seconds"]) > 1 else 7


async def parked_order(client: aqless.Client, jid: str) -> Parked:
    """Why the order waits, once it is parked (a worker is running it)."""
    for _ in range(600):
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        why = parked(job.state, job.data)
        if why is not None:
            return why
        await anyio.sleep(0.05)
    raise TimeoutError(f"order {jid} never parked")


async def main() -> None:
    async with aqless.Client(namespace="example-workflows") as client:
        await client.redis.flushdb()
        jid = await client.queues["orders"].put("workflow.order", {"amount": 42, "address": "Oslo"})
        worker = aqless.Worker(client, ["orders"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            print("parked:", (await parked_order(client, jid)).describe())
            print("signal:", await client.signal(jid, "approval", {"by": "mia"}))
            print("result:", await client.result(jid, timeout=30))
            worker.stop()
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        for name, step in job.data[KEY]["steps"].items():
            print(f"step {name}: {step['result']!r} (attempt {step['attempt']})")
        runs = await client.redis.hgetall(runs_key(jid))
        print("runs:", dict(sorted(runs.items())))

        packed = await client.queues["orders"].put("workflow.packing", {"weights": [1, 2, 3]})
        worker = aqless.Worker(client, ["orders", "parcels"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            print("postage:", await client.result(packed, timeout=30))
            worker.stop()
        ran = await client.redis.hgetall("workflow:parcels:runs")
        print("parcels run once each:", sorted(ran.values()) == ["1", "1", "1"])

        quoted = await client.queues["orders"].put("workflow.quote", {})
        worker = aqless.Worker(
            client, ["orders", "carriers"], handlers=handlers, concurrency=3, interval=0.1
        )
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            print("quote:", await client.result(quoted, timeout=30))
            worker.stop()
        print("the slow carrier cancelled:", await client.queues["carriers"].length() == 0)


if __name__ == "__main__":
    asyncio.run(main())
