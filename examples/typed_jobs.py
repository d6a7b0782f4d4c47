"""Typed jobs: a handler declares its data's type (here a dataclass; a pydantic model or a
msgspec Struct works the same), `put` checks the data before it reaches the server, and the
worker hands the handler the data converted. Data that does not fit, put by name as another
qless client could, fails its job into ``<queue>-JobDataError``.

    python examples/typed_jobs.py       (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aqless

handlers = aqless.Handlers()


@dataclass
class Parcel:
    address: str
    grams: int
    fragile: bool = False


shipped: list[Parcel] = []


@handlers.register
async def ship(job: aqless.Job, parcel: Parcel) -> None:
    shipped.append(parcel)  # a Parcel, checked: mypy and the worker agree on its type


async def main() -> None:
    async with aqless.Client(namespace="example-typed") as client:
        parcels = client.queues["parcels"]
        await parcels.put(ship, Parcel("1 Main St", 500))  # stored as plain JSON
        await parcels.put(ship, {"address": "2 High St", "grams": 20, "fragile": True})
        try:
            await parcels.put(ship, {"address": "3 Low St", "grams": "heavy"})
        except aqless.JobDataError as error:
            print(f"put refused: {error.detail}")
        # by name, nothing checks the data before the worker does
        jid = await parcels.put(f"{ship.__module__}.{ship.__qualname__}", {"grams": 1})
        worker = aqless.Worker(client, ["parcels"], handlers=handlers, burst=True, interval=0.1)
        counters = await worker.run()
        failed = await client.jobs.get(jid)
        assert isinstance(failed, aqless.Job)
        assert failed.failure is not None
        print(f"{counters.completed} shipped: {[parcel.address for parcel in shipped]}")
        print(f"failed into {failed.failure.group}: {failed.failure.message}")


if __name__ == "__main__":
    asyncio.run(main())
