"""A sharded deployment that changes size while a worker drains it.

A deployment of two shards takes 60 jobs and a ShardedWorker starts on them. Meanwhile a
third shard is added: the worker notices (it reads the shard map every half second here),
starts serving it, and new puts land on it too. Then shard 0 is removed: it takes no new
job, the worker empties it, and it is forgotten. No job is lost or run twice. An event
stream opened before any of it hears the jobs complete on every shard, the new one too: it
follows the map (each shard's events come by sharded pub/sub, from that shard's primary).

    AQLESS_CLUSTER_URL=redis+cluster://host:port[,host:port] python examples/sharded_resize.py

Each run makes a deployment of its own (``example-resize-<random>``).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator

import anyio

import aqless
from aqless.events import Event

handlers = aqless.Handlers()
done: list[str] = []
waits: list[tuple[int, anyio.Event]] = []


@handlers.register("app.Resize")
async def work(job: aqless.Job) -> None:
    await anyio.sleep(0.01)
    done.append(job.jid)
    for count, event in waits:
        if len(done) >= count:
            event.set()


async def listen(events: AsyncIterator[Event], heard: set[str]) -> None:
    """Note the namespace of each shard whose jobs are heard completing."""
    async for event in events:
        if event.kind == "completed":
            heard.add(event.channel.removesuffix(":ql:log"))


async def until(count: int) -> None:
    """Wait until `count` jobs are done."""
    if len(done) < count:
        event = anyio.Event()
        waits.append((count, event))
        await event.wait()


async def main(url: str) -> None:
    name = f"example-resize-{uuid.uuid4().hex[:6]}"
    async with aqless.ShardedClient(url, deployment=name, shards=2, refresh=0.5) as client:
        heard: set[str] = set()
        async with client.events("log") as events, anyio.create_task_group() as listening:
            listening.start_soon(listen, events, heard)
            jids, every_shard = await resize_while_draining(client)
            listening.cancel_scope.cancel()
        print(f"done {len(done)} of {len(jids)}, each once: {sorted(done) == sorted(jids)}")
        print("completions heard from every shard:", heard == every_shard)


async def resize_while_draining(client: aqless.ShardedClient) -> tuple[list[str], set[str]]:
    """Put jobs, add a shard, drain and forget shard 0, while a worker drains them all;
    returns the jids and the namespaces of every shard the deployment had."""
    queue = client.queues["work"]

    async def put(count: int) -> list[str]:
        return await queue.put_many([aqless.PutRequest("app.Resize") for _ in range(count)])

    jids = await put(60)
    worker = aqless.ShardedWorker(client, ["work"], handlers=handlers, concurrency=4)
    async with anyio.create_task_group() as running:
        running.start_soon(worker.run)
        await until(20)
        grown = await client.add_shards(1)
        print("shards:", [shard.id for shard in grown.active])
        later = await put(30)
        print("new puts on the new shard:", sum(client.shard_of(jid) == 2 for jid in later))
        jids += later
        await until(len(jids))

        await client.remove_shard(0)
        last = await put(12)
        print("new puts on the draining shard 0:", sum(client.shard_of(j) == 0 for j in last))
        jids += last
        await until(len(jids))
        forgotten = await client.forget_shard(0, grace=0)
        print("shards after forgetting 0:", [shard.id for shard in forgotten.shards])
        worker.stop()
    return jids, {shard.namespace for shard in grown.shards}


if __name__ == "__main__":
    cluster = os.environ.get("AQLESS_CLUSTER_URL")
    if not cluster:
        sys.exit("set AQLESS_CLUSTER_URL to redis+cluster://host:port of your Cluster")
    anyio.run(main, cluster)
