"""The spool (reliable push, aqless.spool): puts kept while the server is away, sent in order
and exactly once when it returns; the spool's bounds, file and lifecycle. The server is a
Valkey of the test's own, SIGKILLed for an outage (tests/faults/harness.py)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

import aqless
from aqless._concurrency.backoff import Delays
from aqless.codecs import KeyRing, PayloadCodec
from aqless.puts import PutSender
from aqless.scripts.staging import STAGED_BYTES
from tests.faults.harness import OwnServer, own_server

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server() -> Iterator[OwnServer]:
    """A Valkey that fsyncs every write (a SIGKILL loses no put it acknowledged)."""
    with own_server("always") as own:
        yield own


@pytest.fixture
async def client(server: OwnServer) -> AsyncIterator[aqless.Client]:
    async with aqless.Client(server.url) as made:
        yield made


async def restarted(server: OwnServer) -> None:
    await anyio.to_thread.run_sync(server.start)


async def flushed(spool: aqless.Spool, timeout: float = 10) -> None:
    """Wait until the client's own task has flushed the spool."""
    with anyio.fail_after(timeout):
        while spool.depth:  # noqa: ASYNC110  # the client's task flushes it
            await anyio.sleep(0.01)


async def waiting_jids(client: aqless.Client, queue: str) -> list[str]:
    """The queue's waiting jobs, in the order a pop takes them."""
    return [str(jid) for jid in await client.redis.zrevrange(f"ql:q:{queue}-work", 0, -1)]


async def test_a_put_the_server_takes_is_queued_with_its_dedup_id(
    client: aqless.Client,
) -> None:
    spool = client.spool()
    receipt = await spool.put("spool-up", "tasks.Send", {"to": "a"}, priority=3)
    assert receipt.queued
    assert not receipt.spooled
    job = await client.jobs.get(receipt.jid)
    assert isinstance(job, aqless.Job)
    assert job.priority == 3
    assert job.data == {"to": "a"}
    assert await client.redis.get(f"ql:dedup:spool:{receipt.jid}") == receipt.jid
    assert spool.stats() == aqless.SpoolStats(0, 10_000, 0, 0, 0, 0)


async def test_puts_during_an_outage_are_spooled_then_flushed_in_order(
    client: aqless.Client, server: OwnServer
) -> None:
    spool = client.spool(capacity=50)
    first = await spool.put("spool-order", "tasks.Send", 0)
    server.kill()
    receipts = [await spool.put("spool-order", "tasks.Send", i) for i in range(1, 21)]
    assert all(receipt.spooled for receipt in receipts)
    assert spool.depth == 20
    assert spool.stats().spooled == 20
    await restarted(server)
    # the server is back, but puts still wait in the spool: a new one goes behind them
    late = await spool.put("spool-order", "tasks.Send", 21)
    await flushed(spool)
    expected = [first.jid, *(receipt.jid for receipt in receipts), late.jid]
    assert await waiting_jids(client, "spool-order") == expected
    jobs = await client.jobs.get_many(expected)
    assert [job.data for job in jobs] == list(range(22))
    stats = spool.stats()
    assert (stats.depth, stats.flushed, stats.dropped) == (0, stats.spooled, 0)


async def test_big_puts_spooled_during_an_outage_are_flushed_staged(
    client: aqless.Client, server: OwnServer
) -> None:
    """The flush sends a put of 16 KB or more beside the script (aqless.scripts.staging),
    as every put is sent: the jobs hold their data, and no staged key is left."""
    spool = client.spool(capacity=10)
    server.kill()
    big = [{"n": n, "text": "x" * STAGED_BYTES} for n in range(3)]
    receipts = [await spool.put("spool-big", "tasks.Send", data) for data in big]
    assert all(receipt.spooled for receipt in receipts)
    await restarted(server)
    await flushed(spool)
    jobs = await client.jobs.get_many([receipt.jid for receipt in receipts])
    assert [job.data for job in jobs] == big
    assert await client.redis.keys("*-staged") == []
    stats = await client.redis.info("commandstats")
    assert stats["cmdstat_rename"]["calls"] == 3  # each a new job taking its staged hash


async def test_a_delay_runs_from_the_put_not_from_the_flush(
    client: aqless.Client, server: OwnServer
) -> None:
    spool = client.spool()
    server.kill()
    receipt = await spool.put("spool-delay", "tasks.Send", delay=60)
    put_at = client.clock()
    await anyio.sleep(0.3)
    await restarted(server)
    await flushed(spool)
    due = await client.redis.zscore("ql:q:spool-delay-scheduled", receipt.jid)
    assert due is not None
    assert abs(float(due) - (put_at + 60)) < 0.2


async def test_a_full_spool_refuses_the_put_and_keeps_nothing_of_it(
    client: aqless.Client, server: OwnServer
) -> None:
    spool = client.spool(capacity=3)
    server.kill()
    kept = [await spool.put("spool-full", "tasks.Send", i) for i in range(3)]
    with pytest.raises(aqless.SpoolFullError) as refused:
        await spool.put("spool-full", "tasks.Send", 3, jid="refused-one")
    assert refused.value.jid == "refused-one"
    assert refused.value.capacity == 3
    assert isinstance(refused.value, aqless.ConnectionLostError)
    assert spool.stats().refused == 1
    assert spool.depth == 3
    await restarted(server)
    await flushed(spool)
    assert await waiting_jids(client, "spool-full") == [receipt.jid for receipt in kept]
    assert await client.jobs.get("refused-one") is None


async def test_bad_input_is_refused_before_anything_is_kept(
    client: aqless.Client, server: OwnServer
) -> None:
    spool = client.spool()
    server.kill()
    await spool.put("spool-bad", "tasks.Send")  # spooled: later puts go straight to it
    with pytest.raises(aqless.InvalidValueError, match="priority"):
        await spool.put("spool-bad", "tasks.Send", priority="high")  # type: ignore[arg-type]
    with pytest.raises(aqless.PayloadError):
        await spool.put("spool-bad", "tasks.Send", {"when": object()})
    assert spool.depth == 1


@pytest.mark.parametrize(
    ("option", "value"),
    [("capacity", 0), ("capacity", 1.5), ("dedup_ttl", 0), ("batch", 0), ("path", "")],
)
async def test_the_spool_s_inputs_keep_their_rules(
    client: aqless.Client, option: str, value: object
) -> None:
    with pytest.raises(aqless.InvalidValueError, match=option):
        client.spool(**{option: value})  # type: ignore[arg-type]


async def test_a_file_spool_sent_again_makes_no_second_job(
    client: aqless.Client, server: OwnServer, tmp_path: Path
) -> None:
    """A flush whose acknowledgement never reached the file (the process died between the
    server's reply and the file's ``done`` line) is sent again by the next process: the
    dedup ids drop every put of it."""
    path = tmp_path / "puts.spool"
    spool = client.spool(path=path)
    server.kill()
    jids = [(await spool.put("spool-again", "tasks.Send", i)).jid for i in range(10)]
    before_flush = path.read_bytes()
    await restarted(server)
    await flushed(spool)
    await spool.aclose()
    assert path.read_bytes() == b""  # every put done: the file starts again
    path.write_bytes(before_flush)  # as if the flush's acknowledgement were lost
    again = client.spool(path=path)
    assert again.depth == 10
    await flushed(again)
    assert await waiting_jids(client, "spool-again") == jids
    assert len(await client.redis.keys("ql:dedup:spool:*")) == 10


async def test_a_spool_file_keeps_its_puts_and_drops_a_torn_last_line(
    client: aqless.Client, server: OwnServer, tmp_path: Path
) -> None:
    path = tmp_path / "puts.spool"
    spool = client.spool(path=path)
    server.kill()
    jids = [(await spool.put("spool-torn", "tasks.Send", i)).jid for i in range(3)]
    with pytest.raises(aqless.ConfigurationError, match="in use by another process"):
        client.spool(path=path)
    await spool.aclose()  # the server away: the puts stay in the file
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["j"] for line in lines] == jids
    path.write_bytes(path.read_bytes() + lines[0][:25])  # a crash in the middle of a write
    await restarted(server)
    again = client.spool(path=path)
    assert again.depth == 3
    await flushed(again)
    assert await waiting_jids(client, "spool-torn") == jids


async def test_the_client_s_lifecycle_starts_and_stops_the_flush(server: OwnServer) -> None:
    client = aqless.Client(server.url)
    spool = client.spool()  # made before open: open starts its task
    server.kill()
    async with client:
        receipt = await spool.put("spool-life", "tasks.Send")
        assert receipt.spooled
        await restarted(server)
        await flushed(spool)
        assert await waiting_jids(client, "spool-life") == [receipt.jid]
    with pytest.raises(aqless.ClientClosedError):
        await spool.put("spool-life", "tasks.Send")
    with pytest.raises(aqless.ClientClosedError):
        client.spool()


async def test_a_put_that_names_its_own_dedup_id_keeps_it(client: aqless.Client) -> None:
    spool = client.spool()
    first = await spool.put("spool-own", "tasks.Send", dedup="order-7")
    second = await spool.put("spool-own", "tasks.Send", dedup="order-7")
    assert second.jid == first.jid
    assert second.queued
    assert second.deduplicated
    assert not first.deduplicated
    assert await client.redis.keys("ql:dedup:spool:*") == []


async def test_the_spool_s_depth_is_a_metric(client: aqless.Client, server: OwnServer) -> None:
    from prometheus_client import CollectorRegistry

    from aqless.metrics import Metrics

    registry = CollectorRegistry()
    metrics = Metrics(registry)
    spool = client.spool(capacity=2)
    metrics.instrument_spool(spool)
    metrics.instrument_spool(spool)  # once is enough

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(f"aqless_spool_{name}", {"spool": "memory", **labels})

    assert sample("depth") == 0
    server.kill()
    await spool.put("spool-metric", "tasks.Send")
    await spool.put("spool-metric", "tasks.Send")
    with pytest.raises(aqless.SpoolFullError):
        await spool.put("spool-metric", "tasks.Send")
    assert sample("depth") == 2
    assert sample("capacity") == 2
    assert sample("puts_total", outcome="spooled") == 2
    assert sample("puts_total", outcome="refused") == 1
    await restarted(server)
    await flushed(spool)
    assert sample("depth") == 0
    assert sample("puts_total", outcome="flushed") == 2


async def test_a_closing_client_flushes_its_spool_once_more(server: OwnServer) -> None:
    client = aqless.Client(server.url)
    async with client:
        spool = client.spool()
        spool.retry = Delays(60, 60)  # its task waits a minute after a failed flush
        server.kill()
        receipts = [await spool.put("spool-close", "tasks.Send", i) for i in range(3)]
        await anyio.sleep(0.1)  # the task tried, and waits
        await restarted(server)
        assert spool.depth == 3
    assert spool.depth == 0
    async with aqless.Client(server.url) as other:
        assert await waiting_jids(other, "spool-close") == [receipt.jid for receipt in receipts]


async def test_concurrent_puts_into_a_file_are_all_kept(
    client: aqless.Client, server: OwnServer, tmp_path: Path
) -> None:
    """The puts of concurrent calls share an fsync: each returns once its line is kept."""
    path = tmp_path / "puts.spool"
    spool = client.spool(path=path)
    server.kill()
    await spool.put("spool-many", "tasks.Send")
    receipts = await asyncio.gather(*(spool.put("spool-many", "tasks.Send", i) for i in range(300)))
    kept = [json.loads(line)["j"] for line in path.read_bytes().splitlines()]
    assert kept[1:] == [receipt.jid for receipt in receipts]


async def test_a_jid_put_again_through_the_spool_is_dropped(client: aqless.Client) -> None:
    spool = client.spool()
    first = await spool.put("spool-jid", "tasks.Send", {"v": 1}, jid="invoice-9")
    again = await spool.put("spool-jid", "tasks.Send", {"v": 2}, jid="invoice-9")
    assert (first.deduplicated, again.deduplicated) == (False, True)
    job = await client.jobs.get("invoice-9")
    assert isinstance(job, aqless.Job)
    assert job.data == {"v": 1}


async def test_the_put_hooks_wrap_a_spooled_put_too(
    client: aqless.Client, server: OwnServer
) -> None:
    """A hook (tracing's writes its context into the data) sees the put that is spooled, and
    the job keeps what it wrote."""
    seen: list[str] = []

    async def stamp(
        queue: aqless.Queue, requests: list[aqless.PutRequest], send: PutSender
    ) -> list[str]:
        seen.append(queue.name)
        return await send([replace(r, data={**r.data, "stamped": True}) for r in requests])

    client.put_hooks.append(stamp)
    spool = client.spool()
    server.kill()
    receipt = await spool.put("spool-hooked", "tasks.Send", {"n": 1})
    assert receipt.spooled
    await restarted(server)
    await flushed(spool)
    job = await client.jobs.get(receipt.jid)
    assert isinstance(job, aqless.Job)
    assert job.data == {"n": 1, "stamped": True}
    assert seen == ["spool-hooked", "spool-hooked"]  # the put tried, then the put kept


async def test_a_put_the_server_refuses_at_the_flush_is_dropped_and_the_rest_land(
    client: aqless.Client, server: OwnServer, tmp_path: Path
) -> None:
    path = tmp_path / "puts.spool"
    spool = client.spool(path=path)
    server.kill()
    jids = [(await spool.put("spool-refused", "tasks.Send", i)).jid for i in range(3)]
    await spool.aclose()
    lines = path.read_bytes().splitlines()
    lines[1] = lines[1].replace(b'"queue.putDeduplicated"', b'"queue.noSuchCommand"')
    path.write_bytes(b"\n".join(lines) + b"\n")
    await restarted(server)
    again = client.spool(path=path)
    await flushed(again)
    assert await waiting_jids(client, "spool-refused") == [jids[0], jids[2]]
    stats = again.stats()
    assert (stats.flushed, stats.dropped) == (2, 1)


def test_a_blocking_client_s_spool_keeps_puts_and_flushes_them(
    server: OwnServer, tmp_path: Path
) -> None:
    import aqless.sync

    path = tmp_path / "puts.spool"
    with aqless.sync.Client(server.url) as client:
        spool = client.spool(path=path, capacity=5)
        assert spool.put("spool-sync", "tasks.Send", 0).queued
        server.kill()
        receipts = [spool.put("spool-sync", "tasks.Send", i) for i in (1, 2)]
        assert all(receipt.spooled for receipt in receipts)
        assert spool.depth == 2
        assert len(path.read_bytes().splitlines()) == 2
        server.start()
        spool.flush(timeout=10)
        assert spool.depth == 0
        assert spool.stats().flushed == 2
        jobs = client.jobs.get_many([receipt.jid for receipt in receipts])
        assert [job.data for job in jobs] == [1, 2]
    with (
        aqless.sync.Client(server.url) as other,
        pytest.raises(aqless.InvalidValueError, match="capacity"),
    ):
        other.spool(capacity=0)


async def test_pid_in_a_spool_path_makes_a_file_per_process(
    client: aqless.Client, tmp_path: Path
) -> None:
    spool = client.spool(path=str(tmp_path / "puts-{pid}.spool"))
    assert spool.name == str(tmp_path / f"puts-{os.getpid()}.spool")


async def test_a_put_spooled_during_an_outage_is_sealed_by_the_clients_codec(
    server: OwnServer, tmp_path: Path
) -> None:
    codec = PayloadCodec(keys=KeyRing({"k1": KeyRing.new_key()}))
    path = tmp_path / "puts.spool"
    async with aqless.Client(server.url, codec=codec) as client:
        spool = client.spool(path=path)
        server.kill()
        receipt = await spool.put("spool-sealed", "tasks.Send", {"email": "ada@example.com"})
        assert receipt.spooled
        assert "ada@example.com" not in path.read_text()  # sealed on the producer's disk too
        await restarted(server)
        await flushed(spool)
        stored = await client.redis.hget(f"ql:j:{receipt.jid}", "data")
        assert "ada@example.com" not in str(stored)  # and on the server
        job = await client.jobs.get(receipt.jid)
        assert isinstance(job, aqless.Job)
        assert job.data == {"email": "ada@example.com"}


async def test_a_file_keeps_one_shard_s_puts_when_another_s_land_first(tmp_path: Path) -> None:
    from aqless.spool.entries import SpooledPut
    from aqless.spool.stores import FileStore

    path = tmp_path / "shards.spool"
    store = FileStore(path)
    for number in range(1, 7):  # shards 0 and 1 in turn
        store.append(SpooledPut(number, "queue.put", f"j{number}", (), None, 0.0, number % 2))
    await store.synced()
    assert store.waiting(0) == 3
    assert store.shards() == [1, 0]
    landed = [put.number for put in store.head(10, 0)]
    assert landed == [2, 4, 6]
    store.drop(landed)  # shard 0's land while shard 1's wait: a "gone" line
    assert json.loads(path.read_bytes().splitlines()[-1]) == {"gone": [2, 4, 6]}
    store.drop([1])  # now the oldest: a "done" line
    assert json.loads(path.read_bytes().splitlines()[-1]) == {"done": 1}
    store.close()
    again = FileStore(path)
    assert [(put.jid, put.shard) for put in again.head(10, 1)] == [("j3", 1), ("j5", 1)]
    assert again.depth == 2
    again.close()
