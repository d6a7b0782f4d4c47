"""Checkpoints: a long import that resumes where it was after a crash or a deploy, instead
of starting over.

The job imports 10,000 rows in batches of 1,000 (here into a Redis list, one entry per row
imported). After each batch it stores the row offset it reached with
``await job.checkpoint({"offset": ...})``, which also renews the job's lock. When the
worker stops (a graceful stop hands the job back; a killed worker's lock expires), the
job's next attempt starts with ``job.checkpointed`` holding the last offset and goes on
from there: the rows already imported are not imported again.

A batch and its checkpoint are written together under a shield, so that a graceful stop,
which cancels the job's code, never falls between the two. (A worker killed outright can
still stop between them, and that batch would be written again: make the writes
idempotent, or keep the checkpoint in the same transaction as the rows, when that
matters.)

Here a worker is stopped after the first 3,000 rows, and a second one finishes the job.
The same handler runs under ``aqless-run -i checkpointed_import`` (class
``checkpointed_import.import_rows``).

    python examples/checkpointed_import.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
from collections import Counter

import anyio

import aqless

#: The import's size, and how many rows each checkpoint covers.
ROWS, BATCH = 10_000, 1_000


def rows_key(jid: str) -> str:
    """The Redis list the job imports into: one entry (the row's number) per row imported."""
    return f"import:{jid}:rows"


def starts_key(jid: str) -> str:
    """A hash of where each attempt of the job started: attempt -> row offset."""
    return f"import:{jid}:starts"


async def import_rows(job: aqless.Job) -> None:
    """Import rows `offset`..ROWS, a batch at a time, checkpointing after each batch.
    `job.data`: ``rows`` and ``batch`` (optional), ``pause``: seconds to wait between
    batches, standing in for the slow part of a real import (reading the source)."""
    rows, batch = int(job.data.get("rows", ROWS)), int(job.data.get("batch", BATCH))
    pause = float(job.data.get("pause", 0))
    offset = int((job.checkpointed or {}).get("offset", 0))
    redis = job.client.redis
    await redis.hset(starts_key(job.jid), str(job.attempt or 0), offset)
    while offset < rows:
        end = min(offset + batch, rows)
        with anyio.CancelScope(shield=True):  # the batch and its checkpoint, or neither
            async with redis.pipeline(transaction=True) as pipe:
                pipe.rpush(rows_key(job.jid), *range(offset, end))
                await pipe.execute()
            await job.checkpoint({"offset": end})
        offset = end
        await anyio.sleep(pause)


async def checkpointed_offset(client: aqless.Client, jid: str) -> int:
    state = (await client.jobs.checkpoints(jid)).get(jid) or {}
    return int(state.get("offset", 0))


async def main() -> None:
    handlers = aqless.Handlers()
    handlers.register("checkpointed_import.import_rows")(import_rows)
    async with aqless.Client(namespace="example-checkpoints") as client:
        await client.redis.flushdb()
        queue = client.queues["imports"]
        jid = await queue.put("checkpointed_import.import_rows", {"pause": 0.05})

        # the first worker is stopped (gracefully: the job is handed back) after 3,000 rows
        first = aqless.Worker(client, ["imports"], handlers=handlers, interval=0.1, grace=0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(first.run)
            for _ in range(3000):  # polled: at most 30 s
                if await checkpointed_offset(client, jid) >= 3 * BATCH:
                    break
                await anyio.sleep(0.01)
            first.stop()
        stopped_at = await checkpointed_offset(client, jid)
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        print(f"first worker stopped after {stopped_at} rows: the job is {job.state}")

        # a second worker takes the job up where it was
        second = aqless.Worker(client, ["imports"], handlers=handlers, burst=True, interval=0.1)
        await second.run()
        starts = {
            int(n): int(at) for n, at in (await client.redis.hgetall(starts_key(jid))).items()
        }
        print(f"attempt 1 started at row {starts[1]}")
        print(f"attempt 2 started at row {starts[2]} (the checkpoint: {starts[2] == stopped_at})")
        imported = Counter(await client.redis.lrange(rows_key(jid), 0, -1))
        once = all(count == 1 for count in imported.values())
        print(f"{len(imported)} rows imported, each exactly once: {once}")
        print(f"checkpoint after completion: {await client.jobs.checkpoints(jid) or None}")


if __name__ == "__main__":
    asyncio.run(main())
