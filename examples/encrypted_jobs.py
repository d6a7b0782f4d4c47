"""Payload codecs: job data compressed and encrypted by the client, opened by the worker,
unreadable without the key; keys that rotate; a large payload kept apart (claim check).

    python examples/encrypted_jobs.py        (AQLESS_URL, or the embedded Valkey)

Needs the ``codecs`` extra: pip install 'aqless[codecs]'.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import tempfile

import aqless
from aqless.codecs import DirectoryStore, KeyRing, PayloadCodec, Zstd, sweep_blobs

handlers = aqless.Handlers()


@handlers.register("billing.Charge")
async def charge(job: aqless.Job) -> dict[str, str]:
    return {"charged": job.data["card"][-4:]}


async def main() -> None:
    old, new = KeyRing.new_key(), KeyRing.new_key()
    blobs = DirectoryStore(tempfile.mkdtemp(prefix="aqless-blobs-"))
    writer = PayloadCodec(compression=Zstd(), keys=KeyRing({"k1": old}))
    async with aqless.Client(namespace="example-codecs", codec=writer) as client:
        queue = client.queues["billing"]
        jid = await queue.put("billing.Charge", {"card": "4111 1111 1111 1234", "cents": 990})
        stored = await client.redis.hget(f"{client.prefix}j:{jid}", "data")
        print(f"stored: {json.loads(stored or '{}')['codecs']} under key k1; card in clear: "
              f"{'4111' in (stored or '')}")  # fmt: skip

    # a client without the key sees what the dashboard and the CLI show
    async with aqless.Client(namespace="example-codecs") as stranger:
        job = await stranger.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        print(f"without the key: {job.data}")

    # k2 writes from now on; k1 still opens the jobs it sealed
    rotated = PayloadCodec(
        compression=Zstd(),
        keys=KeyRing({"k2": new, "k1": old}),
        store=blobs,
        store_threshold=32_000,
    )
    async with aqless.Client(namespace="example-codecs", codec=rotated) as client:
        queue = client.queues["billing"]
        worker = aqless.Worker(client, ["billing"], handlers=handlers, burst=True, interval=0.1)
        await worker.run()
        print(f"the worker opened it: {await client.result(jid, timeout=5)}")
        report = await queue.put("billing.Report", {"scan": secrets.token_hex(60_000)})
        stored = await client.redis.hget(f"{client.prefix}j:{report}", "data")
        print(f"a large payload is kept apart: {'blob' in json.loads(stored or '{}')}")
        await client.jobs.cancel(report)
        print(f"blobs swept with their job: {await sweep_blobs(client, grace=0)}")


if __name__ == "__main__":
    asyncio.run(main())
