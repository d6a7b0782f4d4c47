"""Jobs that must run one at a time, in the order they were put: a ledger's entries applied by
a worker with one slot (``concurrency=1``). Each job's outcome and the pop of the next entry
go to the server as one script call, so one slot costs one round trip per job.

    python examples/one_at_a_time.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless

handlers = aqless.Handlers()
balance = {"amount": 0}
applied: list[int] = []


@handlers.register("ledger.Apply")
async def apply(job: aqless.Job) -> None:
    balance["amount"] += job.data["amount"]
    applied.append(job.data["entry"])


async def main() -> None:
    async with aqless.Client(namespace="example-one-at-a-time") as client:
        ledger = client.queues["ledger"]
        amounts = [100, -30, 45, -15, 200]
        for entry, amount in enumerate(amounts, 1):
            await ledger.put("ledger.Apply", {"entry": entry, "amount": amount})
        worker = aqless.Worker(client, ["ledger"], handlers=handlers, concurrency=1, burst=True)
        counters = await worker.run()
        print(f"applied in order: {' '.join(str(entry) for entry in applied)}")
        print(f"balance {balance['amount']}; worker: {counters.completed} completed")


if __name__ == "__main__":
    asyncio.run(main())
