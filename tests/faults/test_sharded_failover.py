"""A sharded deployment on a Cluster with a replica per primary: durable puts (``durable=``)
wait for their own shard's replica, and a primary killed while a ShardedWorker drains (its
replica promoted with CLUSTER FAILOVER TAKEOVER) loses none of the jobs whose put was
acknowledged by that replica."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
import redis

import aqless
from tests.faults.cluster import Cluster, heard_after_failover, is_primary, valkey_cluster
from tests.faults.harness import ask
from tests.support.sharding import addresses, home_port, keys_of_a_shard
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

WORK = "app.Work"
#: a put returns once the shard's replica has it in its append-only file
ON_A_REPLICA = aqless.Durability(local=False, replicas=1, timeout=2.0)
#: puts made at once until the failover (each waits up to a second for its replica, on
#: the shard's one connection: a few, so that the calls queued behind them do not time out)
PUTTERS = 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with valkey_cluster(replicas=True) as running:
        yield running


def on_replica(port: int, key: str) -> bool:
    """Whether the replica on `port` holds `key` (asked in READONLY mode)."""
    with redis.Redis(port=port, decode_responses=True, socket_timeout=2) as replica:
        replica.execute_command("READONLY")
        return bool(replica.exists(key))


async def test_a_durable_put_is_on_its_shards_replica_when_it_returns(cluster: Cluster) -> None:
    async with aqless.ShardedClient(addresses(cluster), deployment="dur", shards=3) as client:
        queue = client.queues["work"]
        # a replica reports its fsyncs once a second: each durable put waits up to that
        jids = [await queue.put(WORK, {"n": n}, durable=ON_A_REPLICA) for n in range(3)]
        jids += await queue.put_many(
            [aqless.PutRequest(WORK, {"n": n}) for n in range(60)], durable=ON_A_REPLICA
        )
        assert {client.shard_of(jid) for jid in jids} == {0, 1, 2}
        for jid in jids:
            namespace = client.shards.shard(client.shard_of(jid)).namespace
            replica = cluster.replicas[home_port(cluster, namespace)]
            assert on_replica(replica, f"{namespace}:ql:j:{jid}")
        with pytest.raises(aqless.NotDurableError, match=r"within 0\.2 s, asked for 0 and 2"):
            await queue.put(
                WORK, {}, durable=aqless.Durability(local=False, replicas=2, timeout=0.2)
            )


async def put_on_shard_0(client: aqless.ShardedClient, shard: int = 0) -> str:
    """A plain put to shard 0 (or `shard`; its jid given, so that a try that was made and
    then lost its reply is replaced by the next), tried again while its connection is
    replaced."""
    for _ in range(50):
        try:
            return await client.queues["work"].put(
                WORK, {"after": "failover"}, jid=keys_of_a_shard(client, shard, "after-")[0]
            )
        except aqless.ConnectionLostError:
            await anyio.sleep(0.1)
    raise AssertionError("no put reached the promoted primary")


async def test_a_failover_mid_drain_loses_no_job_a_replica_acknowledged(
    cluster: Cluster,
) -> None:
    handlers = aqless.Handlers()
    done: set[str] = set()

    @handlers.register(WORK)
    async def work(job: aqless.Job) -> None:
        await anyio.sleep(0.01)
        done.add(job.jid)

    acknowledged: list[str] = []
    refused: list[BaseException] = []
    putting = True

    async with aqless.ShardedClient(
        addresses(cluster), deployment="failover", shards=3, refresh=0.5
    ) as client:
        # a job whose complete the failover lost runs again soon, not in a minute
        await client.config.set("heartbeat", 3)
        queue = client.queues["work"]
        acknowledged += await queue.put_many(
            [aqless.PutRequest(WORK, {"n": n}) for n in range(150)], durable=ON_A_REPLICA
        )

        async def put_all_along() -> None:
            while putting:
                try:
                    acknowledged.append(await queue.put(WORK, {}, durable=ON_A_REPLICA))
                except aqless.AqlessError as error:  # not acknowledged: may be lost
                    refused.append(error)
                await anyio.sleep(0.01)

        victim = home_port(cluster, client.shards.shard(0).namespace)
        promoted = cluster.replicas[victim]
        worker = aqless.ShardedWorker(client, ["work"], handlers=handlers, concurrency=6)
        with anyio.fail_after(90):
            async with anyio.create_task_group() as running:
                running.start_soon(worker.run)
                for _ in range(PUTTERS):
                    running.start_soon(put_all_along)
                await eventually(lambda: len(done) >= 30, what="a drain under way")
                cluster.kill(victim)
                ask(promoted, "CLUSTER", "FAILOVER", "TAKEOVER")
                # the promoted node has no replica: a durable put there cannot be confirmed
                putting = False
                await eventually(lambda: is_primary(promoted), what="the replica promoted")
                acknowledged.append(await put_on_shard_0(client))
                await eventually(
                    lambda: set(acknowledged) <= done, timeout=60, what="every job done"
                )
                worker.stop()
        lost = [jid for jid in acknowledged if await client.jobs.get(jid) is None]
        assert lost == []
        states = {(await client.jobs.get(jid)).state for jid in acknowledged}  # type: ignore[union-attr]
        assert states == {aqless.JobState.COMPLETE}
        assert worker.by_shard[0].counters.completed > 0
        assert len(refused) < len(acknowledged)  # most puts were confirmed


def alive_primary(port: int) -> bool:
    try:
        return is_primary(port)
    except redis.ConnectionError:  # killed by an earlier test of this module
        return False


async def test_the_merged_stream_follows_a_failover_of_a_shards_primary(cluster: Cluster) -> None:
    async with aqless.ShardedClient(
        addresses(cluster), deployment="sfailover", shards=3, refresh=0.5
    ) as client:
        shard = next(
            shard
            for shard in client.shards.shards
            if alive_primary(home_port(cluster, shard.namespace))
        )
        victim = home_port(cluster, shard.namespace)
        promoted = cluster.replicas[victim]
        async with client.events("log") as events:
            event = await heard_after_failover(
                cluster, victim, events, lambda: put_on_shard_0(client, shard.id)
            )
        assert event.channel == f"{shard.namespace}:ql:log"
        listeners = ask(promoted, "PUBSUB", "SHARDNUMSUB", event.channel)
        assert listeners == [event.channel, 0]  # left when the stream closed
