"""A worker of a sharded deployment's shard (``Client(sharded_pubsub=True)``, its script
SPUBLISHing: aqless.sharding.pubsub) listens with SSUBSCRIBE: it is pushed its jobs (the
script counts its push channel's listeners with PUBSUB SHARDNUMSUB) and woken by put
events. A plain server has shard channels too: this runs on both servers."""

from __future__ import annotations

import json

import redis.asyncio as aioredis

import aqless
from aqless.sharding.pubsub import OPTION, SHARDED
from tests.support.worker import WORKER, make_worker, one, running, until


async def test_a_shards_worker_is_pushed_its_jobs_over_shard_channels(
    redis: aioredis.Redis, server_url: str
) -> None:
    await redis.hset("ql:config", OPTION, SHARDED)
    done: list[str] = []
    push_channel = f"ql:push:{WORKER}"
    async with aqless.Client(server_url, sharded_pubsub=True, worker_name=WORKER) as client:
        worker = make_worker(client, ["q"], one(lambda job: done.append(job.jid)), interval=600)
        listener = redis.pubsub()  # hears what is pushed to the worker
        await listener.ssubscribe(push_channel)
        assert await listener.get_message(timeout=5) is not None  # the confirmation
        try:
            async with running(worker):

                async def offered() -> bool:
                    return bool(await redis.hget("ql:offers:q", WORKER))

                await until(lambda: worker.listening, what="the worker listens")
                await until(offered, what="the worker offers")
                jid = await client.queues["q"].put("app.job")
                await until(lambda: jid in done, timeout=5, what="the pushed job done")
            message = await listener.get_message(timeout=5)
        finally:
            await listener.aclose()  # type: ignore[no-untyped-call, unused-ignore]
    assert message is not None
    assert message["type"] == "smessage"
    assert [job["jid"] for job in json.loads(message["data"])] == [jid]


async def test_a_shards_worker_without_pushes_is_woken_by_put_events(
    redis: aioredis.Redis, server_url: str
) -> None:
    await redis.hset("ql:config", OPTION, SHARDED)
    done: list[str] = []
    async with aqless.Client(server_url, sharded_pubsub=True, worker_name=WORKER) as client:
        # max_jobs: no pushes, only ql:log's put events wake it (the interval is long)
        worker = make_worker(
            client, ["q"], one(lambda job: done.append(job.jid)), interval=600, max_jobs=2
        )
        async with running(worker):
            await until(lambda: worker.listening, what="the worker listens")
            sharded = await redis.execute_command("PUBSUB", "SHARDNUMSUB", "ql:log")  # type: ignore[no-untyped-call]
            assert sharded == ["ql:log", 1]
            assert await redis.execute_command("PUBSUB", "NUMSUB", "ql:log") == ["ql:log", 0]  # type: ignore[no-untyped-call]
            jid = await client.queues["q"].put("app.job")
            await until(lambda: jid in done, timeout=5, what="the job done")
