"""Flows: a parent job that runs after its children and reads their results, put in one
atomic call; a chain, each step reading the result of the one before; and a flow removed
whole by cancelling its root.

    python examples/flows.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless
from aqless.flows import FlowNode

handlers = aqless.Handlers()


@handlers.register("shop.Price")
async def price(job: aqless.Job) -> float:
    if job.data["sku"] == "gone":
        raise LookupError("no such article")
    return {"book": 12.5, "lamp": 30.0}[job.data["sku"]]


@handlers.register("shop.Invoice")
async def invoice(job: aqless.Job) -> dict[str, object]:
    results = await job.children_results()
    missing = [child.name for child in results.failed]
    return {"total": sum(results.values().values()), "missing": missing}


@handlers.register("shop.Step")
async def step(job: aqless.Job) -> int:
    results = await job.children_results()
    before: int = results.only() if len(results) else 0
    return before + int(job.data["add"])


async def main() -> None:
    async with aqless.Client(namespace="example-flows") as client:
        worker = aqless.Worker(client, ["shop"], handlers=handlers, interval=0.1)
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(worker.run())
            flow = await client.flows.put(
                FlowNode("shop.Invoice", queue="shop"),
                children=[
                    FlowNode("shop.Price", {"sku": "book"}, queue="shop", name="book"),
                    FlowNode("shop.Price", {"sku": "lamp"}, queue="shop", name="lamp"),
                    FlowNode(
                        "shop.Price",
                        {"sku": "gone"},
                        queue="shop",
                        name="gone",
                        retries=0,
                        on_failure="continue",
                    ),
                ],
            )
            print(f"invoice: {await client.result(flow.root, timeout=10)}")
            chain = await client.flows.chain(
                [FlowNode("shop.Step", {"add": n}, queue="shop") for n in (1, 10, 100)]
            )
            print(f"chain: {await client.result(chain.root, timeout=10)}")
            tree = await client.flows.tree(flow.root)
            assert tree is not None
            print(aqless.flows.draw(tree).replace(flow.root, "ROOT").splitlines()[0])
            # each job takes every put option: these prices wait a minute, in a tenant's group
            later = await client.flows.put(
                FlowNode("shop.Invoice", queue="shop"),
                children=[
                    FlowNode("shop.Price", {"sku": sku}, queue="shop", delay=60, group="acme")
                    for sku in ("book", "lamp")
                ],
            )
            removed = await client.jobs.cancel(later.root)  # the root takes its children along
            print(f"cancelled {len(removed)} jobs: the invoice and its {len(removed) - 1} prices")
            worker.stop()


if __name__ == "__main__":
    asyncio.run(main())
